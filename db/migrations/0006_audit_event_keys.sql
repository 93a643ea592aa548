ALTER TABLE "audit_events" ADD COLUMN "event_key" text;--> statement-breakpoint
CREATE UNIQUE INDEX "audit_events_event_key_idx" ON "audit_events" USING btree ("event_key");