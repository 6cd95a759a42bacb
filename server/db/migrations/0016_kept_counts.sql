CREATE TABLE "audit_count_changes" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "audit_count_changes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"action" text NOT NULL,
	"n" integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE "audit_counts" (
	"action" text PRIMARY KEY NOT NULL,
	"n" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "order_count_changes" (
	"user_id" integer NOT NULL,
	"asset_class" text NOT NULL,
	"live" boolean NOT NULL,
	"status" text NOT NULL,
	"id" bigint GENERATED ALWAYS AS IDENTITY (sequence name "order_count_changes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"n" integer NOT NULL,
	CONSTRAINT "order_count_changes_user_id_asset_class_id_pk" PRIMARY KEY("user_id","asset_class","id")
);
--> statement-breakpoint
CREATE TABLE "order_counts" (
	"user_id" integer NOT NULL,
	"asset_class" text NOT NULL,
	"live" boolean NOT NULL,
	"status" text NOT NULL,
	"n" bigint NOT NULL,
	CONSTRAINT "order_counts_user_id_asset_class_live_status_pk" PRIMARY KEY("user_id","asset_class","live","status")
);
--> statement-breakpoint
ALTER TABLE "orders" ADD COLUMN "listed" boolean DEFAULT false NOT NULL;--> statement-breakpoint
-- Kept counts (docs/architecture.md, "What a read of history costs"): the order list's total and
-- the operators' audit total, kept by the database so that every writer is counted. Triggers
-- append +n/-n rows to a table of changes and never update a counter, so writers never wait on
-- one another for it; the counts job folds the changes into the summary table in batches
-- (server/db/tallies.ts); a total adds the summary's rows and the changes not yet folded.
--
-- An order is listed when it has a broker id and the audit log holds its placement by its user
-- (`order.placed` with its subject_user_id and data->>'client_order_id'): the order list's own
-- filter. The placement may be written before the order row, after it (a bracket's child: the
-- row, then the record) or in the same statement, where both rows' AFTER triggers would see both
-- and count the order twice: so whether the order is listed is kept on its row (orders.listed),
-- and each change of it, or of the row's key while listed, is counted once.
--
-- orders_listed: whether the row is listed, read from the audit log (one probe of
-- audit_events_order_idx) when it is written with a broker id or its broker id comes or goes. A
-- change of `listed` by anyone else (the placement's trigger below) is read again too.
CREATE FUNCTION "orders_listed"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.listed := NEW.broker_order_id IS NOT NULL AND EXISTS (
    SELECT 1 FROM audit_events
    WHERE subject_user_id = NEW.user_id AND data->>'client_order_id' = NEW.client_order_id AND action = 'order.placed');
  RETURN NEW;
END
$$;--> statement-breakpoint
CREATE TRIGGER "orders_listed_insert" BEFORE INSERT ON "orders" FOR EACH ROW
  WHEN (NEW.broker_order_id IS NOT NULL OR NEW.listed) EXECUTE FUNCTION "orders_listed"();--> statement-breakpoint
CREATE TRIGGER "orders_listed_update" BEFORE UPDATE ON "orders" FOR EACH ROW
  WHEN ((OLD.broker_order_id IS NULL) <> (NEW.broker_order_id IS NULL) OR OLD.user_id <> NEW.user_id OR OLD.client_order_id <> NEW.client_order_id OR OLD.listed <> NEW.listed)
  EXECUTE FUNCTION "orders_listed"();--> statement-breakpoint
-- order_counts_track: a listed order counts under its key (user, asset class, mode, status): -1
-- under the old key and +1 under the new one when it stops or starts being listed, or when its
-- key changes while listed (a fill, a cancel). Other writes of an order fire nothing.
CREATE FUNCTION "order_counts_track"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' AND OLD.listed THEN
    INSERT INTO order_count_changes (user_id, asset_class, live, status, n) VALUES (OLD.user_id, OLD.asset_class, OLD.live, OLD.status, -1);
  END IF;
  IF TG_OP <> 'DELETE' AND NEW.listed THEN
    INSERT INTO order_count_changes (user_id, asset_class, live, status, n) VALUES (NEW.user_id, NEW.asset_class, NEW.live, NEW.status, 1);
  END IF;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "order_counts_insert" AFTER INSERT ON "orders" FOR EACH ROW
  WHEN (NEW.listed) EXECUTE FUNCTION "order_counts_track"();--> statement-breakpoint
CREATE TRIGGER "order_counts_update" AFTER UPDATE ON "orders" FOR EACH ROW
  WHEN ((OLD.listed OR NEW.listed) AND (OLD.listed, OLD.user_id, OLD.asset_class, OLD.live, OLD.status) IS DISTINCT FROM (NEW.listed, NEW.user_id, NEW.asset_class, NEW.live, NEW.status))
  EXECUTE FUNCTION "order_counts_track"();--> statement-breakpoint
CREATE TRIGGER "order_counts_delete" AFTER DELETE ON "orders" FOR EACH ROW
  WHEN (OLD.listed) EXECUTE FUNCTION "order_counts_track"();--> statement-breakpoint
-- orders_placement_recorded: a placement recorded after its order row lists the order when it
-- has a broker id. A row of another transaction is locked first, so that a change of it in
-- flight there is waited for and read once committed (an UPDATE alone would pass over a row whose
-- committed version has no broker id yet). A row this transaction wrote, as every placement of
-- the service does (the intent's one statement; a bracket child's row, then its record), no other
-- can change meanwhile: it is read without the lock, which on the hot path cost every order a
-- tuple lock and a third of one account's placement rate. A placement record removed or changed
-- (the log is append-only: never, so far) has its order read again.
CREATE FUNCTION "orders_placement_recorded"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  own boolean;
  ready boolean;
BEGIN
  IF TG_OP <> 'INSERT' AND OLD.action = 'order.placed' THEN
    UPDATE orders SET listed = NOT listed WHERE user_id = OLD.subject_user_id AND client_order_id = OLD.data->>'client_order_id';
  END IF;
  IF TG_OP <> 'DELETE' AND NEW.action = 'order.placed' THEN
    SELECT xmin::text = (pg_current_xact_id()::text::bigint % 4294967296)::text, broker_order_id IS NOT NULL AND NOT listed INTO own, ready
    FROM orders WHERE user_id = NEW.subject_user_id AND client_order_id = NEW.data->>'client_order_id';
    IF NOT FOUND OR (own AND NOT ready) THEN
      RETURN NULL;
    END IF;
    IF NOT own THEN
      PERFORM 1 FROM orders WHERE user_id = NEW.subject_user_id AND client_order_id = NEW.data->>'client_order_id' FOR NO KEY UPDATE;
    END IF;
    UPDATE orders SET listed = true
    WHERE user_id = NEW.subject_user_id AND client_order_id = NEW.data->>'client_order_id' AND broker_order_id IS NOT NULL AND NOT listed;
  END IF;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "orders_placement_insert" AFTER INSERT ON "audit_events" FOR EACH ROW
  WHEN (NEW.action = 'order.placed') EXECUTE FUNCTION "orders_placement_recorded"();--> statement-breakpoint
CREATE TRIGGER "orders_placement_update" AFTER UPDATE ON "audit_events" FOR EACH ROW
  WHEN (OLD.action = 'order.placed' OR NEW.action = 'order.placed') EXECUTE FUNCTION "orders_placement_recorded"();--> statement-breakpoint
CREATE TRIGGER "orders_placement_delete" AFTER DELETE ON "audit_events" FOR EACH ROW
  WHEN (OLD.action = 'order.placed') EXECUTE FUNCTION "orders_placement_recorded"();--> statement-breakpoint
-- audit_counts_track: the records a statement wrote (or removed) per action, one row each.
CREATE FUNCTION "audit_counts_track"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP <> 'INSERT' THEN
    INSERT INTO audit_count_changes (action, n) SELECT action, -count(*)::integer FROM old_records GROUP BY action;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    INSERT INTO audit_count_changes (action, n) SELECT action, count(*)::integer FROM new_records GROUP BY action;
  END IF;
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "audit_counts_insert" AFTER INSERT ON "audit_events" REFERENCING NEW TABLE AS new_records
  FOR EACH STATEMENT EXECUTE FUNCTION "audit_counts_track"();--> statement-breakpoint
CREATE TRIGGER "audit_counts_update" AFTER UPDATE ON "audit_events" REFERENCING OLD TABLE AS old_records NEW TABLE AS new_records
  FOR EACH STATEMENT EXECUTE FUNCTION "audit_counts_track"();--> statement-breakpoint
CREATE TRIGGER "audit_counts_delete" AFTER DELETE ON "audit_events" REFERENCING OLD TABLE AS old_records
  FOR EACH STATEMENT EXECUTE FUNCTION "audit_counts_track"();--> statement-breakpoint
-- kept_counts_rebuild: the counts made anew from the rows they count, writers held off meanwhile
-- (the changes tables before the summaries, in the order the counts job takes them). This
-- migration's backfill; also an operator's repair, should a count ever be doubted.
CREATE FUNCTION "kept_counts_rebuild"() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  LOCK TABLE orders, audit_events IN SHARE MODE;
  LOCK TABLE order_count_changes, order_counts, audit_count_changes, audit_counts IN EXCLUSIVE MODE;
  UPDATE orders SET listed = NOT listed
  WHERE listed <> (broker_order_id IS NOT NULL AND EXISTS (
    SELECT 1 FROM audit_events
    WHERE subject_user_id = orders.user_id AND data->>'client_order_id' = orders.client_order_id AND action = 'order.placed'));
  DELETE FROM order_count_changes;
  DELETE FROM order_counts;
  INSERT INTO order_counts (user_id, asset_class, live, status, n)
    SELECT user_id, asset_class, live, status, count(*) FROM orders WHERE listed GROUP BY user_id, asset_class, live, status;
  DELETE FROM audit_count_changes;
  DELETE FROM audit_counts;
  INSERT INTO audit_counts (action, n) SELECT action, count(*) FROM audit_events GROUP BY action;
END
$$;--> statement-breakpoint
SELECT "kept_counts_rebuild"();
