-- New keys per tenant and minute, for the quota on new keys: one upsert per new key admits it or
-- not, atomically across instances. Rows of past minutes are deleted by cleanup.
create table idemkit_tenant_key_counter (
    tenant text        collate "C" not null,
    minute timestamptz not null,
    keys   integer     not null,
    constraint idemkit_tenant_key_counter_pk primary key (tenant, minute)
);
