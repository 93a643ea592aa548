// Operator commands for tenants:
//   npm run tenants -- credits grant --tenant NAME --amount N [--note TEXT]
//   npm run tenants -- credits balance --tenant NAME
//   npm run tenants -- webhook set --tenant NAME --url URL   |   webhook clear --tenant NAME
//     (set prints the deliveries' new signing secret once: check them with `npx gws listen --secret …`)
//   npm run tenants -- routing set --tenant NAME --model ALIAS --provider local|upstream
//   npm run tenants -- list [--json]
//   npm run tenants -- webhooks add TENANT URL [--events a,b] [--description TEXT] [--json]
//   npm run tenants -- webhooks list TENANT [--json]   |   webhooks remove TENANT ENDPOINT_ID
//   npm run tenants -- approvals set --tenant NAME (--tool TOOL | --effect-class external) --required N [--allowed KEY_ID,…]
//   npm run tenants -- approvals list --tenant NAME [--json]   |   approvals clear --tenant NAME (--tool TOOL | --effect-class external)
import { Command, InvalidArgumentError, Option } from 'commander';
import { newId } from '../domain/ids.ts';
import { balanceOf, grantCredits } from '../services/ledger.ts';
import { ensureTenant, setWebhookUrl } from '../services/tenants.ts';
import { assertProviderConfigured, setRoute } from '../services/routing.ts';
import { buildProviders, configuredProviders } from '../services/model-layer.ts';
import { MODEL_IDS } from '../domain/models.ts';
import { PROVIDERS } from '../domain/pricing.ts';
import { loadConfigOrExit, withCommandDatabase } from '../runtime/boot.ts';
import { tenants as tenantsTable } from '../db/schema.ts';
import { NOTIFICATION_EVENTS, type NotificationEvent } from '../domain/runs/progress.ts';
import { WEBHOOK_DESCRIPTION_MAX_LENGTH } from '../domain/notifications.ts';
import { deliveryUrlProblem, deliveryUrlRules } from '../domain/delivery-url.ts';
import { looksLikeSecret } from '../domain/secrets.ts';
import { isUnstorable } from '../domain/storable-text.ts';
import { checkPolicyTool, clearPolicy, listPolicies, PolicyRefused, setPolicy } from '../services/approval-policies.ts';
import { APPROVERS_MAX, type PolicyScope } from '../domain/runs/approval-policy.ts';
import { createWebhookEndpoint, deleteWebhookEndpoint, listWebhookEndpoints, secretHint, tenantByName } from '../services/webhook-endpoints.ts';

const config = loadConfigOrExit();
const withDb = <T>(fn: Parameters<typeof withCommandDatabase<T>>[2]) => withCommandDatabase(config, 'npm run tenants', fn);

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('must be a positive whole number of credits');
  return n;
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
    console.log(
      opts.json
        ? JSON.stringify({ tenant: opts.tenant, ...balance })
        : `Granted ${opts.amount} credits to "${opts.tenant}". Balance ${balance.balance}, available ${balance.available}.`,
    );
  });

credits
  .command('balance')
  .requiredOption('--tenant <name>', 'tenant name')
  .option('--json', 'print JSON')
  .action(async (opts: { tenant: string; json?: boolean }) => {
    const balance = await withDb(async (db) => balanceOf(db, (await ensureTenant(db, opts.tenant)).id));
    console.log(
      opts.json
        ? JSON.stringify({ tenant: opts.tenant, ...balance })
        : `"${opts.tenant}": balance ${balance.balance}, held ${balance.held}, available ${balance.available}.`,
    );
  });

const webhook = program.command('webhook').description("where the webhook_delivery tool sends a run's result");
webhook
  .command('set')
  .description('set the URL, and a new signing secret (printed once; it replaces any earlier one)')
  .requiredOption('--tenant <name>', 'tenant name')
  .requiredOption('--url <url>', 'https URL (http://localhost, 127.0.0.1 or [::1] too outside production)')
  .action(async (opts: { tenant: string; url: string }) => {
    const { webhookSecret } = await withDb((db) => setWebhookUrl(db, opts.tenant, opts.url, deliveryUrlRules(config.env)));
    console.log(`Webhook for "${opts.tenant}" set; its deliveries are signed (Standard Webhooks headers webhook-id, webhook-timestamp, webhook-signature).`);
    console.log(`Signing secret (shown only now; store it): ${webhookSecret}`);
    console.log(`Receive and check them locally: npx gws listen --secret ${webhookSecret}`);
  });
webhook
  .command('clear')
  .requiredOption('--tenant <name>', 'tenant name')
  .action(async (opts: { tenant: string }) => {
    await withDb((db) => setWebhookUrl(db, opts.tenant, null, deliveryUrlRules(config.env)));
    console.log(`Webhook for "${opts.tenant}" cleared (and its signing secret); webhook_delivery is not_configured for it.`);
  });

program
  .command('routing')
  .description('which chat provider serves a model alias for a tenant')
  .command('set')
  .requiredOption('--tenant <name>', 'tenant name')
  .addOption(new Option('--model <alias>', 'model alias').choices(MODEL_IDS).makeOptionMandatory())
  .addOption(new Option('--provider <id>', 'provider').choices([...PROVIDERS]).makeOptionMandatory())
  .action(async (opts: { tenant: string; model: string; provider: string }) => {
    // As POST /v1/routing-policies: a provider this deployment has not configured is refused, nothing is written.
    try {
      assertProviderConfigured(opts.provider, configuredProviders(buildProviders(config.chat.upstream, config.models.embedded)));
    } catch {
      throw new Error(`Provider "${opts.provider}" is not configured on this deployment (for upstream, set UPSTREAM_BASE_URL); nothing was written.`);
    }
    await withDb(async (db) => setRoute(db, (await ensureTenant(db, opts.tenant)).id, opts.model, opts.provider));
    console.log(`"${opts.tenant}": ${opts.model} -> ${opts.provider}.`);
  });

program
  .command('list')
  .description('every tenant: name, id and credit balance')
  .option('--json', 'print one JSON object per line')
  .action(async (opts: { json?: boolean }) => {
    const rows = await withDb(async (db) => {
      const all = await db.select({ id: tenantsTable.id, name: tenantsTable.name }).from(tenantsTable).orderBy(tenantsTable.name);
      const out: { name: string; id: string; balance: number; held: number; available: number }[] = [];
      for (const t of all) out.push({ name: t.name, id: t.id, ...(await balanceOf(db, t.id)) });
      return out;
    });
    if (opts.json) {
      for (const r of rows) console.log(JSON.stringify(r));
      return;
    }
    if (rows.length === 0) return void console.log('No tenants.');
    const table = [['NAME', 'ID', 'BALANCE', 'HELD', 'AVAILABLE'], ...rows.map((r) => [r.name, r.id, String(r.balance), String(r.held), String(r.available)])];
    const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
    for (const row of table)
      console.log(
        row
          .map((cell, i) => (i >= 2 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
          .join('  ')
          .trimEnd(),
      );
  });

/**
 * As POST /v1/webhook-endpoints: https, or loopback http(s) outside production; never a credential.
 * Checked in the action, not as commander's argument parser, whose error would echo the URL (and any credential in it).
 */
function checkWebhookUrl(value: string): void {
  const problem = deliveryUrlProblem(value, deliveryUrlRules(config.env));
  if (problem) throw new Error(`The URL ${problem}; nothing was changed.`);
  if (looksLikeSecret(value))
    throw new Error('The URL carries a credential (user:password@ or a key in its query); verify deliveries by their signature instead. Nothing was changed.');
}

function eventList(value: string): NotificationEvent[] {
  const events = value
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  const unknown = events.find((e) => !(NOTIFICATION_EVENTS as readonly string[]).includes(e));
  if (unknown !== undefined) throw new InvalidArgumentError(`unknown event type "${unknown}"; choose from ${NOTIFICATION_EVENTS.join(', ')}`);
  if (events.length === 0) throw new InvalidArgumentError('name at least one event type');
  if (new Set(events).size !== events.length) throw new InvalidArgumentError('lists an event type twice');
  return events as NotificationEvent[];
}

/** The description, trimmed, or null; checked in the action so that an error never echoes it. */
function checkedDescription(value: string | undefined): string | null {
  const text = value?.trim() ?? '';
  if (text.length > WEBHOOK_DESCRIPTION_MAX_LENGTH)
    throw new Error(`The description must be at most ${WEBHOOK_DESCRIPTION_MAX_LENGTH} characters; nothing was changed.`);
  if (isUnstorable(text)) throw new Error('The description must be text without NUL or unpaired surrogate characters; nothing was changed.');
  if (looksLikeSecret(text)) throw new Error('The description looks like a credential; nothing was changed.');
  return text || null;
}

/** The tenant named `name`; unlike the other commands, never creates one. */
async function existingTenant(db: Parameters<Parameters<typeof withDb>[0]>[0], name: string) {
  const tenant = await tenantByName(db, name);
  if (!tenant) throw new Error(`No tenant named "${name}"; nothing was changed.`);
  return tenant;
}

const webhooks = program
  .command('webhooks')
  .description('completion notification endpoints (run.awaiting_approval, run.completed, run.failed, run.needs_attention), as /v1/webhook-endpoints');
webhooks
  .command('add')
  .description('register an endpoint; prints its signing secret once')
  .argument('<tenant>', 'tenant name')
  .argument('<url>', 'https URL (http://localhost, 127.0.0.1 or [::1] too outside production)')
  .option('--events <list>', `comma-separated event types (default all: ${NOTIFICATION_EVENTS.join(',')})`, eventList)
  .option('--description <text>', `a note (at most ${WEBHOOK_DESCRIPTION_MAX_LENGTH} characters)`)
  .option('--json', 'print JSON')
  .action(async (tenantName: string, url: string, opts: { events?: NotificationEvent[]; description?: string; json?: boolean }) => {
    checkWebhookUrl(url);
    const note = checkedDescription(opts.description);
    const events = opts.events ?? [...NOTIFICATION_EVENTS];
    const row = await withDb(async (db) => {
      const tenant = await existingTenant(db, tenantName);
      return createWebhookEndpoint(db, { tenantId: tenant.id, keyId: null }, { url, events, description: note });
    });
    if (opts.json) {
      console.log(JSON.stringify({ id: row.id, tenant: tenantName, url: row.url, events: row.events, description: row.description, secret: row.secret }));
      return;
    }
    console.log(`Webhook endpoint ${row.id} for "${tenantName}": ${row.url} (${row.events.join(', ')}).`);
    console.log(`Signing secret (shown only now; store it): ${row.secret}`);
  });
webhooks
  .command('list')
  .description("a tenant's endpoints (secrets shown as a hint)")
  .argument('<tenant>', 'tenant name')
  .option('--json', 'print one JSON object per line')
  .action(async (tenantName: string, opts: { json?: boolean }) => {
    const rows = await withDb(async (db) => listWebhookEndpoints(db, (await existingTenant(db, tenantName)).id));
    for (const r of rows) {
      const view = {
        id: r.id,
        url: r.url,
        events: r.events,
        description: r.description,
        secret_hint: secretHint(r.secret),
        created_at: r.createdAt.toISOString(),
      };
      console.log(
        opts.json
          ? JSON.stringify(view)
          : `${view.id}  ${view.url}  ${view.events.join(',')}  ${view.secret_hint}  ${view.created_at}${view.description ? `  ${view.description}` : ''}`,
      );
    }
    if (rows.length === 0 && !opts.json) console.log(`"${tenantName}" has no webhook endpoints.`);
  });
webhooks
  .command('remove')
  .description('delete an endpoint: nothing more is sent to it')
  .argument('<tenant>', 'tenant name')
  .argument('<endpoint-id>', 'endpoint id (we_...)')
  .action(async (tenantName: string, endpointId: string) => {
    const removed = await withDb(async (db) => deleteWebhookEndpoint(db, { tenantId: (await existingTenant(db, tenantName)).id, keyId: null }, endpointId));
    if (!removed) throw new Error(`"${tenantName}" has no webhook endpoint ${endpointId}; nothing was changed.`);
    console.log(`Webhook endpoint ${endpointId} of "${tenantName}" removed.`);
  });

const approvals = program
  .command('approvals')
  .description('approval policies: how many distinct approver keys each external effect needs (as /v1/approval-policies; every change audited)');

/** The scope the options name: exactly one of --tool and --effect-class. */
function policyScope(opts: { tool?: string; effectClass?: string }): PolicyScope {
  if ((opts.tool === undefined) === (opts.effectClass === undefined)) throw new Error('Name exactly one of --tool and --effect-class; nothing was changed.');
  if (opts.tool !== undefined) return { tool: opts.tool };
  if (opts.effectClass !== 'external') throw new Error('--effect-class takes only "external" (read effects run without approval); nothing was changed.');
  return { effect_class: 'external' };
}

const scopeWords = (scope: PolicyScope) => ('tool' in scope ? scope.tool : 'every external effect');

approvals
  .command('set')
  .description('set the policy of one tool, or of every external effect; runs created from now on take it')
  .requiredOption('--tenant <name>', 'tenant name')
  .option('--tool <tool>', 'a built-in external tool, or <server>__<tool>')
  .option('--effect-class <class>', 'external: every external effect without a tool policy of its own')
  .requiredOption('--required <n>', `distinct approver keys each effect needs (1 to ${APPROVERS_MAX})`, (v) => Number(v))
  .option('--allowed <key-ids>', 'only these approver keys (comma-separated ids) count', (v) =>
    v
      .split(',')
      .map((k) => k.trim())
      .filter(Boolean),
  )
  .action(async (opts: { tenant: string; tool?: string; effectClass?: string; required: number; allowed?: string[] }) => {
    const scope = policyScope(opts);
    const stored = await withDb(async (db) => {
      const tenant = await existingTenant(db, opts.tenant);
      if ('tool' in scope) checkPolicyTool(scope.tool, tenant, config.runs.toolServers.servers);
      return setPolicy(db, tenant.id, { scope, required: opts.required, ...(opts.allowed ? { allowed_approvers: opts.allowed } : {}) }, { cli: true });
    }).catch((err: unknown) => {
      throw err instanceof PolicyRefused ? new Error(`Invalid ${err.param}: ${err.message}; nothing was changed.`) : err;
    });
    const allowed = stored.allowed_approvers ? `, from ${stored.allowed_approvers.join(', ')}` : '';
    console.log(`"${opts.tenant}": ${scopeWords(scope)} needs ${stored.required} distinct approver(s)${allowed}. Runs created from now on take it.`);
  });

approvals
  .command('list')
  .description("a tenant's approval policies")
  .requiredOption('--tenant <name>', 'tenant name')
  .option('--json', 'print one JSON object per line')
  .action(async (opts: { tenant: string; json?: boolean }) => {
    const policies = await withDb(async (db) => listPolicies(db, (await existingTenant(db, opts.tenant)).id));
    for (const p of policies) {
      if (opts.json) console.log(JSON.stringify(p));
      else console.log(`${scopeWords(p.scope)}: ${p.required} approver(s)${p.allowed_approvers ? ` from ${p.allowed_approvers.join(', ')}` : ''}`);
    }
    if (!policies.length && !opts.json) console.log(`"${opts.tenant}" has no approval policies: each external effect needs one approval by any approver key.`);
  });

approvals
  .command('clear')
  .description('remove the policy of one tool, or of every external effect')
  .requiredOption('--tenant <name>', 'tenant name')
  .option('--tool <tool>', 'the tool')
  .option('--effect-class <class>', 'external')
  .action(async (opts: { tenant: string; tool?: string; effectClass?: string }) => {
    const scope = policyScope(opts);
    const removed = await withDb(async (db) => clearPolicy(db, (await existingTenant(db, opts.tenant)).id, scope, { cli: true }));
    if (!removed) throw new Error(`"${opts.tenant}" has no policy for ${scopeWords(scope)}; nothing was changed.`);
    console.log(`"${opts.tenant}": the policy for ${scopeWords(scope)} was removed.`);
  });

try {
  await program.parseAsync();
} catch (err) {
  console.error((err as Error).message);
  process.exitCode = 1;
}
