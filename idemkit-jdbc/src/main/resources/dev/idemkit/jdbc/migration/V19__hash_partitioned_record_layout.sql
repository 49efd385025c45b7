-- The record table for large deployments (docs/scaling.md, "Records at large scale"): the same
-- columns, constraints, indexes and storage settings, split into `partitions` hash partitions of
-- the primary key (idemkit_record_p00, idemkit_record_p01, ...). The primary key stays the claim's
-- uniqueness: it contains the partition key, so each key has exactly one partition, the partition's
-- unique index decides "insert ... on conflict do nothing" as before, and every statement that names
-- a key reaches that one partition.
--
-- Only an empty, plain table is converted: IdemkitSchema.migrate(dataSource, layout) calls this
-- right after the schema files on a new database. A table with rows keeps its layout (converting
-- one is a copy: docs/scaling.md says how). Nothing calls it on its own, so an existing database
-- upgraded to this version keeps the plain layout.
--
-- Copied from the plain table rather than written out again, so that the two layouts cannot drift:
-- columns with their collations, defaults and checks (LIKE), the primary key and every index (their
-- definitions, under the same names), the table's storage settings (on each partition: a
-- partitioned table has none of its own) and the view over the table. A later schema file that
-- changes idemkit_record must work on both layouts: add column, create or drop index and add
-- constraint do; storage settings go on the partitions.
create function idemkit_partition_records(partitions integer)
returns void
language plpgsql
as $$
declare
    options text;
    pk_name text;
    pk      text;
    part    text;
    indexes text[];
    keys    text;
    def     text;
    width   integer := greatest(2, length((partitions - 1)::text));
begin
    if partitions < 2 or partitions > 1024 then
        raise exception 'idemkit: partitions must be between 2 and 1024, not %', partitions;
    end if;
    -- Two instances starting together: the second waits here, then finds the table converted.
    perform pg_advisory_xact_lock(hashtext('idemkit_partition_records'));
    if (select c.relkind from pg_class c where c.oid = 'idemkit_record'::regclass) = 'p' then
        if (select count(*) from pg_inherits i
             where i.inhparent = 'idemkit_record'::regclass) <> partitions then
            raise exception 'idemkit: idemkit_record is already partitioned, with another count';
        end if;
        return;
    end if;
    lock table idemkit_record in access exclusive mode;
    if exists (select 1 from idemkit_record) then
        raise exception using
            errcode = 'IK002',
            message = 'idemkit: idemkit_record has rows; only an empty table is partitioned here'
                || ' (docs/scaling.md says how to convert one with rows)';
    end if;

    select coalesce(array_to_string(c.reloptions, ', '), '') into options
      from pg_class c where c.oid = 'idemkit_record'::regclass;
    select k.conname, pg_get_constraintdef(k.oid)
      into pk_name, pk
      from pg_constraint k
     where k.conrelid = 'idemkit_record'::regclass and k.contype = 'p';
    select array_agg(pg_get_indexdef(x.indexrelid) order by x.indexrelid)
      into indexes
      from pg_index x
     where x.indrelid = 'idemkit_record'::regclass and not x.indisprimary;
    select 'create view idemkit_record_keys as ' || pg_get_viewdef('idemkit_record_keys'::regclass)
      into keys;

    drop view idemkit_record_keys;
    alter table idemkit_record rename to idemkit_record_plain;
    create table idemkit_record (like idemkit_record_plain including defaults including constraints)
        partition by hash (tenant, operation, idem_key);
    drop table idemkit_record_plain;
    -- Each partition's primary key is named after the table's (idemkit_record_p03_pk): a second
    -- claim of a key violates it, and the store knows the violation by that name.
    for i in 0 .. partitions - 1 loop
        part := 'idemkit_record_p' || lpad(i::text, width, '0');
        execute format('create table %I partition of idemkit_record'
                           || ' for values with (modulus %s, remainder %s) %s',
                       part, partitions, i,
                       case when options = '' then '' else 'with (' || options || ')' end);
        execute format('alter table %I add constraint %I %s', part, part || '_pk', pk);
    end loop;
    execute format('alter table idemkit_record add constraint %I %s', pk_name, pk);
    foreach def in array coalesce(indexes, '{}') loop
        execute def;
    end loop;
    execute keys;
end
$$;
