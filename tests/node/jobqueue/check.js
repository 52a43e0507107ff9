// Drives bee-queue, a Redis job queue whose workers wait for jobs in
// BRPOPLPUSH (its blocking client), against two servers and prints what
// each run observed as one JSON document per server; TestJobQueueLibrary
// compares them. Usage: node check.js HOST:PORT HOST:PORT
'use strict';
const Queue = require('bee-queue');
const redis = require('redis');

const run = process.env.JOBQUEUE_RUN || Date.now().toString(36);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function connect(addr) {
  const [host, port] = addr.split(':');
  return { host, port: Number(port) };
}

// blockedClients reads INFO's blocked_clients.
function blockedClients(c) {
  return new Promise((resolve, reject) =>
    c.info('clients', (err, s) => {
      if (err) return reject(err);
      const m = /blocked_clients:(\d+)/.exec(s);
      resolve(m ? Number(m[1]) : -1);
    }));
}

async function waitFor(what, cond) {
  for (let i = 0; i < 500; i++) {
    if (await cond()) return true;
    await sleep(10);
  }
  throw new Error('timed out waiting for ' + what);
}

async function scenario(addr) {
  const out = [];
  const rec = (name, v) => out.push([name, v]);
  const redisOpts = connect(addr);
  const ctl = redis.createClient(redisOpts);
  const settings = (worker) => ({
    redis: redisOpts,
    prefix: 'jq' + run,
    isWorker: worker,
    getEvents: false, // bee-queue's events use Pub/Sub
    sendEvents: false,
    activateDelayedJobs: false,
    removeOnSuccess: false,
    removeOnFailure: false,
    stallInterval: 1000,
  });
  const producer = new Queue('q', settings(false));
  const worker = new Queue('q', settings(true));
  await producer.ready();
  await worker.ready();
  const health = async () => {
    const h = await producer.checkHealth();
    return { waiting: h.waiting, active: h.active, succeeded: h.succeeded, failed: h.failed, newestJob: h.newestJob };
  };
  const done = (n) => waitFor(n + ' jobs done', async () => {
    const h = await producer.checkHealth();
    return h.succeeded + h.failed >= n;
  });

  // one worker, concurrency 1: it blocks in BRPOPLPUSH on an empty queue
  const processed = [];
  const attempts = {};
  worker.process(1, async (job) => {
    processed.push(job.data.n);
    attempts[job.id] = (attempts[job.id] || 0) + 1;
    if (job.data.failTimes >= attempts[job.id]) throw new Error('boom ' + job.data.n);
    return { doubled: job.data.n * 2 };
  });
  await waitFor('the worker to block', async () => (await blockedClients(ctl)) === 1);
  rec('blocked before the first job', await blockedClients(ctl));

  // a job wakes the blocked worker
  const first = await producer.createJob({ n: 1 }).save();
  await done(1);
  const got = await producer.getJob(first.id);
  rec('first job', { id: first.id, status: got.status, data: got.data });

  // a batch of jobs is processed in order (LPUSH, then BRPOPLPUSH from the tail)
  const jobs = [];
  for (let i = 2; i <= 11; i++) jobs.push(producer.createJob({ n: i }));
  await producer.saveAll(jobs);
  await done(11);
  rec('order', processed.slice());

  // retries: failing once, then succeeding; failing for good
  const retried = await producer.createJob({ n: 100, failTimes: 1 }).retries(1).save();
  const failed = await producer.createJob({ n: 101, failTimes: 5 }).retries(1).save();
  await done(13);
  for (const j of [retried, failed]) {
    const g = await producer.getJob(j.id);
    rec('retry ' + j.id, { status: g.status, attempts: attempts[j.id], retries: g.options.retries });
  }
  rec('health', await health());
  const succeeded = await producer.getJobs('succeeded', { size: 100 });
  rec('succeeded ids', succeeded.map((j) => Number(j.id)).sort((a, b) => a - b));
  const failedJobs = await producer.getJobs('failed', { size: 100 });
  rec('failed ids', failedJobs.map((j) => Number(j.id)));
  rec('stalled check', await producer.checkStalledJobs());

  // a second worker: both block, the jobs are shared out, none is lost
  const worker2 = new Queue('q', settings(true));
  await worker2.ready();
  const processed2 = [];
  worker2.process(1, async (job) => {
    processed2.push(job.data.n);
    await sleep(5);
    return job.data.n;
  });
  await waitFor('two blocked workers', async () => (await blockedClients(ctl)) === 2);
  rec('blocked workers', await blockedClients(ctl));
  const more = [];
  for (let i = 200; i < 230; i++) more.push(producer.createJob({ n: i }));
  await producer.saveAll(more);
  await done(43);
  const all = processed.concat(processed2).filter((n) => n >= 200).sort((a, b) => a - b);
  rec('shared out', { count: all.length, distinct: new Set(all).size, first: all[0], last: all[all.length - 1] });
  rec('final health', await health());

  // removing a waiting job, then closing: the blocked workers let go
  await worker.close();
  await worker2.close();
  const lone = await producer.createJob({ n: 999 }).save();
  rec('waiting ids', (await producer.getJobs('waiting', { size: 10 })).map((j) => Number(j.id)));
  await producer.removeJob(lone.id);
  rec('after remove', await health());
  await producer.destroy();
  await producer.close();
  await waitFor('no blocked client', async () => (await blockedClients(ctl)) === 0);
  rec('blocked at the end', await blockedClients(ctl));
  ctl.quit();
  return out;
}

(async () => {
  const [ref, cand] = process.argv.slice(2);
  const result = {};
  for (const [name, addr] of [['redis', ref], ['limitdb', cand]]) {
    try {
      result[name] = await scenario(addr);
    } catch (e) {
      result[name] = 'ERROR ' + (e && e.stack || e);
    }
  }
  process.stdout.write(JSON.stringify(result) + '\n');
  process.exit(0);
})();
