-- V10's idemkit_admit told a tenant refused by the live-records quota to retry after 5 seconds,
-- even when escalated records alone filled its places: those finish only when an operator
-- resolves them, so retrying every 5 seconds could not succeed. The refusal now says 60 seconds
-- when the tenant's escalated records reach the limit by themselves, and 5 otherwise (some place
-- is held by an operation in flight or recovering, which ends by itself). Only a refusal reads
-- more; an admitted key costs what it did.
create or replace function idemkit_admit(p_now timestamptz, p_tenant text, p_new_keys_per_minute integer,
                                         p_live_records integer)
returns void
language plpgsql
as $$
declare
    admitted integer;
    live     bigint;
    escalated bigint;
begin
    insert into idemkit_tenant_key_counter as c (tenant, minute, keys)
    values (p_tenant, date_trunc('minute', p_now), 1)
    on conflict (tenant, minute) do update set keys = c.keys + 1
        where c.keys < p_new_keys_per_minute;
    get diagnostics admitted = row_count;
    if admitted = 0 then
        raise exception using
            errcode = 'IK429',
            message = format('idemkit quota exceeded: quota=new_keys limit=%s retry_after=%s',
                p_new_keys_per_minute,
                greatest(1, ceil(extract(epoch from
                    date_trunc('minute', p_now) + interval '1 minute' - p_now)))::bigint);
    end if;
    if p_live_records > 0 then
        -- Live: due for recovery, or escalated to an operator and not yet resolved (V11's
        -- idemkit_record_live_tenant_ix answers this condition).
        select count(*) into live
          from idemkit_record
         where tenant = p_tenant
           and (recovery_due is not null
                or (escalated_at is not null and state = 'UNKNOWN_REQUIRES_RECOVERY'));
        if live > p_live_records then
            select count(*) into escalated
              from idemkit_record
             where tenant = p_tenant
               and escalated_at is not null and state = 'UNKNOWN_REQUIRES_RECOVERY';
            raise exception using
                errcode = 'IK429',
                message = format('idemkit quota exceeded: quota=live_records limit=%s retry_after=%s',
                    p_live_records, case when escalated >= p_live_records then 60 else 5 end);
        end if;
    end if;
end
$$;
