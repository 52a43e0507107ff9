"""redis-py's RedisCluster against several limitdb Raft groups as one
Redis Cluster: a bounded workload (threads, each on keys of its own spread
over every slot: SET/GET, INCR, EVALSHA of INCRBY through register_script,
RL.ALLOW 5 per hour) whose every reply is checked against a model, and
CLUSTER SLOTS covering the 16,384 slots in one range per group.
Run by TestClusterShardsPython (tests/cluster_shards_clients_test.go).
Usage: /usr/bin/python3 check_shards.py GROUPS PORT [PORT ...]
"""
import logging
import sys
import threading

from redis.cluster import ClusterNode, RedisCluster

THREADS, OPS, KEYS = 4, 500, 40
SCRIPT = "return redis.call('INCRBY', KEYS[1], ARGV[1])"
# RedisCluster logs the NOSCRIPT it gets before its script object loads
# the script (SCRIPT LOAD, then EVALSHA again): expected, not a failure
logging.getLogger("redis.cluster").setLevel(logging.CRITICAL)
failures = []
lock = threading.Lock()


def check(what, ok, detail=None):
    if not ok:
        with lock:
            failures.append((what, detail))


def fields(reply):
    """RL.ALLOW's RESP2 reply, a flat list of name, value pairs, as a dict."""
    it = iter(reply)
    return {k.decode() if isinstance(k, bytes) else k: int(v) for k, v in zip(it, it)}


def worker(rc, w, counts):
    script = rc.register_script(SCRIPT)
    strs, ctrs, rls = [None] * KEYS, [0] * KEYS, [0] * KEYS
    n = 0
    for i in range(OPS):
        j = (i // 5) % KEYS
        s, c, r = f"py:s:{w}:{j}", f"py:c:{w}:{j}", f"py:r:{w}:{j}"
        op = i % 5
        try:
            if op == 0:
                v = str(i).encode()
                check(f"SET {s}", rc.set(s, v) is True)
                strs[j] = v
            elif op == 1:
                got = rc.get(s)
                check(f"GET {s}", got == strs[j], (got, strs[j]))
            elif op == 2:
                ctrs[j] += 1
                got = rc.incr(c)
                check(f"INCR {c}", got == ctrs[j], (got, ctrs[j]))
            elif op == 3:
                allowed = rls[j] < 5
                if allowed:
                    rls[j] += 1
                got = fields(rc.execute_command("RL.ALLOW", r, 5, 3600000))
                check(f"RL.ALLOW {r}", got.get("allowed") == int(allowed) and got.get("limit") == 5
                      and got.get("remaining") == 5 - rls[j], got)
            else:
                ctrs[j] += 2
                got = script(keys=[c], args=[2])
                check(f"EVALSHA INCRBY {c}", got == ctrs[j], (got, ctrs[j]))
        except Exception as e:  # every error is a failure: no fault here
            check(f"op {op} on thread {w}", False, repr(e))
        n += 1
    for j in range(KEYS):
        c = f"py:c:{w}:{j}"
        got = int(rc.get(c) or 0)
        check(f"GET {c} after the load", got == ctrs[j], (got, ctrs[j]))
        n += 1
    counts[w] = n


def main():
    groups = int(sys.argv[1])
    ports = [int(p) for p in sys.argv[2:]]
    rc = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", p) for p in ports],
                      socket_timeout=10, socket_connect_timeout=2)
    ranges = sorted((int(r[0]), int(r[1])) for r in rc.execute_command("CLUSTER SLOTS", target_nodes=RedisCluster.RANDOM))
    nxt = 0
    for lo, hi in ranges:
        check(f"CLUSTER SLOTS contiguous at {nxt}", lo == nxt and hi >= lo, ranges)
        nxt = hi + 1
    check("CLUSTER SLOTS covers every slot", nxt == 16384, ranges)
    check(f"CLUSTER SLOTS has {groups} ranges", len(ranges) == groups, ranges)
    counts = [0] * THREADS
    threads = [threading.Thread(target=worker, args=(rc, w, counts)) for w in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(90)
        check("thread done within 90 s", not t.is_alive())
    rc.close()
    for what, detail in failures[:20]:
        print("FAIL", what, detail)
    if failures:
        print(f"{len(failures)} failed")
        return 1
    print(f"shards: redis-py RedisCluster {sum(counts)} replies checked, all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
