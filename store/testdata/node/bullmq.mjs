// BullMQ's own layout, written by BullMQ itself: the fixture of store/jobs_bullmq_test.go, and a
// readable example of every state a BullMQ queue keeps in Redis.
//
//   node bullmq.mjs redis://127.0.0.1:6379 [prefix]
//
// It leaves three queues under the default prefix "bull" (or the prefix given, BullMQ's prefix
// option of every Queue, Worker and FlowProducer) and prints, as JSON, what BullMQ itself
// reports of them at one moment (now, in ms):
//
//   work   a Worker (concurrency 1) completed 2 jobs, failed 1 (attempts 1: failed for good) and
//          keeps 1 active; 2 jobs wait behind it, 2 more wait by priority (prioritized).
//   later  no worker: delayed jobs, 2 already due (BullMQ moves a due job to wait only when a
//          worker or promote runs), others due in 0.5 s, 1 min and 2 h; a flow whose parent waits
//          for its child (waiting-children) while the child waits.
//   held   paused: its waiting jobs are in the paused list, a prioritized one stays prioritized;
//          one job's name holds escape sequences, another's data is 1 MB.
//
// For each queue: counts (queue.getJobCounts(), BullMQ's names), paused (queue.isPaused()),
// delayedAt (each delayed job's due time, timestamp + delay, in ms) and delayedDue (how many of
// those are due at now), ids (each state's job ids as BullMQ lists them) and jobs (each listed
// job's name, data and timestamp). The active job stays active after the fixture exits: the
// worker is closed with force, without waiting for it, so Redis still holds what was counted.
import { FlowProducer, Queue, Worker } from 'bullmq';

const url = new URL(process.argv[2] ?? 'redis://127.0.0.1:6379');
const connection = { host: url.hostname, port: Number(url.port) };
const prefix = process.argv[3] || undefined; // undefined: BullMQ's default, "bull"
const opts = prefix ? { connection, prefix } : { connection }; // a prefix: undefined would replace the default
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const work = new Queue('work', opts);
const later = new Queue('later', opts);
const held = new Queue('held', opts);

// work: ok, ok, bad, then block, which the worker keeps active; with concurrency 1 nothing
// after it starts.
let started;
const blockStarted = new Promise((r) => { started = r; });
const finished = { completed: 0, failed: 0 };
const worker = new Worker('work', async (job) => {
  if (job.name === 'bad') throw new Error('fails for good');
  if (job.name === 'block') {
    started();
    await new Promise(() => {}); // never settles: the job stays active
  }
}, { ...opts, concurrency: 1 });
worker.on('completed', () => { finished.completed++; });
worker.on('failed', () => { finished.failed++; });
for (const name of ['ok', 'ok', 'bad', 'block']) {
  await work.add(name, {}, { attempts: 1 });
}
await blockStarted;
while (finished.completed < 2 || finished.failed < 1) await sleep(5); // events trail the scripts
await work.add('waits', { n: 1 });
await work.add('waits', { n: 2 });
await work.add('urgent', {}, { priority: 1 });
await work.add('urgent', {}, { priority: 5 });

// later: delayed jobs, two of them due by the time they are counted.
await later.add('due', {}, { delay: 1 });
await later.add('due', {}, { delay: 1 });
await later.add('soon', {}, { delay: 500 });
await later.add('minute', {}, { delay: 60_000 });
await later.add('hours', {}, { delay: 2 * 3600_000 });
const flow = new FlowProducer(opts);
await flow.add({ name: 'parent', queueName: 'later', children: [{ name: 'child', queueName: 'later' }] });
await sleep(50);

// held: paused with jobs waiting.
await held.add('waits', {});
await held.add('waits', {});
await held.add('urgent', {}, { priority: 3 });
await held.add('\x1b]0;title\x07\x1b[2Jwipe', { text: 'bell\x07' }); // a name holding escape sequences
await held.add('big', { blob: 'x'.repeat(1 << 20) }); // 1 MB of data
await held.pause();

const now = Date.now();
const out = { now, queues: {} };
for (const q of [work, later, held]) {
  const delayedAt = (await q.getDelayed()).map((j) => j.timestamp + j.delay).sort((a, b) => a - b);
  out.queues[q.name] = {
    counts: await q.getJobCounts(),
    paused: await q.isPaused(),
    delayedAt,
    delayedDue: delayedAt.filter((t) => t <= now).length,
    // Job ids as BullMQ lists them: the lists and sets in the order taken (asc), failed the
    // newest first; and each job's name, data (as stored, JSON) and timestamp.
    ids: Object.fromEntries(await Promise.all(['wait', 'paused', 'prioritized', 'delayed', 'active', 'failed']
      .map(async (s) => [s, await q.getRanges([s], 0, -1, s !== 'failed')]))),
    jobs: Object.fromEntries((await q.getJobs(['wait', 'paused', 'prioritized', 'delayed', 'active', 'failed']))
      .map((j) => [j.id, { name: j.name, data: JSON.stringify(j.data), timestamp: j.timestamp }])),
  };
}
console.log(JSON.stringify(out));

await worker.close(true);
await Promise.all([work.close(), later.close(), held.close(), flow.close()]);
