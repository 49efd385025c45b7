-- A DECLINED payment was not charged either (the provider refused it): like a FAILED one, it no
-- longer holds its merchant reference, so the shop can take another attempt at paying that
-- reference under a new key. At most one payment per reference is ever charged: the business key
-- still holds among the payments that are neither FAILED nor DECLINED.
drop index payment_business_key;
create unique index payment_business_key on payment (tenant_id, account_id, merchant_reference)
    where status not in ('FAILED', 'DECLINED');
