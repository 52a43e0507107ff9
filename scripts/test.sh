#!/usr/bin/env bash
# Runs limitdb's whole test suite. The differential tests compare limitdb
# with a real redis-server, so it installs Debian's redis-server when it is
# missing, and the other programs the tests drive (promtool, Chromium,
# Node.js) the same way.
set -euo pipefail
cd "$(dirname "$0")/.."

# apt_install installs Debian packages (apt-get needs root, as on the
# project's machines and CI).
apt_install() {
  local sudo=""
  if [ "$(id -u)" != "0" ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# need installs Debian packages when a command the tests run is missing:
# need cmd pkg…
need() {
  local cmd=$1
  shift
  command -v "$cmd" >/dev/null 2>&1 && return 0
  echo "$cmd not found: installing $* with apt-get" >&2
  apt_install "$@"
}

# need_py is need for a module of /usr/bin/python3 (a package with no
# command to look for): need_py module pkg…
need_py() {
  local mod=$1
  shift
  /usr/bin/python3 -c "import $mod" >/dev/null 2>&1 && return 0
  echo "python module $mod not found: installing $* with apt-get" >&2
  apt_install "$@"
}

need redis-server redis-server
redis-server --version
# promtool (Debian's prometheus package) lints /metrics and the rules in
# deploy/prometheus (tests/metrics_test.go; skipped without it outside CI)
need promtool prometheus
promtool --version | head -1
# headless Chromium loads the metrics port's status page
# (server/status_page_test.go; skipped without it outside CI)
need chromium chromium
chromium --version
# the library checks run on Node.js: the lock library
# (tests/pubsub_lock_test.go, simple-redis-mutex waiting on Pub/Sub), the
# job queue (tests/jobqueue_test.go, bee-queue waiting in BRPOPLPUSH) and
# the cluster clients over several groups (tests/cluster_shards_clients_test.go,
# ioredis and node-redis); their packages are pinned in
# tests/node/*/package-lock.json
need node nodejs
need npm npm
for d in lock jobqueue cluster; do
  (cd tests/node/$d && npm ci --no-audit --no-fund --silent)
done

# redis-py's RedisCluster over several groups
# (tests/cluster_shards_clients_test.go, tests/python): Debian's 4.3.4
need_py redis.cluster python3-redis

# go build first: vet compiles the test files too, so a non-test file
# that uses a test-only helper would pass vet and break go build
go build ./...
go vet ./...
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
  echo "not gofmt-formatted:" >&2
  echo "$unformatted" >&2
  exit 1
fi
# a failing go test does not skip the fuzz targets: one failure must not
# hide another, so both stages run and the script fails if either did
status=0
# The tests package is the long pole: run as one, it took 11.5 of CI's
# 13.5 minutes, half of that in its real-process cluster and fault tests,
# which mostly wait (for elections, timeouts, faults to heal) rather than
# compute. Without arguments those tests run as a second go test process
# beside everything else (the other I/O model's pass and the fuzz targets
# included), and their output follows at the end. With arguments (a -run
# of your own, -v) everything runs in the one process, as before.
cluster_tests='^(TestCluster|TestFaults)'
cluster_pid=""
if [ $# -eq 0 ]; then
  cluster_log=$(mktemp)
  go test -count=1 -timeout 20m ./tests -run "$cluster_tests" >"$cluster_log" 2>&1 &
  cluster_pid=$!
  go test -count=1 -timeout 20m ./... -skip "$cluster_tests" ||
    { status=$?; echo "go test failed (exit $status); running the fuzz targets anyway" >&2; }
else
  go test -count=1 -timeout 20m ./... "$@" ||
    { status=$?; echo "go test failed (exit $status); running the fuzz targets anyway" >&2; }
fi
# the other I/O model (io-model goroutine; the default is loop): the
# server package and the parts of tests/ that depend most on how
# connections are served (~1.5 min)
LIMITDB_IO_MODEL=goroutine go test -count=1 -timeout 10m ./server "$@" ||
  { status=$?; echo "go test ./server with io-model goroutine failed (exit $status)" >&2; }
LIMITDB_IO_MODEL=goroutine go test -count=1 -timeout 10m ./tests \
  -run 'TestScenarios|TestProtocol|TestBlocking|TestPubsub|TestClient|TestObuf|TestOutput|TestHostileInputs' "$@" ||
  { status=$?; echo "go test ./tests with io-model goroutine failed (exit $status)" >&2; }

# fuzz targets: each runs briefly (the seed corpus and the crashers kept
# under <package>/testdata/fuzz/<Target>/ also run in the plain go test).
# Budgets are execution counts (Nx), sized to a few seconds each on a
# 2-core machine: a duration -fuzztime races Go's fuzz coordinator at the
# deadline and fails with a bare "context deadline exceeded" and no crasher
# under CPU contention (golang/go#75804, unfixed in go1.26); a count has no
# deadline to race. -timeout still bounds a worker that hangs.
fuzz() {
  go test -run '^$' -timeout 5m -fuzz "^$2\$" -fuzztime "$3" "./$1" || {
    echo "fuzz target $1 $2 failed" >&2
    status=1
  }
}
fuzz server FuzzCommandArgs 20000x
fuzz server FuzzConnection 30000x
fuzz resp FuzzReader 150000x
# luavm: Lua value conversion both ways, cjson/cmsgpack/struct decoders
fuzz luavm FuzzReplyToLua 100000x
fuzz luavm FuzzScriptResult 60000x
fuzz luavm FuzzCjsonDecode 60000x
fuzz luavm FuzzCmsgpackUnpack 10000x
fuzz luavm FuzzStructUnpack 60000x
# engine: snapshot (RDB) loading; cluster: log entry decoding
fuzz engine FuzzRDBLoad 30000x
fuzz cluster FuzzDecodeEntry 50000x
# acl: rule parsing (SETUSER round trip) and aclfile loading
fuzz acl FuzzSetUser 100000x
fuzz acl FuzzLoad 100000x
if [ -n "$cluster_pid" ]; then
  echo "--- the cluster and fault tests (go test ./tests -run '$cluster_tests'):"
  cluster_status=0
  wait "$cluster_pid" || cluster_status=$?
  cat "$cluster_log"
  rm -f "$cluster_log"
  if [ "$cluster_status" != 0 ]; then
    echo "go test ./tests -run '$cluster_tests' failed (exit $cluster_status)" >&2
    status=$cluster_status
  fi
fi
exit $status
