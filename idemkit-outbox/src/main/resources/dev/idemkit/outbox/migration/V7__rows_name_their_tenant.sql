-- Every row of a tenant's names it, so that all of them move with the tenant when it moves to
-- another database (docs/scaling.md, "Moving a tenant"):
-- * a processed inbox row keeps its message's tenant (the rest of the envelope still goes once the
--   message is processed): after a move, a message delivered again is known on the new database
--   and skipped, not applied a second time;
-- * an aggregate's next event number (idemkit_outbox_aggregate) and what each consumer in sequence
--   applied of it (idemkit_inbox_sequence): otherwise, once the sent events and processed inbox
--   rows that linked an aggregate to its tenant were deleted by their retention, a moved aggregate
--   would start again at number 1, and a consumer would skip its next events as already applied,
--   or hold them for ever.
-- Written with each row from now on. Rows made before this version are filled from the events and
-- inbox rows still here (and an aggregate's row by its next write).
alter table idemkit_outbox_aggregate add column tenant text;
alter table idemkit_inbox_sequence add column tenant text;

update idemkit_inbox i
   set tenant = o.tenant
  from idemkit_outbox o
 where i.tenant is null and o.event_id = i.message_id;

update idemkit_outbox_aggregate a
   set tenant = o.tenant
  from (select distinct aggregate_type, aggregate_id, tenant from idemkit_outbox) o
 where o.aggregate_type = a.aggregate_type and o.aggregate_id = a.aggregate_id;

update idemkit_inbox_sequence s
   set tenant = i.tenant
  from (select distinct consumer_name, aggregate_type, aggregate_id, tenant
          from idemkit_inbox
         where tenant is not null and aggregate_type is not null) i
 where i.consumer_name = s.consumer_name
   and i.aggregate_type = s.aggregate_type
   and i.aggregate_id = s.aggregate_id;

update idemkit_inbox_sequence s
   set tenant = o.tenant
  from (select distinct aggregate_type, aggregate_id, tenant from idemkit_outbox) o
 where s.tenant is null
   and o.aggregate_type = s.aggregate_type
   and o.aggregate_id = s.aggregate_id;
