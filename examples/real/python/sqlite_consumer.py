"""A correct at-least-once consumer whose side effect is a row in its own
SQLite database: the effect, its dedupe record and the xackly_effects row
that tells xackly's oracle about it commit in one transaction; the entry is
acked only after the commit; entries a dead worker left pending are claimed
back with XAUTOCLAIM; a connection that breaks is reconnected.

--ack-before-commit, --no-dedupe and --mark-after-commit switch on one bug
each.

Under xackly, XACKLY_SQLITE names the run's database (shared by every worker
process, created with the xackly_effects table). Outside xackly, point it at
your own database and create that table once (docs/real-consumers.md).
"""
import os
import sqlite3
import sys

import redis

CLAIM_MIN_IDLE_MS = 30000
ACK_BEFORE_COMMIT = "--ack-before-commit" in sys.argv  # a bug: a crash between XACK and COMMIT loses the event
NO_DEDUPE = "--no-dedupe" in sys.argv                  # a bug: a redelivered entry is applied again
MARK_AFTER = "--mark-after-commit" in sys.argv         # a bug: a crash between the two commits applies it twice


def open_db():
    db = sqlite3.connect(os.environ["XACKLY_SQLITE"], isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS processed (event TEXT PRIMARY KEY)")
    db.execute("CREATE TABLE IF NOT EXISTS balances (account TEXT PRIMARY KEY, total INTEGER NOT NULL)")
    return db


def handle(r, db, stream, group, entry_id, fields):
    event = fields[b"event_id"].decode()
    db.execute("BEGIN IMMEDIATE")
    try:
        if not NO_DEDUPE:
            if db.execute("SELECT 1 FROM processed WHERE event = ?", (event,)).fetchone():
                db.execute("ROLLBACK")   # done before: only the ack is owed
                r.xack(stream, group, entry_id)
                return
            if not MARK_AFTER:
                db.execute("INSERT INTO processed (event) VALUES (?)", (event,))
        db.execute("INSERT INTO balances VALUES ('orders', 1) "
                   "ON CONFLICT(account) DO UPDATE SET total = total + 1")
        db.execute("INSERT INTO xackly_effects (event, entry) VALUES (?, ?)", (event, entry_id.decode()))
        if ACK_BEFORE_COMMIT:
            r.xack(stream, group, entry_id)
        db.execute("COMMIT")
        if MARK_AFTER and not NO_DEDUPE:  # a second transaction: not atomic with the effect
            db.execute("INSERT INTO processed (event) VALUES (?)", (event,))
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    if not ACK_BEFORE_COMMIT:
        r.xack(stream, group, entry_id)


def poll(r, db, stream, group, me):
    # Entries another worker took and never acked (it died, or stalled).
    claimed = r.xautoclaim(stream, group, me, min_idle_time=CLAIM_MIN_IDLE_MS, start_id="0-0", count=10)
    for entry_id, fields in claimed[1]:
        if fields:
            handle(r, db, stream, group, entry_id, fields)
    for _, entries in r.xreadgroup(group, me, {stream: ">"}, count=10, block=2000) or []:
        for entry_id, fields in entries:
            handle(r, db, stream, group, entry_id, fields)


def main():
    r = redis.Redis.from_url(os.environ["REDIS_URL"])
    db = open_db()
    stream = os.environ["XACKLY_STREAM"]
    group = os.environ["XACKLY_GROUP"]
    me = os.environ["XACKLY_WORKER"]
    while True:
        try:
            poll(r, db, stream, group, me)
        except redis.ConnectionError as e:
            # The request or its reply was lost: it may or may not have run.
            # What is still pending is claimed back; the next call reconnects.
            print(f"connection lost: {e}")


if __name__ == "__main__":
    main()
