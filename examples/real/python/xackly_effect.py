"""The two-line client side of xackly's effect channel (docs/real-consumers.md).

Under `xackly check`, REDIS_URL points at xackly's RESP front, which answers
XACKLY.EFFECT itself: the oracle records the side effect (the call your
consumer makes to the outside world) and judges whether it ran twice or never.
Outside xackly, call your real service here instead.
"""


def effect(r, event, entry=None, key=None):
    """Runs the side effect for `event`; raises redis.ResponseError when it
    fails (UNAVAILABLE, FAILED, TIMEOUT). `key`: the service dedupes by it."""
    args = ["XACKLY.EFFECT", event]
    if entry is not None:
        args += ["ENTRY", entry]
    if key is not None:
        args += ["KEY", key]
    r.execute_command(*args)
