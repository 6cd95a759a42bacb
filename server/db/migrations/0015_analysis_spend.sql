-- What each user's reports cost per UTC day, for the daily LLM budgets: added to when a run
-- records its cost, never taken from when a report is deleted. Today's spend is carried over from
-- the reports requested today (a range of analysis_reports_requested_idx); earlier days are never
-- read again.
CREATE TABLE "analysis_spend" (
	"user_id" integer NOT NULL,
	"day" date NOT NULL,
	"spent_usd" numeric NOT NULL,
	CONSTRAINT "analysis_spend_user_id_day_pk" PRIMARY KEY("user_id","day")
);
--> statement-breakpoint
CREATE INDEX "analysis_spend_day_idx" ON "analysis_spend" USING btree ("day");--> statement-breakpoint
INSERT INTO "analysis_spend" ("user_id", "day", "spent_usd")
	SELECT "user_id", ("requested_at" AT TIME ZONE 'UTC')::date, sum("cost_usd"::numeric)
	FROM "analysis_reports"
	WHERE "requested_at" >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AND "cost_usd" > 0
	GROUP BY 1, 2;
