"""The functions RQ's jobs run in fixture.py: a worker imports them by name (jobs.<function>)."""


def send(*args):
    return len(args)


def fail(*args):
    raise RuntimeError("failing on purpose")
