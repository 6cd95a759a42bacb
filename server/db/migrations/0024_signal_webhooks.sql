CREATE TABLE "signal_webhooks" (
	"id" uuid PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"name" text NOT NULL,
	"asset_class" text NOT NULL,
	"mode" text NOT NULL,
	"max_lag_sec" integer NOT NULL,
	"token_hash" text NOT NULL,
	"token_prefix" text NOT NULL,
	"passphrase_hash" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"rotated_at" timestamp with time zone,
	"deleted_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "signals" (
	"id" uuid PRIMARY KEY NOT NULL,
	"seq" bigserial NOT NULL,
	"user_id" integer NOT NULL,
	"webhook_id" uuid NOT NULL,
	"asset_class" text NOT NULL,
	"mode" text NOT NULL,
	"received_at" timestamp with time zone NOT NULL,
	"status" text NOT NULL,
	"symbol" text,
	"side" text,
	"order_type" text,
	"qty" numeric,
	"qty_pct" numeric,
	"alert_id" text,
	"payload" jsonb,
	"client_order_id" text,
	"broker_order_id" text,
	"error_code" text,
	"error_message" text,
	"decided_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "signal_webhooks" ADD CONSTRAINT "signal_webhooks_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signals" ADD CONSTRAINT "signals_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "signals" ADD CONSTRAINT "signals_webhook_id_signal_webhooks_id_fk" FOREIGN KEY ("webhook_id") REFERENCES "public"."signal_webhooks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "signal_webhooks_token_key" ON "signal_webhooks" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "signal_webhooks_user_idx" ON "signal_webhooks" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "signals_user_received_idx" ON "signals" USING btree ("user_id","received_at","seq");--> statement-breakpoint
CREATE INDEX "signals_pending_idx" ON "signals" USING btree ("received_at") WHERE "signals"."status" = 'pending';