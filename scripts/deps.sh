#!/usr/bin/env bash
# Installs everything muh needs to build and test, idempotently.
#   - Debian packages with apt-get (only when one is missing);
#   - pinned, hash-checked source distributions from PyPI into third_party/
#     (only when not already unpacked).
# Safe to run any number of times.
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(build-essential cmake ninja-build pkg-config
      libfyaml-dev libcjson-dev libsqlite3-dev libtree-sitter-dev libcmocka-dev libcurl4-openssl-dev
      python3 valgrind git curl)
missing=()
for p in "${PKGS[@]}"; do
	dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
	echo "deps: installing ${missing[*]}"
	SUDO=""
	[ "$(id -u)" = 0 ] || SUDO=sudo
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi

# Each line of scripts/deps.lock: NAME VERSION SHA256 DIR [corpus]
while read -r name ver sha dir tag; do
	case "$name" in ''|'#'*) continue ;; esac
	[ "$tag" = corpus ] && [ "${MUH_DEPS_CORPUS:-1}" != 1 ] && continue
	[ -d "third_party/$dir" ] && continue
	tgz=$(python3 scripts/fetch_sdist.py "$name" "$ver" "$sha" third_party/.dl)
	rm -rf "third_party/$dir.tmp"
	mkdir -p "third_party/$dir.tmp"
	tar xzf "$tgz" -C "third_party/$dir.tmp" --strip-components=1
	mv "third_party/$dir.tmp" "third_party/$dir"
	rm -f "$tgz"
	echo "deps: $name $ver -> third_party/$dir (sha256 ok)"
done <scripts/deps.lock
