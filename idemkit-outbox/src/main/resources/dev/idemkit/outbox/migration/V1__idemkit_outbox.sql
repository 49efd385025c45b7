-- The transactional outbox: an event commits with the business rows it describes; a relay sends it.

-- Each aggregate's last event number. Appending takes this row's lock until the appending
-- transaction ends, so an aggregate's events are numbered in the order their transactions commit,
-- without gaps (a rolled-back append gives its number back).
create table idemkit_outbox_aggregate (
    aggregate_type text   not null,
    aggregate_id   text   not null,
    last_sequence  bigint not null,
    primary key (aggregate_type, aggregate_id)
);

create table idemkit_outbox (
    event_id        uuid        primary key,
    event_type      text        not null,
    tenant          text        not null,
    aggregate_type  text        not null,
    aggregate_id    text        not null,
    sequence        bigint      not null,
    occurred_at     timestamptz not null,
    payload         text        not null,
    attempts        integer     not null default 0,
    next_attempt_at timestamptz not null,
    last_error      text,
    sent_at         timestamptz,
    parked_at       timestamptz,
    constraint idemkit_outbox_aggregate_sequence unique (aggregate_type, aggregate_id, sequence)
);

-- What a relay may pick: unsent, not parked, due.
create index idemkit_outbox_due_ix on idemkit_outbox (next_attempt_at)
    where sent_at is null and parked_at is null;
-- "Is an older event of this aggregate still unsent (or parked)?"
create index idemkit_outbox_unsent_ix on idemkit_outbox (aggregate_type, aggregate_id, sequence)
    where sent_at is null;
-- Retention of sent events.
create index idemkit_outbox_sent_ix on idemkit_outbox (sent_at) where sent_at is not null;

-- A consumer's inbox: one row per (consumer, message) it applied, failed on, or parked.
create table idemkit_inbox (
    consumer_name  text        not null,
    message_id     uuid        not null,
    status         text        not null check (status in ('PROCESSED', 'FAILED', 'PARKED')),
    attempts       integer     not null default 0,
    received_at    timestamptz not null,
    processed_at   timestamptz,
    last_error     text,
    -- The envelope, kept while the message is FAILED or PARKED so an operator can re-queue it.
    event_type     text,
    tenant         text,
    aggregate_type text,
    aggregate_id   text,
    sequence       bigint,
    occurred_at    timestamptz,
    payload        text,
    primary key (consumer_name, message_id)
);
create index idemkit_inbox_processed_ix on idemkit_inbox (processed_at) where status = 'PROCESSED';
create index idemkit_inbox_parked_ix on idemkit_inbox (consumer_name) where status = 'PARKED';

-- Side effects outside the database (an e-mail): the intent is recorded under its own unique key
-- by the transaction that decides it; a sender delivers it, passing the key as the receiver's
-- idempotency key, and then marks it delivered.
create table idemkit_delivery (
    delivery_key    text        primary key,
    channel         text        not null,
    payload         text        not null,
    status          text        not null check (status in ('PENDING', 'DELIVERED', 'PARKED')),
    attempts        integer     not null default 0,
    created_at      timestamptz not null,
    next_attempt_at timestamptz not null,
    delivered_at    timestamptz,
    last_error      text
);
create index idemkit_delivery_due_ix on idemkit_delivery (channel, next_attempt_at)
    where status = 'PENDING';
