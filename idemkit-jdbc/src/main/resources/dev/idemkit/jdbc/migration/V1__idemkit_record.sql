-- One row per scoped key: (tenant, operation, idem_key). The primary key is what makes the claim
-- (INSERT ... ON CONFLICT DO NOTHING) decide exactly one owner among any number of racers.
create table idemkit_record (
    tenant                  text        collate "C" not null,
    operation               text        collate "C" not null,
    idem_key                text        collate "C" not null,
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
    recovery_due            timestamptz,
    constraint idemkit_record_pk primary key (tenant, operation, idem_key),
    constraint idemkit_record_state_ck check (state in
        ('IN_PROGRESS', 'COMPLETED', 'FAILED_REPLAYABLE', 'FAILED_RETRYABLE', 'UNKNOWN_REQUIRES_RECOVERY')),
    constraint idemkit_record_key_ck check (char_length(idem_key) between 1 and 255),
    constraint idemkit_record_fingerprint_ck check (fingerprint like 'v%:%:%')
) with (fillfactor = 90);

-- "Records needing recovery" stays cheap however many finished records there are: only rows a
-- recovery may have to pick up (live, committed by a phased operation) carry a recovery_due (their
-- lease end), and only they are in this index.
create index idemkit_record_recovery_ix on idemkit_record (recovery_due)
    where recovery_due is not null;

-- Cleanup walks expired rows in small batches: first those whose body is not dropped yet
-- (body_dropped_at is null, expires_at passed), then those dropped longer ago than the retention.
create index idemkit_record_cleanup_ix on idemkit_record (body_dropped_at, expires_at);

-- Why these columns: a single-transaction operation inserts its record and completes it in the
-- same transaction. Completion changes no indexed column (state, response and lease are not in
-- any index), and the table leaves 10% of each page free, so the completion is a HOT update: no
-- new index entries, no dead index tuples.
