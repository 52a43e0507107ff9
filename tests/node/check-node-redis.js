// node-redis (RESP2 and RESP3) + rate-limiter-flexible useRedisPackage
const { createClient } = require('redis');
const { RateLimiterRedis, RateLimiterRes } = require('rate-limiter-flexible');
const TOL = 200;
const run = Date.now().toString(36);
async function scenario(port, RESP) {
  const out = [];
  const rec = (n, v) => out.push([n, v]);
  const c = createClient({ socket: { port }, RESP });
  await c.connect();
  const safe = async (n, fn) => { try { rec(n, norm(await fn())); } catch (e) { rec(n, 'ERR ' + e.message); } };
  const k = (s) => `nr:${run}:${RESP}:${s}`;
  await safe('set', () => c.set(k('a'), '1', { EX: 100 }));
  await safe('incr', () => c.incr(k('a')));
  await safe('hset', () => c.hSet(k('h'), { a: '1', b: '2' }));
  await safe('hgetall', () => c.hGetAll(k('h')));
  await safe('zadd', () => c.zAdd(k('z'), [{ score: 1.5, value: 'a' }, { score: 2, value: 'b' }]));
  await safe('zrangews', () => c.zRangeWithScores(k('z'), 0, -1));
  await safe('zscore', () => c.zScore(k('z'), 'a'));
  await safe('sadd', () => c.sAdd(k('s'), ['x', 'y']));
  await safe('smembers', async () => (await c.sMembers(k('s'))).sort());
  await safe('multi', () => c.multi().incr(k('m')).pTTL(k('m')).exec());
  await safe('eval', () => c.eval('return {1, "x", redis.call("PTTL", KEYS[1]) > 0}', { keys: [k('a')] }));
  await safe('evalfloat', () => c.eval('return 3.7', {}));
  await safe('info', async () => typeof (await c.info('server')));
  await safe('scan', async () => { const r = await c.scan('0', { MATCH: k('*'), COUNT: 1000 }); return r.keys.sort(); });
  await safe('hello', async () => { const r = await c.sendCommand(['HELLO']); return Array.isArray(r) ? r.length : Object.keys(r).length; });
  await safe('client-info', async () => /resp=\d/.exec(await c.clientInfo ? JSON.stringify(await c.clientInfo()) : '')?.[0]);
  const rl = new RateLimiterRedis({ storeClient: c, useRedisPackage: true, keyPrefix: k('rl'), points: 3, duration: 30 });
  const rr = (r) => r instanceof RateLimiterRes ? { rem: r.remainingPoints, used: r.consumedPoints, ms: r.msBeforeNext } : r;
  const rs = async (n, fn) => { try { rec(n, rr(await fn())); } catch (e) { rec(n + ' rej', e instanceof Error ? 'ERR ' + e.message : rr(e)); } };
  for (let i = 0; i < 5; i++) await rs('rl.consume' + i, () => rl.consume('u'));
  await rs('rl.get', () => rl.get('u'));
  await rs('rl.block', () => rl.block('v', 10));
  await rs('rl.consume-blocked', () => rl.consume('v'));
  await rs('rl.delete', () => rl.delete('u'));
  await c.quit();
  return out;
}
function norm(v) { if (Buffer.isBuffer(v)) return v.toString(); if (Array.isArray(v)) return v.map(norm); if (v instanceof Map) return Object.fromEntries(v); return v; }
function close(a, b, p) {
  if (typeof a === 'number' && typeof b === 'number' && /ms/.test(p)) return Math.abs(a - b) <= TOL;
  if (a && b && typeof a === 'object' && typeof b === 'object') { for (const x of new Set([...Object.keys(a), ...Object.keys(b)])) if (!close(a[x], b[x], p + '.' + x)) return false; return true; }
  return a === b || (Number.isNaN(a) && Number.isNaN(b));
}
(async () => {
  const [rp, cp] = process.argv.slice(2).map(Number);
  let bad = 0, n = 0;
  for (const RESP of [2, 3]) {
    const [a, b] = [await scenario(rp, RESP), await scenario(cp, RESP)];
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      n++;
      const [n1, v1] = a[i] || [], [n2, v2] = b[i] || [];
      const ok = n1 === n2 && close(v1, v2, n1 || '');
      if (!ok) bad++;
      if (!ok || process.env.VERBOSE) console.log((ok ? 'ok   ' : 'DIFF ') + `RESP${RESP} ` + n1 + '\n  redis:   ' + JSON.stringify(v1) + '\n  limitdb: ' + (n2 !== n1 ? n2 + ' ' : '') + JSON.stringify(v2));
    }
  }
  console.log(`${n} checks, ${bad} differences`);
  process.exit(bad ? 1 : 0);
})().catch((e) => { console.error(e); process.exit(2); });
