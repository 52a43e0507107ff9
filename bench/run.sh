#!/bin/sh
# bench/run.sh — the standard benchmark set: limitdb (built from this tree)
# against a real redis-server, interleaved, each run bounded to ~60 s.
#
#   bench/run.sh                 # throughput table + memory table
#   GOMAXPROCS_LIMITDB=2 bench/run.sh   # a fixed P count (default: limitdb's, procs/)
#   RUNS="core" bench/run.sh     # only the core set (parts: core, lists, blocking, scripts, rl,
#                                # rl-policy, pubsub, sort, memory, cluster, cluster-replicas, shards,
#                                # shards-replicas, shards-1, shards-cpu, shards-idle; sort, rl-policy, the
#                                # cluster and the shards parts are not in the default set)
#   RUNS="cluster cluster-replicas" bench/run.sh   # a three-node limitdb against one Redis,
#                                # then against a Redis primary with two replicas
#   AT=follower RUNS=cluster bench/run.sh   # measured at a follower (default: the leader)
#   RUNS="shards shards-replicas" bench/run.sh   # through go-redis's ClusterClient: 3 limitdb
#                                # groups of one node against a 3-master Redis Cluster, then
#                                # groups of three against masters with two replicas each
#   RUNS="shards-cpu shards-idle" bench/run.sh   # CPU per op of 1 group against 3 (limitdb
#                                # against itself); the CPU of idle groups and Redis shards
#   RUNS=shards-1 bench/run.sh   # the shards cases with one group against one master
#
# Ports: REDIS_PORT and LIMITDB_PORT (default: free loopback ports).
# SEED_DIR: the seed scripts (default ../shared/seed-scripts, the project's
# shared folder seen from the project root).
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
SEED_DIR=${SEED_DIR:-../shared/seed-scripts}
# the cluster parts' 14 cases take ~70 s
CLUSTER_WORK=set,incr,multi,rl-tb,evalsha-tb,evalsha-sw,evalsha-fw
lg() {
	timeout "${LIMIT:-90}" "$OUT/loadgen" -limitdb-bin "$OUT/limitdb" -gomaxprocs "$PROCS" \
		$PORTS -seed-dir "$SEED_DIR" -max-time 60s "$@"
}
# the sharded parts: RL.ALLOW (against the token-bucket script on Redis),
# SET and EVALSHA of the token-bucket script, P=1 and 16, 12 pairs: ~60 s
# with the set-up
SHARD_WORK=rl-tb,set,evalsha-tb
lgs() (
	LIMIT=150
	lg -shards 3 -pairs 12 -max-time 100s "$@"
)
lgc() (
	LIMIT=150
	lg -limitdb-nodes 3 -limitdb-at "${AT:-leader}" -workloads $CLUSTER_WORK -max-time 100s "$@"
)
for r in $RUNS; do
	echo "=== $r"
	case $r in
	core) lg -workloads ping,get,set,incr ;;
	lists) lg -workloads multi,lpush,zadd ;;
	blocking) lg -workloads blpop ;;
	scripts) lg -workloads evalsha-tb,evalsha-sw,evalsha-fw ;;
	rl) lg -workloads rl-tb,rl-fw ;;
	# RL.ALLOW … POLICY against inline numbers on one limitdb, 12 pairs
	rl-policy) lg -self -workloads rl-policy -pairs 12 ;;
	pubsub) lg -workloads publish ;;
	sort) lg -workloads sort,sort-alpha ;;
	cluster) lgc ;;
	cluster-replicas) lgc -redis-replicas 2 ;;
	shards) lgs -workloads $SHARD_WORK ;;
	shards-replicas) lgs -shard-nodes 3 -redis-replicas 2 -workloads $SHARD_WORK ;;
	# one group against one master (all slots): with shards and shards-cpu,
	# Redis's CPU per op with 3 masters against 1 as a ratio of ratios
	shards-1) lgs -shards 1 -workloads $SHARD_WORK ;;
	# 3 groups against 1 (all slots), both limitdb: RL.ALLOW on both sides
	shards-cpu) lgs -ref-limitdb-shards 1 -workloads rl-native,set,evalsha-tb ;;
	# 20 s with no load: a lone 3-node group (and a Redis master with two
	# replicas), then three 3-node groups in one cluster (and 3 masters
	# with two replicas each)
	shards-idle)
		lgs -mode idle -shards 1 -shard-nodes 3 -redis-replicas 2
		lgs -mode idle -shard-nodes 3 -redis-replicas 2 ;;
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
