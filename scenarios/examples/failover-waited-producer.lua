-- The producer of failover-producer.lua, waiting for the replica before it
-- tells its caller.
function producer(w) publish_all(w, "confirmed") end
