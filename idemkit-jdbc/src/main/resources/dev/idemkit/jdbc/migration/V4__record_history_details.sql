-- What history keeps beyond the phase: the previous operation of a key reused after its window
-- (its fingerprint, resource and answer status, when it began), and who did an operator action
-- and why.
alter table idemkit_record_history
    add column fingerprint     text,
    add column resource_id     text,
    add column response_status integer,
    add column began_at        timestamptz,
    add column actor           text,
    add column reason          text;
