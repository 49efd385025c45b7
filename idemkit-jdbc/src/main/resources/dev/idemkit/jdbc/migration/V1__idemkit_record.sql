-- One row per scoped key: (tenant, operation, idem_key). The primary key is what makes the claim
-- (INSERT ... ON CONFLICT DO NOTHING) decide exactly one owner among any number of racers.
create table idemkit_record (
    tenant                  text        not null,
    operation               text        not null,
    idem_key                text        not null,
    fingerprint             text        not null,
    state                   text        not null,
    fencing_token           bigint      not null,
    locked_until            timestamptz not null,
    recovery_point          text,
    pending_external        text,
    recovery_data           text,
    recovery_attempts       integer     not null default 0,
    response_status         integer,
    response_headers        text,
    response_body           bytea,
    response_schema_version integer,
    resource_id             text,
    created_at              timestamptz not null,
    updated_at              timestamptz not null,
    expires_at              timestamptz not null,
    body_dropped_at         timestamptz,
    constraint idemkit_record_pk primary key (tenant, operation, idem_key),
    constraint idemkit_record_state_ck check (state in
        ('IN_PROGRESS', 'COMPLETED', 'FAILED_REPLAYABLE', 'FAILED_RETRYABLE', 'UNKNOWN_REQUIRES_RECOVERY')),
    constraint idemkit_record_key_ck check (char_length(idem_key) between 1 and 255),
    constraint idemkit_record_fingerprint_ck check (fingerprint like 'v%:%:%')
);

-- "Records needing recovery" (stale IN_PROGRESS, UNKNOWN_REQUIRES_RECOVERY) stays cheap however
-- many finished records there are: only live rows are in this index.
create index idemkit_record_recovery_ix on idemkit_record (locked_until)
    where state in ('IN_PROGRESS', 'UNKNOWN_REQUIRES_RECOVERY');

-- Cleanup walks expired rows in small batches. The two partial indexes split the rows between
-- those that still hold a body (to drop) and those that do not (to delete after the retention),
-- so each row costs one expiry index entry, and neither walk passes over the other's rows.
create index idemkit_record_body_expiry_ix on idemkit_record (expires_at)
    where response_body is not null;
create index idemkit_record_meta_expiry_ix on idemkit_record (expires_at)
    where response_body is null;
