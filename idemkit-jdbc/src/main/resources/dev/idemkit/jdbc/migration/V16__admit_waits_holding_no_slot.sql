-- The quotas' count of a new key (V14's slots, V15's own slot first) no longer deadlocks when
-- many new keys of one tenant wait for slots at once.
--
-- V14 waited for a slot with room "holding none", but that was not so. A row that a locking read
-- finds changed since its snapshot is locked first and checked again after: when the change
-- filled it, the read passes over it and the lock stays until the transaction ends. So a key
-- could hold full slots it had passed over (in the own slot's read, the scan for a free slot, or
-- an earlier wait), then wait for a slot that another waiting key held, which in turn waited for
-- one of those. PostgreSQL broke the cycle by failing one of the transactions (40P01, deadlock
-- detected): a new key that the quota should have admitted or refused failed instead.
--
-- Now a key that waits holds no slot and waits for no lock:
-- - The own slot's read, the common case, runs as in V15, in the one subtransaction V15's count
--   already had. Each attempt, that read and every later scan for a free slot, is a subtransaction
--   of its own, rolled back unless the key is counted in it, with any lock the read kept. (Not in a block nested inside another that is rolled back later: a key
--   waiting for a slot locked in a subtransaction that committed into its parent goes on to wait
--   for the whole transaction, even once the parent's rollback has given the slot back.)
-- - When every slot with room is held (by keys committing their counts), the key sleeps a moment
--   (1 ms, growing to 20 ms) and looks again, instead of waiting for a slot's lock.
-- - Only the count near the live limit still waits for locks: at the top of the transaction,
--   every slot in slot order, holding none.
--
-- Measured by QuotaSlotsIT's keysWaitingForSlotsAtOnceAreAdmittedOrRefusedNeverDeadlocked (120
-- fresh tenants, each flooded by 24 to 36 connections at once): 355 deadlocks with V15, none with
-- this one. Same name and arguments: an instance still running V15 during a rolling upgrade counts
-- in the same slots.
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
    near      boolean := false;
    tries     integer := 0;
    live      bigint;
    escalated bigint;
    rooms     bigint;
    total     bigint;
begin
    loop
        -- One attempt, in a subtransaction of its own that is rolled back unless the key is
        -- counted: if no slot is found, the lock the read may have kept on a slot it found full
        -- goes with it. (Not an attempt nested inside a block that is rolled back later: a
        -- transaction that waits for a slot whose lock was taken in a subtransaction that
        -- committed into its parent goes on to wait for the whole transaction, even after the
        -- parent's rollback has given the slot back.)
        begin
            if tries = 0 then
                -- This connection's own slot first: one row read by its key (V15). Connections of
                -- a pool have consecutive process ids, so concurrent ones mostly own different
                -- slots.
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
            else
                -- Held, full, or not made yet: any slot with room that no other transaction holds.
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
            end if;
            if s is null then
                raise exception using errcode = 'IKS01';
            end if;
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
        exception
            when sqlstate 'IKS01' then
                null;
            when sqlstate 'IKN01' then
                near := true; -- the slot and its count are given back with the subtransaction
        end;
        exit when near;
        if tries > 0 then
            -- No free slot with room: none made yet, or all with room held by others, or all full.
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
            elsif rooms = 0 then
                raise exception using
                    errcode = 'IK429',
                    message = format('idemkit quota exceeded: quota=new_keys limit=%s retry_after=%s',
                        p_new_keys_per_minute,
                        greatest(1, ceil(extract(epoch from m + interval '1 minute' - p_now)))::bigint);
            else
                -- Every slot with room is held by a transaction committing its count: wait a
                -- moment and look again, holding no slot and waiting for no lock.
                perform pg_sleep(least(0.02, 0.001 * tries) + random() * 0.001);
            end if;
        end if;
        tries := tries + 1;
    end loop;
    -- Near the live records' limit: every slot of the tenant, in slot order, then the exact count.
    -- (The slots again first: if this transaction made them, they may be gone with a
    -- subtransaction.)
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
