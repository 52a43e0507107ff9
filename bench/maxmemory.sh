#!/bin/sh
# bench/maxmemory.sh — maxmemory against Redis (issue 18): a redis-server
# and limitdb (built from this tree) get maxmemory with allkeys-lru, then
# the same SETS pipelined 1 KB SETs on distinct keys (batches of 500; Redis
# first, then limitdb, so that they never share the cores). Per server:
# keys kept, evicted_keys, error replies (-OOM), refusals while DBSIZE was
# 0, the fewest keys after a batch, load time, server CPU, peak VmRSS
# (sampled after every batch), used_memory and mem_not_counted_for_evict
# at the end; the last column is limitdb / Redis.
#
# Cases: limitdb in its default (durable) configuration and with
# appendonly no, at MAXMEMORY (default 100mb), RUNS times each; then the
# default configuration with 4 MB of headroom over each server's usage at
# the start (maxmemory = used_memory + 4 MB).
#
#   bench/maxmemory.sh
#   RUNS=1 MAXMEMORY=64mb SETS=655360 bench/maxmemory.sh
#   LIMITDB_BIN=/tmp/limitdb-old bench/maxmemory.sh    # another build (before/after)
set -eu
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/limitdb-maxmemory-$$}
mkdir -p "$OUT"
trap 'rm -rf "$OUT"' EXIT
BIN=${LIMITDB_BIN:-$OUT/limitdb}
[ -n "${LIMITDB_BIN:-}" ] || go build -o "$BIN" ./cmd/limitdb
go build -o "$OUT/loadgen" ./bench/loadgen
RUNS=${RUNS:-3}
MAXMEMORY=${MAXMEMORY:-100mb}
SETS=${SETS:-300000}
lg() {
	timeout 300 "$OUT/loadgen" -mode maxmemory -limitdb-bin "$BIN" -maxmemory "$MAXMEMORY" -maxmemory-sets "$SETS" "$@"
}
i=1
while [ "$i" -le "$RUNS" ]; do
	echo "=== run $i: limitdb default (appendonly yes), maxmemory $MAXMEMORY"
	lg
	echo "=== run $i: limitdb --appendonly no, maxmemory $MAXMEMORY"
	lg -limitdb-args "--appendonly no"
	i=$((i + 1))
done
echo "=== limitdb default, 4 MB of headroom over the usage at the start"
lg -headroom 4194304
