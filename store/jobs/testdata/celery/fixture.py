"""Sends tasks the way Celery 5.2 (kombu's redis transport) does, takes two of them as a worker
would without acknowledging them, then prints, as one JSON object, what kombu itself counts.

    python3 fixture.py redis://127.0.0.1:6379/0 [global_keyprefix]

What it leaves in Redis (each key under kombu's global_keyprefix, when one is set):
    _kombu.binding.<exchange>   set    one member per queue bound to the exchange:
                                       "<routing key>\\x06\\x16<pattern>\\x06\\x16<queue>"
    <queue>                     list   the queue's messages of priority 0 (LPUSHed, BRPOPed)
    <queue>\\x06\\x16<n>           list   those of priority step n (3, 6, 9 by default): a message of
                                       priority p goes to the largest step <= p
    unacked                     hash   delivery tag -> JSON [message, exchange, routing key] of a
                                       message a worker took and has not acknowledged
    unacked_index               zset   delivery tag -> when it was taken (float seconds)
A task with a countdown or an ETA waits in its queue's list like any other; a worker takes it at
once and keeps it in memory, unacknowledged, until it is due.
Logs go to stderr; stdout holds the JSON alone.
"""
import json
import os
import sys
import time

from celery import Celery
from kombu import Queue
from redis import Redis

url = sys.argv[1]
prefix = sys.argv[2] if len(sys.argv) > 2 else ""
app = Celery("fixture", broker=url)
if prefix:
    app.conf.broker_transport_options = {"global_keyprefix": prefix}


@app.task(name="fixture.send")
def send(*args):
    return len(args)


# Three tasks to the default queue ("celery"), four to mail: one with priority 5 (in the list of
# step 3), one with a countdown (in the list like the others until a worker takes it).
for i in range(3):
    send.apply_async(args=[i])
send.apply_async(args=["user-1"], queue="mail")
send.apply_async(args=["user-2"], queue="mail")
send.apply_async(args=["urgent"], queue="mail", priority=5)
send.apply_async(args=["in a minute"], queue="mail", countdown=60)

# A consumer takes one message of each queue and acknowledges neither, as a worker running them
# (or holding an ETA task) does: kombu moves them to unacked.
conn = app.connection_for_write()
ch = conn.default_channel
held = [Queue(name, channel=ch).get(no_ack=False) for name in ("celery", "mail")]


bindings = {ex: sorted(q for _, _, q in ch.get_table(ex)) for ex in ("celery", "mail")}
queues = {}
for name in sorted({q for qs in bindings.values() for q in qs}):
    queues[name] = {
        # What queue_declare reports: on redis it only sums the lists (and writes nothing). Its
        # passive form would first check the lists exist, unprefixed in kombu 5.2.
        "message_count": ch.queue_declare(queue=name).message_count,
        "lists": {ch._q_for_pri(name, p): ch.client.llen(ch._q_for_pri(name, p)) for p in ch.priority_steps},
    }
raw = Redis.from_url(url)
print(json.dumps({
    "now": time.time(),
    "bindings": bindings,
    "queues": queues,
    "delivered": len(ch.qos._delivered),
    "unacked": raw.hlen(prefix + ch.unacked_key),
    "unacked_index": raw.zcard(prefix + ch.unacked_index_key),
    "held_routing_keys": sorted(m.delivery_info["routing_key"] for m in held),
    # The held messages: delivery tag, task id and name, and when kombu recorded the delivery.
    "held": [{"tag": m.delivery_tag, "id": m.headers["id"], "task": m.headers["task"],
              "delivered": raw.zscore(prefix + ch.unacked_index_key, m.delivery_tag)} for m in held],
}))
sys.stdout.flush()
os._exit(0)  # exit without closing the channel, which would restore the unacked messages
