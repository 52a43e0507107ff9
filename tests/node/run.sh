#!/bin/sh
# Differential check of Node libraries against redis-server and limitdb.
# Not called from CI. Needs node >= 20, npm, redis-server, go.
# Usage: tests/node/run.sh [REF_PORT] [CAND_PORT] [CLUSTER_PORT]
# (defaults 7990 7991 7992; CLUSTER_PORT is a limitdb in cluster mode)
set -eu
cd "$(dirname "$0")"
REF=${1:-7990}
CAND=${2:-7991}
CLUSTER=${3:-7992}
WORK=$(mktemp -d)
cp check.js check-node-redis.js check-cluster.js package.json "$WORK/"
(cd "$WORK" && npm install --no-audit --no-fund --silent >/dev/null)
go build -o "$WORK/limitdb" ../../cmd/limitdb
redis-server --port "$REF" --save '' --daemonize yes --pidfile "$WORK/redis.pid"
"$WORK/limitdb" --bind 127.0.0.1 --port "$CAND" >"$WORK/limitdb.log" 2>&1 &
LPID=$!
"$WORK/limitdb" --bind 127.0.0.1 --port "$CLUSTER" --cluster-enabled yes --appendonly no --save '' >"$WORK/limitdb-cluster.log" 2>&1 &
CPID=$!
cleanup() { kill "$(cat "$WORK/redis.pid")" "$LPID" "$CPID" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
sleep 0.5
rc=0
node "$WORK/check.js" "$REF" "$CAND" || rc=1
node "$WORK/check-node-redis.js" "$REF" "$CAND" || rc=1
redis-cli -p "$CLUSTER" CLUSTER ADDSLOTSRANGE 0 16383 >/dev/null
node "$WORK/check-cluster.js" "$CLUSTER" || rc=1
exit $rc
