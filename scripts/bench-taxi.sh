#!/usr/bin/env bash
# Speed of practical-jdp on Taxi at Gymnasium's horizon (issue 26 item 5): one run of K
# episodes (default 10⁶) of `dprl run --env taxi` (S = 500, A = 6, H = 200, sparse transitions,
# terminal states, public rewards) at ε = 1, δ = 10⁻⁵ with one worker — setup, every release's
# noise and planning, exact evaluation of every new policy and the run directory included —
# timed by /usr/bin/time -v: wall time, episodes/s, CPU time and peak resident memory.
# The goal is 10⁶ episodes within 10 minutes on one core (≥ 1 700 episodes/s).
#
#   scripts/bench-taxi.sh [K [OUT]]
#
# Run on an otherwise idle machine: the figure is the wall time of one core. The profile of the
# same work at smaller K: BenchmarkPracticalJDPTaxi in agents/tabular (DPRL_TAXI_EPISODES).
set -euo pipefail
cd "$(dirname "$0")/.."
K="${1:-1000000}"
out="${2:-$(mktemp -d)/taxi}"
bin="$(mktemp -d)/dprl"
go build -o "$bin" ./cmd/dprl
log="$(mktemp)"
/usr/bin/time -v "$bin" run --family tabular --env taxi --agent practical-jdp --epsilon 1 --delta 1e-5 \
	--episodes "$K" --seeds 1 --workers 1 --quiet --out "$out" --force >/dev/null 2>"$log"
wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$log")
secs=$(echo "$wall" | awk -F: '{s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s}')
user=$(awk -F': ' '/User time/ {print $2}' "$log")
sys=$(awk -F': ' '/System time/ {print $2}' "$log")
rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$log")
echo "practical-jdp on taxi, K = $K, one worker"
echo "wall ${wall} (${secs} s), $(awk -v k="$K" -v s="$secs" 'BEGIN {printf "%.0f", k / s}') episodes/s"
echo "CPU ${user} s user + ${sys} s system, $(awk -v k="$K" -v u="$user" -v s="$sys" 'BEGIN {printf "%.0f", k / (u + s)}') episodes per CPU second"
echo "peak RSS $(awk -v r="$rss" 'BEGIN {printf "%.0f", r / 1024}') MiB"
grep -E '^\| practical-jdp' "$out/summary.md" || true
