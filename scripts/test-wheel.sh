#!/usr/bin/env bash
# The platform wheel on a machine without Go (issue 28 item 1), as .ci/run runs it after
# scripts/build-wheel.sh: in a fresh venv, with no `go` and no `dprl` on PATH, an empty HOME (no
# cache of an earlier build) and a working directory outside the checkout,
#   1. the README's `pip install dist/dprl-*.whl "gymnasium==…"` as written (its gymnasium must be
#      the version python/pyproject.toml pins),
#   2. the README's Gymnasium example (its ```python block under "From Python and Gymnasium"), as
#      written, which starts a local dprl serve through dprl.gym.run,
#   3. a check that dprl.server found the bundled binary (dprl/bin/dprl inside the venv), and that
#      with that binary replaced by one reporting another version LocalServer() raises the clear
#      ServerError (no fallback; nothing built into HOME/.cache/dprl).
# Prints each step's duration.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
t0=$SECONDS

section=$(awk '/^## From Python and Gymnasium/{on=1; next} /^## /{on=0} on' README.md)
install=$(printf '%s\n' "$section" | grep -m 1 '^pip install dist/dprl-\*\.whl ' | sed 's/[[:space:]]*#.*$//')
example=$(printf '%s\n' "$section" | awk '/^```python$/{on=1; next} /^```/{if (on) exit} on')
if [ -z "$install" ] || [ -z "$example" ]; then
	echo "test-wheel.sh: README.md's \"From Python and Gymnasium\" has no 'pip install dist/dprl-*.whl …' line or no \`\`\`python block" >&2
	exit 1
fi
pinned=$(sed -n 's/.*"gymnasium==\([0-9.]*\)".*/\1/p' python/pyproject.toml | head -n 1)
case "$install" in
*"\"gymnasium==$pinned\""*) ;;
*)
	echo "test-wheel.sh: the README installs '$install', not the pinned gymnasium==$pinned" >&2
	exit 1
	;;
esac
wheels=(dist/dprl-*.whl)
if [ "${#wheels[@]}" -ne 1 ] || [ ! -f "${wheels[0]}" ]; then
	echo "test-wheel.sh: dist/ must hold exactly one dprl wheel (scripts/build-wheel.sh), found: ${wheels[*]}" >&2
	exit 1
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
venv=$scratch/venv
home=$scratch/home
work=$scratch/work
mkdir "$home" "$work"
python3 -m venv "$venv"
# PATH: the venv first, then this PATH without any directory holding a go or dprl executable.
path=$venv/bin
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
	[ -n "$d" ] && [ ! -x "$d/go" ] && [ ! -x "$d/dprl" ] && [[ $d != /usr/local/go/* && $d != /root/go/* ]] && path=$path:$d
done
envs=(HOME="$home" PATH="$path" LANG=C.UTF-8 TMPDIR="${TMPDIR:-/tmp}")
while IFS= read -r kv; do envs+=("$kv"); done < <(env | grep -E '^(PIP_[A-Z_]*|https?_proxy|HTTPS?_PROXY|no_proxy|NO_PROXY|SSL_CERT_FILE)=' || true)
clean() { env -i "${envs[@]}" "$@"; }
if clean sh -c 'command -v go || command -v dprl'; then
	echo "test-wheel.sh: go or dprl still on the test's PATH" >&2
	exit 1
fi
t1=$SECONDS
echo "test-wheel.sh: venv and clean environment ready ($((t1 - t0)) s); $install"
(cd "$root" && clean sh -c "$install -q")
t2=$SECONDS
echo "test-wheel.sh: installed ($((t2 - t1)) s); running the README's example in $work"
printf '%s\n' "$example" >"$scratch/example.py"
(cd "$work" && clean timeout 900 python - <"$scratch/example.py")
t3=$SECONDS
(cd "$work" && clean python -c '
from dprl.server import bundled_binary, find_binary
import sys
b = find_binary()
assert b == bundled_binary() and b.is_relative_to(sys.prefix), (b, sys.prefix)
print(f"test-wheel.sh: the binary used is the bundled one, {b}")
')
# The same wheel with its binary swapped for one of another version: a clear error, no fallback.
bundled=$(cd "$work" && clean python -c 'from dprl.server import bundled_binary; print(bundled_binary())')
printf '#!/bin/sh\necho "dprl version 0.0.0-other"\n' >"$bundled"
if out=$(cd "$work" && clean python -c 'from dprl.server import LocalServer; LocalServer()' 2>&1); then
	echo "test-wheel.sh: a bundled binary of another version was used" >&2
	exit 1
fi
case "$out" in
*"ServerError: $bundled (bundled with this package) is dprl 0.0.0-other, but this Python package is dprl "*) ;;
*)
	echo "test-wheel.sh: a bundled binary of another version: unexpected error: $out" >&2
	exit 1
	;;
esac
echo "test-wheel.sh: a bundled binary of another version is refused: ${out##*$'\n'}"
if [ -e "$home/.cache/dprl" ]; then
	echo "test-wheel.sh: something was built into $home/.cache/dprl" >&2
	exit 1
fi
echo "test-wheel.sh: passed in $((SECONDS - t0)) s (venv $((t1 - t0)) s, pip install $((t2 - t1)) s, example $((t3 - t2)) s)"
