"""Reads a redis-server with RQ 1.13's own API and prints, as one JSON array, the workers
Worker.all lists, each as its name, hostname, pid, queues, state, current job id, birth and
last heartbeat (float seconds since the epoch) and its successful and failed job counts.
With --hold QUEUE it first enqueues a job that keeps a worker busy for a minute (jobs.hold), and
prints {"job": its id} instead.

    python3 workers.py redis://127.0.0.1:6379/0 [--hold QUEUE]
"""
import json
import sys

from redis import Redis
from rq import Queue, Worker

sys.dont_write_bytecode = True  # leave no __pycache__ beside jobs.py
import jobs  # noqa: E402

r = Redis.from_url(sys.argv[1])
if sys.argv[2:3] == ["--hold"]:
    job = Queue(sys.argv[3], connection=r).enqueue(jobs.hold, 60)
    print(json.dumps({"job": job.id}))
    sys.exit(0)
out = []
for w in Worker.all(connection=r):
    out.append({
        "name": w.name, "hostname": w.hostname, "pid": w.pid, "queues": w.queue_names(),
        "state": w.get_state(), "current_job": w.get_current_job_id(),
        "birth": w.birth_date.timestamp() if w.birth_date else None,
        "last_heartbeat": w.last_heartbeat.timestamp() if w.last_heartbeat else None,
        "successful": w.successful_job_count, "failed": w.failed_job_count,
    })
print(json.dumps(out))
