#!/usr/bin/env bash
# A throw-away PostgreSQL cluster in a scratch directory, for benchmarks and trials of
# `dprl serve --store postgres://…` (the Go tests use internal/pgtest, which does the same).
#   scripts/pg-scratch.sh start DIR   # initdb into DIR/data, start on a Unix socket in DIR; prints the URL of database dprl
#   scripts/pg-scratch.sh stop DIR    # stop it (DIR is left for you to remove)
# Trust authentication on a socket only (no TCP port); under root the cluster runs as the
# system user postgres (PostgreSQL refuses root). Durable settings (fsync, synchronous_commit on).
set -euo pipefail
cmd=${1:?start or stop}
dir=$(realpath -m "${2:?scratch directory}")
bin=$(dirname "$(readlink -f "$(command -v initdb 2>/dev/null || ls /usr/lib/postgresql/*/bin/initdb 2>/dev/null | sort -V | tail -1)")")
[ -x "$bin/pg_ctl" ] || { echo "pg-scratch: PostgreSQL is not installed (apt-get install postgresql-15)" >&2; exit 2; }
as=()
[ "$(id -u)" = 0 ] && as=(runuser -u postgres --)
port=5488
case "$cmd" in
start)
	mkdir -p "$dir"
	[ "$(id -u)" = 0 ] && chown postgres "$dir"
	"${as[@]}" "$bin/initdb" -D "$dir/data" -U dprl -A trust -E UTF8 --no-instructions >"$dir/initdb.log"
	printf "listen_addresses = ''\nunix_socket_directories = '%s'\nport = %d\nmax_connections = 200\nshared_buffers = 256MB\n" "$dir" "$port" >>"$dir/data/postgresql.conf"
	"${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w start >/dev/null
	"${as[@]}" "$bin/createdb" -h "$dir" -p "$port" -U dprl dprl
	echo "postgres://dprl@localhost:$port/dprl?host=$dir&sslmode=disable"
	;;
stop)
	"${as[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
	;;
*)
	echo "pg-scratch: start or stop" >&2
	exit 2
	;;
esac
