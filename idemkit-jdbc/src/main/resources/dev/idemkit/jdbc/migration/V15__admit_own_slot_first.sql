-- The quotas' count of a new key (V14's slots) tries the connection's own slot first.
--
-- V14's fast path found a slot with room that no other transaction holds by reading every slot of
-- the tenant (up to 16 rows), ordered from a random start, and locking the first free one. Each
-- of those rows is updated by every key counted in it, so each read also walks the row's recent
-- versions, more of them while any long transaction elsewhere in the database keeps them from
-- being pruned. Measured with pgbench (16 clients, one tenant, the count alone in a transaction):
-- about 5 500 counts a second with V14's scan, about 8 000 trying one slot by its key first.
--
-- Now a key first tries slot pg_backend_pid() % n, one row read by its primary key and locked
-- with SKIP LOCKED: the slot it takes is still one with room that no other transaction holds, so
-- everything V14 says of the count stays true (the limit is never exceeded, the live-records check
-- and the exact count near the limit are unchanged). Only where that slot is held or full does the
-- key read every slot, as before. Same name and arguments: an instance still running V14 during a
-- rolling upgrade counts in the same slots.
create or replace function idemkit_admit(p_now timestamptz, p_tenant text, p_new_keys_per_minute integer,
                                         p_live_records integer)
returns void
language plpgsql
as $$
declare
    m         timestamptz := date_trunc('minute', p_now);
    n         integer := least(16, p_new_keys_per_minute,
                               case when p_live_records > 0 then p_live_records else 16 end);
    base      integer := p_new_keys_per_minute / n;
    extra     integer := p_new_keys_per_minute % n;
    start     integer := floor(random() * n)::integer;
    s         integer;
    live      bigint;
    escalated bigint;
    rooms     bigint;
    total     bigint;
begin
    <<fast>>
    begin
        -- This connection's own slot first: one row read by its key, where the scan below reads
        -- all n rows (and the versions of each that a long transaction elsewhere keeps from being
        -- pruned). Connections of a pool have consecutive process ids, so concurrent ones
        -- mostly own different slots; when another transaction holds this one, or it is full,
        -- or the slots do not exist yet, the scan below takes over as in V14.
        update idemkit_tenant_key_slot k
           set keys = case when k.minute < m then 1 else k.keys + 1 end,
               minute = greatest(k.minute, m)
         where k.tenant = p_tenant
           and k.slot = (select f.slot
                           from idemkit_tenant_key_slot f
                          where f.tenant = p_tenant and f.slot = pg_backend_pid() % n
                            and (f.minute < m
                                 or f.keys < base + case when f.slot < extra then 1 else 0 end)
                            for update skip locked)
        returning k.slot into s;
        loop
            exit when s is not null;
            -- The count in a slot with room that no other transaction holds, held from here on.
            update idemkit_tenant_key_slot k
               set keys = case when k.minute < m then 1 else k.keys + 1 end,
                   minute = greatest(k.minute, m)
             where k.tenant = p_tenant
               and k.slot = (select f.slot
                               from idemkit_tenant_key_slot f
                              where f.tenant = p_tenant and f.slot < n
                                and (f.minute < m
                                     or f.keys < base + case when f.slot < extra then 1 else 0 end)
                              order by (f.slot + start) % n
                              limit 1
                                for update skip locked)
            returning k.slot into s;
            exit when found;
            -- No free slot with room: none made yet, or all with room held by others,
            -- or all full.
            select count(*) filter (where k.minute < m
                                        or k.keys < base + case when k.slot < extra then 1 else 0 end),
                   count(*)
              into rooms, total
              from idemkit_tenant_key_slot k
             where k.tenant = p_tenant and k.slot < n;
            if total < n then
                insert into idemkit_tenant_key_slot (tenant, slot, minute, keys)
                select p_tenant, g, m, 0 from generate_series(0, n - 1) g
                on conflict do nothing;
                continue;
            end if;
            if rooms = 0 then
                raise exception using
                    errcode = 'IK429',
                    message = format('idemkit quota exceeded: quota=new_keys limit=%s retry_after=%s',
                        p_new_keys_per_minute,
                        greatest(1, ceil(extract(epoch from m + interval '1 minute' - p_now)))::bigint);
            end if;
            -- Wait for one slot with room (holding none: nobody waits for this transaction's slots).
            update idemkit_tenant_key_slot k
               set keys = case when k.minute < m then 1 else k.keys + 1 end,
                   minute = greatest(k.minute, m)
             where k.tenant = p_tenant
               and k.slot = (select f.slot
                               from idemkit_tenant_key_slot f
                              where f.tenant = p_tenant and f.slot < n
                                and (f.minute < m
                                     or f.keys < base + case when f.slot < extra then 1 else 0 end)
                              order by (f.slot + start) % n
                              limit 1
                                for update)
            returning k.slot into s;
            exit when found;
        end loop;
        if p_live_records > 0 then
            -- Live: due for recovery, or escalated to an operator and not yet resolved (V11's
            -- idemkit_record_live_tenant_ix answers this condition).
            select count(*) into live
              from idemkit_record
             where tenant = p_tenant
               and (recovery_due is not null
                    or (escalated_at is not null and state = 'UNKNOWN_REQUIRES_RECOVERY'));
            if live + n - 1 > p_live_records then
                raise exception using errcode = 'IKN01'; -- near the limit: count exactly below
            end if;
        end if;
        return;
    exception when sqlstate 'IKN01' then
        null; -- the slot and its count are given back with the subtransaction
    end;
    -- Near the live records' limit: every slot of the tenant, in slot order, then the exact count.
    -- (The slots again first: if this transaction made them, it was in the subtransaction.)
    insert into idemkit_tenant_key_slot (tenant, slot, minute, keys)
    select p_tenant, g, m, 0 from generate_series(0, n - 1) g
    on conflict do nothing;
    perform 1 from idemkit_tenant_key_slot k
     where k.tenant = p_tenant and k.slot < n
     order by k.slot
       for update;
    select k.slot into s
      from idemkit_tenant_key_slot k
     where k.tenant = p_tenant and k.slot < n
       and (k.minute < m or k.keys < base + case when k.slot < extra then 1 else 0 end)
     order by k.slot
     limit 1;
    if not found then
        raise exception using
            errcode = 'IK429',
            message = format('idemkit quota exceeded: quota=new_keys limit=%s retry_after=%s',
                p_new_keys_per_minute,
                greatest(1, ceil(extract(epoch from m + interval '1 minute' - p_now)))::bigint);
    end if;
    select count(*) into live
      from idemkit_record
     where tenant = p_tenant
       and (recovery_due is not null
            or (escalated_at is not null and state = 'UNKNOWN_REQUIRES_RECOVERY'));
    if live > p_live_records then
        -- V12: escalated records finish only when an operator resolves them; if they alone fill
        -- the tenant's places, retrying every 5 seconds cannot succeed.
        select count(*) into escalated
          from idemkit_record
         where tenant = p_tenant
           and escalated_at is not null and state = 'UNKNOWN_REQUIRES_RECOVERY';
        raise exception using
            errcode = 'IK429',
            message = format('idemkit quota exceeded: quota=live_records limit=%s retry_after=%s',
                p_live_records, case when escalated >= p_live_records then 60 else 5 end);
    end if;
    update idemkit_tenant_key_slot k
       set keys = case when k.minute < m then 1 else k.keys + 1 end,
           minute = greatest(k.minute, m)
     where k.tenant = p_tenant and k.slot = s;
end
$$;
