-- The quotas' count of a new key without one row that every new key of a tenant queues on.
--
-- V10's idemkit_admit counts every new key of a tenant in one row (the tenant's current minute) and
-- holds that row's lock until the claim's transaction commits. The lock is held only while the
-- database commits, but the commits of one tenant's new keys still run one after the other: each
-- waiter must be woken and scheduled in turn, and on a busy machine that handoff, not the work,
-- sets how many new keys a tenant gets through a second (bench/http: 16 workers of one tenant
-- waited 1.2-7.7 ms a request on that row).
--
-- Here a tenant's minute has up to 16 slot rows, and a new key is counted in one of them. The
-- minute's quota is split between the slots (slot s may hold limit / n keys, one more for the first
-- limit % n slots), so the slots together never admit more than the limit. A new key takes a slot
-- that has room and that no other transaction holds (FOR UPDATE SKIP LOCKED, starting at a random
-- slot), so concurrent new keys of a tenant count in different rows and do not wait for each
-- other. If every slot with room is held, the key waits for one of them; it is refused only when
-- every slot is full as committed, i.e. when the limit is reached: the count stays exact.
--
-- Live records: every transaction that is being admitted holds its slot until it commits, so while
-- a key holds its slot at most n - 1 other admissions are under way that its count cannot see
-- yet. If the live records it sees (its own included) plus those n - 1 stay within the limit, it is
-- admitted without waiting for anyone. Otherwise (the tenant is within n of its limit) it gives its
-- slot back (the block below is a subtransaction) and counts exactly: it locks every slot of the
-- minute in slot order, so no other admission is under way while it counts (V10's behaviour, one
-- at a time, near the limit only). Waits never form a cycle: a key that holds a slot never waits
-- for another slot; only a key that holds none waits, for one slot, or for all of them in order.
-- The slots are rows of the minute, so past minutes' rows go with cleanup as V6's did.
--
-- V10's idemkit_admit and its table stay for instances still running the previous version during
-- a rolling upgrade (while both versions run, each counts in its own rows).
create table idemkit_tenant_key_slot (
    tenant text        collate "C" not null,
    minute timestamptz not null,
    slot   integer     not null,
    keys   integer     not null,
    constraint idemkit_tenant_key_slot_pk primary key (tenant, minute, slot)
) with (fillfactor = 50);

create function idemkit_admit_on_slots(p_now timestamptz, p_tenant text,
                                       p_new_keys_per_minute integer, p_live_records integer)
returns void
language plpgsql
as $$
declare
    m     timestamptz := date_trunc('minute', p_now);
    n     integer := least(16, p_new_keys_per_minute,
                           case when p_live_records > 0 then p_live_records else 16 end);
    base  integer := p_new_keys_per_minute / n;
    extra integer := p_new_keys_per_minute % n;
    start integer := floor(random() * n)::integer;
    s     integer;
    live  bigint;
    rooms bigint;
    total bigint;
begin
    <<fast>>
    begin
        loop
            select k.slot into s
              from idemkit_tenant_key_slot k
             where k.tenant = p_tenant and k.minute = m
               and k.keys < base + case when k.slot < extra then 1 else 0 end
             order by (k.slot + start) % n
             limit 1
               for update skip locked;
            exit when found;
            -- No free slot with room: none of this minute yet, or all with room held by others,
            -- or all full.
            select count(*) filter (where k.keys < base + case when k.slot < extra then 1 else 0 end),
                   count(*)
              into rooms, total
              from idemkit_tenant_key_slot k
             where k.tenant = p_tenant and k.minute = m;
            if total = 0 then
                insert into idemkit_tenant_key_slot (tenant, minute, slot, keys)
                select p_tenant, m, g, 0 from generate_series(0, n - 1) g
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
            select k.slot into s
              from idemkit_tenant_key_slot k
             where k.tenant = p_tenant and k.minute = m
               and k.keys < base + case when k.slot < extra then 1 else 0 end
             order by (k.slot + start) % n
             limit 1
               for update;
            exit when found;
        end loop;
        if p_live_records > 0 then
            select count(*) into live
              from idemkit_record
             where tenant = p_tenant
               and (recovery_due is not null
                    or (escalated_at is not null and state = 'UNKNOWN_REQUIRES_RECOVERY'));
            if live + n - 1 > p_live_records then
                raise exception using errcode = 'IKN01'; -- near the limit: count exactly below
            end if;
        end if;
        update idemkit_tenant_key_slot k set keys = k.keys + 1
         where k.tenant = p_tenant and k.minute = m and k.slot = s;
        return;
    exception when sqlstate 'IKN01' then
        null; -- the slot is given back with the subtransaction
    end;
    -- Near the live records' limit: every slot of the minute, in slot order, then the exact count.
    -- (The minute's slots again, in case this transaction made them in the subtransaction.)
    insert into idemkit_tenant_key_slot (tenant, minute, slot, keys)
    select p_tenant, m, g, 0 from generate_series(0, n - 1) g
    on conflict do nothing;
    perform 1 from idemkit_tenant_key_slot k
     where k.tenant = p_tenant and k.minute = m
     order by k.slot
       for update;
    select k.slot into s
      from idemkit_tenant_key_slot k
     where k.tenant = p_tenant and k.minute = m
       and k.keys < base + case when k.slot < extra then 1 else 0 end
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
        raise exception using
            errcode = 'IK429',
            message = format('idemkit quota exceeded: quota=live_records limit=%s retry_after=5',
                p_live_records);
    end if;
    update idemkit_tenant_key_slot k set keys = k.keys + 1
     where k.tenant = p_tenant and k.minute = m and k.slot = s;
end
$$;

-- An owner's write that travels with the commit in the same round trip must stop that commit when
-- it lost its record (another owner took it over: its fencing token no longer matches). The write
-- ends with `select idemkit_owned(count(*)) from changed`: no row raises SQLSTATE IK409, which aborts
-- the transaction before its commit runs (the store answers LostOwnershipException).
create function idemkit_owned(p_rows bigint)
returns integer
language plpgsql
as $$
begin
    if p_rows <> 1 then
        raise exception using errcode = 'IK409', message = 'idemkit: the owner lost its record';
    end if;
    return 1;
end
$$;
