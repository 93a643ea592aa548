-- Exact usage: each run model call keeps its exact cost (micro-credits) and whether its usage was
-- reported or estimated; a charge says the same. Chat holds name the API instance that owns them,
-- and instances keep a lease, so holds of a process that died are found and released.
CREATE TABLE "service_instances" (
	"id" text PRIMARY KEY NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"lease_until" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD COLUMN "usage_basis" text;--> statement-breakpoint
ALTER TABLE "ledger_holds" ADD COLUMN "owner" text;--> statement-breakpoint
ALTER TABLE "ledger_holds" ADD COLUMN "closed_by" text;--> statement-breakpoint
ALTER TABLE "run_model_calls" ADD COLUMN "cost_micro" bigint DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "run_model_calls" ADD COLUMN "usage_basis" text DEFAULT 'reported' NOT NULL;--> statement-breakpoint
-- Calls recorded before exact amounts kept only their rounded-up credits: that is their exact cost now.
UPDATE "run_model_calls" SET "cost_micro" = "credits"::bigint * 1000000 WHERE "cost_micro" = 0;--> statement-breakpoint
-- The sweeper looks for open chat holds by owner.
CREATE INDEX "ledger_holds_open_owner_idx" ON "ledger_holds" ("owner") WHERE "status" = 'open' AND "owner" IS NOT NULL;
