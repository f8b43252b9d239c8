// BullMQ's workers as BullMQ itself finds them: starts a named Worker on "work" and an unnamed
// one on "mail" (each a blocking connection BullMQ names after its queue), prints, as one JSON
// line, what queue.getWorkers() answers for each queue ({work: [...], mail: [...]}, each client
// as CLIENT LIST shows it, with rawname), then keeps the workers running until its standard
// input closes, and closes them.
//
//   node workers.mjs redis://127.0.0.1:6379 [--cluster]
//
// With --cluster the address is one node of a Redis Cluster: the queues are under the prefix
// "{bull}" (BullMQ's advice, one slot per queue) and the connections are ioredis Cluster ones.
import { Queue, Worker } from 'bullmq';
import { Cluster } from 'ioredis';

const url = new URL(process.argv[2] ?? 'redis://127.0.0.1:6379');
const node = { host: url.hostname, port: Number(url.port) };
const cluster = process.argv[3] === '--cluster';
const connection = cluster ? new Cluster([node]) : node;
const prefix = cluster ? '{bull}' : 'bull';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const names = ['work', 'mail'];
const queues = Object.fromEntries(names.map((n) => [n, new Queue(n, { connection, prefix })]));
const workers = [
  new Worker('work', async () => {}, { connection, prefix, name: 'box-1' }),
  new Worker('mail', async () => {}, { connection, prefix }),
];
await Promise.all(workers.map((w) => w.waitUntilReady()));

// A worker's blocking connection is named once it connects: wait until each queue lists one.
const out = {};
const deadline = Date.now() + 20000;
for (const n of names) {
  for (;;) {
    out[n] = await queues[n].getWorkers();
    if (out[n].length > 0) break;
    if (Date.now() > deadline) throw new Error(`getWorkers found no worker of ${n}`);
    await sleep(20);
  }
}
process.stdout.write(JSON.stringify(out) + '\n');

process.stdin.resume();
await new Promise((r) => process.stdin.on('end', r));
await Promise.all(workers.map((w) => w.close(true)));
await Promise.all(Object.values(queues).map((q) => q.close()));
if (cluster) await connection.quit();
process.exit(0);
