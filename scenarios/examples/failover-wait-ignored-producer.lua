-- The producer of failover-producer.lua, asking WAIT 1 500 but telling its
-- caller whatever the answer: a lagging replica's 0 is taken as a yes.
function producer(w) publish_all(w, "ignored") end
