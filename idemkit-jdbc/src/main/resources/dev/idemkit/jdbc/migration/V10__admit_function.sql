-- The quotas' count of a new key as one function, so that the store can send it in the same round
-- trip as the commit of the transaction that claimed the key: the tenant's minute row is then
-- locked only while the database runs the count and commits, not while the application hears
-- back. A refusal raises SQLSTATE IK429 (the message names the quota, its limit and the seconds to
-- wait), which aborts the transaction: the claim is not committed, nothing is stored.
--
-- The live count is a statement of its own inside the function, begun after the upsert took the
-- minute's row lock, so under READ COMMITTED (a volatile function takes a new snapshot per
-- statement) it sees every record admitted before this one: both limits are exact.
create function idemkit_admit(p_now timestamptz, p_tenant text, p_new_keys_per_minute integer,
                              p_live_records integer)
returns void
language plpgsql
as $$
declare
    admitted integer;
    live     bigint;
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
        -- Live: due for recovery, or escalated to an operator and not yet resolved (V9's
        -- idemkit_record_live_tenant_ix has this predicate).
        select count(*) into live
          from idemkit_record
         where tenant = p_tenant
           and (recovery_due is not null
                or (escalated_at is not null and state = 'UNKNOWN_REQUIRES_RECOVERY'));
        if live > p_live_records then
            raise exception using
                errcode = 'IK429',
                message = format('idemkit quota exceeded: quota=live_records limit=%s retry_after=5',
                    p_live_records);
        end if;
    end if;
end
$$;
