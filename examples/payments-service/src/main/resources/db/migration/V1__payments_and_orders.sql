create table payment (
    id                 uuid          primary key,
    tenant_id          text          not null,
    account_id         text          not null,
    amount             numeric(19,4) not null check (amount > 0),
    currency           char(3)       not null,
    merchant_reference text          not null,
    channel            text          not null,
    status             text          not null,
    created_at         timestamptz   not null,
    -- The business key: catches a duplicate even when a buggy client retried with a fresh key.
    constraint payment_business_key unique (tenant_id, account_id, merchant_reference)
);

-- Transactional outbox: an event commits with the row it describes; a publisher delivers it.
create table outbox_event (
    id             uuid        primary key,
    aggregate_type text        not null,
    aggregate_id   uuid        not null,
    event_type     text        not null,
    payload        text        not null,
    created_at     timestamptz not null,
    published_at   timestamptz
);
create index outbox_event_unpublished_ix on outbox_event (created_at) where published_at is null;

create table shop_order (
    id         uuid          primary key,
    tenant_id  text          not null,
    currency   char(3)       not null,
    total      numeric(19,4) not null,
    status     text          not null,
    paid_at    timestamptz,
    created_at timestamptz   not null
);

create table shop_order_item (
    order_id   uuid          not null references shop_order (id),
    line       integer       not null,
    sku        text          not null,
    quantity   integer       not null check (quantity > 0),
    unit_price numeric(19,4) not null check (unit_price >= 0),
    primary key (order_id, line)
);
