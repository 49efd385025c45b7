-- Payments now charge a downstream provider through atomic phases:
-- LOCAL_PAYMENT_CREATED -> PROVIDER_REQUEST_SENT -> PROVIDER_CONFIRMED -> COMPLETED (or DECLINED).
alter table payment add column provider_charge_id text;
alter table payment add column updated_at timestamptz;
