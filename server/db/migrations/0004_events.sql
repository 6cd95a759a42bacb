CREATE TABLE "outbox_events" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "outbox_events_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"tx_id" bigint DEFAULT (pg_current_xact_id()::text::bigint) NOT NULL,
	"user_id" integer NOT NULL,
	"channel" text NOT NULL,
	"frame" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "outbox_events_tx_idx" ON "outbox_events" USING btree ("tx_id","id");--> statement-breakpoint
CREATE INDEX "outbox_events_user_idx" ON "outbox_events" USING btree ("user_id","tx_id","id");--> statement-breakpoint
CREATE INDEX "outbox_events_created_idx" ON "outbox_events" USING btree ("created_at");--> statement-breakpoint
-- Every insert into the outbox wakes the readers of every instance when it commits (a payload-free
-- NOTIFY: the rows themselves are read from the table, so a lost wake-up loses nothing).
CREATE FUNCTION "outbox_events_wake"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('ts_events', '');
  RETURN NULL;
END
$$;--> statement-breakpoint
CREATE TRIGGER "outbox_events_wake" AFTER INSERT ON "outbox_events" FOR EACH STATEMENT EXECUTE FUNCTION "outbox_events_wake"();
