-- Appending an event and marking it sent each wrote one index entry more than needed: the unique
-- constraint on (aggregate, sequence) covered every event, sent or not, for as long as sent events
-- are kept. Numbers are unique by construction (the counter row's lock, V1); the index of unsent
-- events, which the relay reads to keep each aggregate's order, now also enforces it where that
-- order is decided.
drop index idemkit_outbox_unsent_ix;
create unique index idemkit_outbox_unsent_ix on idemkit_outbox (aggregate_type, aggregate_id, sequence)
    where sent_at is null;
alter table idemkit_outbox drop constraint idemkit_outbox_aggregate_sequence;
