// `npm run deploy -- <command>`: blue-green rollout of a new worker build (docs/operations.md, "Deploys").
//
//   status                     which build is current, which is ramping, and what each build still holds
//   ramp <percent> [--build B] [--wait S]
//                              send <percent> of new runs to B (default: the newest build not current)
//   promote [--build B] [--wait S]
//                              make B current (default: the ramping build, else the newest)
//   drained [--build B] [--wait S]
//                              exit 0 when B (default: every build not current or ramping) has drained;
//                              with --wait, keep asking for up to S seconds
//
// ramp and promote wait up to S seconds (default 30) for B's workers to poll every task queue the current
// build polls, then nudge every run awaiting approval, so it moves to its target build.
// Connects to Temporal as the workers do (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS_*,
// or a temporal.toml profile: config/temporal-profile.ts) and reads WORKER_DEPLOYMENT_NAME as they do.
import { parseArgs } from 'node:util';
import { Connection } from '@temporalio/client';
import { loadConfigOrExit } from '../runtime/boot.ts';
import { temporalConnectOptions } from '../runtime/temporal-connection.ts';
import {
  candidateBuild,
  type DeploymentStatus,
  type DeploymentTarget,
  deploymentStatus,
  isBuildMissingTaskQueues,
  isDrained,
  promoteBuild,
  REGISTRATION_WAIT_MS,
  type RoutingOptions,
  rampBuild,
} from '../runtime/deployments.ts';

const USAGE =
  'usage: npm run deploy -- status | ramp <percent> [--build B] [--wait SECONDS] | promote [--build B] [--wait SECONDS] | drained [--build B] [--wait SECONDS]';

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { build: { type: 'string' }, wait: { type: 'string' }, json: { type: 'boolean', default: false } },
});
const config = loadConfigOrExit();
const temporal = config.temporal.connection;
const { address } = temporal;

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

function printStatus(s: DeploymentStatus): void {
  if (values.json) {
    console.log(JSON.stringify(s));
    return;
  }
  console.log(`deployment ${s.deploymentName}`);
  console.log(`  current  ${s.current ?? '(none)'}`);
  console.log(`  ramping  ${s.ramping ? `${s.ramping.buildId} at ${s.ramping.percent}%` : '(none)'}`);
  for (const b of s.builds) {
    console.log(`  build ${b.buildId.padEnd(20)} ${b.status.padEnd(9)} open executions ${b.openExecutions}, awaiting approval ${b.awaitingApproval}`);
  }
}

const [command, arg] = positionals;
const waitSeconds = values.wait === undefined ? undefined : Number(values.wait);
if (waitSeconds !== undefined && !(Number.isFinite(waitSeconds) && waitSeconds >= 0)) fail(`--wait must be a number of seconds, 0 or more.\n${USAGE}`);
const registrationWaitMs = waitSeconds === undefined ? REGISTRATION_WAIT_MS : waitSeconds * 1000;

/** Ramps or promotes `build`, saying when it waits for the build's workers; a clear refusal if they never poll every queue. */
async function route(build: string, change: (options: RoutingOptions) => Promise<number>): Promise<number> {
  const options: RoutingOptions = {
    registrationWaitMs,
    onWaitingForWorkers: () =>
      console.error(`waiting up to ${registrationWaitMs / 1000} s for ${build}'s workers to poll every task queue the current build polls…`),
  };
  return await change(options).catch((err: unknown) => {
    if (!isBuildMissingTaskQueues(err)) throw err;
    return fail(
      `${build} does not poll every task queue the current build polls (waited ${registrationWaitMs / 1000} s): start its workers, or wait for them to poll and try again. Nothing was changed.`,
    );
  });
}

// A build id goes into visibility queries, as WORKER_BUILD_ID's rule says (config/env.ts).
if (values.build !== undefined && !/^[^:'"\\]+$/.test(values.build)) fail('--build must not contain ":", quotes or backslashes.');
const connection = await Connection.connect({ ...temporalConnectOptions(temporal), connectTimeout: '5 seconds' }).catch((err: Error) =>
  fail(`Temporal is not reachable at ${address}: ${err.message}`),
);
const target: DeploymentTarget = { connection, namespace: temporal.namespace, deploymentName: config.temporal.versioning.deploymentName };
try {
  const status = await deploymentStatus(target).catch((err: Error) => fail(`No worker deployment ${target.deploymentName} at ${address}: ${err.message}`));
  const build = values.build ?? candidateBuild(status);
  if (command === 'status') {
    printStatus(status);
  } else if (command === 'ramp') {
    const percent = Number(arg);
    if (arg === undefined || !Number.isFinite(percent) || percent < 0 || percent > 100) fail(`ramp needs a percent from 0 to 100.\n${USAGE}`);
    if (!build) fail("No build to ramp: start the new build's workers first (they register it).");
    const nudged = await route(build, (options) => rampBuild(target, build, percent, options));
    console.log(`ramping ${build} at ${percent}%; ${nudged} nudge(s) sent to runs awaiting approval`);
  } else if (command === 'promote') {
    if (!build) fail("No build to promote: start the new build's workers first (they register it).");
    const nudged = await route(build, (options) => promoteBuild(target, build, options));
    console.log(`${build} is current; ${nudged} nudge(s) sent to runs awaiting approval`);
  } else if (command === 'drained') {
    const waitMs = (waitSeconds ?? 0) * 1000;
    const deadline = Date.now() + waitMs;
    const old = (s: DeploymentStatus) =>
      values.build ? [values.build] : s.builds.map((b) => b.buildId).filter((b) => b !== s.current && b !== s.ramping?.buildId);
    let latest = status;
    while (!old(latest).every((b) => isDrained(latest, b)) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 2_000));
      latest = await deploymentStatus(target);
    }
    const pending = old(latest).filter((b) => !isDrained(latest, b));
    printStatus(latest);
    if (pending.length > 0) {
      console.log(`not drained: ${pending.join(', ')} (keep its workers running)`);
      process.exitCode = 1;
    } else {
      console.log("drained: the old builds' workers may stop");
    }
  } else {
    fail(USAGE);
  }
} finally {
  await connection.close();
}
