"""Takes every message of the named queues as a Celery 5.2 worker's consumer would (kombu's redis
transport: each list of the queue from its tail, priority step 0 first), acknowledging each, and
prints, as one JSON object, the messages in the order kombu delivered them.

    python3 drain.py redis://127.0.0.1:6379/0 global_keyprefix queue...

For each queue: a list of {"id", "task", "body", "eta"}: the task's id and name (the message's
headers), its body as kombu decodes it (Celery's JSON [args, kwargs, embed]) and its ETA (null
without one). Logs go to stderr; stdout holds the JSON alone.
"""
import json
import sys

from celery import Celery
from kombu import Queue

url, prefix, names = sys.argv[1], sys.argv[2], sys.argv[3:]
app = Celery("drain", broker=url)
if prefix:
    app.conf.broker_transport_options = {"global_keyprefix": prefix}
ch = app.connection_for_write().default_channel
out = {}
for name in names:
    out[name] = []
    while (m := Queue(name, channel=ch).get(no_ack=True)) is not None:
        out[name].append({"id": m.headers["id"], "task": m.headers["task"], "body": m.body.decode(),
                          "eta": m.headers.get("eta")})
print(json.dumps(out))
