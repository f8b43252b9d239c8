"""Writes rate-limit keys with python `limits` itself and prints what `limits` answers for them.

Usage: fixture.py REDIS_URL

Fixed window and moving window, each with one identifier under its limit, one exactly at it and
one with refused hits beyond it (a fixed window's counter counts those too, so it holds more than
the limit), plus a limit of several multiples of an hour, so the reader must take amount and
window from the key name, and a moving window whose hits were spread over the last minute (made
50 s, 30 s and 5 s ago through the clock limits' storage reads), at its limit: the next hit is
allowed when the oldest leaves the window, long before get_window_stats' reset (the newest hit
plus the window). The JSON printed holds, per key name: the strategy, the limit's amount and
expiry, every hit's answer, get_window_stats (reset, remaining), test(), and allowed_at, when
limits itself would next allow a hit (for a moving window, found by asking test() at later
times); and "now", the time.time() at which it printed, for the reader to answer as of the same
moment.
"""

import json
import sys
import time

import limits.storage.redis as redis_storage
from limits import parse
from limits.storage import RedisStorage
from limits.strategies import FixedWindowRateLimiter, MovingWindowRateLimiter


class Clock:
    """time.time() as limits' Redis storage reads it: shifted by offset seconds, or, while at is
    set, stopped there."""

    def __init__(self):
        self.offset = 0.0
        self.at = None

    def time(self):
        if self.at is not None:
            return self.at
        return time.time() + self.offset


CLOCK = Clock()
redis_storage.time = CLOCK  # the module reads time.time() when a hit is stored or counted


def allowed_at(limiter, name, item, ids, now):
    """When limits itself would next allow a hit: now if test() says so; a fixed window at its
    reset; a moving window at the first later time test() allows, found to 1/64 s by bisection
    (test() is false until then and true from then on)."""
    if limiter.test(item, *ids):
        return now
    if name == "fixed":
        return limiter.get_window_stats(item, *ids)[0]
    lo, hi = now, now + item.get_expiry() + 2
    try:
        while hi - lo > 1 / 64:
            CLOCK.at = (lo + hi) / 2
            if limiter.test(item, *ids):
                hi = CLOCK.at
            else:
                lo = CLOCK.at
    finally:
        CLOCK.at = None
    return hi


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
            keys[item.key_for(*ids)] = record(limiter, name, item, ids, answers)
    # A moving window whose 3 hits of 3 per minute came 50 s, 30 s and 5 s ago.
    item, ids = parse("3/minute"), ("moving", "spread")
    answers = []
    for ago in (50, 30, 5):
        CLOCK.offset = -ago
        answers.append(strategies["moving"].hit(item, *ids))
    CLOCK.offset = 0.0
    keys[item.key_for(*ids)] = record(strategies["moving"], "moving", item, ids, answers)
    print(json.dumps({"now": time.time(), "keys": keys}))


def record(limiter, name, item, ids, answers):
    """What limits answers for one key now."""
    reset, remaining = limiter.get_window_stats(item, *ids)
    return {
        "strategy": name,
        "amount": item.amount,
        "expiry": item.get_expiry(),
        "hits": answers,
        "remaining": remaining,
        "reset": reset,
        "test": limiter.test(item, *ids),
        "allowed_at": allowed_at(limiter, name, item, ids, time.time()),
    }


if __name__ == "__main__":
    main()
