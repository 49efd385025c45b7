-- A fenced write that matches no row fails its statement, and so its transaction (issue 33). A
-- phased operation's completion is sent together with its COMMIT in one round trip; an update
-- that matched no row (another owner took the record over: the fencing token moved on) must then
-- keep the COMMIT from running, or the business writes of a paused ("zombie") owner sent in the
-- same transaction would commit. The completion ends with
-- `select idemkit_require_owned(count(*)) from changed`: one row updated returns 1, anything else
-- raises SQLSTATE IK001, the server skips the rest of the round trip, COMMIT included, and the
-- transaction rolls back. The store maps IK001 to LostOwnershipException.
create function idemkit_require_owned(written bigint) returns integer
language plpgsql as $$
begin
  if written <> 1 then
    raise exception 'idemkit: the record is no longer this owner''s (% rows matched its fencing token)',
      written using errcode = 'IK001';
  end if;
  return 1;
end
$$;
