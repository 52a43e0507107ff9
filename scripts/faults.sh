#!/usr/bin/env bash
# The fault-injection soak (tests/FAULTS.md): randomized schedules of
# faults over a 3-node cluster of real limitdb processes, each checked,
# until the minutes are up. Each schedule's seed is derived from the run's
# seed; its history and verdicts are kept in the output directory.
#
#   scripts/faults.sh --minutes 60                 # seed: the current time
#   scripts/faults.sh --minutes 10 --seed 18
#   scripts/faults.sh --minutes 5 --nemeses pause,kill --workloads cas,queue
#
# Options (each also an environment variable, see tests/FAULTS.md):
#   --minutes N      how long to run schedules (required)
#   --seed S         the run's seed (LIMITDB_FAULTS_SEED; default: now)
#   --seconds N      the faulty phase of each schedule (default 20)
#   --nemeses LIST   comma-separated, or "all" (default: all)
#   --workloads LIST comma-separated, or "all" (default: all)
#   --out DIR        where the histories go (default: a new temp dir)
#   --full           keep the whole history of passing schedules too (by
#                    default only failing ones keep theirs; every file has
#                    the schedule's header and verdicts)
#   --migration      the migration workload instead (TestFaultsMigrationSmoke:
#                    two groups of three, slots moved back and forth under
#                    faults) for the minutes, as one run (--nemeses,
#                    --workloads and --seconds do not apply)
#
# Prints, at the end, the number of schedules, faults injected and
# operations checked, and exits non-zero when any schedule found a
# violation (its history file says which and why).
set -euo pipefail
cd "$(dirname "$0")/.."

minutes="" seed="" seconds="" nemeses="" workloads="" out="" full="" migration=""
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --nemeses) nemeses="$2"; shift 2 ;;
    --workloads) workloads="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --full) full=1; shift ;;
    --migration) migration=1; shift ;;
    -h|--help) sed -n '2,29p' "$0"; exit 0 ;;
    *) echo "unknown option: $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [ -z "$minutes" ]; then
  echo "--minutes N is required (see --help)" >&2
  exit 2
fi
[ -n "$seed" ] || seed=$(date +%s)
[ -n "$out" ] || out=$(mktemp -d "${TMPDIR:-/tmp}/limitdb-faults-soak-XXXXXX")
mkdir -p "$out"
out=$(cd "$out" && pwd)
echo "faults soak: $minutes minutes, seed $seed, histories in $out"

export LIMITDB_FAULTS_MINUTES="$minutes" LIMITDB_FAULTS_SEED="$seed" LIMITDB_FAULTS_OUT="$out"
[ -z "$seconds" ] || export LIMITDB_FAULTS_SECONDS="$seconds"
# the soak runs every nemesis and workload unless told otherwise
export LIMITDB_FAULTS_NEMESES="${nemeses:-${LIMITDB_FAULTS_NEMESES:-all}}"
export LIMITDB_FAULTS_WORKLOADS="${workloads:-${LIMITDB_FAULTS_WORKLOADS:-all}}"
[ -z "$full" ] || export LIMITDB_FAULTS_FULL=1

# the go test timeout: the minutes plus room for the last schedule
timeout_m=$(awk -v m="$minutes" 'BEGIN { printf "%d", m + 15 }')
test='^TestFaultsSmoke$'
if [ -n "$migration" ]; then
  test='^TestFaultsMigrationSmoke$'
  export LIMITDB_FAULTS_MIG_SECONDS=$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 }')
fi
set +e
go test -count=1 -timeout "${timeout_m}m" -run "$test" -v ./tests 2>&1 |
  tee "$out/go-test.log" | grep -E '^(=== RUN|--- |    --- )|faults:|faults summary|VIOLATION'
status=${PIPESTATUS[0]}
set -e
echo
grep -h '^faults summary' "$out/go-test.log" || echo "no summary (the run did not finish; see $out/go-test.log)"
if [ "$status" != 0 ]; then
  echo "VIOLATIONS or errors: the failed schedules' histories (seed in the name):" >&2
  grep -l -E '^# RESULT: (VIOLATION|STOPPED)' "$out"/*.txt >&2 2>/dev/null || true
fi
echo "histories: $out"
exit "$status"
