#!/bin/sh
# bench/bgsave.sh — throughput while BGSAVE of a large data set runs: both
# servers get -preload keys (default 1,000,000: INCR pre:i + EXPIRE), then
# the standard workloads run (limitdb built from this tree, against
# redis-server, interleaved as in run.sh) once with no save, then with a
# BGSAVE kept running on limitdb back to back, then with a BGSAVE every
# BGSAVE_EVERY on both servers (the same number of saves on each).
#
#   bench/bgsave.sh
#   LIMITDB_ARGS="--appendonly no" bench/bgsave.sh     # RDB only, no Raft node
#   WORKLOADS=ping,get PRELOAD=200000 bench/bgsave.sh
set -eu
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/limitdb-bgsave-$$}
mkdir -p "$OUT"
go build -o "$OUT/limitdb" ./cmd/limitdb
go build -o "$OUT/loadgen" ./bench/loadgen
# ports: free loopback ones picked by the load generator, unless given
PORTS="${REDIS_PORT:+-redis-port $REDIS_PORT} ${LIMITDB_PORT:+-limitdb-port $LIMITDB_PORT}"
PRELOAD=${PRELOAD:-1000000}
EVERY=${BGSAVE_EVERY:-3s}
WORKLOADS=${WORKLOADS:-ping,get,set,incr,rl-tb}
lg() {
	timeout 180 "$OUT/loadgen" -limitdb-bin "$OUT/limitdb" -limitdb-args "${LIMITDB_ARGS:-}" \
		$PORTS -max-time 60s -preload "$PRELOAD" -workloads "$WORKLOADS" "$@"
}
echo "=== no BGSAVE"
lg -bgsave-loop none
echo "=== BGSAVE back to back on limitdb"
lg -bgsave-loop limitdb
echo "=== BGSAVE every $EVERY on both"
lg -bgsave-loop both -bgsave-every "$EVERY"
rm -rf "$OUT"
