CREATE TABLE "journey_events" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"run_id" text,
	"kind" text NOT NULL,
	"state" text,
	"event_key" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ledger_entries" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"run_id" text,
	"kind" text NOT NULL,
	"amount" bigint NOT NULL,
	"entry_key" text NOT NULL,
	"note" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ledger_holds" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"run_id" text NOT NULL,
	"step" text NOT NULL,
	"amount" bigint NOT NULL,
	"status" text NOT NULL,
	"charged_amount" bigint,
	"released_amount" bigint,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"closed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "memory_entries" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"subject" text NOT NULL,
	"content" text NOT NULL,
	"source" text NOT NULL,
	"entry_key" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "runs" (
	"id" text PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"idempotency_key" text,
	"request_digest" text NOT NULL,
	"status" text NOT NULL,
	"current_step" text,
	"input" text NOT NULL,
	"memory" boolean NOT NULL,
	"estimate" jsonb,
	"reservation" jsonb,
	"usage" jsonb,
	"plan" jsonb,
	"approval" jsonb,
	"result" jsonb,
	"receipt" jsonb,
	"failure" jsonb,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"completed_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "tenants" ADD COLUMN "webhook_url" text;--> statement-breakpoint
ALTER TABLE "journey_events" ADD CONSTRAINT "journey_events_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_entries" ADD CONSTRAINT "ledger_entries_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ledger_holds" ADD CONSTRAINT "ledger_holds_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "memory_entries" ADD CONSTRAINT "memory_entries_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "runs" ADD CONSTRAINT "runs_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "journey_events_key_idx" ON "journey_events" USING btree ("event_key");--> statement-breakpoint
CREATE INDEX "journey_events_tenant_idx" ON "journey_events" USING btree ("tenant_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_entries_key_idx" ON "ledger_entries" USING btree ("entry_key");--> statement-breakpoint
CREATE INDEX "ledger_entries_tenant_idx" ON "ledger_entries" USING btree ("tenant_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "ledger_holds_run_step_idx" ON "ledger_holds" USING btree ("run_id","step");--> statement-breakpoint
CREATE INDEX "ledger_holds_tenant_idx" ON "ledger_holds" USING btree ("tenant_id","status");--> statement-breakpoint
CREATE UNIQUE INDEX "memory_entries_key_idx" ON "memory_entries" USING btree ("entry_key");--> statement-breakpoint
CREATE INDEX "memory_entries_tenant_idx" ON "memory_entries" USING btree ("tenant_id");--> statement-breakpoint
CREATE INDEX "memory_entries_search_idx" ON "memory_entries" USING gin (to_tsvector('english', "subject" || ' ' || "content"));--> statement-breakpoint
CREATE UNIQUE INDEX "runs_tenant_idempotency_idx" ON "runs" USING btree ("tenant_id","idempotency_key") WHERE "runs"."idempotency_key" is not null;--> statement-breakpoint
CREATE INDEX "runs_tenant_created_idx" ON "runs" USING btree ("tenant_id","created_at","id");