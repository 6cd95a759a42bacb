CREATE TABLE "leases" (
	"name" text PRIMARY KEY NOT NULL,
	"holder" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "daily_bars" (
	"asset_class" text NOT NULL,
	"symbol" text NOT NULL,
	"date" date NOT NULL,
	"open" numeric NOT NULL,
	"high" numeric NOT NULL,
	"low" numeric NOT NULL,
	"close" numeric NOT NULL,
	"adj_close" numeric,
	"volume" numeric NOT NULL,
	"source" text NOT NULL,
	"imported_at" timestamp with time zone NOT NULL,
	CONSTRAINT "daily_bars_asset_class_symbol_date_pk" PRIMARY KEY("asset_class","symbol","date")
);
--> statement-breakpoint
CREATE TABLE "instruments" (
	"asset_class" text NOT NULL,
	"symbol" text NOT NULL,
	"exchange" text NOT NULL,
	"currency" text NOT NULL,
	"name" text NOT NULL,
	"reference_price" numeric NOT NULL,
	"tick_rule" text DEFAULT 'fixed' NOT NULL,
	"tick_size" numeric NOT NULL,
	"lot_size" numeric NOT NULL,
	"fractional" boolean NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "instruments_asset_class_symbol_pk" PRIMARY KEY("asset_class","symbol")
);
--> statement-breakpoint
CREATE TABLE "exchange_keys" (
	"user_id" integer NOT NULL,
	"id" integer GENERATED ALWAYS AS IDENTITY (sequence name "exchange_keys_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"asset_class" text NOT NULL,
	"exchange" text NOT NULL,
	"label" text NOT NULL,
	"permissions" text NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"paper_mode" boolean NOT NULL,
	"api_key_enc" text NOT NULL,
	"api_secret_enc" text NOT NULL,
	"api_key_fingerprint" text NOT NULL,
	"account_no_enc" text,
	"account_product_code" text,
	"base_url" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "exchange_keys_user_id_id_pk" PRIMARY KEY("user_id","id")
);
--> statement-breakpoint
CREATE TABLE "sim_accounts" (
	"user_id" integer NOT NULL,
	"asset_class" text NOT NULL,
	"mode" text NOT NULL,
	"currency" text NOT NULL,
	"cash" numeric NOT NULL,
	"initial_cash" numeric NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"reset_at" timestamp with time zone,
	CONSTRAINT "sim_accounts_user_id_asset_class_mode_pk" PRIMARY KEY("user_id","asset_class","mode")
);
--> statement-breakpoint
CREATE TABLE "sim_fills" (
	"user_id" integer NOT NULL,
	"id" bigint GENERATED ALWAYS AS IDENTITY (sequence name "sim_fills_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"order_id" text NOT NULL,
	"asset_class" text NOT NULL,
	"mode" text NOT NULL,
	"symbol" text NOT NULL,
	"side" text NOT NULL,
	"qty" numeric NOT NULL,
	"price" numeric NOT NULL,
	"fee" numeric NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sim_fills_user_id_id_pk" PRIMARY KEY("user_id","id")
);
--> statement-breakpoint
CREATE TABLE "sim_orders" (
	"user_id" integer NOT NULL,
	"id" text NOT NULL,
	"client_order_id" text NOT NULL,
	"asset_class" text NOT NULL,
	"mode" text NOT NULL,
	"symbol" text NOT NULL,
	"side" text NOT NULL,
	"order_type" text NOT NULL,
	"time_in_force" text NOT NULL,
	"qty" numeric NOT NULL,
	"filled_qty" numeric DEFAULT '0' NOT NULL,
	"avg_fill_price" numeric,
	"limit_price" numeric,
	"stop_price" numeric,
	"status" text NOT NULL,
	"bracket" jsonb,
	"parent_id" text,
	"oco_sibling_id" text,
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"expires_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sim_orders_user_id_id_pk" PRIMARY KEY("user_id","id")
);
--> statement-breakpoint
CREATE TABLE "sim_positions" (
	"user_id" integer NOT NULL,
	"asset_class" text NOT NULL,
	"mode" text NOT NULL,
	"symbol" text NOT NULL,
	"qty" numeric NOT NULL,
	"avg_entry_price" numeric NOT NULL,
	"realized_pnl" numeric DEFAULT '0' NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sim_positions_user_id_asset_class_mode_symbol_pk" PRIMARY KEY("user_id","asset_class","mode","symbol")
);
--> statement-breakpoint
CREATE TABLE "sim_prices" (
	"asset_class" text NOT NULL,
	"symbol" text NOT NULL,
	"admin_price" numeric,
	"tick_price" numeric,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sim_prices_asset_class_symbol_pk" PRIMARY KEY("asset_class","symbol")
);
--> statement-breakpoint
CREATE INDEX "daily_bars_source_idx" ON "daily_bars" USING btree ("asset_class","symbol","source");--> statement-breakpoint
CREATE INDEX "exchange_keys_id_idx" ON "exchange_keys" USING btree ("id");--> statement-breakpoint
CREATE INDEX "exchange_keys_fingerprint_idx" ON "exchange_keys" USING btree ("api_key_fingerprint");--> statement-breakpoint
CREATE INDEX "exchange_keys_active_idx" ON "exchange_keys" USING btree ("user_id","asset_class") WHERE "exchange_keys"."is_active";--> statement-breakpoint
CREATE INDEX "sim_fills_order_idx" ON "sim_fills" USING btree ("user_id","order_id");--> statement-breakpoint
CREATE UNIQUE INDEX "sim_orders_client_id_key" ON "sim_orders" USING btree ("user_id","asset_class","mode","client_order_id");--> statement-breakpoint
CREATE INDEX "sim_orders_resting_idx" ON "sim_orders" USING btree ("asset_class","symbol") WHERE "sim_orders"."status" in ('accepted', 'open', 'partially_filled');--> statement-breakpoint
CREATE INDEX "sim_orders_expiry_idx" ON "sim_orders" USING btree ("expires_at") WHERE "sim_orders"."status" in ('accepted', 'open', 'partially_filled');