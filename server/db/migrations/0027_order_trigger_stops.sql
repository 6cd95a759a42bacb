ALTER TABLE "order_triggers" ALTER COLUMN "hwm" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "order_triggers" ADD COLUMN "order_type" text DEFAULT 'trailing_stop' NOT NULL;--> statement-breakpoint
ALTER TABLE "order_triggers" ADD COLUMN "limit_price" numeric;--> statement-breakpoint
ALTER TABLE "order_triggers" ADD COLUMN "sibling_client_order_id" text;--> statement-breakpoint
ALTER TABLE "order_triggers" ADD COLUMN "expires_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "order_triggers" ADD COLUMN "armed_at" timestamp with time zone DEFAULT date_trunc('milliseconds', now()) NOT NULL;