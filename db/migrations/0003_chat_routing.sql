CREATE TABLE "routing_policies" (
	"tenant_id" text NOT NULL,
	"model" text NOT NULL,
	"provider" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "routing_policies" ADD CONSTRAINT "routing_policies_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "routing_policies_tenant_model_idx" ON "routing_policies" USING btree ("tenant_id","model");