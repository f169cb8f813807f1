#!/usr/bin/env bash
# Restart benchmark of `dprl serve` (issue 25 item 6): the time from a data directory holding
# N acknowledged reports (default 10⁶) of tabular practical-jdp on riverswim (H = 20) to a
# serving server, with snapshots (the defaults: every 2 000 reports, raw reports deleted),
# with --retain-reports, after a graceful stop, and without snapshots (the old full replay);
# and the database's size before and after the startup compaction. See BenchmarkRestart in
# service/snapshot_internal_test.go.
#
# Usage: scripts/bench-restart.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-1000000}"
DPRL_BENCH_REPORTS="$n" go test ./service -run '^$' -bench '^BenchmarkRestart$' -benchtime 1x -timeout 120m
