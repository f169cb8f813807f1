#!/usr/bin/env bash
# Side-by-side wall time of every reproduction, the binary of a base revision against the work
# tree's, the two alternating, with a check that both write byte-identical CSVs.
#
#   scripts/side-by-side.sh BASE_REV [RUNS [FILTER]]
#
# RUNS (default 2) runs of each binary per reproduction (FILTER, a grep -E pattern, selects
# reproductions by their command line); prints one line per run and, per
# reproduction, the faster run of each binary, the change and whether the CSVs are identical.
# Run it on an idle machine: it takes about 8 minutes with RUNS=2 on 2 cores.
set -euo pipefail
base=${1:?usage: scripts/side-by-side.sh BASE_REV [RUNS [FILTER]]}
runs=${2:-2}
filter=${3:-.}
top=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'git -C "$top" worktree remove --force "$work/base" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git -C "$top" worktree add -q --detach "$work/base" "$base"
(cd "$work/base" && go build -o "$work/before" ./cmd/dprl)
(cd "$top" && go build -o "$work/after" ./cmd/dprl)

repros=(
	"qiao-fig1 --episodes 10000"
	"linear-mdp --episodes 4000"
	"linear-mixture --episodes 4000"
	"lq --episodes 4000"
	"practical-tabular --episodes 10000"
	"practical-linear-mdp --episodes 20000"
	"practical-linear-mixture"
	"practical-lq --episodes 20000"
)
printf '%-40s %9s %9s %8s  %s\n' reproduction before after change csv
for r in "${repros[@]}"; do
	grep -qE -- "$filter" <<<"$r" || continue
	declare -A best=([before]=inf [after]=inf)
	for ((i = 0; i < runs; i++)); do
		for b in before after; do
			out="$work/out-$b"
			rm -rf "$out"
			s=$(date +%s.%N)
			# shellcheck disable=SC2086
			"$work/$b" reproduce $r --seeds 1-2 --workers 2 --quiet --out "$out" >/dev/null
			e=$(date +%s.%N)
			t=$(echo "$e - $s" | bc)
			echo "# $r $b $t" >&2
			if [ "${best[$b]}" = inf ] || [ "$(echo "$t < ${best[$b]}" | bc)" = 1 ]; then
				best[$b]=$t
			fi
			(cd "$out" && find . -name '*.csv' -print0 | sort -z | xargs -0 sha256sum) >"$work/sums-$b"
		done
	done
	same=identical
	cmp -s "$work/sums-before" "$work/sums-after" || same=DIFFERENT
	printf '%-40s %9.2f %9.2f %+7.1f%%  %s\n' "$r" "${best[before]}" "${best[after]}" \
		"$(echo "100 * (${best[after]} - ${best[before]}) / ${best[before]}" | bc -l)" "$same"
	unset best
done
