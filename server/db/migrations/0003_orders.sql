CREATE TABLE "emergency_locks" (
	"user_id" integer NOT NULL,
	"asset_class" text NOT NULL,
	"locked_until" timestamp with time zone NOT NULL,
	"reason" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "emergency_locks_user_id_asset_class_pk" PRIMARY KEY("user_id","asset_class")
);
--> statement-breakpoint
CREATE TABLE "equity_snapshots" (
	"user_id" integer NOT NULL,
	"asset_class" text NOT NULL,
	"mode" text NOT NULL,
	"day" date NOT NULL,
	"equity" numeric NOT NULL,
	"taken_at" timestamp with time zone NOT NULL,
	CONSTRAINT "equity_snapshots_user_id_asset_class_mode_day_pk" PRIMARY KEY("user_id","asset_class","mode","day")
);
--> statement-breakpoint
CREATE TABLE "live_flags" (
	"user_id" integer NOT NULL,
	"asset_class" text NOT NULL,
	"live_enabled" boolean DEFAULT false NOT NULL,
	"first_live_order_at" timestamp with time zone,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "live_flags_user_id_asset_class_pk" PRIMARY KEY("user_id","asset_class")
);
--> statement-breakpoint
CREATE TABLE "order_fills" (
	"user_id" integer NOT NULL,
	"id" bigint GENERATED ALWAYS AS IDENTITY (sequence name "order_fills_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"client_order_id" text NOT NULL,
	"execution_id" text NOT NULL,
	"qty" numeric NOT NULL,
	"price" numeric NOT NULL,
	"fee" numeric NOT NULL,
	"at" timestamp with time zone NOT NULL,
	CONSTRAINT "order_fills_user_id_id_pk" PRIMARY KEY("user_id","id")
);
--> statement-breakpoint
CREATE TABLE "order_rate_counters" (
	"user_id" integer NOT NULL,
	"scope" text NOT NULL,
	"window_start" timestamp with time zone NOT NULL,
	"count" integer NOT NULL,
	CONSTRAINT "order_rate_counters_user_id_scope_pk" PRIMARY KEY("user_id","scope")
);
--> statement-breakpoint
CREATE TABLE "orders" (
	"user_id" integer NOT NULL,
	"client_order_id" text NOT NULL,
	"broker_order_id" text,
	"asset_class" text NOT NULL,
	"live" boolean NOT NULL,
	"broker" text NOT NULL,
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
	"metadata" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"request_hash" text,
	"reason" text,
	"submitted_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "orders_user_id_client_order_id_pk" PRIMARY KEY("user_id","client_order_id")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "order_fills_execution_key" ON "order_fills" USING btree ("user_id","execution_id");--> statement-breakpoint
CREATE INDEX "order_fills_order_idx" ON "order_fills" USING btree ("user_id","client_order_id");--> statement-breakpoint
CREATE UNIQUE INDEX "orders_broker_id_key" ON "orders" USING btree ("user_id","broker_order_id");--> statement-breakpoint
CREATE INDEX "orders_list_idx" ON "orders" USING btree ("user_id","asset_class","submitted_at");--> statement-breakpoint
CREATE INDEX "orders_pending_idx" ON "orders" USING btree ("status") WHERE "orders"."status" = 'pending';