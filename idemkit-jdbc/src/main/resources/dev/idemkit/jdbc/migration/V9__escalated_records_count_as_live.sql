-- An escalated record (outcome still unknown, automatic recovery stopped: recovery_due is null)
-- is unresolved, so it stays in a tenant's live records until an operator resolves it: the quota
-- on live records counts it. The partial index follows the quota's count.
drop index if exists idemkit_record_live_tenant_ix;
create index idemkit_record_live_tenant_ix on idemkit_record (tenant)
    where recovery_due is not null
       or (escalated_at is not null and state = 'UNKNOWN_REQUIRES_RECOVERY');
