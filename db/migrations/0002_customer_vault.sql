CREATE TABLE "memory_entry_versions" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"entry_id" text NOT NULL,
	"tenant_id" text NOT NULL,
	"version" integer NOT NULL,
	"subject" text,
	"content" text,
	"digest" text NOT NULL,
	"reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "vault_chain" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"seq" integer NOT NULL,
	"entry_id" text NOT NULL,
	"action" text NOT NULL,
	"entry_digest" text NOT NULL,
	"prev_hash" text NOT NULL,
	"hash" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
DROP INDEX "memory_entries_tenant_idx";--> statement-breakpoint
DROP INDEX "memory_entries_search_idx";--> statement-breakpoint
ALTER TABLE "memory_entries" ALTER COLUMN "subject" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "memory_entries" ALTER COLUMN "content" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "memory_entries" ALTER COLUMN "created_at" SET DATA TYPE timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "memory_entries" ALTER COLUMN "created_at" SET DEFAULT now();--> statement-breakpoint
ALTER TABLE "memory_entries" ADD COLUMN "tags" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "memory_entries" ADD COLUMN "state" text DEFAULT 'active' NOT NULL;--> statement-breakpoint
ALTER TABLE "memory_entries" ADD COLUMN "version" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "memory_entries" ADD COLUMN "digest" text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE "memory_entries" ADD COLUMN "expires_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "memory_entries" ADD COLUMN "quarantine_reason" text;--> statement-breakpoint
ALTER TABLE "memory_entries" ADD COLUMN "updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL;--> statement-breakpoint
ALTER TABLE "memory_entries" ADD COLUMN "forgotten_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "memory_entry_versions" ADD CONSTRAINT "memory_entry_versions_entry_id_memory_entries_id_fk" FOREIGN KEY ("entry_id") REFERENCES "public"."memory_entries"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "vault_chain" ADD CONSTRAINT "vault_chain_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "memory_entry_versions_entry_version_idx" ON "memory_entry_versions" USING btree ("entry_id","version");--> statement-breakpoint
CREATE UNIQUE INDEX "vault_chain_tenant_seq_idx" ON "vault_chain" USING btree ("tenant_id","seq");--> statement-breakpoint
CREATE INDEX "memory_entries_tenant_idx" ON "memory_entries" USING btree ("tenant_id","created_at","id");--> statement-breakpoint
CREATE INDEX "memory_entries_search_idx" ON "memory_entries" USING gin (to_tsvector('english', coalesce("subject", '') || ' ' || coalesce("content", '')));