-- The holder of a delivery's latest offer. It stays when the offer goes
-- back to the queue unacknowledged (lease ended, connection closed), so
-- that a late acknowledgement from that holder still counts until the
-- delivery is offered again; it is cleared when acknowledged work is
-- queued again because the agent lost it.
ALTER TABLE deliveries ADD COLUMN last_holder TEXT NOT NULL DEFAULT '';
UPDATE deliveries SET last_holder = holder WHERE state = 'offered';
