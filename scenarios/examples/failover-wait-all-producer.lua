-- The producer of failover-producer.lua, waiting until both replicas have
-- the XADD (WAIT 2 500) before it tells its caller.
function producer(w) publish_all(w, "confirmed", 2) end
