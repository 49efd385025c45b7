-- Quotas cost no statement on the request path (issue 33). Each instance decides a new key's
-- admission in memory and, about once a second, writes its own counts and reads the others'
-- (PostgresQuotaSync): one row per tenant, minute and instance, written only by that instance, so
-- no two instances ever wait on the same row. The live records are counted by the same exchange
-- from idemkit_record (V11's idemkit_record_live_tenant_ix answers it), not kept in a table.
--
-- The admit function (V10, V12, V14-V16) and the tables only it wrote are dropped: V6's minute
-- counters (unwritten since V14) and V14's slots. An instance of the previous version still
-- running during a rolling upgrade fails its new keys under quotas once this has run (the function
-- is gone); upgrade the instances before applying it, or run them without quotas meanwhile.
create table idemkit_quota_new_keys (
    tenant     text        collate "C" not null,
    minute     timestamptz not null,
    instance   text        collate "C" not null,
    keys       integer     not null,
    updated_at timestamptz not null,
    constraint idemkit_quota_new_keys_pk primary key (minute, tenant, instance)
);

drop function if exists idemkit_admit(timestamptz, text, integer, integer);
drop table if exists idemkit_tenant_key_slot;
drop table if exists idemkit_tenant_key_counter;
