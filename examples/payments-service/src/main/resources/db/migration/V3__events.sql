-- Events now go through Idemkit's outbox (its own tables, idemkit_outbox*); the first, unread
-- outbox table goes.
drop table outbox_event;

-- Ledger: double entry, one debit and one credit per completed payment, each unique per
-- (entry type, source payment) so that no path can book a payment twice.
create table ledger_entry (
    id                bigserial     primary key,
    tenant_id         text          not null,
    account_id        text          not null,
    entry_type        text          not null,
    direction         text          not null check (direction in ('DEBIT', 'CREDIT')),
    amount            numeric(19,4) not null check (amount > 0),
    currency          char(3)       not null,
    source_payment_id uuid          not null,
    created_at        timestamptz   not null,
    constraint ledger_entry_once unique (entry_type, source_payment_id)
);
create index ledger_entry_account_ix on ledger_entry (tenant_id, account_id);

-- Receipts: one per completed payment; its mail is a recorded delivery (idemkit_delivery) under
-- the key receipt_payment_<paymentId>.
create table receipt (
    payment_id   uuid        primary key,
    tenant_id    text        not null,
    account_id   text        not null,
    delivery_key text        not null unique,
    created_at   timestamptz not null
);

-- Shipping: one shipment request per paid order.
create table shipment (
    order_id   uuid        primary key,
    tenant_id  text        not null,
    status     text        not null,
    created_at timestamptz not null
);
