#!/usr/bin/env bash
# Build the platform wheel of the Python package with the dprl binary inside (issue 28 item 1):
#   dist/dprl-VERSION-py3-none-manylinux2014_ARCH.manylinux_2_17_ARCH.musllinux_1_1_ARCH.whl
# 1. go build ./cmd/dprl with CGO_ENABLED=0 -trimpath for linux/GOARCH (default: this machine's;
#    amd64 → x86_64, arm64 → aarch64): a static executable, checked to have no ELF interpreter;
#    run natively, its `dprl --version` must be the package's version (pyproject.toml and
#    dprl.__version__), which is how dprl.server checks it at run time;
# 2. pip wheel of a copy of python/ (the source tree is left untouched) with setuptools and wheel
#    pinned in a throw-away venv: the pure wheel dprl-VERSION-py3-none-any.whl that
#    `pip install ./python` builds too;
# 3. the standard `wheel` tool: unpack, add the binary as dprl/bin/dprl (mode 755), mark the
#    wheel Root-Is-Purelib: false with the platform tags above, pack (RECORD rewritten with the
#    binary's hash). Why these tags: docs/python.md.
# The zip entries carry the last commit's time: two builds of one clean commit with one Go
# toolchain give the same file. Needs Go and Python ≥ 3.10 with venv; pip fetches setuptools and
# wheel. Prints the wheel's path.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
goarch=${GOARCH:-$(go env GOARCH)}
case "$goarch" in
amd64) arch=x86_64 ;;
arm64) arch=aarch64 ;;
*)
	echo "build-wheel.sh: GOARCH=$goarch: only amd64 and arm64 are built (linux)" >&2
	exit 2
	;;
esac
plats=(manylinux_2_17_$arch manylinux2014_$arch musllinux_1_1_$arch)

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' python/pyproject.toml)
pkg_version=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' python/dprl/__init__.py)
if [ -z "$version" ] || [ "$version" != "$pkg_version" ]; then
	echo "build-wheel.sh: python/pyproject.toml version '$version' != dprl.__version__ '$pkg_version'" >&2
	exit 1
fi

# The zip entries' times: the last commit's (wheel pack reads SOURCE_DATE_EPOCH), so that two
# builds of one commit with one Go toolchain give the same wheel.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# 1. The binary.
CGO_ENABLED=0 GOOS=linux GOARCH=$goarch go build -trimpath -ldflags='-s -w' -o "$work/dprl" ./cmd/dprl
python3 - "$work/dprl" <<'PY'
import struct, sys
# A static executable: an ELF file without a PT_INTERP program header (no dynamic loader, no libc).
with open(sys.argv[1], "rb") as f:
    elf = f.read()
assert elf[:4] == b"\x7fELF" and elf[4] == 2 and elf[5] == 1, "not a 64-bit little-endian ELF file"
phoff, = struct.unpack_from("<Q", elf, 32)
phentsize, phnum = struct.unpack_from("<HH", elf, 54)
types = [struct.unpack_from("<I", elf, phoff + i * phentsize)[0] for i in range(phnum)]
if 3 in types:
    sys.exit(f"{sys.argv[1]}: dynamically linked (PT_INTERP): not for a manylinux/musllinux wheel")
PY
if [ "$goarch" = "$(go env GOHOSTARCH)" ]; then
	got=$("$work/dprl" --version)
	if [ "$got" != "dprl version $version" ]; then
		echo "build-wheel.sh: the binary says '$got', the Python package is $version" >&2
		exit 1
	fi
fi

# 2. The pure wheel, from a copy (setuptools writes build/ and *.egg-info next to its sources).
mkdir "$work/src"
cp -r python/pyproject.toml python/README.md python/dprl "$work/src/"
find "$work/src" -name __pycache__ -prune -exec rm -rf {} +
if [ -e "$work/src/dprl/bin" ]; then
	echo "build-wheel.sh: python/dprl/bin exists in the source tree: remove it" >&2
	exit 1
fi
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q setuptools==84.2.1 wheel==0.45.1
"$work/venv/bin/pip" wheel -q --no-deps --no-build-isolation -w "$work/pure" "$work/src"
pure=$(ls "$work"/pure/dprl-"$version"-py3-none-any.whl)

# 3. Into a platform wheel with the binary.
"$work/venv/bin/wheel" unpack -d "$work/unpacked" "$pure" >/dev/null
tree="$work/unpacked/dprl-$version"
install -D -m 755 "$work/dprl" "$tree/dprl/bin/dprl"
meta="$tree/dprl-$version.dist-info/WHEEL"
{
	grep -v -e '^Root-Is-Purelib:' -e '^Tag:' -e '^$' "$meta"
	echo "Root-Is-Purelib: false"
	for p in "${plats[@]}"; do echo "Tag: py3-none-$p"; done
} >"$work/WHEEL"
mv "$work/WHEEL" "$meta"
mkdir -p dist "$work/out"
"$work/venv/bin/wheel" pack -d "$work/out" "$tree" >/dev/null
whl=$(ls "$work"/out/*.whl)
mv -f "$whl" "dist/$(basename "$whl")"
echo "$root/dist/$(basename "$whl")"
