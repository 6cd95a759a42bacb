-- A placement recorded after its order row lists the order (0016's orders_placement_recorded) once
-- per audit statement instead of once per record: the statement-level trigger that already runs
-- for every audit insert (audit_counts_track) now also lists the orders its statement's
-- placements name, in one set-based update. The row-level insert trigger it replaces ran inside
-- every paper order's intent statement, in the account's serialized transaction, where it only
-- found the order not yet answered: a trigger call and a probe per order for nothing, measured at
-- about a fifth of one account's placement rate. Its rules stay as they were: a row another
-- transaction wrote is locked, so that a change of it in flight there is waited for and read once
-- committed (an update that skips a row whose committed version has no broker id yet would miss
-- it); a row this transaction wrote, no other can change meanwhile. Placement records changed
-- or removed (never, so far: the log is append-only) keep their row-level triggers.
DROP TRIGGER "orders_placement_insert" ON "audit_events";--> statement-breakpoint
CREATE OR REPLACE FUNCTION "audit_counts_track"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  placements boolean;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    INSERT INTO audit_count_changes (action, n) SELECT action, -count(*)::integer FROM old_records GROUP BY action;
  END IF;
  IF TG_OP = 'UPDATE' THEN
    INSERT INTO audit_count_changes (action, n) SELECT action, count(*)::integer FROM new_records GROUP BY action;
  END IF;
  IF TG_OP = 'INSERT' THEN
    -- The count, and whether the statement recorded a placement, in one statement: most audit
    -- statements record none, and then nothing else runs.
    WITH counted AS (
      INSERT INTO audit_count_changes (action, n) SELECT action, count(*)::integer FROM new_records GROUP BY action RETURNING action
    )
    SELECT coalesce(bool_or(action = 'order.placed'), false) INTO placements FROM counted;
    -- One statement for both kinds of row. A row this transaction wrote is updated only when the
    -- placement lists it. A row of another transaction is always updated, which locks it: a change
    -- of it in flight is waited for, and `listed` is then set from the committed version (an
    -- unchanged value for a row with no broker id, a rare write: never on the service's own path).
    IF placements THEN
      UPDATE orders o SET listed = o.listed OR o.broker_order_id IS NOT NULL FROM new_records r
      WHERE r.action = 'order.placed' AND o.user_id = r.subject_user_id AND o.client_order_id = r.data->>'client_order_id'
        AND (o.xmin::text <> (pg_current_xact_id()::text::bigint % 4294967296)::text OR (o.broker_order_id IS NOT NULL AND NOT o.listed));
    END IF;
  END IF;
  RETURN NULL;
END
$$;
