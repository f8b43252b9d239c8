"""Enqueues jobs with RQ 1.13 or reads what RQ counts of the jobs its workers ran, printing one
JSON object.

    python3 throughput.py redis://127.0.0.1:6379/0 enqueue <queue> <ok> <failing>
    python3 throughput.py redis://127.0.0.1:6379/0 read

enqueue puts <ok> jobs that succeed and <failing> that fail on the queue; read prints each live
worker's successful_job_count and failed_job_count as Worker.all() reads them.
"""
import json
import sys

from redis import Redis
from rq import Queue, Worker

sys.dont_write_bytecode = True  # leave no __pycache__ beside jobs.py
import jobs  # noqa: E402

r = Redis.from_url(sys.argv[1])
if sys.argv[2] == "enqueue":
    q = Queue(sys.argv[3], connection=r)
    ids = [q.enqueue(jobs.send, i).id for i in range(int(sys.argv[4]))]
    ids += [q.enqueue(jobs.fail, i).id for i in range(int(sys.argv[5]))]
    print(json.dumps({"ids": ids}))
else:
    print(json.dumps({"workers": {w.name: {"successful": w.successful_job_count, "failed": w.failed_job_count}
                                  for w in Worker.all(connection=r)}}))
