-- The outbound request budget of each broker key and exchange host, shared by every instance:
-- a token bucket that instances take from in small batches, and a pause set by a 429 Retry-After.
CREATE TABLE "broker_request_budgets" (
	"name" text PRIMARY KEY NOT NULL,
	"tokens" double precision NOT NULL,
	"granted" integer NOT NULL,
	"refilled_at" timestamp with time zone NOT NULL,
	"paused_until" timestamp with time zone
);
