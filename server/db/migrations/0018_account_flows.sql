CREATE TABLE "account_flows" (
	"user_id" integer NOT NULL,
	"id" bigint GENERATED ALWAYS AS IDENTITY (sequence name "account_flows_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"asset_class" text NOT NULL,
	"mode" text NOT NULL,
	"day" date NOT NULL,
	"kind" text NOT NULL,
	"amount" numeric NOT NULL,
	"equity_before" numeric NOT NULL,
	"equity_after" numeric NOT NULL,
	"at" timestamp with time zone NOT NULL,
	CONSTRAINT "account_flows_user_id_id_pk" PRIMARY KEY("user_id","id")
);
--> statement-breakpoint
CREATE INDEX "account_flows_day_idx" ON "account_flows" USING btree ("user_id","asset_class","mode","day");