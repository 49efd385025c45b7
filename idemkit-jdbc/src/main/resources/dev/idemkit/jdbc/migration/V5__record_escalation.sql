-- An unknown outcome that stayed unknown after the configured number of recovery attempts is
-- flagged for an operator: recovery stops (recovery_due is null) until an operator resolves it.
alter table idemkit_record add column escalated_at timestamptz;

-- The operators' list: only flagged records are in it.
create index idemkit_record_escalated_ix on idemkit_record (escalated_at)
    where escalated_at is not null;

-- Per-tenant live records (the quota on records in progress): committed live records are exactly
-- those a recovery worker may have to pick up, the ones with a recovery_due.
create index idemkit_record_live_tenant_ix on idemkit_record (tenant)
    where recovery_due is not null;
