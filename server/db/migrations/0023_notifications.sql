CREATE TABLE "notification_channels" (
	"id" uuid PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"name" text NOT NULL,
	"kind" text NOT NULL,
	"target_enc" text NOT NULL,
	"secret_enc" text,
	"events" jsonb NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"consecutive_failures" integer DEFAULT 0 NOT NULL,
	"disabled_reason" text,
	"last_delivery_at" timestamp with time zone,
	"last_delivery_ok" boolean,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "notification_cursor" (
	"id" smallint PRIMARY KEY NOT NULL,
	"tx_id" bigint NOT NULL,
	"event_id" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "notification_messages" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "notification_messages_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"channel_id" uuid NOT NULL,
	"status" text NOT NULL,
	"items" jsonb NOT NULL,
	"opened_at" timestamp with time zone NOT NULL,
	"due_at" timestamp with time zone NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"last_error" text,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "notification_channels" ADD CONSTRAINT "notification_channels_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notification_messages" ADD CONSTRAINT "notification_messages_channel_id_notification_channels_id_fk" FOREIGN KEY ("channel_id") REFERENCES "public"."notification_channels"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "notification_channels_user_idx" ON "notification_channels" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "notification_messages_gathering_idx" ON "notification_messages" USING btree ("channel_id") WHERE "notification_messages"."status" = 'gathering';--> statement-breakpoint
CREATE INDEX "notification_messages_due_idx" ON "notification_messages" USING btree ("due_at") WHERE "notification_messages"."status" = 'gathering';--> statement-breakpoint
CREATE INDEX "notification_messages_channel_idx" ON "notification_messages" USING btree ("channel_id","id");