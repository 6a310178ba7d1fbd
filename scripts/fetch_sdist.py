#!/usr/bin/env python3
"""Downloads one pinned source distribution from PyPI and checks its sha256.

usage: fetch_sdist.py NAME VERSION SHA256 DESTDIR

Finds the sdist's URL on PyPI's simple index (the only PyPI endpoint this
project relies on), downloads it, and refuses it unless the hash matches.
A project that publishes no sdist (lmdeploy) is pinned by one of its wheels:
when no NAME-VERSION.tar.gz is listed, the .whl of NAME-VERSION whose listed
sha256 is the pinned one is fetched instead (the hash picks the file).
Prints the downloaded file's path. Standard library only. Exit 3 on any
failure, with the reason on stderr.
"""
import hashlib
import os
import re
import sys
import urllib.request

INDEX = os.environ.get("MUH_PYPI_SIMPLE", "https://pypi.org/simple")


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    name, version, want, dest = sys.argv[1:]
    norm = re.sub(r"[-_.]+", "-", name).lower()
    page = urllib.request.urlopen(f"{INDEX}/{norm}/", timeout=120).read().decode()
    stem = re.sub(r"[-_.]+", "[-_.]", name)
    pat = re.compile(r'href="([^"]*?/(' + stem + "-" + re.escape(version) +
                     r'\.tar\.gz))#sha256=([0-9a-f]+)"', re.I)
    m = pat.search(page)
    if not m:
        wheel = re.compile(r'href="([^"]*?/(' + stem + "-" + re.escape(version) +
                           r'-[^"/]*\.whl))#sha256=(' + re.escape(want) + ')"', re.I)
        m = wheel.search(page)
    if not m:
        print(f"fetch_sdist: no sdist {name}=={version} on {INDEX}", file=sys.stderr)
        return 3
    url, fname, listed = m.group(1), m.group(2), m.group(3)
    if listed != want:
        print(f"fetch_sdist: index lists sha256 {listed} for {fname}, pinned {want}", file=sys.stderr)
        return 3
    if url.startswith("/"):
        url = "https://pypi.org" + url
    data = urllib.request.urlopen(url, timeout=600).read()
    got = hashlib.sha256(data).hexdigest()
    if got != want:
        print(f"fetch_sdist: sha256 mismatch for {fname}: got {got}, pinned {want}", file=sys.stderr)
        return 3
    os.makedirs(dest, exist_ok=True)
    out = os.path.join(dest, fname)
    with open(out + ".tmp", "wb") as f:
        f.write(data)
    os.replace(out + ".tmp", out)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
