"""Sends tasks to a queue the way Celery 5.2 does, or purges a queue as `celery purge -Q <queue>`
does (the default channel's queue_purge: kombu's redis transport deletes the queue's list of each
priority step), and prints, as one JSON object, what kombu reports.

    python3 purge.py redis://127.0.0.1:6379/0 <global_keyprefix or ""> send <queue> <n> <first> [hold]
    python3 purge.py redis://127.0.0.1:6379/0 <global_keyprefix or ""> purge <queue>
    python3 purge.py redis://127.0.0.1:6379/0 <global_keyprefix or ""> take <queue> <n>

send: n tasks (args [first], [first+1], ...) to the queue, the priorities cycling through none,
5, 9, 2 and 7 (so the lists of steps 0, 3, 6 and 9 all fill), and 2 tasks to the queue "other";
with hold, a consumer then takes one message of the queue without acknowledging it (kombu moves
it to unacked), and the process exits without closing the channel, which would restore it.
Prints {"sent": n, "message_count": kombu's count of the queue}. purge prints {"purged": the
count queue_purge returns, "message_count": after it}. take: a consumer takes n messages as a
worker does (kombu's Queue.get, acknowledged at once) and prints {"taken": their task ids in the
order it took them, "message_count": after it}.
Logs go to stderr; stdout holds the JSON alone.
"""
import json
import os
import sys

from celery import Celery
from kombu import Queue

url, prefix, mode, queue = sys.argv[1:5]
app = Celery("purge", broker=url)
if prefix:
    app.conf.broker_transport_options = {"global_keyprefix": prefix}


@app.task(name="purge.send")
def send(*args):
    return len(args)


ch = app.connection_for_write().default_channel
if mode == "send":
    n, first = int(sys.argv[5]), int(sys.argv[6])
    priorities = [None, 5, 9, 2, 7]
    for i in range(first, first + n):
        send.apply_async(args=[i], queue=queue, priority=priorities[i % len(priorities)])
    for i in range(2):
        send.apply_async(args=[i], queue="other")
    if sys.argv[7:] == ["hold"]:
        Queue(queue, channel=ch).get(no_ack=False)
    out = {"sent": n}
elif mode == "take":
    out = {"taken": [Queue(queue, channel=ch).get(no_ack=True).headers["id"] for _ in range(int(sys.argv[5]))]}
else:
    out = {"purged": ch.queue_purge(queue) or 0}
out["message_count"] = ch.queue_declare(queue=queue).message_count
print(json.dumps(out))
sys.stdout.flush()
os._exit(0)  # exit without closing the channel, which would restore a held message
