CREATE TABLE "tool_calls" (
	"tenant_id" text NOT NULL,
	"run_id" text NOT NULL,
	"step_id" text NOT NULL,
	"args_digest" text NOT NULL,
	"tool" text NOT NULL,
	"effect" text NOT NULL,
	"status" text NOT NULL,
	"is_error" boolean,
	"result" jsonb,
	"result_digest" text,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"done_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "tool_calls" ADD CONSTRAINT "tool_calls_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "tool_calls_call_idx" ON "tool_calls" USING btree ("run_id","step_id","args_digest");--> statement-breakpoint
CREATE INDEX "tool_calls_tenant_idx" ON "tool_calls" USING btree ("tenant_id");