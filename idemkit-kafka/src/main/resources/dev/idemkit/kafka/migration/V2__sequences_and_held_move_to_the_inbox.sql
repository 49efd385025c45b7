-- The per-aggregate sequence check and held messages moved into the inbox (idemkit-outbox's
-- idemkit_inbox_sequence, and idemkit_inbox rows with status HELD; its migration V3, which
-- KafkaSchema applies first). What the Kafka consumer recorded moves there, and its tables go.
insert into idemkit_inbox_sequence (consumer_name, aggregate_type, aggregate_id, last_sequence,
                                    applied_at)
select consumer_name, aggregate_type, aggregate_id, last_sequence, applied_at
  from idemkit_kafka_sequence
on conflict (consumer_name, aggregate_type, aggregate_id) do nothing;

insert into idemkit_inbox as i (consumer_name, message_id, status, attempts, received_at, held_at,
                                event_type, tenant, aggregate_type, aggregate_id, sequence,
                                occurred_at, payload)
select consumer_name, message_id, 'HELD', 0, held_at, held_at, event_type, tenant, aggregate_type,
       aggregate_id, sequence, occurred_at, payload
  from idemkit_kafka_held
on conflict (consumer_name, message_id) do update
   set status = 'HELD', held_at = excluded.held_at
 where i.status = 'FAILED';

drop table idemkit_kafka_held;
drop table idemkit_kafka_sequence;
