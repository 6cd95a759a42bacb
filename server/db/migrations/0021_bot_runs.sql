-- Every run of a bot, kept after the next start replaces the bot's row (its drift report replays it).
CREATE TABLE "bot_runs" (
	"user_id" integer NOT NULL,
	"run_id" text NOT NULL,
	"asset_class" text NOT NULL,
	"symbols" jsonb NOT NULL,
	"strategy_name" text NOT NULL,
	"strategy_params" jsonb NOT NULL,
	"live_mode" boolean NOT NULL,
	"timeframe" text NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"stopped_at" timestamp with time zone,
	"stopped_by" text,
	"halt_reason" text,
	CONSTRAINT "bot_runs_user_id_run_id_pk" PRIMARY KEY("user_id","run_id")
);
--> statement-breakpoint
CREATE INDEX "bot_runs_user_idx" ON "bot_runs" USING btree ("user_id","started_at");--> statement-breakpoint
-- The run each bot has already (its row holds the last start's settings): its drift report can
-- replay it too. Earlier runs' settings were not kept.
INSERT INTO "bot_runs" ("user_id", "run_id", "asset_class", "symbols", "strategy_name", "strategy_params", "live_mode", "timeframe", "started_at", "stopped_at", "stopped_by", "halt_reason")
SELECT "user_id", "run_id", "asset_class", "symbols", "strategy_name", "strategy_params", "live_mode", "timeframe", "started_at", "stopped_at", "stopped_by", "halt_reason" FROM "bots"
ON CONFLICT DO NOTHING;
