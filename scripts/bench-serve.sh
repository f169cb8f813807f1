#!/usr/bin/env bash
# Load benchmark of dprl serve (issues 19, 28): 64 concurrent simulated users against one server
# with durable group commits, on loopback, bounded in count (USERS, default 200000) and time
# (TIMEOUT seconds, default 600). Prints accepted reports/s and p50/p99 latency (from the
# client), the group commits (reports per fsync), and the server's resident memory sampled
# every 2 s (flat = bounded state). PROFILE=DIR also writes the CPU profiles of the server and
# of the simulator (DIR/serve.pprof, DIR/client.pprof; go tool pprof -top DIR/serve.pprof).
# STORE=postgres serves from a throw-away PostgreSQL cluster (scripts/pg-scratch.sh) instead of bbolt.
#
# Then the floor (FLOOR=0 skips it): the same simulator, users and concurrency against
# scripts/floor (internal/benchfloor), the least a durable report server does — token check,
# body read, bbolt group commit with fsync, acknowledgement after the commit; no credential,
# participation, idempotency, decoding or curator — and the ratio of the two.
#   AGENT=practical-jdp USERS=1000000 scripts/bench-serve.sh
set -euo pipefail
cd "$(dirname "$0")/.."
USERS=${USERS:-200000}
AGENT=${AGENT:-practical-jdp}
CONC=${CONC:-64}
TIMEOUT=${TIMEOUT:-600}
FLOOR=${FLOOR:-1}
STORE=${STORE:-bbolt}
tmp=$(mktemp -d)
pids=()
trap 'for p in ${pids[@]+"${pids[@]}"}; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; [ "$STORE" = postgres ] && scripts/pg-scratch.sh stop "$tmp/pg"; rm -rf "$tmp"' EXIT
store=()
if [ "$STORE" = postgres ]; then
	chmod 755 "$tmp"
	store=(--store "$(scripts/pg-scratch.sh start "$tmp/pg")")
fi
go build -o "$tmp/dprl" ./cmd/dprl
go build -o "$tmp/floor" ./scripts/floor
export DPRL_ADMIN_TOKEN=bench-admin-token-0123456789 DPRL_CLIENT_TOKEN=bench-client-token-0123456789
prof_srv=() prof_cli=()
if [ -n "${PROFILE:-}" ]; then
	mkdir -p "$PROFILE"
	prof_srv=(--cpu-profile "$PROFILE/serve.pprof") prof_cli=(--cpu-profile "$PROFILE/client.pprof")
fi

# start NAME CMD…: starts a server writing to $tmp/NAME.out and sets url to what it printed.
start() {
	local name=$1
	shift
	"$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
	pids+=($!)
	srv=$!
	for _ in $(seq 100); do grep -q "listening on" "$tmp/$name.out" 2>/dev/null && break; sleep 0.1; done
	url=$(sed -n 's/.*listening on \([^ ]*\).*/\1/p' "$tmp/$name.out")
}

# simulate URL OUT [flags…]: the load; the summary line goes to stdout and to OUT.
simulate() {
	local to=$1 out=$2
	shift 2
	timeout "$TIMEOUT" "$tmp/dprl" client simulate --server "$to" --family tabular --agent "$AGENT" --env riverswim \
		--epsilon 1 --delta 1e-5 --capacity "$USERS" --users "$USERS" --concurrency "$CONC" "$@" | tee "$out"
}

# costs PID SUMMARY NAME: the bytes the server wrote to storage (/proc/PID/io) and the CPU
# time it used (/proc/PID/stat, user + system), per report.
costs() {
	local w n cpu
	w=$(awk '/^write_bytes/{print $2}' "/proc/$1/io" 2>/dev/null || echo 0)
	cpu=$(awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0)
	n=$(sed -n 's/.* \([0-9][0-9]*\) reports acknowledged.*/\1/p' "$2")
	[ -n "$n" ] && [ "$n" -gt 0 ] && awk -v w="$w" -v n="$n" -v cpu="$cpu" -v hz="$(getconf CLK_TCK)" -v name="$3" 'BEGIN {
		printf "%s wrote %.0f MiB to storage, %.1f KiB per report; CPU %.1f s, %.0f µs per report\n", name, w/1048576, w/1024/n, cpu/hz, 1e6*cpu/hz/n }'
	return 0
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
start serve "$tmp/dprl" serve --data "$tmp/data" --addr 127.0.0.1:0 ${prof_srv[@]+"${prof_srv[@]}"} ${store[@]+"${store[@]}"}
for _ in $(seq 100); do curl -sf "$url/readyz" >/dev/null && break; sleep 0.1; done # a shared store: until it leads
(while kill -0 $srv 2>/dev/null; do
	awk '/VmRSS/{print $2}' /proc/$srv/status 2>/dev/null >>"$tmp/rss"
	curl -s "$url/metrics" | awk '/^go_memstats_heap_inuse_bytes/{print $2/1024}' >>"$tmp/heap"
	sleep 2
done) &
echo "dprl serve at $url (store $STORE): $USERS users of tabular $AGENT (RiverSwim H = 20, ε = 1, δ = 1e-5), concurrency $CONC, durable commits"
simulate "$url" "$tmp/serve.sum" ${prof_cli[@]+"${prof_cli[@]}"}
curl -s "$url/metrics" | awk '/^dprl_commit_batches_total/{n=$2} /^dprl_committed_reports_total/{r=$2}
	END {if (n > 0) printf "group commits: %d (%.1f reports per commit and fsync)\n", n, r/n}'
sleep 2
for f in heap rss; do
	awk -v what="$f" 'NR==1{first=$1} {a[NR]=$1; if ($1>max) max=$1} END {
	n=NR; printf "server %s (MiB): first %.0f, at 25%% %.0f, 50%% %.0f, 75%% %.0f, last %.0f, max %.0f (%d samples every 2 s)\n",
	(what=="heap" ? "Go heap in use" : "RSS (includes the mmapped database file)"),
	first/1024, a[int(n/4)+1]/1024, a[int(n/2)+1]/1024, a[int(3*n/4)+1]/1024, a[n]/1024, max/1024, n}' "$tmp/$f"
done
if [ "$STORE" = postgres ]; then
	du -sm "$tmp/pg/data" | awk '{printf "PostgreSQL data directory: %d MiB\n", $1}'
else
	ls -l "$tmp/data/dprl.db" | awk '{printf "database file: %.0f MiB\n", $5/1048576}'
fi
costs "$srv" "$tmp/serve.sum" "dprl serve"
kill -TERM "$srv"
wait "$srv" 2>/dev/null || true
[ "$FLOOR" = 0 ] && exit 0

# The floor: a second dprl serve answers the experiment's creation, the credentials and the
# policy (no reports reach it); the floor takes every report.
echo "load average before the floor: $(cut -d' ' -f1-3 /proc/loadavg)"
start backend "$tmp/dprl" serve --data "$tmp/backend" --addr 127.0.0.1:0
backend=$url
start floor "$tmp/floor" --data "$tmp/floor-data" --backend "$backend" --addr 127.0.0.1:0
echo "floor at $url (control requests to dprl serve at $backend): same users, concurrency and simulator"
simulate "$url" "$tmp/floor.sum"
ls -l "$tmp/floor-data/floor.db" | awk '{printf "floor database file: %.0f MiB\n", $5/1048576}'
costs "$srv" "$tmp/floor.sum" floor
summary() { sed -n 's/.* \([0-9][0-9]*\) reports\/s, latency p50 \([^ ]*\) p99 \([^,]*\),.*/\1 \2 \3/p' "$1"; }
read -r s_rate s_p50 s_p99 < <(summary "$tmp/serve.sum")
read -r f_rate f_p50 f_p99 < <(summary "$tmp/floor.sum")
awk -v s="$s_rate" -v f="$f_rate" -v sp50="$s_p50" -v sp99="$s_p99" -v fp50="$f_p50" -v fp99="$f_p99" 'BEGIN {
	printf "dprl serve: %d reports/s (p50 %s, p99 %s); floor: %d reports/s (p50 %s, p99 %s); dprl serve / floor = %.0f %%\n",
		s, sp50, sp99, f, fp50, fp99, 100 * s / f }'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
