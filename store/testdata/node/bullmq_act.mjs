// Jobs made by BullMQ itself, in twins: of each pair, hourglass acts on "<name>-ours" and BullMQ's
// own Job API on "<name>-theirs", so store/act_bullmq_test.go can hold the two results to each
// other.
//
//   node bullmq_act.mjs redis://127.0.0.1:6379 setup
//     acts       delayed an hour: p0 (no priority), p5 (priority 5), d (deduplication id dd-<twin>);
//                waiting: w; a flow: f-parent waiting for its child f-child (waiting)
//     acts-held  paused, delayed an hour: h
//     acts-fail  failed for good by a Worker (attempts 1): x
//   node bullmq_act.mjs redis://127.0.0.1:6379 do <promote|remove>:<queue>:<job id> ...
//     does each with Job.promote() or Job.remove()
//   node bullmq_act.mjs redis://127.0.0.1:6379 read <queue>:<job id> ...
//     prints, as JSON, each queue's getJobCounts() and each job's getState() (null: no such job)
import { FlowProducer, Queue, Worker } from 'bullmq';

const url = new URL(process.argv[2]);
const connection = { host: url.hostname, port: Number(url.port) };
const [cmd, ...args] = process.argv.slice(3);
const queues = {};
const queue = (name) => (queues[name] ??= new Queue(name, { connection }));
const hour = 3600_000;

if (cmd === 'setup') {
  for (const twin of ['ours', 'theirs']) {
    await queue('acts').add('twin', { n: 1 }, { jobId: `p0-${twin}`, delay: hour });
    await queue('acts').add('twin', { n: 1 }, { jobId: `p5-${twin}`, delay: hour, priority: 5 });
    await queue('acts').add('twin', { n: 1 }, { jobId: `d-${twin}`, delay: hour, deduplication: { id: `dd-${twin}` } });
    await queue('acts').add('twin', { n: 1 }, { jobId: `w-${twin}` });
    await queue('acts-held').add('twin', { n: 1 }, { jobId: `h-${twin}`, delay: hour });
  }
  await queue('acts-held').pause();
  const flow = new FlowProducer({ connection });
  await flow.add({ name: 'parent', queueName: 'acts', opts: { jobId: 'f-parent' },
    children: [{ name: 'child', queueName: 'acts', opts: { jobId: 'f-child' } }] });
  await flow.close();
  let failed = 0;
  const worker = new Worker('acts-fail', async () => { throw new Error('fails for good'); }, { connection });
  const done = new Promise((resolve) => worker.on('failed', () => { if (++failed === 2) resolve(); }));
  for (const twin of ['ours', 'theirs']) await queue('acts-fail').add('twin', { n: 1 }, { jobId: `x-${twin}`, attempts: 1 });
  await done;
  await worker.close();
  console.log('{}');
} else if (cmd === 'do') {
  for (const op of args) {
    const [what, q, id] = op.split(':');
    const job = await queue(q).getJob(id);
    if (what === 'promote') await job.promote();
    else await job.remove();
  }
  console.log('{}');
} else if (cmd === 'read') {
  const out = { counts: {}, states: {} };
  for (const ref of args) {
    const [q, id] = ref.split(':');
    out.counts[q] ??= await queue(q).getJobCounts();
    const job = await queue(q).getJob(id);
    out.states[ref] = job ? await job.getState() : null;
  }
  console.log(JSON.stringify(out));
}
await Promise.all(Object.values(queues).map((q) => q.close()));
