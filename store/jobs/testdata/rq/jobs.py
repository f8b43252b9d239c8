"""The functions RQ's jobs run in fixture.py: a worker imports them by name (jobs.<function>)."""


def send(*args):
    return len(args)


def fail(*args):
    raise RuntimeError("failing on purpose")


def hold(seconds):
    """Keeps a worker busy (store/workers_test.go kills the worker before it ends)."""
    import time

    time.sleep(seconds)
