// `gws`: the command-line client of the Governed Workspace Service. It talks HTTP to the API at
// GWS_BASE_URL with the key in GWS_API_KEY, through the typed client (client/index.ts).
//
//   gws run "…" [--memory] [--model M] [--watch]     create a run; --watch follows it live
//   gws runs list [--status S] [-q TEXT] [--limit N] [--cursor C]
//   gws runs get RUN [--watch]
//   gws runs export [--status S] [-q TEXT]           NDJSON of every matching run
//   gws approve RUN [--reason …] / gws reject RUN [--reason …]
//   gws chat "…" [--model M] [--system S] [--memory] [--no-stream]
//   gws listen [--port N] [--secret whsec_…]         receive webhook deliveries on 127.0.0.1, check signatures
//   --json (anywhere): machine output
//
// Exit codes (cli/gws/exit-codes.ts): 0 completed / success, 2 needs_attention, 1 failed or an error,
// 64 bad usage or configuration (or a port in use for listen), 130 interrupted while watching.
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import type { RunStatus } from '../../client/index.ts';
import { chatCommand, DEFAULT_CHAT_MODEL } from './chat-command.ts';
import { clientOf, type KeyRole, loadCliConfig } from './config.ts';
import type { CommandContext } from './context.ts';
import { decideCommand } from './decide-command.ts';
import { displayMode } from './display.ts';
import { CliError, unreachable } from './errors.ts';
import { EXIT } from './exit-codes.ts';
import { DEFAULT_LISTEN_PORT, listenCommand, portNumber, WEBHOOK_SECRET_ENV } from './listen-command.ts';
import { runCommand } from './run-command.ts';
import { exportRuns, getRunCommand, listRuns } from './runs-command.ts';

const RUN_STATES = [
  'accepted',
  'planning',
  'awaiting_approval',
  'executing',
  'verifying',
  'completed',
  'failed',
  'needs_attention',
] as const satisfies readonly RunStatus[];

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

export async function main(argv: string[]): Promise<number> {
  const controller = new AbortController();
  const onInterrupt = () => controller.abort(new CliError('interrupted', EXIT.interrupted));
  process.once('SIGINT', onInterrupt);
  let exitCode: number = EXIT.ok;
  let baseUrl = '';

  const program = new Command('gws')
    .description('Command-line client of the Governed Workspace Service (GWS_BASE_URL, GWS_API_KEY, GWS_APPROVER_KEY).')
    .option('--json', "machine output: the API's JSON (one object per line while watching)")
    .showHelpAfterError()
    .exitOverride()
    .addHelpText(
      'after',
      `\nEnvironment:\n  GWS_BASE_URL        the API (default http://127.0.0.1:8080)\n  GWS_API_KEY         a core key (gws_core_…): run, runs, chat\n  GWS_APPROVER_KEY    your approver key (gws_apv_…): approve, reject\n  ${WEBHOOK_SECRET_ENV}  the signing secret gws listen checks deliveries with\n\nExit codes: 0 completed or success, 2 needs_attention, 1 failed or error, 64 usage or configuration, 130 interrupted.`,
    );

  /** Wraps an action: the context from the environment, and its exit code. */
  const action =
    <A extends unknown[]>(fn: (ctx: CommandContext, ...args: A) => Promise<number>, role: KeyRole = 'core') =>
    async (...args: A) => {
      const config = loadCliConfig(process.env, role);
      baseUrl = config.baseUrl;
      const ctx: CommandContext = {
        client: clientOf(config),
        mode: displayMode(Boolean(program.opts().json)),
        out: process.stdout,
        err: process.stderr,
        signal: controller.signal,
      };
      exitCode = await fn(ctx, ...args);
    };

  const statusOption = () => new Option('--status <state>', 'only runs in this state').choices(RUN_STATES);

  program
    .command('run')
    .description('create a durable run; with --watch, follow it live until it ends (exit 0 completed, 2 needs_attention, 1 failed)')
    .argument('<input>', 'the work to perform')
    .option('--memory', 'let the run recall from and write to your memory store')
    .option('--model <id>', 'model alias (default svc-workspace)')
    .option('--watch', 'follow the run until it ends')
    .option('--idempotency-key <key>', 'creation key (default: a new one per invocation)')
    .action(action((ctx, input: string, opts: { memory?: boolean; model?: string; watch?: boolean; idempotencyKey?: string }) => runCommand(ctx, input, opts)));

  const runs = program.command('runs').description('your run history');
  runs
    .command('list')
    .description('one page of runs, newest first (tab-separated: id, state, model, created)')
    .addOption(statusOption())
    .option('-q, --query <text>', 'text contained in the run input')
    .option('--limit <n>', 'runs per page (1 to 100)', positiveInt)
    .option('--cursor <cursor>', 'the next page, as printed by the previous one')
    .option('--created-after <time>', 'ISO 8601 date-time')
    .option('--created-before <time>', 'ISO 8601 date-time')
    .action(action((ctx, opts: Parameters<typeof listRuns>[1]) => listRuns(ctx, opts)));
  runs
    .command('get')
    .description('a run with its state and receipt; with --watch, follow it until it ends')
    .argument('<run>', 'run id')
    .option('--watch', 'follow the run until it ends (exit 0 completed, 2 needs_attention, 1 failed)')
    .action(action((ctx, runId: string, opts: { watch?: boolean }) => getRunCommand(ctx, runId, opts)));
  runs
    .command('export')
    .description('every matching run as NDJSON (one AgentRun per line)')
    .addOption(statusOption())
    .option('-q, --query <text>', 'text contained in the run input')
    .option('--created-after <time>', 'ISO 8601 date-time')
    .option('--created-before <time>', 'ISO 8601 date-time')
    .action(action((ctx, opts: Parameters<typeof exportRuns>[1]) => exportRuns(ctx, opts)));

  for (const decision of ['approve', 'reject'] as const) {
    program
      .command(decision)
      .description(`${decision} the external effects a run waits for, as the approver whose key is GWS_APPROVER_KEY`)
      .argument('<run>', 'run id')
      .option('--reason <text>', 'why (kept with the decision and its audit event)')
      .action(action((ctx, runId: string, opts: { reason?: string }) => decideCommand(ctx, decision, runId, opts), 'approver'));
  }

  program
    .command('chat')
    .description('a chat completion; the answer streams as it is written')
    .argument('<prompt>', 'your message')
    .option('--model <id>', 'model alias', DEFAULT_CHAT_MODEL)
    .option('--system <text>', 'a system message before yours')
    .option('--memory', 'recall from your memory store')
    .option('--no-stream', 'wait for the whole answer')
    .action(action((ctx, prompt: string, opts: { model: string; system?: string; memory?: boolean; stream: boolean }) => chatCommand(ctx, prompt, opts)));

  // Needs no API key: it talks to no API, it receives what the service sends.
  program
    .command('listen')
    .description(
      'receive webhook deliveries on 127.0.0.1 (any path) and print them, checking their signatures with the secret (exit 0 on Ctrl+C, 64 if the port is in use)',
    )
    .option('--port <n>', 'port on 127.0.0.1', portNumber, DEFAULT_LISTEN_PORT)
    .addOption(
      new Option('--secret <whsec>', 'signing secret from `npm run tenants -- webhook set`; a bad or missing signature is answered 400').env(
        WEBHOOK_SECRET_ENV,
      ),
    )
    .action(async (opts: { port: number; secret?: string }) => {
      const mode = displayMode(Boolean(program.opts().json));
      exitCode = await listenCommand({ mode, out: process.stdout, err: process.stderr, signal: controller.signal }, opts);
    });

  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander printed the message (or the help) already.
      return err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    const failure =
      err instanceof CliError
        ? err
        : err instanceof TypeError && baseUrl
          ? unreachable(baseUrl, err)
          : new CliError(err instanceof Error ? err.message : String(err));
    process.stderr.write(`gws: ${failure.message}\n`);
    return failure.exitCode;
  } finally {
    process.removeListener('SIGINT', onInterrupt);
  }
}
