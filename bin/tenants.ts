// Operator commands for tenants:
//   npm run tenants -- credits grant --tenant NAME --amount N [--note TEXT]
//   npm run tenants -- credits balance --tenant NAME
//   npm run tenants -- webhook set --tenant NAME --url URL   |   webhook clear --tenant NAME
//   npm run tenants -- routing set --tenant NAME --model ALIAS --provider local|upstream
import { Command, InvalidArgumentError, Option } from 'commander';
import { newId } from '../domain/ids.ts';
import { balanceOf, grantCredits } from '../services/ledger.ts';
import { ensureTenant, setWebhookUrl } from '../services/tenants.ts';
import { assertProviderConfigured, setRoute } from '../services/routing.ts';
import { buildProviders, configuredProviders } from '../services/model-layer.ts';
import { MODEL_IDS } from '../domain/models.ts';
import { loadConfigOrExit, withCommandDatabase } from '../runtime/boot.ts';

const config = loadConfigOrExit();
const withDb = <T>(fn: Parameters<typeof withCommandDatabase<T>>[2]) => withCommandDatabase(config, 'npm run tenants', fn);

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('must be a positive whole number of credits');
  return n;
}

function httpUrl(value: string): string {
  try {
    const url = new URL(value);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.toString();
  } catch {}
  throw new InvalidArgumentError('must be an http(s) URL');
}

const program = new Command('tenants').description('Tenant administration').showHelpAfterError();
const credits = program.command('credits').description('credit balance');

credits
  .command('grant')
  .requiredOption('--tenant <name>', 'tenant name (created on first use)')
  .requiredOption('--amount <credits>', 'credits to add', positiveInt)
  .option('--note <text>', 'why')
  .option('--json', 'print JSON')
  .action(async (opts: { tenant: string; amount: number; note?: string; json?: boolean }) => {
    const balance = await withDb(async (db) => {
      const tenant = await ensureTenant(db, opts.tenant);
      await grantCredits(db, { tenantId: tenant.id, amount: opts.amount, entryKey: newId('grant'), note: opts.note });
      return balanceOf(db, tenant.id);
    });
    console.log(opts.json ? JSON.stringify({ tenant: opts.tenant, ...balance }) : `Granted ${opts.amount} credits to "${opts.tenant}". Balance ${balance.balance}, available ${balance.available}.`);
  });

credits
  .command('balance')
  .requiredOption('--tenant <name>', 'tenant name')
  .option('--json', 'print JSON')
  .action(async (opts: { tenant: string; json?: boolean }) => {
    const balance = await withDb(async (db) => balanceOf(db, (await ensureTenant(db, opts.tenant)).id));
    console.log(opts.json ? JSON.stringify({ tenant: opts.tenant, ...balance }) : `"${opts.tenant}": balance ${balance.balance}, held ${balance.held}, available ${balance.available}.`);
  });

const webhook = program.command('webhook').description("where the webhook_delivery tool sends a run's result");
webhook
  .command('set')
  .requiredOption('--tenant <name>', 'tenant name')
  .requiredOption('--url <url>', 'http(s) URL', httpUrl)
  .action(async (opts: { tenant: string; url: string }) => {
    await withDb((db) => setWebhookUrl(db, opts.tenant, opts.url));
    console.log(`Webhook for "${opts.tenant}" set.`);
  });
webhook
  .command('clear')
  .requiredOption('--tenant <name>', 'tenant name')
  .action(async (opts: { tenant: string }) => {
    await withDb((db) => setWebhookUrl(db, opts.tenant, null));
    console.log(`Webhook for "${opts.tenant}" cleared; webhook_delivery is not_configured for it.`);
  });

program
  .command('routing')
  .description('which chat provider serves a model alias for a tenant')
  .command('set')
  .requiredOption('--tenant <name>', 'tenant name')
  .addOption(new Option('--model <alias>', 'model alias').choices(MODEL_IDS).makeOptionMandatory())
  .addOption(new Option('--provider <id>', 'provider').choices(['local', 'upstream']).makeOptionMandatory())
  .action(async (opts: { tenant: string; model: string; provider: string }) => {
    // As POST /v1/routing-policies: a provider this deployment has not configured is refused, nothing is written.
    try {
      assertProviderConfigured(opts.provider, configuredProviders(buildProviders(config.chat.upstream)));
    } catch {
      throw new Error(`Provider "${opts.provider}" is not configured on this deployment (for upstream, set UPSTREAM_BASE_URL); nothing was written.`);
    }
    await withDb(async (db) => setRoute(db, (await ensureTenant(db, opts.tenant)).id, opts.model, opts.provider));
    console.log(`"${opts.tenant}": ${opts.model} -> ${opts.provider}.`);
  });

try {
  await program.parseAsync();
} catch (err) {
  console.error((err as Error).message);
  process.exitCode = 1;
}
