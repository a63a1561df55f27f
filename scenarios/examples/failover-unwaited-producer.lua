-- The producer of failover-producer.lua, telling its caller at the XADD's
-- reply: a failover can drop an event already acknowledged.
function producer(w) publish_all(w, nil) end
