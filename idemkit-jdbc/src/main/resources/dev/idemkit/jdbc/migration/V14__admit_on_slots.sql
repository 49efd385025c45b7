-- The quotas' count of a new key without one row that all of a tenant's new keys queue on.
--
-- V10's idemkit_admit counted every new key of a tenant in one row (the tenant's current minute)
-- and held that row's lock until the claim's transaction committed. The store sends the count with
-- the commit, so the lock is held only while the database commits; but that includes waiting for
-- the commit's WAL flush, and the next new key of the tenant can only start its count after it. A
-- tenant's new keys therefore committed one after the other, at most one per flush: bench/quota
-- measured 920-1 250 new keys a second for one tenant with 8 concurrent requests on a server whose
-- commits wait for the disk, against 4 000-4 860 for the same transactions without the count (and
-- 2 400-3 100 against 9 600-10 700 with commits that do not wait). The commits of different keys
-- could not share a flush.
--
-- Now a tenant has up to 16 slot rows (idemkit_tenant_key_slot), each counting the keys of the
-- minute it last counted in (a slot of an earlier minute counts as empty and starts the current
-- minute at its next key), and a new key is counted in one of them. The minute's quota is split
-- between the slots (slot s may hold limit / n keys, one more for the first limit % n slots), so the
-- slots together never admit more than the limit. A new key takes a slot that has room and that no other transaction holds (FOR
-- UPDATE SKIP LOCKED, from a random start), so concurrent new keys of a tenant count in different
-- rows and commit together. If every slot with room is held, the key waits for one of them; it is
-- refused only when every slot is full as committed, i.e. when the limit is reached: the count
-- stays exact.
--
-- Live records: every transaction being admitted holds its slot until it commits, so while a key
-- holds its slot at most n - 1 other admissions are under way that its count cannot see yet. If the
-- live records it sees (its own included) plus those n - 1 stay within the limit, it is admitted
-- without waiting for anyone. Otherwise (the tenant is within n of its limit) it gives its slot
-- back (the block below is a subtransaction) and counts exactly: it locks every slot of the tenant
-- in slot order, so no other admission is under way while it counts (V10's behaviour, one at a
-- time, near the limit only). Waits never form a cycle: a key that holds a slot never waits for
-- another one; only a key that holds none waits, for one slot, or for all of them in order.
--
-- The slot rows outlive the minute so that a new minute does not begin with every new key of a
-- tenant waiting for the one that made that minute's rows to commit; only a tenant's very first
-- key (or its first after an hour without one: cleanup deletes slots idle that long) makes them.
--
-- The function keeps V10's name and arguments, so an instance still running the previous version
-- during a rolling upgrade counts in the same slots. In the minute of the upgrade, keys V10 counted
-- in idemkit_tenant_key_counter are not seen by the slots: that one minute can admit up to twice
-- the limit. V6's table is no longer written; cleanup empties it.
create table idemkit_tenant_key_slot (
    tenant text        collate "C" not null,
    slot   integer     not null,
    minute timestamptz not null,
    keys   integer     not null,
    constraint idemkit_tenant_key_slot_pk primary key (tenant, slot)
) with (fillfactor = 50); -- a count is an update of the slot's row: room on its page keeps it HOT

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
        loop
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
