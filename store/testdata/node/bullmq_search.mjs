// Jobs BullMQ itself adds, for the search's tests (store/search_test.go).
//
//   node bullmq_search.mjs redis://127.0.0.1:6379 <queue> <jobs>
//
// Job i (0-based, id "j<i>") has data {email: "user<i>@example.com", n: i}; every 97th (i % 97
// == 0) is delayed an hour, the others wait. It prints, as JSON, the ids of the delayed jobs and
// queue.getJobCounts().
import { Queue } from 'bullmq';

const url = new URL(process.argv[2]);
const connection = { host: url.hostname, port: Number(url.port) };
const [name, n] = process.argv.slice(3);
const queue = new Queue(name, { connection });
const jobs = [];
const delayed = [];
for (let i = 0; i < Number(n); i++) {
  const opts = { jobId: `j${i}` };
  if (i % 97 === 0) { opts.delay = 3600_000; delayed.push(opts.jobId); }
  jobs.push({ name: 'mail', data: { email: `user${i}@example.com`, n: i }, opts });
}
for (let i = 0; i < jobs.length; i += 500) await queue.addBulk(jobs.slice(i, i + 500));
console.log(JSON.stringify({ delayed, counts: await queue.getJobCounts() }));
await queue.close();
