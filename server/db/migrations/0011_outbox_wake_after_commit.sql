-- The outbox no longer wakes its readers from inside the writing transaction. A NOTIFY takes a
-- database-wide lock at commit and holds it until the commit is flushed, so every transaction that
-- wrote an event waited for the one before it to reach the disk: no group commit, and one order's
-- commit queued behind the next. The event bus now sends the wake-up itself, after commit, in a
-- statement of its own (coalesced: one at a time), and reads its own process's events at once.
DROP TRIGGER "outbox_events_wake" ON "outbox_events";--> statement-breakpoint
DROP FUNCTION "outbox_events_wake"();
