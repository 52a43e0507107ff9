// Drives ioredis, rate-limiter-flexible and rate-limit-redis against two servers
// and compares every result. Usage: node check.js REF_PORT CAND_PORT
const Redis = require('ioredis');
const { RateLimiterRedis, RateLimiterRedisNonAtomic, BurstyRateLimiter, RateLimiterRes } = require('rate-limiter-flexible');
const { RedisStore } = require('rate-limit-redis');
const RedisStoreCls = RedisStore || require('rate-limit-redis').default;

const TOL = 200; // ms tolerance for wall-clock-derived durations
const run = Date.now().toString(36);

async function scenario(port, proto) {
  const out = [];
  const rec = (name, v) => out.push([name, v]);
  const c = new Redis({ port, lazyConnect: false, maxRetriesPerRequest: 1 });
  const safe = async (name, fn) => {
    try { rec(name, norm(await fn())); } catch (e) { rec(name, 'ERR ' + e.message); }
  };
  const k = (s) => `node:${run}:${s}`;
  // --- ioredis basics
  await safe('ping', () => c.ping());
  await safe('set', () => c.set(k('a'), 'v', 'EX', 100));
  await safe('get', () => c.get(k('a')));
  await safe('ttl', () => c.ttl(k('a')));
  await safe('pipeline', () => c.pipeline().incr(k('n')).incrby(k('n'), 5).get(k('n')).pexpire(k('n'), 5000).exec());
  await safe('multi', () => c.multi().incr(k('m')).get(k('m')).exec());
  await safe('multi-err', () => c.multi().incr(k('a')).get(k('a')).exec());
  await safe('hset', () => c.hset(k('h'), 'f1', '1', 'f2', '2'));
  await safe('hgetall', () => c.hgetall(k('h')));
  await safe('eval', () => c.eval('return {KEYS[1], ARGV[1], 3, redis.call("INCR", KEYS[2])}', 2, k('x'), k('n2'), 'y'));
  c.defineCommand('myIncr', { numberOfKeys: 1, lua: 'return redis.call("INCRBY", KEYS[1], ARGV[1])' });
  await safe('defineCommand', () => c.myIncr(k('d'), 3));
  await safe('defineCommand2', () => c.myIncr(k('d'), 4));
  await safe('script-exists', () => c.script('EXISTS', '0000000000000000000000000000000000000000'));
  await safe('zadd', () => c.zadd(k('z'), 1, 'a', 2, 'b'));
  await safe('zrange', () => c.zrange(k('z'), 0, -1, 'WITHSCORES'));
  await safe('del', () => c.del(k('a'), k('h')));
  await safe('exists', () => c.exists(k('a')));
  await safe('client-setname', () => c.client('SETNAME', 'nodecheck'));
  await safe('client-getname', () => c.client('GETNAME'));
  await safe('type', () => c.type(k('z')));

  // --- rate-limiter-flexible
  const opts = (p, extra) => Object.assign({ storeClient: c, useRedisPackage: false, keyPrefix: k(p), points: 5, duration: 60 }, extra || {});
  const rl = new RateLimiterRedis(opts('rlf'));
  const rlRes = (r) => r instanceof RateLimiterRes ? { rem: r.remainingPoints, used: r.consumedPoints, ms: r.msBeforeNext, first: r.isFirstInDuration } : r;
  const rsafe = async (name, fn) => {
    try { rec(name, rlRes(await fn())); } catch (e) { rec(name + ' (rejected)', e instanceof Error ? 'ERR ' + e.message : rlRes(e)); }
  };
  for (let i = 0; i < 7; i++) await rsafe('rlf.consume' + i, () => rl.consume('u1'));
  await rsafe('rlf.get', () => rl.get('u1'));
  await rsafe('rlf.get-missing', () => rl.get('nobody'));
  await rsafe('rlf.reward', () => rl.reward('u1', 3));
  await rsafe('rlf.consume2', () => rl.consume('u1', 2));
  await rsafe('rlf.penalty', () => rl.penalty('u1', 1));
  await rsafe('rlf.block', () => rl.block('u2', 30));
  await rsafe('rlf.consume-blocked', () => rl.consume('u2'));
  await rsafe('rlf.set', () => rl.set('u3', 2, 10));
  await rsafe('rlf.consume-set', () => rl.consume('u3', 2));
  await rsafe('rlf.delete', () => rl.delete('u1'));
  await rsafe('rlf.delete-missing', () => rl.delete('u1'));
  await rsafe('rlf.consume-after-delete', () => rl.consume('u1'));
  const rlb = new RateLimiterRedis(opts('rlfb', { blockDuration: 20, execEvenly: false }));
  for (let i = 0; i < 4; i++) await rsafe('rlfb.consume' + i, () => rlb.consume('u', 2));
  const rl0 = new RateLimiterRedis(opts('rlf0', { duration: 0 }));
  for (let i = 0; i < 3; i++) await rsafe('rlf0.consume' + i, () => rl0.consume('u', 2));
  const rlms = new RateLimiterRedis(opts('rlfms', { points: 3, duration: 1 }));
  for (let i = 0; i < 4; i++) await rsafe('rlfms.consume' + i, () => rlms.consume('u'));
  const na = new RateLimiterRedisNonAtomic(opts('rlfna'));
  for (let i = 0; i < 7; i++) await rsafe('na.consume' + i, () => na.consume('u'));
  await rsafe('na.get', () => na.get('u'));
  await rsafe('na.delete', () => na.delete('u'));
  const bursty = new BurstyRateLimiter(new RateLimiterRedis(opts('bur1', { points: 2, duration: 10 })), new RateLimiterRedis(opts('bur2', { points: 3, duration: 60 })));
  for (let i = 0; i < 7; i++) await rsafe('bursty.consume' + i, () => bursty.consume('u'));

  // --- rate-limit-redis (express-rate-limit store)
  const store = new RedisStoreCls({ sendCommand: (...args) => c.call(...args), prefix: k('erl:') });
  store.init({ windowMs: 60000 });
  const erl = (r) => r && typeof r === 'object' ? { hits: r.totalHits, resetMs: r.resetTime ? r.resetTime.getTime() - Date.now() : null } : r;
  const esafe = async (name, fn) => { try { rec(name, erl(await fn())); } catch (e) { rec(name, 'ERR ' + e.message); } };
  for (let i = 0; i < 4; i++) await esafe('erl.increment' + i, () => store.increment('ip1'));
  await esafe('erl.get', () => store.get('ip1'));
  await esafe('erl.get-missing', () => store.get('ip9'));
  await esafe('erl.decrement', () => store.decrement('ip1'));
  await esafe('erl.get2', () => store.get('ip1'));
  await safe('script-flush', () => c.script('FLUSH'));
  await esafe('erl.increment-after-flush', () => store.increment('ip1'));
  await esafe('erl.resetKey', () => store.resetKey('ip1'));
  await esafe('erl.get3', () => store.get('ip1'));
  await c.quit();
  return out;
}

function norm(v) {
  if (Buffer.isBuffer(v)) return v.toString();
  if (v instanceof Error) return 'ERR ' + v.message;
  if (Array.isArray(v)) return v.map(norm);
  return v;
}

function close(a, b, path) {
  if (typeof a === 'number' && typeof b === 'number' && /ms|resetMs|ttl/.test(path)) return Math.abs(a - b) <= TOL;
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const ks = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of ks) if (!close(a[key], b[key], path + '.' + key)) return false;
    return true;
  }
  return a === b || (Number.isNaN(a) && Number.isNaN(b));
}

(async () => {
  const [refPort, candPort] = process.argv.slice(2).map(Number);
  const [ref, cand] = [await scenario(refPort), await scenario(candPort)];
  let bad = 0;
  for (let i = 0; i < Math.max(ref.length, cand.length); i++) {
    const [n1, v1] = ref[i] || [], [n2, v2] = cand[i] || [];
    const ok = n1 === n2 && close(v1, v2, n1 || '');
    if (!ok) bad++;
    if (!ok || process.env.VERBOSE) console.log((ok ? 'ok   ' : 'DIFF ') + n1 + '\n  redis:   ' + JSON.stringify(v1) + '\n  limitdb: ' + (n2 !== n1 ? n2 + ' ' : '') + JSON.stringify(v2));
  }
  console.log(`${ref.length} checks, ${bad} differences`);
  process.exit(bad ? 1 : 0);
})().catch((e) => { console.error(e); process.exit(2); });
