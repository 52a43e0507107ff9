// Cluster mode through Node's cluster clients (manual, run.sh's
// cluster step): ioredis's Cluster and node-redis's createCluster against
// limitdb started with cluster-enabled yes and every slot assigned. Both
// route by slot themselves: SET/GET, a script over many slots, a
// multi-key command in one hash tag, and across two slots (ioredis
// refuses it, node-redis splits it).
// Usage: node check-cluster.js PORT [PORT ...]
'use strict';
const Redis = require('ioredis');
const { createCluster } = require('redis');

const ports = process.argv.slice(2).map(Number);
let failed = 0;
function check(what, ok, detail) {
  if (!ok) {
    failed++;
    console.log('FAIL', what, detail === undefined ? '' : JSON.stringify(detail));
  } else if (process.env.VERBOSE) {
    console.log('ok  ', what);
  }
}

const N = 200;
const SCRIPT = "return redis.call('INCRBY', KEYS[1], ARGV[1])";

async function withIoredis() {
  const c = new Redis.Cluster(ports.map((port) => ({ host: '127.0.0.1', port })));
  c.defineCommand('incrby3', { numberOfKeys: 1, lua: SCRIPT });
  for (let i = 0; i < N; i++) {
    const k = `io:${i}`;
    check(`ioredis SET ${k}`, (await c.set(k, String(i))) === 'OK');
    check(`ioredis GET ${k}`, (await c.get(k)) === String(i));
    check(`ioredis script {${k}}`, (await c.incrby3(`ctr:{${k}}`, 3)) === 3);
  }
  check('ioredis MSET one tag', (await c.mset('{io}a', '1', '{io}b', '2')) === 'OK');
  let err = '';
  try { await c.mset('a', '1', 'b', '2'); } catch (e) { err = e.message; }
  // ioredis refuses keys of two slots itself, as Redis's CROSSSLOT would
  check('ioredis MSET across slots refused', err !== '', err);
  const slots = await c.cluster('SLOTS');
  check('ioredis CLUSTER SLOTS covers every slot', slots.length === 1 && slots[0][0] === 0 && slots[0][1] === 16383, slots);
  await c.quit();
}

async function withNodeRedis() {
  const c = createCluster({ rootNodes: ports.map((port) => ({ url: `redis://127.0.0.1:${port}` })) });
  c.on('error', () => {});
  await c.connect();
  for (let i = 0; i < N; i++) {
    const k = `nr:${i}`;
    check(`node-redis SET ${k}`, (await c.set(k, String(i))) === 'OK');
    check(`node-redis GET ${k}`, (await c.get(k)) === String(i));
    check(`node-redis EVAL {${k}}`, (await c.eval(SCRIPT, { keys: [`ctr:{${k}}`], arguments: ['3'] })) === 3);
  }
  // node-redis splits a multi-key command by slot itself: one MSET per
  // slot reaches the server
  check('node-redis MSET across slots (split by the client)', (await c.mSet(['nr:a', '1', 'nr:b', '2'])) === 'OK');
  check('node-redis GET after the split MSET', (await c.get('nr:a')) === '1' && (await c.get('nr:b')) === '2');
  await c.quit();
}

// bounded: a client that keeps retrying (a slot not served, a cluster
// down) fails the check instead of hanging it
setTimeout(() => { console.log('FAIL: not done in 60 s'); process.exit(1); }, 60000).unref();

(async () => {
  await withIoredis();
  await withNodeRedis();
  console.log(failed ? `${failed} failed` : 'cluster clients: all checks passed');
  process.exit(failed ? 1 : 0);
})().catch((e) => { console.log('FAIL', e); process.exit(1); });
