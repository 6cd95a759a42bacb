CREATE TABLE "backtest_results" (
	"id" text NOT NULL,
	"user_id" integer NOT NULL,
	"asset_class" text NOT NULL,
	"symbol" text NOT NULL,
	"strategy_name" text NOT NULL,
	"strategy_params" jsonb NOT NULL,
	"profile_name" text NOT NULL,
	"currency" text NOT NULL,
	"start_date" date NOT NULL,
	"end_date" date NOT NULL,
	"total_return_pct" double precision NOT NULL,
	"sharpe_ratio" double precision NOT NULL,
	"max_drawdown_pct" double precision NOT NULL,
	"win_rate" double precision NOT NULL,
	"total_trades" integer NOT NULL,
	"result" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "backtest_results_user_id_id_pk" PRIMARY KEY("user_id","id")
);
--> statement-breakpoint
CREATE INDEX "backtest_results_user_idx" ON "backtest_results" USING btree ("user_id","created_at");