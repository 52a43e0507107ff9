#!/bin/sh
# bench/run.sh — the standard benchmark set: limitdb (built from this tree)
# against a real redis-server, interleaved, each run bounded to ~60 s.
#
#   bench/run.sh                 # throughput table + memory table
#   GOMAXPROCS_LIMITDB=2 bench/run.sh   # a fixed P count (default: limitdb's, procs/)
#   RUNS="core" bench/run.sh     # only the core set (parts: core, lists, blocking, scripts, rl,
#                                # pubsub, sort, memory; sort is not in the default set)
#
# Ports: REDIS_PORT and LIMITDB_PORT (default: free loopback ports).
set -eu
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/limitdb-bench-$$}
mkdir -p "$OUT"
go build -o "$OUT/limitdb" ./cmd/limitdb
go build -o "$OUT/loadgen" ./bench/loadgen
# ports: free loopback ones picked by the load generator, unless given
PORTS="${REDIS_PORT:+-redis-port $REDIS_PORT} ${LIMITDB_PORT:+-limitdb-port $LIMITDB_PORT}"
PROCS=${GOMAXPROCS_LIMITDB:-0}
RUNS=${RUNS:-"core lists blocking scripts rl pubsub memory"}
lg() {
	timeout 90 "$OUT/loadgen" -limitdb-bin "$OUT/limitdb" -gomaxprocs "$PROCS" \
		$PORTS -max-time 60s "$@"
}
for r in $RUNS; do
	echo "=== $r"
	case $r in
	core) lg -workloads ping,get,set,incr ;;
	lists) lg -workloads multi,lpush,zadd ;;
	blocking) lg -workloads blpop ;;
	scripts) lg -workloads evalsha-tb,evalsha-sw,evalsha-fw ;;
	rl) lg -workloads rl-tb,rl-fw ;;
	pubsub) lg -workloads publish ;;
	sort) lg -workloads sort,sort-alpha ;;
	memory)
		# each part on fresh servers: run in sequence on one pair, the
		# sliding logs' garbage was reused by the next part and the rows
		# depended on their order (sliding log 488 B/key after the
		# limiter part, 280 alone)
		for part in incr gcra zset hash; do
			lg -mode memory -mem-skip "$(echo incr,gcra,zset,hash | sed "s/$part//")"
		done ;;
	*) echo "unknown run $r" >&2; exit 2 ;;
	esac
done
rm -rf "$OUT"
