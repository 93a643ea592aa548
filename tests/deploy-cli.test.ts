// `npm run deploy`: the blue-green commands against the real dev server, with two builds of one
// deployment polling one task queue (the workers register them): status, ramp, promote and drained. Then
// a rollback made the Temporal CLI's way (no nudge): the reconciler moves the run awaiting approval to the
// build now current, where its approval completes it. The rollout drill (tests/rollout-drill.test.ts)
// covers what a promotion does to runs mid-flight.
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { status } from '@grpc/grpc-js';
import { Client, Connection, isGrpcServiceError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { RunningWorker } from '../runtime/worker.ts';
import { isTerminal, newTenant, type RunStack, startRunStack, startTestWorker, waitForRun } from './support/run-stack.ts';
import { testDataConverter } from './support/payload-codec.ts';
import { serviceEnv } from './support/service-env.ts';
import { until } from './support/until.ts';

const run = promisify(execFile);
const deployment = `deploy-test-${Date.now()}`;
const buildEnv = (buildId: string) => ({ WORKER_DEPLOYMENT_NAME: deployment, WORKER_BUILD_ID: buildId });
let stack: RunStack;
let green: RunningWorker;
let connection: Connection;

async function deploy(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'bin/deploy.ts', ...args], {
      env: serviceEnv({ WORKER_DEPLOYMENT_NAME: deployment }),
      timeout: 90_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const statusJson = async () => JSON.parse((await deploy('status', '--json')).stdout);

/** `npm run deploy` as a child whose output can be watched while it runs. */
function deployWatched(...args: string[]) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/deploy.ts', ...args], {
    env: serviceEnv({ WORKER_DEPLOYMENT_NAME: deployment }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  child.stdout.setEncoding('utf8').on('data', (d: string) => (output.stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (output.stderr += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { output, exited };
}

/** The task queues `buildId`'s workers poll, as the server knows them: none until a worker's first poll registers the build. */
async function polledQueues(buildId: string): Promise<string[]> {
  try {
    const { workerDeploymentVersionInfo: info } = await connection.workflowService.describeWorkerDeploymentVersion({
      namespace: 'default',
      deploymentVersion: { deploymentName: deployment, buildId },
    });
    return (info?.taskQueueInfos ?? []).map((q) => q.name ?? '');
  } catch (err) {
    if (isGrpcServiceError(err) && err.code === status.NOT_FOUND) return [];
    throw err;
  }
}

beforeAll(async () => {
  // The first build of a deployment becomes current when its worker starts; the second waits beside it.
  stack = await startRunStack(buildEnv('blue'));
  green = await startTestWorker(stack.app.database.db, stack.taskQueue, buildEnv('green'));
  connection = await Connection.connect({ address: inject('temporalAddress') });
});
afterAll(async () => {
  await green.stop();
  await stack.close();
  await connection.close();
});

describe('npm run deploy', () => {
  it('status says which build is current, and lists the new one beside it', async () => {
    const status = await statusJson();
    expect(status.current).toBe('blue');
    expect(status.ramping).toBeNull();
    expect(status.builds.map((b: { buildId: string }) => b.buildId).sort()).toEqual(['blue', 'green']);
    const text = (await deploy('status')).stdout;
    expect(text).toMatch(/current\s+blue/);
    expect(text).toMatch(/build green\s+inactive/);
  });

  it('ramp sends a percent to the newest build; promote makes it current; drained then says the old one may stop', async () => {
    expect((await deploy('ramp', '10')).stdout).toContain('ramping green at 10%');
    expect((await statusJson()).ramping).toEqual({ buildId: 'green', percent: 10 });
    expect((await deploy('promote')).stdout).toContain('green is current');
    const status = await statusJson();
    expect(status.current).toBe('green');
    expect(status.ramping).toBeNull();
    const drained = await deploy('drained', '--wait', '40');
    expect(drained.stdout).toContain('drained');
    expect(drained.code).toBe(0);
  });

  it('a rollback made without the nudge: the reconciler moves the waiting run to the current build, where it completes', async () => {
    const temporal = new Client({ connection, dataConverter: testDataConverter() });
    const t = await newTenant(stack.app.database.db);
    const created = await stack.api.post(
      '/v1/agent-runs',
      { input: 'Summarise the incident timeline and tell the on-call channel that the incident is closed.' },
      { key: t.key },
    );
    const runId = created.json.run_id as string;
    await waitForRun(stack.api, t.key, runId, (r) => r.status === 'awaiting_approval');
    const first = await temporal.workflow.getHandle(runId).describe();
    expect(first.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId).toBe('green');

    // The Temporal CLI's `worker deployment set-current-version`: routing changes, nobody nudges.
    await connection.workflowService.setWorkerDeploymentCurrentVersion({ namespace: 'default', deploymentName: deployment, buildId: 'blue' });
    await until(async () => (await statusJson()).current === 'blue', 'blue current again');
    const reconciled = await until(async () => {
      const outcome = await temporal.workflow.execute('reconcileRunsWorkflow', { taskQueue: stack.taskQueue, workflowId: `reconcile-${Date.now()}` });
      return (outcome as { nudged?: number }).nudged ? outcome : null;
    }, 'the reconciler to nudge the run');
    expect(reconciled).toMatchObject({ nudged: 1 });
    const moved = await until(async () => {
      const d = await temporal.workflow.getHandle(runId).describe();
      return d.runId !== first.runId && d.raw.workflowExecutionInfo?.versioningInfo?.deploymentVersion?.buildId === 'blue' ? d : null;
    }, 'the run to continue as new on blue');
    expect(moved.status.name).toBe('RUNNING');

    expect((await stack.api.post(`/v1/agent-runs/${runId}/approval`, { decision: 'approve' }, { key: t.approverKey })).status).toBe(200);
    const ended = await waitForRun(stack.api, t.key, runId, isTerminal);
    expect(ended.approval.state).toBe('approved');
    expect(ended.receipt).not.toBeNull();
  });

  it('a build whose workers do not yet poll every task queue: ramp waits for them, and refuses once the wait is over', async () => {
    // The current build (blue, after the rollback above) also serves a second queue, where work was just done (the
    // server counts a queue with recent tasks as active); the new build (teal) at first polls only the first queue.
    const current = (await statusJson()).current as string;
    const secondQueue = `${stack.taskQueue}-second`;
    const workers = [await startTestWorker(stack.app.database.db, secondQueue, buildEnv(current))];
    try {
      const temporal = new Client({ connection, dataConverter: testDataConverter() });
      expect(await temporal.workflow.execute('probeWorkflow', { taskQueue: secondQueue, workflowId: `probe-${Date.now()}`, args: [1] })).toBe(1);
      workers.push(await startTestWorker(stack.app.database.db, stack.taskQueue, buildEnv('teal')));
      await until(async () => (await polledQueues('teal')).length >= 2, 'teal polling its queue');

      const refused = await deploy('ramp', '10', '--build', 'teal', '--wait', '1');
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain('teal does not poll every task queue the current build polls (waited 1 s)');
      expect((await statusJson()).ramping).toBeNull();

      // Told to wait, ramp says so; once teal's workers poll the second queue too, it goes through.
      const ramp = deployWatched('ramp', '10', '--build', 'teal', '--wait', '60');
      await until(() => ramp.output.stderr.includes("waiting up to 60 s for teal's workers"), 'ramp to say it waits');
      workers.push(await startTestWorker(stack.app.database.db, secondQueue, buildEnv('teal')));
      expect(await ramp.exited, ramp.output.stderr).toBe(0);
      expect(ramp.output.stdout).toContain('ramping teal at 10%');
      expect((await statusJson()).ramping).toEqual({ buildId: 'teal', percent: 10 });
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
  });

  it('refuses a bad percent with its usage, exit 2', async () => {
    const bad = await deploy('ramp', '120');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('ramp needs a percent from 0 to 100');
    const badWait = await deploy('ramp', '10', '--wait', 'soon');
    expect(badWait.code).toBe(2);
    expect(badWait.stderr).toContain('--wait must be a number of seconds');
  });
});
