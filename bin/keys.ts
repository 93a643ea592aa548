// `npm run keys -- create --tenant NAME --kind core|workspace [--label L] [--json]`
// `npm run keys -- create --tenant NAME --kind approver --name "Dana Lee" [--json]` (one per person; the name is required)
// `npm run keys -- list [--tenant NAME] [--json]`
// `npm run keys -- revoke KEY_ID`
// A new key's secret is printed once; only its hash is stored.
import { Command, Option } from 'commander';
import { KEY_KINDS, type KeyKind } from '../domain/api-keys.ts';
import { recordAudit } from '../services/audit.ts';
import { createKey, KeyRefused, listKeys, revokeKey } from '../services/keys.ts';
import { loadConfigOrExit, withCommandDatabase } from '../runtime/boot.ts';

const config = loadConfigOrExit();
const withDb = <T>(fn: Parameters<typeof withCommandDatabase<T>>[2]) => withCommandDatabase(config, 'npm run keys', fn);

const program = new Command('keys').description('Manage API keys').showHelpAfterError();

program
  .command('create')
  .description('mint a key (printed once); the tenant is created on first use')
  .requiredOption('--tenant <name>', 'tenant name')
  .addOption(new Option('--kind <kind>', 'key kind').choices(KEY_KINDS).makeOptionMandatory())
  .option('--label <label>', 'a note to recognise the key by')
  .option('--name <name>', 'approver keys: the person who holds it (required, unique in the tenant), as approvals and receipts name them')
  .option('--json', 'print JSON')
  .action(async (opts: { tenant: string; kind: KeyKind; label?: string; name?: string; json?: boolean }) => {
    const key = await withDb(async (db) => {
      const created = await createKey(db, { tenant: opts.tenant, kind: opts.kind, label: opts.label, name: opts.name });
      await recordAudit(db, {
        tenantId: created.tenantId,
        keyId: null,
        action: 'key.create',
        target: `key:${created.id}`,
        subject: { id: created.id, kind: created.kind, ...(created.name ? { name: created.name } : {}) },
      });
      return created;
    }).catch((err: unknown) => {
      if (!(err instanceof KeyRefused)) throw err;
      console.error(`No key created: ${err.message}.`);
      process.exit(2);
    });
    if (opts.json) {
      console.log(JSON.stringify({ id: key.id, tenant: key.tenant, kind: key.kind, name: key.name, key: key.secret, prefix: key.prefix }));
    } else {
      const holder = key.name ? ` held by ${key.name}` : '';
      console.log(`Created ${key.kind} key ${key.id}${holder} for tenant "${key.tenant}". It is shown only now:\n\n  ${key.secret}\n`);
    }
  });

program
  .command('list')
  .description('list keys (metadata only, never secrets)')
  .option('--tenant <name>', 'only this tenant')
  .option('--json', 'print JSON lines')
  .action(async (opts: { tenant?: string; json?: boolean }) => {
    const keys = await withDb((db) => listKeys(db, { tenant: opts.tenant }));
    for (const k of keys) {
      const row = {
        id: k.id,
        tenant: k.tenant,
        kind: k.kind,
        prefix: k.prefix,
        label: k.label,
        name: k.name,
        created_at: k.createdAt.toISOString(),
        revoked_at: k.revokedAt?.toISOString() ?? null,
      };
      console.log(
        opts.json
          ? JSON.stringify(row)
          : `${row.id}  ${row.tenant}  ${row.kind.padEnd(9)}  ${row.prefix}…  ${row.revoked_at ? `revoked ${row.revoked_at}` : 'active'}  ${row.name ?? row.label ?? ''}`,
      );
    }
    if (!opts.json && keys.length === 0) console.log('no keys');
  });

program
  .command('revoke')
  .description('revoke a key by id; it stops authenticating at once')
  .argument('<key-id>')
  .action(async (keyId: string) => {
    const done = await withDb(async (db) => {
      const [key] = await listKeys(db, {}).then((all) => all.filter((k) => k.id === keyId));
      const revoked = await revokeKey(db, keyId);
      if (revoked && key) await recordAudit(db, { tenantId: key.tenantId, keyId: null, action: 'key.revoke', target: `key:${keyId}`, subject: { id: keyId } });
      return revoked;
    });
    if (!done) {
      console.error(`No active key with id ${keyId}.`);
      process.exitCode = 1;
      return;
    }
    console.log(`Revoked ${keyId}.`);
  });

try {
  await program.parseAsync();
} catch (err) {
  console.error((err as Error).message);
  process.exitCode = 1;
}
