-- A key reused after its window keeps the previous operation's history (its phases, and a
-- REPLACED_EXPIRED row with its fingerprint, resource and answer status) under the same key. Cleanup
-- deleted history only with its record, so a key reused again and again before its record's
-- metadata retention ran out kept every earlier operation's metadata for ever. Cleanup now deletes
-- an earlier operation's history once its replacement is older than the metadata retention, walking
-- the replacements in the order of this index (a batch costs what it deletes).
create index idemkit_record_history_replaced_ix on idemkit_record_history (at)
    where event = 'REPLACED_EXPIRED';
