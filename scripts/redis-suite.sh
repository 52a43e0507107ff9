#!/usr/bin/env bash
# Measures limitdb with Redis 7.0.15's own test suite (tests/ of
# redis/redis, external-server mode): every unit file is run once against a
# fresh redis-server and once against a fresh limitdb, each started as
# Redis's CI starts its external server, and the tests passed are printed
# side by side. A measurement tool, not part of scripts/test.sh.
#
#   scripts/redis-suite.sh                  # the default units below
#   scripts/redis-suite.sh unit/sort unit/type/incr
#
# Environment:
#   REDIS_SRC   a Redis 7.0.15 source tree holding tests/ and runtest;
#               or else
#   REDIS_GIT   a git clone of redis/redis, whose tag 7.0.15's tests/ and
#               runtest are extracted (one of the two must be set)
#   OUT         where logs go (default: a new temp dir, printed)
#   TAGS        --tags argument for runtest (default: none, every test the
#               external mode allows)
#   UNIT_TIMEOUT  seconds a unit file may run before it is stopped (300)
#   ONLY        redis | limitdb: run one side only
#   LIMITDB_ARGS  extra limitdb arguments
#   CLUSTER_MODE  1: as Redis's external cluster CI job (test-external-cluster
#               in .github/workflows/external.yml): each server starts with
#               cluster-enabled yes, one node owns all 16,384 slots
#               (CLUSTER ADDSLOTSRANGE 0 16383), the runner gets
#               --cluster-mode, and TAGS defaults to -slow
#
# Each unit file runs on its own server so that a test that hangs or a
# server that dies costs that file only; a file stopped by UNIT_TIMEOUT
# counts the tests passed before it stopped (marked "T").
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

units=("$@")
if [ ${#units[@]} -eq 0 ]; then
  units=(unit/dump unit/auth unit/protocol unit/keyspace unit/scan unit/info
    unit/info-command unit/type/string unit/type/incr unit/type/list
    unit/type/list-2 unit/type/list-3 unit/type/set unit/type/zset
    unit/type/hash unit/sort unit/expire unit/other unit/multi unit/quit
    unit/acl unit/acl-v2 unit/latency-monitor unit/pubsub unit/pubsubshard
    unit/slowlog unit/scripting unit/functions unit/maxmemory
    unit/introspection unit/introspection-2 unit/limits unit/obuf-limits
    unit/bitops unit/lazyfree unit/querybuf unit/tracking unit/networking)
fi

OUT=${OUT:-$(mktemp -d /tmp/redis-suite.XXXXXX)}
mkdir -p "$OUT"
UNIT_TIMEOUT=${UNIT_TIMEOUT:-300}
CLUSTER_MODE=${CLUSTER_MODE:-}
if [ -n "$CLUSTER_MODE" ]; then
  TAGS=${TAGS--slow}
else
  TAGS=${TAGS:-}
fi
ONLY=${ONLY:-}

if [ -z "${REDIS_SRC:-}" ]; then
  if [ -z "${REDIS_GIT:-}" ]; then
    echo "set REDIS_SRC (a Redis 7.0.15 source tree) or REDIS_GIT (a clone of redis/redis)" >&2
    exit 2
  fi
  REDIS_SRC=$OUT/redis-src
  mkdir -p "$REDIS_SRC"
  git -C "$REDIS_GIT" archive 7.0.15 tests runtest |
    tar -x -C "$REDIS_SRC" || { echo "cannot extract Redis's tests" >&2; exit 1; }
fi

go build -o "$OUT/limitdb-server" ./cmd/limitdb || exit 1

# free_port LOW SPAN prints a loopback port in LOW..LOW+SPAN-1 nothing
# listens on. The ranges stay below the kernel's ephemeral ports (32768
# and up), which outgoing connections hold and a listener cannot bind.
free_port() {
  local p
  while :; do
    p=$(($1 + RANDOM % $2))
    if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then
      echo "$p"
      return
    fi
  done
}

# Redis's CI (.github/workflows/external.yml) starts its external server so
common=(--save "" --enable-protected-configs yes --enable-debug-command yes
  --enable-module-command yes)
[ -n "$CLUSTER_MODE" ] && common+=(--cluster-enabled yes)

# start_server SIDE PORT DIR: starts redis-server or limitdb, prints its pid
start_server() {
  local side=$1 port=$2 dir=$3
  if [ "$side" = redis ]; then
    (cd "$dir" && exec redis-server --port "$port" --dir "$dir" "${common[@]}" \
      >"$dir/server.log" 2>&1) &
  else
    # shellcheck disable=SC2086
    (cd "$dir" && exec "$OUT/limitdb-server" --port "$port" --dir "$dir" "${common[@]}" \
      ${LIMITDB_ARGS:-} >"$dir/server.log" 2>&1) &
  fi
  echo $!
}

# run_unit SIDE UNIT: runs one unit file, writes OUT/SIDE/<unit>.log and
# prints "passed failed flag"
run_unit() {
  local side=$1 unit=$2
  local log=$OUT/$side/${unit//\//_}.log
  local dir port pid i try rc up="" flag=""
  dir=$(mktemp -d "$OUT/$side/srv.XXXXXX")
  for try in 1 2 3; do # another process may take the port first
    port=$(free_port 10000 11000)
    pid=$(start_server "$side" "$port" "$dir")
    for i in $(seq 100); do
      if redis-cli -p "$port" ping >/dev/null 2>&1; then
        up=1
        break
      fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    [ -n "$up" ] && break
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  if [ -n "$up" ] && [ -n "$CLUSTER_MODE" ]; then
    # the CI job's single-node cluster; it sleeps 5 s, this waits for the state
    redis-cli -p "$port" cluster addslotsrange 0 16383 >/dev/null
    for i in $(seq 100); do
      redis-cli -p "$port" cluster info 2>/dev/null | grep -q '^cluster_state:ok' && break
      sleep 0.1
    done
  fi
  # the runner's own listener takes a port below --baseport: another run
  # may have taken it meanwhile, then the unit is started again
  for try in 1 2 3; do
    local args=(--host 127.0.0.1 --port "$port" --single "$unit" --clients 1
      --timeout "$UNIT_TIMEOUT" --baseport "$(free_port 21100 11000)")
    [ -n "$TAGS" ] && args+=(--tags "$TAGS")
    [ -n "$CLUSTER_MODE" ] && args+=(--cluster-mode)
    (cd "$REDIS_SRC" && timeout -k 10 "$UNIT_TIMEOUT" tclsh8.6 tests/test_helper.tcl "${args[@]}") \
      >"$log" 2>&1
    rc=$?
    grep -q "couldn't open socket: address already in use" "$log" || break
  done
  [ $rc -eq 124 ] && flag=T
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  cp "$dir/server.log" "$log.server" 2>/dev/null
  rm -rf "$dir"
  # results are coloured: strip the escapes before counting
  local ok err
  ok=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -c '^\[ok\]:')
  err=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -Ec '^\[(err|exception|timeout)\]:')
  sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -q '^\[exception\]' && flag=${flag}X
  echo "$ok $err $flag"
}

sides=(redis limitdb)
[ -n "$ONLY" ] && sides=("$ONLY")
printf '%-24s %14s %14s\n' unit "${sides[@]}"
tr=0 tl=0
for unit in "${units[@]}"; do
  line=$(printf '%-24s' "$unit")
  for side in "${sides[@]}"; do
    mkdir -p "$OUT/$side"
    read -r ok err flag < <(run_unit "$side" "$unit")
    line+=$(printf ' %6s ok %3s%-2s' "$ok" "$err" "$flag")
    if [ "$side" = redis ]; then tr=$((tr + ok)); else tl=$((tl + ok)); fi
  done
  echo "$line"
done
printf '%-24s %9s %14s\n' total "$tr" "$tl"
echo "logs: $OUT (T: stopped by UNIT_TIMEOUT, X: an exception ended the unit)"
