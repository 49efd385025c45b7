-- Retention of delivered rows (DeliverySender.deleteDelivered): a cleanup batch reads its channel's
-- delivered rows oldest first from this index, and nothing else: never the pending or parked rows,
-- never another channel's, never a delivered row still within the retention. Partial, so pending
-- and parked rows are not in it.
create index idemkit_delivery_delivered_ix on idemkit_delivery (channel, delivered_at)
    where status = 'DELIVERED';
