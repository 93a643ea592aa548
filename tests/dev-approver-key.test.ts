// The dev tenant's approver key (issue 64), on the embedded database `npm start` uses: the first start
// creates a core, a workspace and an approver key; a dev tenant from before approver keys gets its
// approver key at its next start, once; a revoked one is not replaced behind the operator's back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openPglite } from '../db/client.ts';
import { createKey, DEV_APPROVER_NAME, DEV_TENANT, ensureDevKeys, listKeys, revokeKey } from '../services/keys.ts';

let database: Database;
beforeAll(async () => {
  database = openPglite('memory');
  await database.migrate();
});
afterAll(async () => {
  await database?.close();
});

describe('ensureDevKeys', () => {
  it('adds the approver key to a dev tenant that had none, once, and does not replace a revoked one', async () => {
    const { db } = database;
    // A dev tenant as a start before approver keys left it.
    await createKey(db, { tenant: DEV_TENANT, kind: 'core', label: 'dev (first start)' });
    await createKey(db, { tenant: DEV_TENANT, kind: 'workspace', label: 'dev (first start)' });

    const added = await ensureDevKeys(db, 0);
    expect(added?.map((k) => [k.kind, k.name])).toEqual([['approver', DEV_APPROVER_NAME]]);
    expect(added?.[0]?.secret).toMatch(/^gws_apv_[A-Za-z0-9_-]{43}$/);
    expect(await ensureDevKeys(db, 0)).toBeNull();

    await revokeKey(db, added![0]!.id);
    expect(await ensureDevKeys(db, 0)).toBeNull();
    expect((await listKeys(db, { tenant: DEV_TENANT, kind: 'approver' })).map((k) => k.revokedAt !== null)).toEqual([true]);
  });
});
