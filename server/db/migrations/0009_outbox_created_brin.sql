DROP INDEX "outbox_events_created_idx";--> statement-breakpoint
CREATE INDEX "outbox_events_created_idx" ON "outbox_events" USING brin ("created_at");