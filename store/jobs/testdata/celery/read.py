"""Takes every message of the queues named, as a Celery worker's consumer does (kombu's
Queue.get, acknowledged at once), and prints, as one JSON object, each queue's messages in the
order kombu gave them (task id, task name, and whether kombu marks it redelivered), and what is
left unacknowledged.

    python3 read.py redis://127.0.0.1:6379/0 <global_keyprefix or ""> [--restore <tag>] <queue> ...

With --restore, kombu first restores that unacknowledged delivery (QoS.restore_by_tag), as it
does for one whose visibility timeout passed.

Logs go to stderr; stdout holds the JSON alone.
"""
import json
import sys

from celery import Celery
from kombu import Queue
from redis import Redis

url, prefix, names = sys.argv[1], sys.argv[2], sys.argv[3:]
app = Celery("read", broker=url)
if prefix:
    app.conf.broker_transport_options = {"global_keyprefix": prefix}
conn = app.connection_for_write()
ch = conn.default_channel
if names[:1] == ["--restore"]:
    ch.qos.restore_by_tag(names[1])
    names = names[2:]
queues = {}
for name in names:
    got = []
    while True:
        m = Queue(name, channel=ch).get(no_ack=True)
        if m is None:
            break
        got.append({"id": m.headers["id"], "task": m.headers["task"],
                    "redelivered": bool(m.delivery_info.get("redelivered")),
                    "headers_redelivered": bool(m.headers.get("redelivered"))})
    queues[name] = got
raw = Redis.from_url(url)
print(json.dumps({"queues": queues, "unacked": raw.hlen(prefix + "unacked"),
                  "unacked_index": raw.zcard(prefix + "unacked_index")}))
