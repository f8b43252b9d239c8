// BullMQ's own view of a queue hourglass pauses and resumes (store/pause_test.go).
//
//   node bullmq_pause.mjs redis://127.0.0.1:6379 setup <queue>
//     adds 3 waiting jobs, 1 prioritized (priority 3) and 1 delayed an hour
//   node bullmq_pause.mjs redis://127.0.0.1:6379 state <queue>
//     prints, as JSON, queue.isPaused() and queue.getJobCounts()
//   node bullmq_pause.mjs redis://127.0.0.1:6379 work <queue> <jobs>
//     runs a Worker on the queue: prints one JSON line ({"drained":...}) once the Worker has
//     looked for a job and found none it may take (its "drained" event), with what it completed
//     so far and isPaused(); then waits until it has completed <jobs> jobs and prints them
import { Queue, Worker } from 'bullmq';

const url = new URL(process.argv[2]);
const connection = { host: url.hostname, port: Number(url.port) };
const [cmd, name, n] = process.argv.slice(3);
const queue = new Queue(name, { connection });

if (cmd === 'setup') {
  for (const i of [1, 2, 3]) await queue.add('job', { i }, { jobId: `w${i}` });
  await queue.add('job', { i: 4 }, { jobId: 'p4', priority: 3 });
  await queue.add('job', { i: 5 }, { jobId: 'd5', delay: 3600_000 });
  console.log('{}');
} else if (cmd === 'state') {
  console.log(JSON.stringify({ paused: await queue.isPaused(), counts: await queue.getJobCounts() }));
} else if (cmd === 'work') {
  const completed = [];
  let all;
  const done = new Promise((resolve) => { all = resolve; });
  const worker = new Worker(name, async (job) => job.id, { connection, drainDelay: 1 });
  worker.on('completed', (job) => { completed.push(job.id); if (completed.length === Number(n)) all(); });
  await new Promise((resolve) => worker.once('drained', resolve));
  console.log(JSON.stringify({ drained: true, completed: [...completed], paused: await queue.isPaused() }));
  await done;
  console.log(JSON.stringify({ completed }));
  await worker.close();
}
await queue.close();
