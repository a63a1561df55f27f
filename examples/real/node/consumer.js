// A correct at-least-once consumer (ioredis): the effect carries an
// idempotency key (the event id), the entry is acked only after the effect
// succeeded, and entries a dead worker left pending are claimed back with
// XAUTOCLAIM. --ack-in-finally and --no-idempotency-key switch on one bug each.
//
// Under xackly, REDIS_URL is unix://<xackly's RESP front>; effect() reports
// the side effect with XACKLY.EFFECT (outside xackly, call your service).
"use strict";
const Redis = require("ioredis");

const ACK_IN_FINALLY = process.argv.includes("--ack-in-finally");
const NO_KEY = process.argv.includes("--no-idempotency-key");
const CLAIM_MIN_IDLE_MS = 30000;

function connect(url) {
  return url.startsWith("unix://") ? new Redis({ path: url.slice("unix://".length) }) : new Redis(url);
}

async function effect(redis, event, entry, key) {
  const args = [event, "ENTRY", entry];
  if (key) args.push("KEY", key);
  await redis.call("XACKLY.EFFECT", ...args);
}

function fieldsOf(list) {
  const fields = {};
  for (let i = 0; i + 1 < list.length; i += 2) fields[list[i]] = list[i + 1];
  return fields;
}

async function handle(redis, stream, group, id, list) {
  const event = fieldsOf(list).event_id;
  const key = NO_KEY ? null : event;
  if (ACK_IN_FINALLY) {
    try {
      await effect(redis, event, id, key);
    } catch (e) {
      console.log(`effect for ${event} failed: ${e.message}`);
    } finally {
      await redis.xack(stream, group, id);
    }
    return;
  }
  try {
    await effect(redis, event, id, key);
  } catch (e) {
    console.log(`effect for ${event} failed, left pending: ${e.message}`);
    return;
  }
  await redis.xack(stream, group, id);
}

async function main() {
  const redis = connect(process.env.REDIS_URL);
  const stream = process.env.XACKLY_STREAM;
  const group = process.env.XACKLY_GROUP;
  const me = process.env.XACKLY_WORKER;
  for (;;) {
    const [, claimed] = await redis.xautoclaim(stream, group, me, CLAIM_MIN_IDLE_MS, "0-0", "COUNT", 10);
    for (const [id, list] of claimed) {
      if (list) await handle(redis, stream, group, id, list);
    }
    const read = await redis.xreadgroup("GROUP", group, me, "COUNT", 10, "BLOCK", 2000, "STREAMS", stream, ">");
    for (const [, entries] of read || []) {
      for (const [id, list] of entries) await handle(redis, stream, group, id, list);
    }
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
