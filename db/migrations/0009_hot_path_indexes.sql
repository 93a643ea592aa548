-- Issue 14: indexes for scans that grew with history, and the ledger's running balance.
-- The q search on runs.input (ILIKE '%q%') uses a trigram GIN index.
CREATE EXTENSION IF NOT EXISTS pg_trgm;--> statement-breakpoint
CREATE TABLE "tenant_balances" (
	"tenant_id" text PRIMARY KEY NOT NULL,
	"balance" bigint DEFAULT 0 NOT NULL,
	"held" bigint DEFAULT 0 NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "tenant_balances" ADD CONSTRAINT "tenant_balances_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
-- Backfill: every tenant's balance (grants - charges) and open holds, from the entries and holds so far.
INSERT INTO "tenant_balances" ("tenant_id", "balance", "held")
SELECT t."id",
	coalesce((SELECT sum(CASE WHEN e."kind" = 'grant' THEN e."amount" ELSE -e."amount" END) FROM "ledger_entries" e WHERE e."tenant_id" = t."id"), 0),
	coalesce((SELECT sum(h."amount") FROM "ledger_holds" h WHERE h."tenant_id" = t."id" AND h."status" = 'open'), 0)
FROM "tenants" t;--> statement-breakpoint
CREATE INDEX "journey_events_tenant_created_idx" ON "journey_events" USING btree ("tenant_id","created_at");--> statement-breakpoint
CREATE INDEX "runs_tenant_status_created_idx" ON "runs" USING btree ("tenant_id","status","created_at","id");--> statement-breakpoint
CREATE INDEX "runs_input_trgm_idx" ON "runs" USING gin ("input" gin_trgm_ops);
