// Several limitdb Raft groups as one Redis Cluster through Node's cluster
// clients: ioredis's Cluster and node-redis's createCluster, each running
// a bounded workload (concurrent workers, each on keys of its own spread
// over every slot: SET/GET, INCR, EVAL of INCRBY, RL.ALLOW 5 per hour)
// whose every reply is checked against a model, and CLUSTER SLOTS seen
// through the client covering the 16,384 slots in one range per group.
// Run by TestClusterShardsNode (tests/cluster_shards_clients_test.go).
// Usage: node check-shards.js GROUPS PORT [PORT ...]
'use strict';
const Redis = require('ioredis');
const { createCluster } = require('redis');

const groups = Number(process.argv[2]);
const ports = process.argv.slice(3).map(Number);
const WORKERS = 4;
const OPS = 500; // per worker
const KEYS = 40; // per worker
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
// per group, each with a master
function slots(name, reply) {
  const rs = reply.map((r) => [Number(r[0]), Number(r[1]), r[2]]).sort((a, b) => a[0] - b[0]);
  let next = 0;
  for (const [lo, hi, master] of rs) {
    check(`${name} CLUSTER SLOTS contiguous at ${next}`, lo === next && hi >= lo && Array.isArray(master), rs);
    next = hi + 1;
  }
  check(`${name} CLUSTER SLOTS covers every slot`, next === 16384, rs);
  check(`${name} CLUSTER SLOTS has ${groups} ranges`, rs.length === groups, rs);
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

// worker runs OPS operations through do(cmd, key, args) on its own keys,
// checking each reply against what it wrote before
async function worker(name, w, run) {
  const str = new Array(KEYS).fill(null);
  const ctr = new Array(KEYS).fill(0);
  const rl = new Array(KEYS).fill(0);
  for (let i = 0; i < OPS; i++) {
    const j = Math.floor(i / 5) % KEYS;
    const s = `${name}:s:${w}:${j}`, c = `${name}:c:${w}:${j}`, r = `${name}:r:${w}:${j}`;
    try {
      switch (i % 5) {
        case 0: {
          const v = String(i);
          check(`${name} SET ${s}`, (await run.set(s, v)) === 'OK');
          str[j] = v;
          break;
        }
        case 1: {
          const got = await run.get(s);
          check(`${name} GET ${s}`, got === str[j], [got, str[j]]);
          break;
        }
        case 2: {
          const got = Number(await run.incr(c));
          ctr[j] += 1;
          check(`${name} INCR ${c}`, got === ctr[j], [got, ctr[j]]);
          break;
        }
        case 3: {
          const got = fields(await run.allow(r));
          const allowed = rl[j] < 5;
          if (allowed) rl[j]++;
          check(`${name} RL.ALLOW ${r}`, got.allowed === (allowed ? 1 : 0) && got.limit === 5 && got.remaining === 5 - rl[j], got);
          break;
        }
        case 4: {
          const got = Number(await run.script(c, 2));
          ctr[j] += 2;
          check(`${name} EVAL INCRBY ${c}`, got === ctr[j], [got, ctr[j]]);
          break;
        }
      }
    } catch (e) {
      check(`${name} op ${i % 5} on worker ${w}`, false, String(e));
    }
  }
  // every counter read back once the worker is done
  for (let j = 0; j < KEYS; j++) {
    const c = `${name}:c:${w}:${j}`;
    const got = Number(await run.get(c));
    check(`${name} GET ${c} after the load`, got === ctr[j], [got, ctr[j]]);
  }
  return OPS + KEYS;
}

async function load(name, run) {
  const done = await Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(name, w, run)));
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
setTimeout(() => { console.log('FAIL: not done in 90 s'); process.exit(1); }, 90000).unref();

(async () => {
  const io = await withIoredis();
  const nr = await withNodeRedis();
  console.log(failed ? `${failed} failed` : `shards: ioredis ${io} and node-redis ${nr} replies checked, all passed`);
  process.exit(failed ? 1 : 0);
})().catch((e) => { console.log('FAIL', e); process.exit(1); });
