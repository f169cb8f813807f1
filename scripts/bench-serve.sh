#!/usr/bin/env bash
# Load benchmark of dprl serve (issue 19): 64 concurrent simulated users against one server
# with durable group commits, on loopback, bounded in count (USERS, default 200000) and time
# (TIMEOUT seconds, default 600). Prints accepted reports/s and p50/p99 latency (from the
# client), the group commits (reports per fsync), and the server's resident memory sampled
# every 2 s (flat = bounded state). PROFILE=DIR also writes the CPU profiles of the server and
# of the simulator (DIR/serve.pprof, DIR/client.pprof; go tool pprof -top DIR/serve.pprof).
# STORE=postgres serves from a throw-away PostgreSQL cluster (scripts/pg-scratch.sh) instead of bbolt.
#   AGENT=practical-jdp USERS=1000000 scripts/bench-serve.sh
set -euo pipefail
cd "$(dirname "$0")/.."
USERS=${USERS:-200000}
AGENT=${AGENT:-practical-jdp}
CONC=${CONC:-64}
TIMEOUT=${TIMEOUT:-600}
tmp=$(mktemp -d)
STORE=${STORE:-bbolt} srv=
store=()
trap 'kill $srv 2>/dev/null || true; wait 2>/dev/null || true; [ "$STORE" = postgres ] && scripts/pg-scratch.sh stop "$tmp/pg"; rm -rf "$tmp"' EXIT
if [ "$STORE" = postgres ]; then
	chmod 755 "$tmp"
	store=(--store "$(scripts/pg-scratch.sh start "$tmp/pg")")
fi
go build -o "$tmp/dprl" ./cmd/dprl
export DPRL_ADMIN_TOKEN=bench-admin-token-0123456789 DPRL_CLIENT_TOKEN=bench-client-token-0123456789
prof_srv=() prof_cli=()
if [ -n "${PROFILE:-}" ]; then
	mkdir -p "$PROFILE"
	prof_srv=(--cpu-profile "$PROFILE/serve.pprof") prof_cli=(--cpu-profile "$PROFILE/client.pprof")
fi
"$tmp/dprl" serve --data "$tmp/data" --addr 127.0.0.1:0 ${prof_srv[@]+"${prof_srv[@]}"} ${store[@]+"${store[@]}"} >"$tmp/serve.out" 2>"$tmp/serve.err" &
srv=$!
for _ in $(seq 100); do grep -q "listening on" "$tmp/serve.out" 2>/dev/null && break; sleep 0.1; done
url=$(sed -n 's/.*listening on \([^ ]*\).*/\1/p' "$tmp/serve.out")
for _ in $(seq 100); do curl -sf "$url/readyz" >/dev/null && break; sleep 0.1; done # a shared store: until it leads
(while kill -0 $srv 2>/dev/null; do
	awk '/VmRSS/{print $2}' /proc/$srv/status 2>/dev/null >>"$tmp/rss"
	curl -s "$url/metrics" | awk '/^go_memstats_heap_inuse_bytes/{print $2/1024}' >>"$tmp/heap"
	sleep 2
done) &
echo "dprl serve at $url (store $STORE): $USERS users of tabular $AGENT (RiverSwim H = 20, ε = 1, δ = 1e-5), concurrency $CONC, durable commits"
timeout "$TIMEOUT" "$tmp/dprl" client simulate --server "$url" --family tabular --agent "$AGENT" --env riverswim \
	--epsilon 1 --delta 1e-5 --capacity "$USERS" --users "$USERS" --concurrency "$CONC" ${prof_cli[@]+"${prof_cli[@]}"}
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
