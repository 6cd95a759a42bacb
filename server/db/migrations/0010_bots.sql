CREATE TABLE "bot_bars" (
	"user_id" integer NOT NULL,
	"asset_class" text NOT NULL,
	"symbol" text NOT NULL,
	"timeframe" text NOT NULL,
	"start" timestamp with time zone NOT NULL,
	"open" numeric NOT NULL,
	"high" numeric NOT NULL,
	"low" numeric NOT NULL,
	"close" numeric NOT NULL,
	CONSTRAINT "bot_bars_user_id_asset_class_symbol_timeframe_start_pk" PRIMARY KEY("user_id","asset_class","symbol","timeframe","start")
);
--> statement-breakpoint
CREATE TABLE "bot_orders" (
	"user_id" integer NOT NULL,
	"client_order_id" text NOT NULL,
	"run_id" text NOT NULL,
	"asset_class" text NOT NULL,
	"symbol" text NOT NULL,
	"side" text NOT NULL,
	"qty" numeric NOT NULL,
	"bar_start" timestamp with time zone NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "bot_orders_user_id_client_order_id_pk" PRIMARY KEY("user_id","client_order_id")
);
--> statement-breakpoint
CREATE TABLE "bots" (
	"user_id" integer PRIMARY KEY NOT NULL,
	"run_id" text NOT NULL,
	"asset_class" text NOT NULL,
	"symbols" jsonb NOT NULL,
	"strategy_name" text NOT NULL,
	"strategy_params" jsonb NOT NULL,
	"live_mode" boolean NOT NULL,
	"timeframe" text NOT NULL,
	"status" text NOT NULL,
	"halt_reason" text,
	"stopped_by" text,
	"started_at" timestamp with time zone NOT NULL,
	"stopped_at" timestamp with time zone,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "bot_orders_user_idx" ON "bot_orders" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE INDEX "bots_running_idx" ON "bots" USING btree ("status") WHERE "bots"."status" = 'running';