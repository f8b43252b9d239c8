// BullMQ's own Queue.clean, for store/bulk_bullmq_clean_test.go to hold hourglass's delete all to.
//
//   node bullmq_clean.mjs redis://127.0.0.1:6379 fill N
//     queue "clean": N jobs delayed an hour (d0 with a log line), one more with a deduplication
//     id (its key expiring in two hours), a job scheduler's next job; N failed for good by a Worker (attempts 1), each with a
//     log line; a flow's parent p1 waiting (its child k1 in queue "kids" completed, k2 failed
//     and ignored); N waiting (w0 with a log line), N/2 prioritized
//   node bullmq_clean.mjs redis://127.0.0.1:6379 pending
//     queue "clean": c1, a failed child still pending for its parent p2 in queue "other"
//   node bullmq_clean.mjs redis://127.0.0.1:6379 flow
//     queue "clean": c2 and c3, failed children still pending for their parent p3 in queue
//     "other", which waits for k3 too (in queue "kids", no worker)
//   node bullmq_clean.mjs redis://127.0.0.1:6379 pause
//     Queue.pause(): the waiting jobs move to paused
//   node bullmq_clean.mjs redis://127.0.0.1:6379 clean STATE ...
//     Queue.clean(0, 0, STATE) of each
//   node bullmq_clean.mjs redis://127.0.0.1:6379 read
// The keys' prefix is $BULLMQ_PREFIX, "bull" when unset. Each prints queue "clean"'s getJobCounts() and (but fill) its jobs as getJob() reads them,
// with their state and logs, as JSON.
import { FlowProducer, Queue, Worker } from 'bullmq';

const url = new URL(process.argv[2]);
const connection = { host: url.hostname, port: Number(url.port) };
const [cmd, ...args] = process.argv.slice(3);
const prefix = process.env.BULLMQ_PREFIX || 'bull';
const queue = new Queue('clean', { connection, prefix });
const hour = 3600_000;

// failAll runs a worker on name until want jobs have failed.
async function failAll(name, want) {
  let failed = 0;
  const worker = new Worker(name, async (job) => {
    await job.log(`trying ${job.id}`);
    if (job.name === 'ok') return 'fine';
    throw new Error('fails for good');
  }, { connection, prefix, concurrency: 4 });
  const done = new Promise((resolve) => worker.on('failed', () => { if (++failed === want) resolve(); }));
  return { worker, done };
}

if (cmd === 'fill') {
  const n = Number(args[0]);
  for (let i = 0; i < n; i++) {
    const job = await queue.add('later', { i }, { jobId: `d${i}`, delay: hour });
    if (i === 0) await job.log('a delayed note');
  }
  await queue.add('later', {}, { jobId: 'dedup', delay: hour, deduplication: { id: 'dd', ttl: 2 * hour } });
  await queue.upsertJobScheduler('sched', { every: hour }, { name: 'tick' });
  const { worker, done } = await failAll('clean', n + 1); // and the scheduler's first job
  for (let i = 0; i < n; i++) await queue.add('fail', { i }, { jobId: `f${i}`, attempts: 1 });
  await done;
  await worker.close();
  const kids = await failAll('kids', 1);
  await new FlowProducer({ connection, prefix }).add({
    name: 'parent', queueName: 'clean', data: {}, opts: { jobId: 'p1' },
    children: [
      { name: 'ok', queueName: 'kids', data: {}, opts: { jobId: 'k1' } },
      { name: 'bad', queueName: 'kids', data: {}, opts: { jobId: 'k2', attempts: 1, ignoreDependencyOnFailure: true } },
    ],
  });
  await kids.done;
  while ((await queue.getJobState('p1')) !== 'waiting') await new Promise((r) => setTimeout(r, 20));
  await kids.worker.close();
  for (let i = 0; i < n; i++) {
    const job = await queue.add('wait', { i }, { jobId: `w${i}` });
    if (i === 0) await job.log('a waiting note');
  }
  for (let i = 0; i < n / 2; i++) await queue.add('prio', { i }, { jobId: `pr${i}`, priority: 1 + (i % 3) });
} else if (cmd === 'pending') {
  const { worker, done } = await failAll('clean', 1);
  await new FlowProducer({ connection, prefix }).add({
    name: 'parent', queueName: 'other', data: {}, opts: { jobId: 'p2' },
    children: [{ name: 'bad', queueName: 'clean', data: {}, opts: { jobId: 'c1', attempts: 1 } }],
  });
  await done;
  await worker.close();
} else if (cmd === 'flow') {
  const { worker, done } = await failAll('clean', 2);
  await new FlowProducer({ connection, prefix }).add({
    name: 'parent', queueName: 'other', data: {}, opts: { jobId: 'p3' },
    children: [
      { name: 'bad', queueName: 'clean', data: {}, opts: { jobId: 'c2', attempts: 1 } },
      { name: 'bad', queueName: 'clean', data: {}, opts: { jobId: 'c3', attempts: 1 } },
      { name: 'later', queueName: 'kids', data: {}, opts: { jobId: 'k3' } },
    ],
  });
  await done;
  await worker.close();
} else if (cmd === 'pause') {
  await queue.pause();
} else if (cmd === 'clean') {
  for (const state of args) await queue.clean(0, 0, state);
}

const jobs = {};
if (cmd !== 'fill') {
  for (const job of await queue.getJobs(['wait', 'paused', 'prioritized', 'delayed', 'failed', 'completed', 'waiting-children'])) {
    const read = await queue.getJob(job.id);
    jobs[job.id] = { job: read.toJSON(), state: await read.getState(), logs: await queue.getJobLogs(job.id) };
  }
}
const out = JSON.stringify({ counts: await queue.getJobCounts(), jobs });
await queue.close();
process.stdout.write(out + '\n', () => process.exit(0));
