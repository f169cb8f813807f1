#!/usr/bin/env bash
# Speed of practical-jdp against the public peer's JDP agent (docs/privacy.md, "Speed against
# the public peer"): whole runs of K = 3·10⁴ episodes on RiverSwim H = 20 at ε = 1, single
# threaded, setup included, and the agent's setup time alone.
#
#   scripts/bench-practical-jdp.sh [PEER_DIR [PEER_EPISODES]]
#
# Without PEER_DIR only dprl is measured. With it, scripts/peer_riverswim.py times the peer's
# UCBVI_JDP (module finite_tabular_agents in PEER_DIR; its code is not part of dprl) for
# PEER_EPISODES episodes (default 30000; needs python3 with numpy) and the ratio of episodes/s
# is printed. Run on an otherwise idle machine: both sides are single-threaded.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(go test ./agents/tabular -run '^$' -bench '^BenchmarkPracticalJDP(Setup|Run)$' -benchtime 10x -count 3)
echo "$out" | grep -E '^Benchmark'
dprl=$(echo "$out" | awk '/^BenchmarkPracticalJDPRun/ {for (i = 1; i < NF; i++) if ($(i+1) == "episodes/s") print $i}' | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}')
echo "dprl practical-jdp, K = 30000: median ${dprl} episodes/s"
if [ $# -ge 1 ]; then
	peer=$(python3 scripts/peer_riverswim.py --peer-dir "$1" --episodes "${2:-30000}")
	echo "$peer"
	p=$(echo "$peer" | sed -E 's/.* ([0-9.]+) episodes\/s.*/\1/')
	awk -v d="$dprl" -v p="$p" 'BEGIN {printf "ratio dprl / peer: %.0f×\n", d / p}'
fi
