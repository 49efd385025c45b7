-- Merchant references are compared in one form from now on, Unicode NFC (CreatePaymentRequest):
-- "café" sent with é or with e + U+0301 is one reference, so one payment. A reference stored
-- before in another form is rewritten to NFC, so that a lookup or a duplicate check in NFC finds
-- it. Two exceptions keep their spelling, because the business key must stay unique and such
-- payments need a person, not a migration: a reference whose NFC form the account already holds
-- (the double payment this change prevents, made before it), and all but the oldest of several
-- references that meet in one NFC form. Normalization needs a UTF8 database; in any other the
-- references are left as they are.
do $$
begin
  if current_setting('server_encoding') = 'UTF8' then
    update payment p
       set merchant_reference = normalize(p.merchant_reference, NFC)
     where p.id in (
             select distinct on (tenant_id, account_id, normalize(merchant_reference, NFC)) id
               from payment
              where merchant_reference is not nfc normalized
              order by tenant_id, account_id, normalize(merchant_reference, NFC), created_at, id)
       and not exists (
             select 1 from payment q
              where q.tenant_id = p.tenant_id
                and q.account_id = p.account_id
                and q.merchant_reference = normalize(p.merchant_reference, NFC));
  end if;
end $$;
