// A lock library that waits on Pub/Sub, against one server: simple-redis-mutex
// (SET NX PX to take the lock; a release script that DELs and PUBLISHes from
// Lua; waiters woken by the published message on a subscribed connection).
// Polling is pushed far out (60 s), so that every hand-over must come
// through Pub/Sub: the run takes under a few seconds, or it fails.
// Usage: node lock.js PORT RESP(2|3). Prints one JSON line; the Go test
// (tests/pubsub_lock_test.go) compares it between redis-server and limitdb.
const { createClient } = require('redis');
const { lock, tryLock } = require('simple-redis-mutex');

const port = Number(process.argv[2]);
const resp = Number(process.argv[3] || 2);
const WORKERS = 6;
const ROUNDS = 5;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function client() {
  const c = createClient({ socket: { host: '127.0.0.1', port, reconnectStrategy: false }, RESP: resp });
  c.on('error', () => {});
  await c.connect();
  return c;
}

async function main() {
  const out = {};
  const admin = await client();
  await admin.flushAll();
  const name = 'res';
  const clients = [];
  for (let i = 0; i < WORKERS; i++) clients.push(await client());

  // mutual exclusion and hand-over through Pub/Sub
  let holder = null;
  let overlaps = 0;
  let acquired = 0;
  let failures = 0;
  const tokens = [];
  const t0 = Date.now();
  await Promise.all(clients.map(async (c, w) => {
    for (let r = 0; r < ROUNDS; r++) {
      let release;
      try {
        release = await lock(c, name, { timeout: 5000, pollingInterval: 60000, failAfter: 15000 });
      } catch (e) {
        failures++;
        continue;
      }
      if (holder !== null) overlaps++;
      holder = w;
      acquired++;
      tokens.push(release.fencingToken);
      await sleep(5);
      holder = null;
      await release();
    }
  }));
  const elapsed = Date.now() - t0;
  out.acquired = acquired;
  out.overlaps = overlaps;
  out.failures = failures;
  out.handedOverByPubSub = elapsed < 10000;
  const sorted = [...tokens].sort((a, b) => a - b);
  out.tokensDistinct = new Set(tokens).size === tokens.length;
  out.tokensFrom1 = sorted.length > 0 && sorted[0] === 1 && sorted[sorted.length - 1] === tokens.length;

  // tryLock while held fails; a second release is a no-op
  const [ok1, rel1] = await tryLock(clients[0], 'other', { timeout: 5000 });
  const [ok2] = await tryLock(clients[1], 'other', { timeout: 5000 });
  await rel1();
  await rel1();
  const [ok3, rel3] = await tryLock(clients[1], 'other', { timeout: 5000 });
  await rel3();
  out.tryLock = [ok1, ok2, ok3];

  // a holder that never releases: its lock expires, and a waiter polling
  // every 100 ms takes it (the library's safety net)
  await tryLock(clients[2], 'expiring', { timeout: 300 });
  const t1 = Date.now();
  const relE = await lock(clients[3], 'expiring', { timeout: 5000, pollingInterval: 100, failAfter: 5000 });
  out.expiredTakenAfterTimeout = Date.now() - t1 >= 200;
  await relE();

  // failAfter: a lock held for longer than the waiter's patience
  const [okH, relH] = await tryLock(clients[4], 'held', { timeout: 5000 });
  let failed = false;
  await lock(clients[5], 'held', { pollingInterval: 60000, failAfter: 300 }).catch(() => { failed = true; });
  await relH();
  out.failAfter = [okH, failed];

  // the release messages as a plain subscriber sees them
  const sub = await client();
  const seen = [];
  await sub.subscribe('@simple-redis-mutex:locks-releases', (m) => seen.push(m));
  const [, relS] = await tryLock(clients[0], 'watched', { timeout: 5000 });
  await relS();
  for (let i = 0; i < 50 && seen.length === 0; i++) await sleep(20);
  // the lock's random value is the library's: masked
  out.releaseMessages = seen.map((m) => m.replace(/"value": "[^"]*"/, '"value": "…"'));
  out.numsub = await admin.sendCommand(['PUBSUB', 'NUMSUB', '@simple-redis-mutex:locks-releases']);

  await sub.unsubscribe();
  for (const c of [admin, sub, ...clients]) await c.quit().catch(() => {});
  console.log(JSON.stringify(out));
  process.exit(0);
}

main().catch((e) => {
  console.log(JSON.stringify({ error: String(e && e.message || e) }));
  process.exit(1);
});
