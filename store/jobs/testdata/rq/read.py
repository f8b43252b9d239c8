"""Reads a redis-server with RQ 1.13's own API and prints, as one JSON object, each queue's job
ids (Queue.job_ids, in the order a worker takes them) and its registries' (scheduled, started,
failed, finished), and the jobs named on the command line as Job.fetch reads them (or null when
RQ cannot fetch one).

    python3 read.py redis://127.0.0.1:6379/0 [--empty <queue>] [--requeue <queue> <job id>] [--requeue-all <queue>] [--enqueue-scheduled <queue>] [--work <queue>] [job id ...]

With --empty, RQ's Queue.empty first deletes every job of the queue.

With --requeue, RQ's FailedJobRegistry first requeues the failed job, as `rq requeue` does; with
--requeue-all, it requeues each failed job of the queue, as `rq requeue --all` does; with
--enqueue-scheduled, it enqueues each scheduled job of the queue now, as RQ's scheduler enqueues
a due one; with --work, a SimpleWorker then runs the queue in burst mode, as `rq worker --burst` does.
"""
import json
import logging
import sys

from redis import Redis
from rq import Queue, SimpleWorker
from rq.exceptions import NoSuchJobError
from rq.job import Job
from rq.registry import FailedJobRegistry, FinishedJobRegistry, ScheduledJobRegistry, StartedJobRegistry

sys.dont_write_bytecode = True  # leave no __pycache__ beside jobs.py
import jobs  # noqa: E402,F401  (a worker imports the jobs' functions by name)

logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
r = Redis.from_url(sys.argv[1])
args = sys.argv[2:]
if args[:1] == ["--empty"]:
    Queue(args[1], connection=r).empty()
    args = args[2:]
if args[:1] == ["--requeue"]:
    FailedJobRegistry(args[1], connection=r).requeue(args[2])
    args = args[3:]
if args[:1] == ["--requeue-all"]:
    registry = FailedJobRegistry(args[1], connection=r)
    for job_id in registry.get_job_ids():
        registry.requeue(job_id)
    args = args[2:]
if args[:1] == ["--enqueue-scheduled"]:
    # What RQ's scheduler does to each due job (RQScheduler.enqueue_scheduled_jobs), to every
    # scheduled job of the queue now, in the registry's order.
    queue = Queue(args[1], connection=r)
    registry = ScheduledJobRegistry(queue=queue)
    for job_id in registry.get_job_ids():
        job = Job.fetch(job_id, connection=r)
        queue.enqueue_job(job, at_front=bool(job.enqueue_at_front))
        registry.remove(job)
    args = args[2:]
if args[:1] == ["--work"]:
    SimpleWorker([Queue(args[1], connection=r)], connection=r).work(burst=True, logging_level="WARNING")
    args = args[2:]

queues = {}
for q in Queue.all(connection=r):
    queues[q.name] = {
        "queued": q.job_ids,
        "scheduled": ScheduledJobRegistry(queue=q).get_job_ids(),
        "started": StartedJobRegistry(queue=q).get_job_ids(),
        "failed": FailedJobRegistry(queue=q).get_job_ids(),
        "finished": FinishedJobRegistry(queue=q).get_job_ids(),
    }
fetched = {}
for job_id in args:
    try:
        job = Job.fetch(job_id, connection=r)
    except NoSuchJobError:
        fetched[job_id] = None
        continue
    fetched[job_id] = {
        "status": job.get_status(),
        "origin": job.origin,
        "enqueued_at": job.enqueued_at.isoformat() if job.enqueued_at else None,
        "started_at": job.started_at.isoformat() if job.started_at else None,
        # The job's own exc_info, which a requeue clears (the exc_info property reads the job's
        # last result first, which a requeue keeps).
        "exc_info": job._exc_info,
        "description": job.description,
    }
print(json.dumps({"queues": queues, "jobs": fetched}))
