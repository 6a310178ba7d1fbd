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
      python3 valgrind git curl openmpi-bin libopenmpi-dev python3-venv)
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

# Each line of scripts/deps.lock: NAME VERSION SHA256 DIR [corpus|wheel]
# (wheel: installed into the venv DIR below, not unpacked here)
while read -r name ver sha dir tag; do
	case "$name" in ''|'#'*) continue ;; esac
	[ "$tag" = wheel ] && continue
	[ "$tag" = corpus ] && [ "${MUH_DEPS_CORPUS:-1}" != 1 ] && continue
	[ -d "third_party/$dir" ] && continue
	tgz=$(python3 scripts/fetch_sdist.py "$name" "$ver" "$sha" third_party/.dl)
	rm -rf "third_party/$dir.tmp"
	mkdir -p "third_party/$dir.tmp"
	case "$tgz" in
	*.whl) # a wheel (the project publishes no sdist): its Python package as is
		python3 -m zipfile -e "$tgz" "third_party/$dir.tmp" ;;
	*) tar xzf "$tgz" -C "third_party/$dir.tmp" --strip-components=1 ;;
	esac
	mv "third_party/$dir.tmp" "third_party/$dir"
	rm -f "$tgz"
	echo "deps: $name $ver -> third_party/$dir (sha256 ok)"
done <scripts/deps.lock

# The engine tests' venv (llama.cpp's server via xllamacpp, gguf): pinned and
# hash-checked wheels from scripts/requirements-engine.txt. Skipped when the
# venv was made from this same requirements file and still imports. Where
# python3 has no ensurepip (Debian without python3-venv), the venv is made
# without pip and a pinned, hash-checked pip wheel bootstraps it.
ENGINE_VENV=third_party/venv-engine
ENGINE_REQ=scripts/requirements-engine.txt
ENGINE_PIP="pip 26.3 f3b60b20ffaadd4415ed7957212a38ac63fa4c5fa375bd0f4a797777940fad13"
engine_stamp=$(sha256sum "$ENGINE_REQ" | cut -d' ' -f1)
if [ "$(cat "$ENGINE_VENV/.requirements.sha256" 2>/dev/null)" != "$engine_stamp" ] ||
	! "$ENGINE_VENV/bin/python" -c 'import xllamacpp, gguf' >/dev/null 2>&1; then
	rm -rf "$ENGINE_VENV"
	mkdir -p third_party
	if ! python3 -m venv "$ENGINE_VENV" >/dev/null 2>&1; then
		rm -rf "$ENGINE_VENV"
		python3 -m venv --without-pip "$ENGINE_VENV"
		read -r pname pver psha <<<"$ENGINE_PIP"
		"$ENGINE_VENV/bin/python" - "$pname" "$pver" "$psha" third_party/.dl <<'PY'
import hashlib, os, re, sys, urllib.request
name, ver, want, dest = sys.argv[1:]
index = os.environ.get("MUH_PYPI_SIMPLE", "https://pypi.org/simple")
page = urllib.request.urlopen(f"{index}/{name}/", timeout=120).read().decode()
m = re.search(r'href="([^"]*?/(' + name + "-" + re.escape(ver) +
              r'-py3-none-any\.whl))#sha256=([0-9a-f]+)"', page)
if not m:
    sys.exit(f"deps: no {name}=={ver} wheel on {index}")
url = m.group(1) if not m.group(1).startswith("/") else "https://pypi.org" + m.group(1)
data = urllib.request.urlopen(url, timeout=600).read()
if hashlib.sha256(data).hexdigest() != want:
    sys.exit(f"deps: sha256 mismatch for {m.group(2)}")
os.makedirs(dest, exist_ok=True)
with open(os.path.join(dest, m.group(2)), "wb") as f:
    f.write(data)
PY
		whl=third_party/.dl/$pname-$pver-py3-none-any.whl
		"$ENGINE_VENV/bin/python" "$whl/pip" install -q --no-index --disable-pip-version-check "$whl"
		rm -f "$whl"
	fi
	"$ENGINE_VENV/bin/python" -m pip install -q --disable-pip-version-check \
		--require-hashes --only-binary=:all: -r "$ENGINE_REQ"
	echo "$engine_stamp" >"$ENGINE_VENV/.requirements.sha256"
	echo "deps: $ENGINE_REQ -> $ENGINE_VENV (sha256 ok)"
fi

# The Triton tests' venv (TRITON_INTERPRET=1 runs the Triton kernels and the
# Triton worker on the CPU): Debian's own python3 with its CPU torch
# (python3-torch 1.13.1 with numpy 1.24, from apt; PyPI's x86_64 torch is the
# CUDA build, gigabytes of nvidia-* wheels) seen through
# --system-site-packages, plus the Triton wheel pinned in scripts/deps.lock
# (tag wheel), hash-checked by pip, without dependencies (Triton 3.6 has
# none). scripts/torch_compat.py fills what torch 1.13 lacks of the 2.x API
# that Triton's interpreter uses; a .pth imports it at start-up. Skipped when
# made from the same pin and compat file and still importing, and when
# MUH_DEPS_TRITON=0 (the quick start needs none of it).
triton_venv() {
	# the version tested; Debian's archive keeps only its newest, so another
	# one is installed if it moved, and said
	local torch_deb=1.13.1+dfsg-4 have
	if ! dpkg -s python3-torch >/dev/null 2>&1; then
		echo "deps: installing python3-torch"
		SUDO=""
		[ "$(id -u)" = 0 ] || SUDO=sudo
		$SUDO apt-get update -qq
		DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
			"python3-torch=$torch_deb" || DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
			--no-install-recommends python3-torch
	fi
	have=$(dpkg-query -W -f '${Version}' python3-torch)
	[ "$have" = "$torch_deb" ] || echo "deps: note: python3-torch $have installed, $torch_deb is the version tested"
	TRITON_VENV=third_party/venv-triton
	read -r tname tver tsha _ <<<"$(awk '$4 == "venv-triton" && $5 == "wheel"' scripts/deps.lock)"
	triton_stamp=$(printf '%s %s %s\n' "$tname" "$tver" "$tsha" | cat - scripts/torch_compat.py | sha256sum | cut -d' ' -f1)
	if [ "$(cat "$TRITON_VENV/.stamp.sha256" 2>/dev/null)" != "$triton_stamp" ] ||
		! "$TRITON_VENV/bin/python" -c 'import torch, triton' >/dev/null 2>&1; then
		rm -rf "$TRITON_VENV"
		mkdir -p third_party
		/usr/bin/python3 -m venv --system-site-packages "$TRITON_VENV"
		printf '%s==%s --hash=sha256:%s\n' "$tname" "$tver" "$tsha" >"$TRITON_VENV/requirements.txt"
		"$TRITON_VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps \
			--require-hashes --only-binary=:all: -r "$TRITON_VENV/requirements.txt"
		site=$("$TRITON_VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
		cp scripts/torch_compat.py "$site/muh_torch_compat.py"
		echo "import muh_torch_compat" >"$site/muh_torch_compat.pth"
		"$TRITON_VENV/bin/python" -c 'import torch, triton; print("deps: torch", torch.__version__, "triton", triton.__version__)'
		echo "$triton_stamp" >"$TRITON_VENV/.stamp.sha256"
		echo "deps: $tname $tver -> $TRITON_VENV (sha256 ok)"
	fi
}
[ "${MUH_DEPS_TRITON:-1}" != 1 ] || triton_venv
