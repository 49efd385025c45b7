-- Cleanup walks expired rows in the order of an index of their own, with the time bound as a plain
-- value, so a batch costs what the batch holds and not what the backlog holds. The index of V1
-- (body_dropped_at, expires_at) could not serve "order by expires_at" for either walk: every batch
-- scanned and sorted all expired candidates.
drop index if exists idemkit_record_cleanup_ix;

-- Bodies still stored, oldest window first: "where body_dropped_at is null and expires_at < ?
-- order by expires_at limit ?". Only expires_at and body_dropped_at are named (never the state):
-- a state in an index predicate would make every completion a non-HOT update.
create index idemkit_record_body_cleanup_ix on idemkit_record (expires_at)
    where body_dropped_at is null;

-- Records whose body is gone, waiting for their metadata retention, in the same order.
create index idemkit_record_metadata_cleanup_ix on idemkit_record (expires_at)
    where body_dropped_at is not null;

-- Every body drop is a non-HOT update (expires_at's index loses the row from one partial index and
-- gains it in the other) and every metadata drop a delete: both leave dead tuples and index
-- entries at the rate cleanup runs. Vacuum this table after 2% of it changed rather than the
-- default 20%, without sleeping between pages, so a table of tens of millions of rows is vacuumed
-- in minutes rather than hours and its indexes stay small.
alter table idemkit_record set (
    autovacuum_vacuum_scale_factor = 0.02,
    autovacuum_vacuum_insert_scale_factor = 0.05,
    autovacuum_analyze_scale_factor = 0.02,
    autovacuum_vacuum_cost_delay = 0
);

-- History rows are deleted with their record: by key, through the key index of V2.
alter table idemkit_record_history set (
    autovacuum_vacuum_scale_factor = 0.05
);
