-- A placement recorded after its order row lists the order (0016's orders_placement_recorded) once
-- per audit statement instead of once per record: the statement-level trigger that already runs
-- for every audit insert (audit_counts_track) now also lists the orders its statement's
-- placements name, in one set-based update. The row-level insert trigger it replaces ran inside
-- every paper order's intent statement, in the account's serialized transaction, where it only
-- found the order not yet answered: a trigger call and a probe per order for nothing, measured at
-- about a fifth of one account's placement rate. Its rules stay as they were: a row another
-- transaction wrote is locked first, so that a change of it in flight there is waited for and
-- read once committed (an UPDATE alone passes over a row whose committed version has no broker
-- id yet); a row this transaction wrote, no other can change meanwhile. Placement records changed
-- or removed (never, so far: the log is append-only) keep their row-level triggers.
DROP TRIGGER "orders_placement_insert" ON "audit_events";--> statement-breakpoint
CREATE OR REPLACE FUNCTION "audit_counts_track"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  own_xid text;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    INSERT INTO audit_count_changes (action, n) SELECT action, -count(*)::integer FROM old_records GROUP BY action;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    INSERT INTO audit_count_changes (action, n) SELECT action, count(*)::integer FROM new_records GROUP BY action;
  END IF;
  IF TG_OP = 'INSERT' THEN
    own_xid := (pg_current_xact_id()::text::bigint % 4294967296)::text;
    PERFORM 1 FROM orders o JOIN new_records r ON o.user_id = r.subject_user_id AND o.client_order_id = r.data->>'client_order_id'
    WHERE r.action = 'order.placed' AND o.xmin::text <> own_xid
    FOR NO KEY UPDATE OF o;
    UPDATE orders o SET listed = true FROM new_records r
    WHERE r.action = 'order.placed' AND o.user_id = r.subject_user_id AND o.client_order_id = r.data->>'client_order_id'
      AND o.broker_order_id IS NOT NULL AND NOT o.listed;
  END IF;
  RETURN NULL;
END
$$;
