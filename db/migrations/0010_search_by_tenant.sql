-- The runs search: one GIN index over the tenant (btree_gin) and the input's trigrams (pg_trgm),
-- replacing the trigram index on the input alone, which the planner passed over for a scan of
-- the tenant's rows. fastupdate off: new runs go straight into the index (see db/schema.ts).
CREATE EXTENSION IF NOT EXISTS btree_gin;--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "runs_tenant_input_trgm_idx" ON "runs" USING gin ("tenant_id","input" gin_trgm_ops) WITH (fastupdate=false);--> statement-breakpoint
DROP INDEX IF EXISTS "runs_input_trgm_idx";
