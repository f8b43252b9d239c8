"""Writes rate-limit keys with python `limits` itself and prints what `limits` answers for them.

Usage: fixture.py REDIS_URL

Fixed window and moving window, each with one identifier under its limit, one exactly at it and
one with refused hits beyond it (a fixed window's counter counts those too, so it holds more than
the limit), plus a limit of several multiples of an hour, so the reader must take amount and
window from the key name. The JSON printed holds, per key name: the strategy, the limit's amount
and expiry, every hit's answer, get_window_stats (reset, remaining) and test(); and "now", the
time.time() at which it printed, for the reader to answer as of the same moment.
"""

import json
import sys
import time

from limits import parse
from limits.storage import RedisStorage
from limits.strategies import FixedWindowRateLimiter, MovingWindowRateLimiter


def main():
    storage = RedisStorage(sys.argv[1])
    strategies = {
        "fixed": FixedWindowRateLimiter(storage),
        "moving": MovingWindowRateLimiter(storage),
    }
    # (limit, identifiers, hits): under, exactly at, and past the limit by three refused hits.
    plan = [
        ("5/minute", ("under",), 2),
        ("5/minute", ("at",), 5),
        ("5/minute", ("over",), 8),
        ("3 per 2 hours", ("api", "user/7"), 4),
    ]
    keys = {}
    for name, limiter in strategies.items():
        for text, identifiers, hits in plan:
            item = parse(text)
            ids = (name,) + identifiers
            answers = [limiter.hit(item, *ids) for _ in range(hits)]
            reset, remaining = limiter.get_window_stats(item, *ids)
            keys[item.key_for(*ids)] = {
                "strategy": name,
                "amount": item.amount,
                "expiry": item.get_expiry(),
                "hits": answers,
                "remaining": remaining,
                "reset": reset,
                "test": limiter.test(item, *ids),
            }
    print(json.dumps({"now": time.time(), "keys": keys}))


if __name__ == "__main__":
    main()
