// Drizzle schema: what the API reads and lists. Temporal holds execution state;
// these tables hold projections and the records customers query.

import { bigint, index, integer, pgTable, text, timestamp, uniqueIndex, varchar } from 'drizzle-orm/pg-core';

export const tenants = pgTable('tenants', {
  id: text('id').primaryKey(),
  name: text('name').notNull().unique(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
});

/** API keys. Only a SHA-256 hash of the secret is stored; `prefix` lets people recognise a key in listings. */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    tenantId: text('tenant_id')
      .notNull()
      .references(() => tenants.id),
    kind: text('kind', { enum: ['core', 'workspace'] }).notNull(),
    prefix: text('prefix').notNull(),
    secretHash: text('secret_hash').notNull(),
    label: text('label'),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('api_keys_secret_hash_idx').on(t.secretHash),
    index('api_keys_tenant_idx').on(t.tenantId),
  ],
);

/**
 * Shared rate-limit counters for rate-limiter-flexible's Postgres store, so API
 * replicas share limits. The column layout is the one that library expects.
 */
export const rateLimits = pgTable('rate_limits', {
  key: varchar('key', { length: 255 }).primaryKey(),
  points: integer('points').notNull().default(0),
  expire: bigint('expire', { mode: 'number' }),
});

export const schema = { tenants, apiKeys, rateLimits };
