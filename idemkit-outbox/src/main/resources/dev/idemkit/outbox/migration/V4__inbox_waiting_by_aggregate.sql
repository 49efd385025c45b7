-- The inbox's messages that still wait (HELD, FAILED, PARKED), by aggregate. A consumer in sequence
-- that forgets idle aggregates (InboxConsumer.deleteProcessed) keeps an aggregate's sequence row
-- while one of its messages waits, and finds them here instead of reading every processed row.
create index idemkit_inbox_waiting_ix on idemkit_inbox (consumer_name, aggregate_type, aggregate_id)
    where status <> 'PROCESSED';
