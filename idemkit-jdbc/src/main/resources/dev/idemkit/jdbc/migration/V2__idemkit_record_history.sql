-- The history of a record's phases, for operators: every recovery point reached, every change of
-- owner, every suspension and the end. Written by the same statement as the change it records
-- (no extra round trip); single-transaction operations, which have no phases, write none.
create table idemkit_record_history (
    id               bigint generated always as identity primary key,
    tenant           text collate "C" not null,
    operation        text collate "C" not null,
    idem_key         text collate "C" not null,
    event            text not null,
    state            text not null,
    recovery_point   text,
    pending_external text,
    fencing_token    bigint not null,
    at               timestamptz not null
);
create index idemkit_record_history_key_ix on idemkit_record_history (tenant, operation, idem_key, id);
