"""redis-py's RedisCluster against several limitdb Raft groups as one
Redis Cluster: a bounded workload (threads, each on keys of its own spread
over every slot: SET/GET, INCR, EVALSHA of INCRBY through register_script,
RL.ALLOW 5 per hour) whose every reply is checked against a model, and
CLUSTER SLOTS covering the 16,384 slots in one range per group.

With --seconds S the load runs for S seconds at most while the test kills
a group's leader: an error is then allowed and makes its command's effect
unknown (the model keeps both outcomes), and after the load every counter
is read back: acknowledged <= value <= acknowledged + unknown. The client
sends a command once (cluster_error_retry_attempts=1: redis-py's own
retries to the same node only follow a refused connection, so a counter
above that bound is the server's double apply, not the client's).

With --for S the load runs for S seconds (no fault: every check exact)
while the test moves slots between groups; --moved LO-HI counts the
replies checked on keys of slots LO..HI (the range the test moves),
reported with the rest. Both may come before --seconds.
Run by TestClusterShardsPython* (tests/cluster_shards_clients_test.go).
Usage: /usr/bin/python3 check_shards.py [--for S] [--moved LO-HI] [--seconds S] GROUPS PORT [PORT ...]
"""
import logging
import sys
import threading
import time

from redis.cluster import ClusterNode, RedisCluster
from redis.crc import key_slot

THREADS, KEYS = 4, 40
SCRIPT = "return redis.call('INCRBY', KEYS[1], ARGV[1])"
# RedisCluster logs every error it handles (the NOSCRIPT before its script
# object loads the script, a refused connection it retries): expected here
logging.getLogger("redis.cluster").setLevel(logging.CRITICAL)
failures = []
lock = threading.Lock()
moved = None  # --moved's slots, (lo, hi)


def in_moved(key):
    """Whether key is in the slots --moved names."""
    return moved is not None and moved[0] <= key_slot(key.encode()) <= moved[1]


def check(what, ok, detail=None):
    if not ok:
        with lock:
            failures.append((what, detail))


def fields(reply):
    """RL.ALLOW's RESP2 reply, a flat list of name, value pairs, as a dict."""
    it = iter(reply)
    return {k.decode() if isinstance(k, bytes) else k: int(v) for k, v in zip(it, it)}


class Worker:
    """One thread's keys and their model."""

    def __init__(self, rc, w, ops, deadline, faults):
        self.rc, self.w, self.ops, self.deadline, self.faults = rc, w, ops, deadline, faults
        self.strs = [{None} for _ in range(KEYS)]  # possible values
        self.ctrs = [[0, 0] for _ in range(KEYS)]  # acknowledged, unknown
        self.rls = [[0, 0] for _ in range(KEYS)]  # allowed, unknown
        self.done = self.errors = self.moved = 0

    def run(self):
        script = self.rc.register_script(SCRIPT)
        for i in range(self.ops):
            if time.monotonic() > self.deadline:
                break
            j = (i // 5) % KEYS
            s, c, r = f"py:s:{self.w}:{j}", f"py:c:{self.w}:{j}", f"py:r:{self.w}:{j}"
            op = i % 5
            if in_moved(s if op in (0, 1) else r if op == 3 else c):
                self.moved += 1
            try:
                if op == 0:
                    v = str(i).encode()
                    self.strs[j].add(v)
                    check(f"SET {s}", self.rc.set(s, v) is True)
                    self.strs[j] = {v}
                elif op == 1:
                    got = self.rc.get(s)
                    check(f"GET {s}", got in self.strs[j], (got, self.strs[j]))
                    self.strs[j] = {got}
                elif op in (2, 4):
                    inc = 1 if op == 2 else 2
                    ctr = self.ctrs[j]
                    ctr[1] += inc
                    got = self.rc.incr(c) if op == 2 else script(keys=[c], args=[inc])
                    ctr[1] -= inc
                    check(f"{'INCR' if op == 2 else 'EVALSHA INCRBY'} {c}",
                          ctr[0] + inc <= got <= ctr[0] + ctr[1] + inc, (got, ctr))
                    ctr[0] += inc
                else:
                    rl = self.rls[j]
                    rl[1] += 1
                    got = fields(self.rc.execute_command("RL.ALLOW", r, 5, 3600000))
                    rl[1] -= 1
                    allowed = got.get("allowed") == 1
                    check(f"RL.ALLOW {r} allowed", rl[0] < 5 if allowed else rl[0] + rl[1] >= 5, (got, rl))
                    if allowed:
                        rl[0] += 1
                    check(f"RL.ALLOW {r}", got.get("limit") == 5 and 5 - rl[0] - rl[1] <= got.get("remaining") <= 5 - rl[0],
                          (got, rl))
            except Exception as e:
                # the effect stays unknown (the model above counted it so)
                self.errors += 1
                check(f"op {op} on thread {self.w}: no error without a fault", self.faults, repr(e))
                time.sleep(0.02)
            self.done += 1

    def read_back(self):
        """Every counter after the load (a read retried a while)."""
        for j in range(KEYS):
            c = f"py:c:{self.w}:{j}"
            for _ in range(50):
                try:
                    got = int(self.rc.get(c) or 0)
                    break
                except Exception as e:
                    err = e
                    time.sleep(0.1)
            else:
                check(f"GET {c} after the load", False, repr(err))
                continue
            acked, unknown = self.ctrs[j]
            if in_moved(c):
                self.moved += 1
            check(f"GET {c} after the load: no acknowledged increment lost", got >= acked, (got, acked, unknown))
            check(f"GET {c} after the load: none applied twice", got <= acked + unknown, (got, acked, unknown))
            self.done += 1


def main():
    global moved
    args = sys.argv[1:]
    seconds = run_for = None
    while args[0] in ("--seconds", "--for", "--moved"):
        if args[0] == "--seconds":
            seconds = float(args[1])
        elif args[0] == "--for":
            run_for = float(args[1])
        else:
            moved = tuple(int(x) for x in args[1].split("-"))
        args = args[2:]
    groups, ports = int(args[0]), [int(p) for p in args[1:]]
    rc = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", p) for p in ports],
                      socket_timeout=10, socket_connect_timeout=2, cluster_error_retry_attempts=1)
    ranges = sorted((int(r[0]), int(r[1])) for r in rc.execute_command("CLUSTER SLOTS", target_nodes=RedisCluster.RANDOM))
    nxt = 0
    for lo, hi in ranges:
        check(f"CLUSTER SLOTS contiguous at {nxt}", lo == nxt and hi >= lo, ranges)
        nxt = hi + 1
    check("CLUSTER SLOTS covers every slot", nxt == 16384, ranges)
    check(f"CLUSTER SLOTS has {groups} ranges", len(ranges) == groups, ranges)
    faults = seconds is not None
    ops = 3000 if faults else 100000 if run_for is not None else 500
    deadline = time.monotonic() + (seconds if faults else run_for if run_for is not None else 90)
    workers = [Worker(rc, w, ops, deadline, faults) for w in range(THREADS)]
    threads = [threading.Thread(target=wk.run) for wk in workers]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
        check("thread done within 120 s", not t.is_alive())
    elapsed = time.monotonic() - start
    for wk in workers:
        wk.read_back()
    rc.close()
    for what, detail in failures[:20]:
        print("FAIL", what, detail)
    if failures:
        print(f"{len(failures)} failed")
        return 1
    acked = sum(c[0] for wk in workers for c in wk.ctrs)
    unknown = sum(c[1] for wk in workers for c in wk.ctrs)
    print(f"shards: redis-py RedisCluster {sum(wk.done for wk in workers)} replies checked in {elapsed:.1f} s, "
          f"{sum(wk.errors for wk in workers)} errors, counters {acked} acknowledged + {unknown} unknown, "
          + (f"{sum(wk.moved for wk in workers)} of them on keys of slots {moved[0]}-{moved[1]}, " if moved else "")
          + "all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
