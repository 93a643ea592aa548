// Reads of one run (GET /v1/agent-runs/{id}, a follower's check) that arrive while another read is
// in flight go together in one statement, whatever their tenants (services/runs.ts, getRun). Each
// read still gets exactly its own tenant's row, on Postgres and on the embedded PGlite.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Database, openPglite, openPostgres } from '../db/client.ts';
import { getRun } from '../services/runs.ts';
import { newTenant, storedRun } from './support/run-stack.ts';

const databases: [string, () => Database][] = [
  ['Postgres', () => openPostgres(inject('databaseUrl'))],
  ['PGlite', () => openPglite('memory')],
];

describe.each(databases)('reads of runs on %s', (_name, open) => {
  let database: Database;
  beforeAll(async () => {
    database = open();
    await database.migrate();
  });
  afterAll(() => database.close());

  it("answers each concurrent read with its own tenant's row: another tenant's run and an unknown id are null", async () => {
    const db = database.db;
    const [a, b] = [await newTenant(db, 0), await newTenant(db, 0)];
    const ofA = await Promise.all(Array.from({ length: 6 }, (_, i) => storedRun(db, a.tenantId, `a ${i}`)));
    const ofB = await storedRun(db, b.tenantId, 'b');
    const asked = [
      ...ofA.map((run) => [a.tenantId, run.id] as const),
      [a.tenantId, ofA[0]!.id] as const, // the same run twice in one batch
      [a.tenantId, ofB.id] as const, // another tenant's run
      [a.tenantId, 'run_000000000000000000000000'] as const,
      [b.tenantId, ofB.id] as const,
      [b.tenantId, ofA[1]!.id] as const,
    ];
    const read = await Promise.all(asked.map(([tenantId, runId]) => getRun(db, tenantId, runId)));
    expect(read.map((row) => row && [row.tenantId, row.id, row.input])).toEqual([
      ...ofA.map((run) => [a.tenantId, run.id, run.input]),
      [a.tenantId, ofA[0]!.id, 'a 0'],
      null,
      null,
      [b.tenantId, ofB.id, 'b'],
      null,
    ]);
  });
});

describe('reads of runs under load', () => {
  it('take one pooled connection per batch, not one per read: 20 reads arriving together use two', async () => {
    const database = openPostgres(inject('databaseUrl'), 4);
    try {
      const t = await newTenant(database.db, 0);
      const stored = await Promise.all(Array.from({ length: 20 }, (_, i) => storedRun(database.db, t.tenantId, `run ${i}`)));
      let acquired = 0;
      database.pool!.on('acquire', () => acquired++);
      const read = await Promise.all(stored.map((run) => getRun(database.db, t.tenantId, run.id)));
      expect(read.map((row) => row?.id)).toEqual(stored.map((run) => run.id));
      // The first read finds the tenant idle and goes at once; the other 19 arrive while it is in flight.
      expect(acquired).toBe(2);
    } finally {
      await database.close();
    }
  });
});
