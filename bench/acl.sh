#!/usr/bin/env bash
# The cost of access control, measured in one interleaved run: limitdb with
# requirepass set and every connection authenticated as a non-default ACL
# user with key patterns, against the same binary without authentication.
# Both servers are started here, on loopback, and stopped at the end.
#   bench/acl.sh                     # ping,get,set,incr,rl-native at P=1 and 16
#   WORKLOADS=incr,rl-native bench/acl.sh
set -euo pipefail
cd "$(dirname "$0")/.."
WORKLOADS=${WORKLOADS:-ping,get,set,incr,rl-native}
tmp=$(mktemp -d)
go build -o "$tmp/limitdb" ./cmd/limitdb
go build -o "$tmp/loadgen" ./bench/loadgen
# free loopback ports unless given (fixed ones collided between runs)
REF_PORT=${REF_PORT:-$("$tmp/loadgen" -free-port)}
CAND_PORT=${CAND_PORT:-$("$tmp/loadgen" -free-port)}
while [ "$CAND_PORT" = "$REF_PORT" ]; do CAND_PORT=$("$tmp/loadgen" -free-port); done

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# each its own dir: the default configuration keeps a Raft log there
mkdir -p "$tmp/ref" "$tmp/cand"
"$tmp/limitdb" --port "$REF_PORT" --bind 127.0.0.1 --loglevel warn --dir "$tmp/ref" & pids+=($!); ref=$!
"$tmp/limitdb" --port "$CAND_PORT" --bind 127.0.0.1 --loglevel warn --dir "$tmp/cand" --requirepass secret & pids+=($!); cand=$!
for port in "$REF_PORT" "$CAND_PORT"; do
  for _ in $(seq 100); do
    redis-cli -p "$port" PING >/dev/null 2>&1 && break
    sleep 0.1
  done
done
# the keys every workload uses, and nothing else
redis-cli -p "$CAND_PORT" -a secret --no-auth-warning ACL SETUSER bench on '>benchpass' \
  '~key:*' '~skey:*' '~list:*' '~z:*' '~mk:*' '~rl:*' '~probe:*' '+@all' >/dev/null

"$tmp/loadgen" -redis "127.0.0.1:$REF_PORT" -redis-pid "$ref" \
  -limitdb "127.0.0.1:$CAND_PORT" -limitdb-pid "$cand" -limitdb-auth "bench benchpass" \
  -workloads "$WORKLOADS" -pipeline 1,16 "$@"
