// The drills' tenants: credits, a core key, an approver key (the only kind that decides), and the tool
// webhook pointing at the drill's receiver.
import { openPostgres } from '../../db/client.ts';
import { createKey } from '../../services/keys.ts';
import { grantCredits } from '../../services/ledger.ts';
import { setWebhookUrl } from '../../services/tenants.ts';
import type { DrillTenant } from './load.ts';

export async function setUpTenants(databaseUrl: string, prefix: string, count: number, toolUrl: string): Promise<DrillTenant[]> {
  const database = openPostgres(databaseUrl);
  try {
    const out: DrillTenant[] = [];
    for (let i = 1; i <= count; i++) {
      const name = `${prefix}-${i}`;
      const key = await createKey(database.db, { tenant: name, kind: 'core' });
      const approver = await createKey(database.db, { tenantId: key.tenantId, kind: 'approver', name: 'Drill Approver' });
      await grantCredits(database.db, { tenantId: key.tenantId, amount: 1_000_000_000, entryKey: `drill-grant-${name}` });
      await setWebhookUrl(database.db, name, toolUrl, { allowLoopback: true });
      out.push({ name, tenantId: key.tenantId, key: key.secret, approverKey: approver.secret });
    }
    return out;
  } finally {
    await database.close();
  }
}
