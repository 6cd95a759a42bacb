CREATE TABLE "analysis_queue" (
	"id" serial PRIMARY KEY NOT NULL,
	"user_id" integer NOT NULL,
	"report_id" text NOT NULL,
	"priority" integer NOT NULL,
	"job_id" text,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "analysis_rate_buckets" (
	"user_id" integer PRIMARY KEY NOT NULL,
	"tokens" double precision NOT NULL,
	"last_taken" boolean NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "analysis_reports" (
	"id" text NOT NULL,
	"user_id" integer NOT NULL,
	"asset_class" text NOT NULL,
	"symbol" text NOT NULL,
	"mode" text NOT NULL,
	"status" text NOT NULL,
	"priority" integer DEFAULT 0 NOT NULL,
	"as_of" date,
	"score" double precision,
	"decision" text,
	"confidence" double precision,
	"cost_usd" double precision DEFAULT 0 NOT NULL,
	"tokens_input" integer DEFAULT 0 NOT NULL,
	"tokens_output" integer DEFAULT 0 NOT NULL,
	"provider" text NOT NULL,
	"model" text NOT NULL,
	"prompt_version" text NOT NULL,
	"settings" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"data_from" date,
	"data_to" date,
	"outputs" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"dashboard_md" text DEFAULT '' NOT NULL,
	"error_message" text,
	"requested_at" timestamp with time zone NOT NULL,
	"started_at" timestamp with time zone,
	"completed_at" timestamp with time zone,
	CONSTRAINT "analysis_reports_user_id_id_pk" PRIMARY KEY("user_id","id")
);
--> statement-breakpoint
CREATE TABLE "analysis_traces" (
	"user_id" integer NOT NULL,
	"report_id" text NOT NULL,
	"step_index" integer NOT NULL,
	"agent_name" text NOT NULL,
	"role" text NOT NULL,
	"content" text NOT NULL,
	"tokens_input" integer DEFAULT 0 NOT NULL,
	"tokens_output" integer DEFAULT 0 NOT NULL,
	"latency_ms" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "analysis_traces_user_id_report_id_step_index_pk" PRIMARY KEY("user_id","report_id","step_index")
);
--> statement-breakpoint
CREATE INDEX "analysis_queue_report_idx" ON "analysis_queue" USING btree ("user_id","report_id");--> statement-breakpoint
CREATE INDEX "analysis_reports_user_idx" ON "analysis_reports" USING btree ("user_id","requested_at");--> statement-breakpoint
CREATE INDEX "analysis_reports_requested_idx" ON "analysis_reports" USING btree ("requested_at");