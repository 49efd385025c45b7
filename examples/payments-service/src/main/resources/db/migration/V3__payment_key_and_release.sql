-- A payment remembers the Idempotency-Key of the request that created it, so that a payment the
-- provider never charged, and that nobody retried, can be found and closed as FAILED.
alter table payment add column idem_key text;

-- A FAILED payment was never charged: it no longer holds its merchant reference. The business key
-- holds among the payments that are not FAILED.
alter table payment drop constraint payment_business_key;
create unique index payment_business_key on payment (tenant_id, account_id, merchant_reference)
    where status <> 'FAILED';

-- The few payments between their local row and the provider's answer, for the sweep that closes
-- the abandoned ones.
create index payment_unfinished_ix on payment (created_at)
    where status in ('LOCAL_PAYMENT_CREATED', 'PROVIDER_REQUEST_SENT');
