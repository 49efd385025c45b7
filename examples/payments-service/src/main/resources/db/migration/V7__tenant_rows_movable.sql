-- Every business row names its tenant and has a key unique on every database, so that a tenant's
-- rows can be copied to another shard as they are (docs/scaling.md, "Moving a tenant").

-- Order lines carry their order's tenant.
alter table shop_order_item add column tenant_id text;
update shop_order_item i set tenant_id = o.tenant_id from shop_order o where o.id = i.order_id;
alter table shop_order_item alter column tenant_id set not null;

-- A ledger entry is known by its payment and type; its id is each database's booking order only.
alter table ledger_entry drop constraint ledger_entry_pkey;
alter table ledger_entry drop constraint ledger_entry_once;
alter table ledger_entry add constraint ledger_entry_once primary key (entry_type, source_payment_id);
