-- Data protection (docs/data-protection.md): tenant data keys, and the key ids each record was
-- written with, readable by operators without reading (or being able to read) the record.

-- Tenant data keys, wrapped by a master key; never stored in the clear. Deleting a tenant's rows
-- is crypto-shredding: its sealed answers and recovery data can no longer be opened, anywhere.
create table idemkit_data_key (
    tenant        text collate "C" not null,
    key_id        text collate "C" not null,
    master_key_id text        not null,
    wrapped_key   bytea       not null,
    created_at    timestamptz not null,
    rewrapped_at  timestamptz,
    constraint idemkit_data_key_pk primary key (tenant, key_id)
);
-- A tenant's newest key seals new answers.
create index idemkit_data_key_current_ix on idemkit_data_key (tenant, created_at desc);

-- The key ids a record was written with, derived by the database from what the store writes (the
-- envelope header of a sealed body, the sealed recovery data, a keyed fingerprint), so the store's
-- statements do not change and the ids can never disagree with the bytes. Not indexed: no write
-- pays for them, and the completion stays a HOT update. Adding stored generated columns rewrites
-- the table once, under an exclusive lock: on a large table, run this at a quiet time.
alter table idemkit_record
    add column response_key_id text generated always as (
        case
            when length(response_body) < 6
                or substring(response_body from 1 for 4) <> decode('00494b31', 'hex') then null
            else nullif(encode(substring(response_body from 7 for get_byte(response_body, 5)), 'escape'), '')
        end) stored,
    add column recovery_key_id text generated always as (
        substring(recovery_data from '"ik1:([A-Za-z0-9_.-]+):')) stored,
    add column fingerprint_key_id text generated always as (
        case when fingerprint like 'v%:hmac-sha256:%' then split_part(fingerprint, ':', 3) end) stored;
