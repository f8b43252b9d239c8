"""Jobs RQ itself enqueues, for the search's tests (store/search_test.go).

    python3 search.py redis://127.0.0.1:6379/0 <queue> <jobs>

Job i (0-based) calls jobs.send('user-<i>'); it prints, as JSON, RQ's ids of the jobs whose
argument is 'user-7' and 'user-77', and the queue's length as RQ counts it.
"""
import json
import sys

from redis import Redis
from rq import Queue

sys.dont_write_bytecode = True  # leave no __pycache__ beside jobs.py
import jobs  # noqa: E402

r = Redis.from_url(sys.argv[1])
q = Queue(sys.argv[2], connection=r)
ids = {}
for i in range(int(sys.argv[3])):
    job = q.enqueue(jobs.send, "user-%d" % i)
    if i in (7, 77):
        ids["user-%d" % i] = job.id
print(json.dumps({"ids": ids, "count": q.count}))
