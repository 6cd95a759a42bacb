CREATE TABLE "backtest_sweeps" (
	"id" text NOT NULL,
	"user_id" integer NOT NULL,
	"asset_class" text NOT NULL,
	"symbol" text NOT NULL,
	"strategy_name" text NOT NULL,
	"result" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "backtest_sweeps_user_id_id_pk" PRIMARY KEY("user_id","id")
);
--> statement-breakpoint
CREATE INDEX "backtest_sweeps_user_idx" ON "backtest_sweeps" USING btree ("user_id","created_at");