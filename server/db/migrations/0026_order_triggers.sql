CREATE TABLE "order_triggers" (
	"user_id" integer NOT NULL,
	"client_order_id" text NOT NULL,
	"asset_class" text NOT NULL,
	"live" boolean NOT NULL,
	"symbol" text NOT NULL,
	"side" text NOT NULL,
	"qty" numeric NOT NULL,
	"trail_percent" numeric,
	"trail_price" numeric,
	"hwm" numeric NOT NULL,
	"stop_price" numeric NOT NULL,
	"status" text NOT NULL,
	"child_client_order_id" text,
	"child_broker_order_id" text,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "order_triggers_user_id_client_order_id_pk" PRIMARY KEY("user_id","client_order_id")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "order_triggers_child_key" ON "order_triggers" USING btree ("user_id","child_client_order_id");--> statement-breakpoint
CREATE INDEX "order_triggers_working_idx" ON "order_triggers" USING btree ("user_id","asset_class","live") WHERE "order_triggers"."status" = 'working';