// BullMQ's own bulk actions, for store/bulk_bullmq_test.go to hold hourglass's to.
//
//   node bullmq_bulk.mjs redis://127.0.0.1:6379 fill N
//     queue "bulk": N jobs delayed an hour, and N failed for good by a Worker (attempts 1)
//   node bullmq_bulk.mjs redis://127.0.0.1:6379 retry|promote
//     Queue.retryJobs({ state: 'failed' }) or Queue.promoteJobs()
// Each prints the queue's getJobCounts() as JSON.
import { Queue, Worker } from 'bullmq';

const url = new URL(process.argv[2]);
const connection = { host: url.hostname, port: Number(url.port) };
const [cmd, n] = process.argv.slice(3);
const queue = new Queue('bulk', { connection });

if (cmd === 'fill') {
  for (let i = 0; i < Number(n); i++) {
    await queue.add('later', { i }, { jobId: `d${i}`, delay: 3600_000 });
  }
  let failed = 0;
  const worker = new Worker('bulk', async () => { throw new Error('fails for good'); }, { connection, concurrency: 4 });
  const done = new Promise((resolve) => worker.on('failed', () => { if (++failed === Number(n)) resolve(); }));
  for (let i = 0; i < Number(n); i++) await queue.add('fail', { i }, { jobId: `f${i}`, attempts: 1 });
  await done;
  await worker.close();
} else if (cmd === 'retry') {
  await queue.retryJobs({ state: 'failed' });
} else if (cmd === 'promote') {
  await queue.promoteJobs();
}
console.log(JSON.stringify(await queue.getJobCounts()));
await queue.close();
