-- Parked deliveries, for operators: Deliveries.parkedCount() and parked(limit) (oldest first) read
-- this index instead of every delivery ever made (delivered rows stay in the table). Partial, so
-- only the few parked rows are in it: recording and delivering never write to it.
create index idemkit_delivery_parked_ix on idemkit_delivery (created_at, delivery_key)
    where status = 'PARKED';
