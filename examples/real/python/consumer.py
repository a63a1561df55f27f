"""A correct at-least-once consumer: the effect carries an idempotency key
(the event id), the entry is acked only after the effect succeeded, and
entries left pending by a dead worker are claimed back with XAUTOCLAIM; a
connection that breaks is reconnected.

The same code runs against a real Redis: set REDIS_URL, XACKLY_STREAM,
XACKLY_GROUP and XACKLY_WORKER, and make xackly_effect.effect call your service.
"""
import os
import sys

import redis

from xackly_effect import effect

CLAIM_MIN_IDLE_MS = 30000
ACK_IN_FINALLY = "--ack-in-finally" in sys.argv   # a bug: the entry is acked even when the effect failed
NO_KEY = "--no-idempotency-key" in sys.argv        # a bug: a retried effect runs again


def handle(r, stream, group, entry_id, fields):
    event = fields[b"event_id"].decode()
    key = None if NO_KEY else event
    if ACK_IN_FINALLY:
        try:
            effect(r, event, entry=entry_id.decode(), key=key)
        except redis.ResponseError as e:
            print(f"effect for {event} failed: {e}")
        finally:
            r.xack(stream, group, entry_id)
        return
    try:
        effect(r, event, entry=entry_id.decode(), key=key)
    except redis.ResponseError as e:
        print(f"effect for {event} failed, left pending: {e}")
        return
    r.xack(stream, group, entry_id)


def main():
    r = redis.Redis.from_url(os.environ["REDIS_URL"])
    stream = os.environ["XACKLY_STREAM"]
    group = os.environ["XACKLY_GROUP"]
    me = os.environ["XACKLY_WORKER"]
    while True:
        try:
            # Entries another worker took and never acked (it died, or stalled).
            claimed = r.xautoclaim(stream, group, me, min_idle_time=CLAIM_MIN_IDLE_MS, start_id="0-0", count=10)
            for entry_id, fields in claimed[1]:
                if fields:
                    handle(r, stream, group, entry_id, fields)
            for _, entries in r.xreadgroup(group, me, {stream: ">"}, count=10, block=2000) or []:
                for entry_id, fields in entries:
                    handle(r, stream, group, entry_id, fields)
        except redis.ConnectionError as e:
            # The request or its reply was lost: it may or may not have run.
            # What is still pending is claimed back; the next call reconnects.
            print(f"connection lost: {e}")


if __name__ == "__main__":
    main()
