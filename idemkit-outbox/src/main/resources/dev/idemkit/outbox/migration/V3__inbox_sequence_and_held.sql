-- A consumer that applies each aggregate's events in sequence (InboxConsumer.Builder.inSequence;
-- every Kafka consumer does): the last sequence it applied per aggregate, and messages held in the
-- inbox because they arrived ahead of it.

-- The last sequence each consumer applied, per aggregate; null while nothing was applied yet. A
-- batch locks its aggregates' rows first (so two deliveries of one aggregate take turns), decides,
-- and advances them in the transaction that applies the messages.
create table idemkit_inbox_sequence (
    consumer_name  text        not null,
    aggregate_type text        not null,
    aggregate_id   text        not null,
    last_sequence  bigint,
    applied_at     timestamptz not null,
    primary key (consumer_name, aggregate_type, aggregate_id)
);

-- HELD: arrived ahead of its aggregate's next sequence (an earlier event is parked, failing, or
-- not there yet); kept with its envelope, acknowledged to the transport, applied once the gap
-- closes.
alter table idemkit_inbox drop constraint idemkit_inbox_status_check;
alter table idemkit_inbox add constraint idemkit_inbox_status_check
    check (status in ('PROCESSED', 'FAILED', 'PARKED', 'HELD'));
alter table idemkit_inbox add column held_at timestamptz;
create index idemkit_inbox_held_ix on idemkit_inbox (consumer_name, aggregate_type, aggregate_id, sequence)
    where status = 'HELD';
