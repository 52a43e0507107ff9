// Several limitdb Raft groups as one Redis Cluster through Node's cluster
// clients: ioredis's Cluster and node-redis's createCluster, each running
// a bounded workload (concurrent workers, each on keys of its own spread
// over every slot: SET/GET, INCR, EVAL of INCRBY, RL.ALLOW 5 per hour)
// whose every reply is checked against a model, and CLUSTER SLOTS seen
// through the client covering the 16,384 slots in one range per group.
//
// With --seconds S each client's load runs for S seconds at most while the
// test kills a group's leader: an error is allowed and leaves its
// command's effect unknown (the model keeps both outcomes). Both clients
// send a command again by themselves when its connection closed (ioredis's
// Cluster retries a command on a closed connection; node-redis too), so a
// command may apply twice with one reply: what is checked then is what
// does not depend on the client — no acknowledged increment lost (every
// INCR reply and every counter read back at least the acknowledged sum),
// no RL.ALLOW key ever admitting more than 5 — and the counters above
// acknowledged + unknown are reported, not failed.
//
// With --for S the load runs for S seconds (no fault: every check exact)
// while the test moves slots between groups; --moved LO-HI counts the
// replies checked on keys of slots LO..HI (the range the test moves),
// reported with the rest. Both may come before --seconds.
// Run by TestClusterShardsNode* (tests/cluster_shards_clients_test.go).
// Usage: node check-shards.js [--for S] [--moved LO-HI] [--seconds S] GROUPS PORT [PORT ...]
'use strict';
const Redis = require('ioredis');
const { createCluster } = require('redis');
const keySlot = require('cluster-key-slot'); // the clients' own slot function

let args = process.argv.slice(2);
let seconds = null, runFor = null, moved = null;
for (;;) {
  if (args[0] === '--seconds') seconds = Number(args[1]);
  else if (args[0] === '--for') runFor = Number(args[1]);
  else if (args[0] === '--moved') moved = args[1].split('-').map(Number);
  else break;
  args = args.slice(2);
}
const faults = seconds !== null;
const groups = Number(args[0]);
const ports = args.slice(1).map(Number);
const WORKERS = 4;
const OPS = faults ? 3000 : runFor !== null ? 100000 : 500; // per worker
const KEYS = 40; // per worker
const stats = { errors: 0, surplus: 0, acked: 0, unknown: 0, moved: 0 };
// inMoved: key is in the slots --moved names
const inMoved = (key) => moved !== null && keySlot(key) >= moved[0] && keySlot(key) <= moved[1];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const SCRIPT = "return redis.call('INCRBY', KEYS[1], ARGV[1])";
let failed = 0;
function check(what, ok, detail) {
  if (!ok) {
    failed++;
    if (failed <= 20) console.log('FAIL', what, detail === undefined ? '' : JSON.stringify(detail));
  } else if (process.env.VERBOSE) {
    console.log('ok  ', what);
  }
}

// slots checks a CLUSTER SLOTS reply: contiguous, every slot, one range
// per group (the moved slots one more once they moved), each with a master
function slots(name, reply) {
  const rs = reply.map((r) => [Number(r[0]), Number(r[1]), r[2]]).sort((a, b) => a[0] - b[0]);
  let next = 0;
  for (const [lo, hi, master] of rs) {
    check(`${name} CLUSTER SLOTS contiguous at ${next}`, lo === next && hi >= lo && Array.isArray(master), rs);
    next = hi + 1;
  }
  check(`${name} CLUSTER SLOTS covers every slot`, next === 16384, rs);
  // the other client's keys may start the move before this one connects:
  // the moved slots then make a range of their own, splitting the source's
  const split = moved !== null && rs.some(([lo, hi]) => lo === moved[0] && hi === moved[1]);
  const want = split ? [groups + 1, groups + 2] : [groups];
  check(`${name} CLUSTER SLOTS has ${want.join(' or ')} ranges`, want.includes(rs.length), rs);
}

// fields is RL.ALLOW's reply as an object: RESP2's flat array of name,
// value pairs (ioredis), or what the client made of it (node-redis gives
// an object)
function fields(reply) {
  const out = {};
  if (Array.isArray(reply)) {
    for (let i = 0; i + 1 < reply.length; i += 2) out[String(reply[i])] = Number(reply[i + 1]);
  } else if (reply instanceof Map) {
    for (const [k, v] of reply) out[String(k)] = Number(v);
  } else if (reply && typeof reply === 'object') {
    for (const k of Object.keys(reply)) out[k] = Number(reply[k]);
  }
  return out;
}

// worker runs OPS operations (for S seconds at most with --seconds) on
// its own keys, checking each reply against what it wrote before
async function worker(name, w, run, deadline) {
  const str = Array.from({ length: KEYS }, () => new Set([null])); // possible values
  const ctr = Array.from({ length: KEYS }, () => [0, 0]); // acknowledged, unknown
  const rl = Array.from({ length: KEYS }, () => [0, 0]); // allowed, unknown
  let done = 0;
  for (let i = 0; i < OPS && Date.now() < deadline; i++) {
    const j = Math.floor(i / 5) % KEYS;
    const s = `${name}:s:${w}:${j}`, c = `${name}:c:${w}:${j}`, r = `${name}:r:${w}:${j}`;
    const op = i % 5;
    const key = op === 0 || op === 1 ? s : op === 3 ? r : c;
    try {
      if (op === 0) {
        const v = String(i);
        str[j].add(v);
        check(`${name} SET ${s}`, (await run.set(s, v)) === 'OK');
        str[j] = new Set([v]);
      } else if (op === 1) {
        const got = await run.get(s);
        check(`${name} GET ${s}`, str[j].has(got), [got, [...str[j]]]);
        str[j] = new Set([got]);
      } else if (op === 2 || op === 4) {
        const inc = op === 2 ? 1 : 2;
        const m = ctr[j];
        m[1] += inc;
        const got = Number(op === 2 ? await run.incr(c) : await run.script(c, inc));
        m[1] -= inc;
        check(`${name} ${op === 2 ? 'INCR' : 'EVAL INCRBY'} ${c}: none lost`, got >= m[0] + inc, [got, m]);
        if (got > m[0] + m[1] + inc) {
          if (!faults) check(`${name} ${op === 2 ? 'INCR' : 'EVAL INCRBY'} ${c}`, false, [got, m]);
          // a client's resend: the surplus is taken as unknown from here on
          stats.surplus++;
          m[1] += got - (m[0] + m[1] + inc);
        }
        m[0] += inc;
      } else {
        const m = rl[j];
        const expect = m[0] < 5; // what a run without faults must answer
        m[1]++;
        const got = fields(await run.allow(r));
        m[1]--;
        const allowed = got.allowed === 1;
        check(`${name} RL.ALLOW ${r}: at most 5 allowed`, !allowed || m[0] < 5, [got, m]);
        if (allowed) m[0]++;
        if (!faults) {
          check(`${name} RL.ALLOW ${r}`, allowed === expect && got.limit === 5 && got.remaining === 5 - m[0], [got, m]);
        }
      }
    } catch (e) {
      stats.errors++;
      check(`${name} op ${op} on worker ${w}: no error without a fault`, faults, String(e));
      await sleep(20);
    }
    done++;
    if (inMoved(key)) stats.moved++;
  }
  // every counter read back once the worker is done (retried a while)
  for (let j = 0; j < KEYS; j++) {
    const c = `${name}:c:${w}:${j}`;
    let got = null, err = null;
    for (let t = 0; t < 50 && got === null; t++) {
      try { got = Number(await run.get(c)); } catch (e) { err = e; await sleep(100); }
    }
    const [acked, unknown] = ctr[j];
    check(`${name} GET ${c} after the load: none lost`, got !== null && got >= acked, [got, acked, unknown, String(err)]);
    check(`${name} GET ${c} after the load: none applied twice`, faults || got <= acked + unknown, [got, acked, unknown]);
    stats.acked += acked;
    stats.unknown += unknown;
    done++;
    if (inMoved(c)) stats.moved++;
  }
  return done;
}

async function load(name, run) {
  const deadline = Date.now() + (faults ? seconds : runFor !== null ? runFor : 90) * 1000;
  const done = await Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(name, w, run, deadline)));
  return done.reduce((a, b) => a + b, 0);
}

async function withIoredis() {
  const c = new Redis.Cluster(ports.map((port) => ({ host: '127.0.0.1', port })));
  c.defineCommand('incrby', { numberOfKeys: 1, lua: SCRIPT });
  slots('ioredis', await c.cluster('SLOTS'));
  const n = await load('io', {
    set: (k, v) => c.set(k, v),
    get: (k) => c.get(k),
    incr: (k) => c.incr(k),
    allow: (k) => c.call('RL.ALLOW', k, '5', '3600000'),
    script: (k, n) => c.incrby(k, n),
  });
  check('ioredis MSET in one hash tag', (await c.mset('{io}a', '1', '{io}b', '2')) === 'OK');
  await c.quit();
  return n;
}

async function withNodeRedis() {
  const c = createCluster({ rootNodes: ports.map((port) => ({ url: `redis://127.0.0.1:${port}` })) });
  c.on('error', () => {});
  await c.connect();
  slots('node-redis', await c.sendCommand(undefined, true, ['CLUSTER', 'SLOTS']));
  const n = await load('nr', {
    set: (k, v) => c.set(k, v),
    get: (k) => c.get(k),
    incr: (k) => c.incr(k),
    allow: (k) => c.sendCommand(k, false, ['RL.ALLOW', k, '5', '3600000']),
    script: (k, n) => c.eval(SCRIPT, { keys: [k], arguments: [String(n)] }),
  });
  // node-redis splits a multi-key command by slot itself
  check('node-redis MSET across groups (split by the client)', (await c.mSet(['nr:a', '1', 'nr:b', '2'])) === 'OK');
  check('node-redis GET after the split MSET', (await c.get('nr:a')) === '1' && (await c.get('nr:b')) === '2');
  await c.quit();
  return n;
}

// bounded: a client that keeps retrying (a slot not served, a cluster
// down) fails the check instead of hanging it
setTimeout(() => { console.log('FAIL: not done in 100 s'); process.exit(1); }, 100000).unref();

(async () => {
  // both clients at once: a leader kill (--seconds) hits both loads
  const [io, nr] = await Promise.all([withIoredis(), withNodeRedis()]);
  console.log(failed ? `${failed} failed` : `shards: ioredis ${io} and node-redis ${nr} replies checked, ${stats.errors} errors, ` +
    `counters ${stats.acked} acknowledged + ${stats.unknown} unknown, ${stats.surplus} replies above the bound (resends), ` +
    (moved ? `${stats.moved} of them on keys of slots ${moved[0]}-${moved[1]}, ` : '') + 'all passed');
  process.exit(failed ? 1 : 0);
})().catch((e) => { console.log('FAIL', e); process.exit(1); });
