"""Reads a redis-server with RQ 1.13's own API and prints, as one JSON array, the workers
Worker.all lists, each as its name, hostname, pid, queues, state, current job id, birth and
last heartbeat (float seconds since the epoch) and its successful and failed job counts.

    python3 workers.py redis://127.0.0.1:6379/0
"""
import json
import sys

from redis import Redis
from rq import Worker

r = Redis.from_url(sys.argv[1])
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
