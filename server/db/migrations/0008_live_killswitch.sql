CREATE TABLE "critical_alerts" (
	"id" bigint GENERATED ALWAYS AS IDENTITY (sequence name "critical_alerts_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"user_id" integer NOT NULL,
	"asset_class" text NOT NULL,
	"day" date NOT NULL,
	"kind" text NOT NULL,
	"title" text NOT NULL,
	"data" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "critical_alerts_user_id_id_pk" PRIMARY KEY("user_id","id")
);
--> statement-breakpoint
CREATE TABLE "live_confirm_tokens" (
	"id" bigint GENERATED ALWAYS AS IDENTITY (sequence name "live_confirm_tokens_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"user_id" integer NOT NULL,
	"asset_class" text NOT NULL,
	"token_hash" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"consumed_at" timestamp with time zone,
	"superseded_at" timestamp with time zone,
	"delivery" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "live_confirm_tokens_user_id_id_pk" PRIMARY KEY("user_id","id")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "critical_alerts_once_key" ON "critical_alerts" USING btree ("user_id","asset_class","day","kind");--> statement-breakpoint
CREATE INDEX "critical_alerts_recent_idx" ON "critical_alerts" USING btree ("created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "live_confirm_tokens_hash_key" ON "live_confirm_tokens" USING btree ("user_id","token_hash");