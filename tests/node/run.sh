#!/bin/sh
# Differential check of Node libraries against redis-server and limitdb.
# Not called from CI. Needs node >= 20, npm, redis-server, go.
# Usage: tests/node/run.sh [REF_PORT] [CAND_PORT]   (defaults 7990 7991)
set -eu
cd "$(dirname "$0")"
REF=${1:-7990}
CAND=${2:-7991}
WORK=$(mktemp -d)
cp check.js check-node-redis.js package.json "$WORK/"
(cd "$WORK" && npm install --no-audit --no-fund --silent >/dev/null)
go build -o "$WORK/limitdb" ../../cmd/limitdb
redis-server --port "$REF" --save '' --daemonize yes --pidfile "$WORK/redis.pid"
"$WORK/limitdb" --bind 127.0.0.1 --port "$CAND" >"$WORK/limitdb.log" 2>&1 &
LPID=$!
cleanup() { kill "$(cat "$WORK/redis.pid")" "$LPID" 2>/dev/null || true; rm -rf "$WORK"; }
trap cleanup EXIT
sleep 0.5
rc=0
node "$WORK/check.js" "$REF" "$CAND" || rc=1
node "$WORK/check-node-redis.js" "$REF" "$CAND" || rc=1
exit $rc
