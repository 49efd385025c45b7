-- The key ids a record was written with (V7) move from stored generated columns to a view. Stored
-- generated columns are computed on every insert and update of a record, so every claim and every
-- completion paid for three expressions (one a regular expression) that only an operator ever
-- reads; measured with pgbench on a claim and a completion, about 13% of their throughput. The
-- view derives the same ids from the same bytes when it is read, and the record's writes go back
-- to what they were. Dropping the columns changes only the catalog: no table rewrite.
alter table idemkit_record
    drop column response_key_id,
    drop column recovery_key_id,
    drop column fingerprint_key_id;

-- Every column of the record, plus the ids of the keys that sealed its answer and its recovery
-- data and of the HMAC key of a keyed fingerprint. Operators see which keys are still in use
-- without being able to read anything.
create view idemkit_record_keys as
select r.*,
    case
        when length(r.response_body) < 6
            or substring(r.response_body from 1 for 4) <> decode('00494b31', 'hex') then null
        else nullif(encode(substring(r.response_body from 7 for get_byte(r.response_body, 5)),
            'escape'), '')
    end as response_key_id,
    substring(r.recovery_data from '"ik1:([A-Za-z0-9_.-]+):') as recovery_key_id,
    case when r.fingerprint like 'v%:hmac-sha256:%' then split_part(r.fingerprint, ':', 3) end
        as fingerprint_key_id
from idemkit_record r;
