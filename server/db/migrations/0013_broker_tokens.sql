CREATE TABLE "broker_tokens" (
	"key_hash" text PRIMARY KEY NOT NULL,
	"access_token_enc" text NOT NULL,
	"issued_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
