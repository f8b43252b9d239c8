"""Fills a redis-server the way RQ 1.13 itself does, then prints, as one JSON object, what RQ's own
API (Queue, its registries, Worker) counts there.

    python3 fixture.py redis://127.0.0.1:6379/0

What it leaves in Redis (RQ's keys all start with "rq:"):
    rq:queues               set    "rq:queue:<name>" of every queue
    rq:queue:<name>         list   ids of the jobs waiting (RPUSHed, a worker LPOPs)
    rq:scheduled:<name>     zset   ids of jobs due later, scored by due time (whole seconds)
    rq:deferred:<name>      zset   ids of jobs waiting for a job they depend on
    rq:wip:<name>           zset   ids of jobs a worker runs, scored by when the worker's claim
                                   expires (seconds)
    rq:finished:<name>      zset   ids of finished jobs, scored by when their result expires
    rq:failed:<name>        zset   ids of failed jobs, scored by when the failure expires
    rq:canceled:<name>      zset   ids of canceled jobs
    rq:job:<id>             hash   the job (function, args, status, origin queue, ...)
    rq:workers, rq:workers:<name>  sets of worker keys; rq:worker:<name> hash, the worker
Logs go to stderr; stdout holds the JSON alone.
"""
import json
import logging
import sys
import time
from datetime import datetime, timedelta, timezone

import rq.registry
from redis import Redis
from rq import Queue, SimpleWorker, Worker
from rq.job import Job
from rq.registry import (CanceledJobRegistry, DeferredJobRegistry, FailedJobRegistry,
                         FinishedJobRegistry, ScheduledJobRegistry, StartedJobRegistry)
from rq.suspension import is_suspended

sys.dont_write_bytecode = True  # leave no __pycache__ beside jobs.py
import jobs  # noqa: E402

logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
r = Redis.from_url(sys.argv[1])
default, mail, work = (Queue(name, connection=r) for name in ("default", "mail", "work"))

# Waiting: three jobs in default, two in mail; a third job of mail is canceled.
for i in range(3):
    default.enqueue(jobs.send, i)
parent = mail.enqueue(jobs.send, "parent")
mail.enqueue(jobs.send, "user-1")
mail.enqueue(jobs.send, "canceled").cancel()

# Deferred: a job that runs once parent has finished (parent waits in mail).
mail.enqueue(jobs.send, "child", depends_on=parent)

# Scheduled. RQ scores them in whole seconds (it truncates the due time), so the one due in
# 0.4 s may already be due when this prints, and the one 2.7 s from now is due 5 s from now.
now = datetime.now(timezone.utc)
mail.enqueue_at(now - timedelta(seconds=5.3), jobs.send, "late")
mail.enqueue_in(timedelta(seconds=0.4), jobs.send, "soon")
mail.enqueue_in(timedelta(seconds=2.7), jobs.send, "in-a-moment")
mail.enqueue_in(timedelta(seconds=90), jobs.send, "later")
default.enqueue_in(timedelta(hours=2), jobs.send, "much-later")

# Finished and failed: a worker runs the work queue here, in this process, until it is empty.
work.enqueue(jobs.send, "kept")
work.enqueue(jobs.send, "kept briefly", result_ttl=2)  # its result expires in 2 s
work.enqueue(jobs.fail, "once")
work.enqueue(jobs.fail, "twice")
SimpleWorker([work], connection=r).work(burst=True, logging_level="WARNING")

# Started: a worker takes a job of default and is running it, as a worker between taking a job
# and finishing it leaves things.
busy = Worker([default], connection=r, name="busy-worker")
busy.register_birth()
job, _ = Queue.dequeue_any([default], None, connection=r)
busy.prepare_job_execution(job)


at = time.time()
later = at + 5
queues = {}
for q in Queue.all(connection=r):
    scheduled = ScheduledJobRegistry(queue=q)
    queues[q.name] = {
        "count": q.count,
        "len": len(q),
        "started": StartedJobRegistry(queue=q).count,
        "scheduled": scheduled.count,
        "deferred": DeferredJobRegistry(queue=q).count,
        "finished": FinishedJobRegistry(queue=q).count,
        "failed": FailedJobRegistry(queue=q).count,
        "canceled": CanceledJobRegistry(queue=q).count,
        "scheduled_due": len(scheduled.get_jobs_to_schedule(at)),
        "later": {"scheduled_due": len(scheduled.get_jobs_to_schedule(later))},
    }

# RQ's own registry counts with its clock 5 s on. A registry's count first cleans up what has
# expired by RQ's clock (the started registry moving its jobs to the failed one), so RQ counts a
# copy of the keys in database 1, emptied after: database 0 stays as RQ left it at `at`.
scratch = Redis(**{**r.connection_pool.connection_kwargs, "db": 1})
scratch.flushdb()
for key in r.scan_iter(count=1000):
    r.copy(key, key, destination_db=1)
real_clock = rq.registry.current_timestamp
rq.registry.current_timestamp = lambda: int(later)  # RQ's clock reads whole seconds
for q in Queue.all(connection=scratch):
    queues[q.name]["later"].update({
        "started": StartedJobRegistry(queue=q).count,
        "finished": FinishedJobRegistry(queue=q).count,
        "failed": FailedJobRegistry(queue=q).count,
    })
rq.registry.current_timestamp = real_clock
scratch.flushdb()


def seconds(d):
    """A datetime RQ keeps (naive UTC, or aware) as float seconds, or None."""
    return None if d is None else (d if d.tzinfo else d.replace(tzinfo=timezone.utc)).timestamp()


# Each queue's job ids as RQ lists them (the queue in the order a worker takes it, each registry
# by its score, after the cleanup RQ makes first), and each listed job's description, when it was
# enqueued (or created), its due time (scheduled) and its expiry in the started registry.
for q in Queue.all(connection=r):
    started = StartedJobRegistry(queue=q)
    ids = {"queued": q.job_ids, "scheduled": ScheduledJobRegistry(queue=q).get_job_ids(),
           "started": started.get_job_ids(), "failed": FailedJobRegistry(queue=q).get_job_ids()}
    jobs = {}
    for job_id in {i for listed in ids.values() for i in listed}:
        job = Job.fetch(job_id, connection=r)
        jobs[job_id] = {
            "description": job.description,
            "enqueued": seconds(job.enqueued_at or job.created_at),
            "due": seconds(ScheduledJobRegistry(queue=q).get_scheduled_time(job_id)) if job_id in ids["scheduled"] else None,
            "deadline": seconds(started.get_expiration_time(job)) if job_id in ids["started"] else None,
        }
    queues[q.name]["ids"], queues[q.name]["jobs"] = ids, jobs
print(json.dumps({
    "now": at,
    "later": later,
    "queues": queues,
    "workers": Worker.count(connection=r),
    "suspended": bool(is_suspended(r)),
    "job": job.id,
}))
