#!/usr/bin/env bash
# Speed of practical-jdp against the public peer's JDP agent (docs/privacy.md, "Speed against
# the public peer"; docs/performance.md, "Fixed cost of a run"), RiverSwim H = 20 at ε = 1:
#
#  1. the agent alone: BenchmarkPracticalJDPRun, whole runs of K = 3·10⁴ episodes single
#     threaded, setup included, and the agent's setup time (BenchmarkPracticalJDPSetup);
#  2. whole processes: RUNS (default 21) `dprl run` processes of the tiny run (K = 1 000,
#     one seed: what a user waits for, figures, summary, fsyncs and process start included)
#     and RUNS of K = 3·10⁴; median, minimum and maximum wall time, CPU time per run.
#
#   scripts/bench-practical-jdp.sh [PEER_DIR [PEER_EPISODES]]
#
# Without PEER_DIR only dprl is measured. With it, scripts/peer_riverswim.py times the peer's
# UCBVI_JDP (module finite_tabular_agents in PEER_DIR; its code is not part of dprl; needs
# python3 with numpy): its episodes/s over PEER_EPISODES episodes (default 30000, one whole
# process of 2–3 minutes, also timed as a process) against BenchmarkPracticalJDPRun's, then
# PEER_RUNS (default RUNS) whole peer processes of the tiny run (about 5 s each), and the
# whole-run ratios (peer process wall time / dprl's median) at K = 1 000 and 3·10⁴ (one more
# peer process of K = 3·10⁴ when PEER_EPISODES is another K). The load average is printed before
# and after each part: the machine should be otherwise idle.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-21}
PEER_RUNS=${PEER_RUNS:-$RUNS}

out=$(go test ./agents/tabular -run '^$' -bench '^BenchmarkPracticalJDP(Setup|Run)$' -benchtime 10x -count 3)
echo "$out" | grep -E '^Benchmark'
dprl=$(echo "$out" | awk '/^BenchmarkPracticalJDPRun/ {for (i = 1; i < NF; i++) if ($(i+1) == "episodes/s") print $i}' | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
echo "dprl practical-jdp, K = 30000: median ${dprl} episodes/s"
if [ $# -ge 1 ]; then
	s=${EPOCHREALTIME/[.,]/}
	peer=$(python3 scripts/peer_riverswim.py --peer-dir "$1" --episodes "${2:-30000}")
	e=${EPOCHREALTIME/[.,]/}
	peer_whole=$(((e - s) / 1000)) # ms, the whole process
	echo "$peer"
	echo "peer UCBVI_JDP, K = ${2:-30000}, whole process: ${peer_whole} ms"
	p=$(echo "$peer" | sed -E 's/.* ([0-9.]+) episodes\/s.*/\1/')
	awk -v d="$dprl" -v p="$p" 'BEGIN {printf "ratio dprl / peer (agent episodes/s): %.0f×\n", d / p}'
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/dprl" ./cmd/dprl

# child_cpu sets cpu to the user + system CPU seconds of this shell's finished children (times
# must run in this shell: in a command substitution it would report the subshell's).
child_cpu() {
	times >"$tmp/times"
	cpu=$(tail -n 1 "$tmp/times" | awk '{s = 0; for (i = 1; i <= 2; i++) {split($i, a, /[ms]/); s += a[1] * 60 + a[2]}; print s}')
}

# timed N NAME CMD...: runs CMD N times (OUT set to a fresh directory each time), prints
# "NAME: median … ms (min …, max …) over N runs, CPU … ms per run" and sets median (ms).
timed() {
	local n=$1 name=$2 i s e c0 walls=()
	shift 2
	child_cpu
	c0=$cpu
	for ((i = 0; i < n; i++)); do
		OUT="$tmp/run-$i"
		s=${EPOCHREALTIME/[.,]/}
		"$@" >/dev/null
		e=${EPOCHREALTIME/[.,]/}
		walls+=($((e - s))) # µs; nothing else runs between the runs, so CPU is theirs alone
	done
	child_cpu
	rm -rf "$tmp"/run-*
	median=$(printf '%s\n' "${walls[@]}" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)] / 1000}')
	printf '%s\n' "${walls[@]}" | sort -g | awk -v name="$name" -v n="$n" -v c0="$c0" -v c1="$cpu" \
		'{v[NR] = $1 / 1000} END {printf "%s: median %.1f ms (min %.1f, max %.1f) over %d runs, CPU %.1f ms per run\n", name, v[int((NR + 1) / 2)], v[1], v[NR], n, (c1 - c0) * 1000 / n}'
}

dprl_run() { "$tmp/dprl" run --env riverswim --agent practical-jdp --epsilon 1 --delta 1e-5 --seeds 1 --quiet --out "$OUT" "$@"; }
echo "load average before the whole runs: $(cut -d' ' -f1-3 /proc/loadavg)"
timed "$RUNS" "dprl run, K = 1000 (tiny run), whole process" dprl_run --episodes 1000
tiny=$median
timed "$RUNS" "dprl run, K = 30000, whole process" dprl_run --episodes 30000
whole=$median
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ $# -ge 1 ]; then
	peer_run() { python3 scripts/peer_riverswim.py --peer-dir "$PEER" "$@"; }
	PEER=$1
	timed "$PEER_RUNS" "peer UCBVI_JDP, K = 1000, whole process" peer_run --episodes 1000
	awk -v d="$tiny" -v p="$median" 'BEGIN {printf "whole-run ratio peer / dprl at K = 1000: %.0f×\n", p / d}'
	if [ "${2:-30000}" != 30000 ]; then
		timed 1 "peer UCBVI_JDP, K = 30000, whole process" peer_run --episodes 30000
		peer_whole=$median
	fi
	awk -v d="$whole" -v p="$peer_whole" 'BEGIN {printf "whole-run ratio peer / dprl at K = 30000: %.0f×\n", p / d}'
	echo "load average after the peer: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
