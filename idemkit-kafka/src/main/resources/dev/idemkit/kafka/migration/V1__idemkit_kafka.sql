-- What a Kafka consumer needs beside the inbox to keep each aggregate's order.

-- The last sequence number each consumer applied, per aggregate. Advanced by a conditional update
-- in the transaction that applies the message (with its inbox row), so two deliveries racing on
-- one aggregate apply its events one after the other, in sequence, or not at all.
create table idemkit_kafka_sequence (
    consumer_name  text        not null,
    aggregate_type text        not null,
    aggregate_id   text        not null,
    last_sequence  bigint      not null,
    applied_at     timestamptz not null,
    primary key (consumer_name, aggregate_type, aggregate_id)
);

-- Messages that arrived ahead of their aggregate's next sequence (a gap: an earlier event is
-- parked, or not yet there). Held here, so the partition's offset can move on, and applied once
-- the gap closes; never applied out of order.
create table idemkit_kafka_held (
    consumer_name  text        not null,
    message_id     uuid        not null,
    event_type     text        not null,
    tenant         text        not null,
    aggregate_type text        not null,
    aggregate_id   text        not null,
    sequence       bigint      not null,
    occurred_at    timestamptz not null,
    payload        text        not null,
    topic          text        not null,
    kafka_partition integer    not null,
    kafka_offset   bigint      not null,
    held_at        timestamptz not null,
    primary key (consumer_name, message_id)
);
create index idemkit_kafka_held_aggregate_ix
    on idemkit_kafka_held (consumer_name, aggregate_type, aggregate_id, sequence);
