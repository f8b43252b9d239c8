// Runs BullMQ Workers with and without metrics and prints, as one JSON object, what BullMQ's own
// getMetrics reports for each queue.
//
//   node metrics.mjs redis://127.0.0.1:6379 [prefix]
//
// counted  a Worker with metrics on (a week of per-minute points) completes 12 jobs and fails 5
// silent  a Worker without metrics completes 3 jobs: BullMQ keeps no count of them
import { Queue, Worker, MetricsTime } from 'bullmq';

const url = new URL(process.argv[2] ?? 'redis://127.0.0.1:6379');
const prefix = process.argv[3] || undefined;
const connection = { host: url.hostname, port: Number(url.port || 6379), maxRetriesPerRequest: null };

async function run(name, ok, fail, metrics) {
  const queue = new Queue(name, { connection, prefix });
  const jobs = [];
  for (let i = 0; i < ok; i++) jobs.push({ name: 'ok', data: { i } });
  for (let i = 0; i < fail; i++) jobs.push({ name: 'fail', data: { i }, opts: { attempts: 1 } });
  await queue.addBulk(jobs);
  let done = 0;
  const finished = new Promise((resolve) => {
    const opts = { connection, prefix, concurrency: 1 };
    if (metrics) opts.metrics = { maxDataPoints: MetricsTime.ONE_WEEK };
    const worker = new Worker(name, async (job) => {
      if (job.name === 'fail') throw new Error('fails');
    }, opts);
    const count = () => { if (++done === ok + fail) resolve(worker); };
    worker.on('completed', count);
    worker.on('failed', count);
  });
  const worker = await finished;
  await worker.close();
  const out = { completed: await queue.getMetrics('completed'), failed: await queue.getMetrics('failed') };
  await queue.close();
  return out;
}

const out = { queues: { counted: await run('counted', 12, 5, true), silent: await run('silent', 3, 0, false) } };
process.stdout.write(JSON.stringify(out) + '\n');
