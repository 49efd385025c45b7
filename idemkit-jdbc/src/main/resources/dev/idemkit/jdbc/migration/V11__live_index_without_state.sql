-- V9's idemkit_record_live_tenant_ix named `state` in its predicate. A column of an index's
-- predicate counts as indexed, so every completion (which changes `state`) stopped being a HOT
-- update: it wrote a new entry into every index of the table and left one more dead tuple each.
-- The predicate now names only columns a completion does not change. It is a little wider than
-- the quota's count (an escalated record later finished by a retry stays in it, a rare row), and
-- still answers that count: the count's condition implies this predicate.
drop index if exists idemkit_record_live_tenant_ix;
create index idemkit_record_live_tenant_ix on idemkit_record (tenant)
    where recovery_due is not null or escalated_at is not null;
