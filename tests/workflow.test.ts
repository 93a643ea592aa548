// Fast workflow tests: the real agent-run workflow on Temporal's time-skipping
// test server, with in-memory fake activities (no Postgres, no dev server, no
// HTTP). Timers and retry backoffs are skipped, so a 24 h approval deadline or
// minutes of database-outage retries take milliseconds of wall time.
import { randomUUID } from 'node:crypto';
import { inspect } from 'node:util';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, type LogEntry, makeTelemetryFilterString, Runtime, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import type { createActivities } from '../activities/index.ts';
import { digestOf } from '../domain/digest.ts';
import { planLocally } from '../domain/planning/local-planner.ts';
import type { Plan, PlanStep } from '../domain/planning/plan.ts';
import type { UsageEstimate } from '../domain/pricing.ts';
import type { StepResult } from '../domain/runs/run-types.ts';
import type { RunTransition } from '../domain/runs/transition.ts';
import { textAnalysisOutput } from '../domain/runs/tool-outputs.ts';
import { verifyRun } from '../domain/runs/verification.ts';
import { verifyToolRun } from '../domain/runs/tool-verification.ts';
import { withAnsweredMessages } from '../domain/planning/delivery-steps.ts';
import { type AgentRunInput, agentRunWorkflow } from '../workflows/agent-run.ts';
import { RUN_BEHAVIOUR } from '../domain/runs/run-input.ts';
import type { ApprovalWait } from '../workflows/run-resume.ts';
import { approvalSignal, approvalUpdate, stateQuery, TOOL_NOT_SENT, WEBHOOK_NOT_SENT } from '../workflows/messages.ts';
import { createTimeSkippingEnv } from './support/time-skipping.ts';
import { bundleServiceWorkflows } from '../runtime/workflow-bundle.ts';
import { until } from './support/until.ts';

type Activities = ReturnType<typeof createActivities>;
/** The activities a local (non-upstream) run calls. */
type RunActivities = Pick<
  Activities,
  | 'recordTransition'
  | 'estimateRun'
  | 'reserveCredits'
  | 'planRun'
  | 'runTool'
  | 'verifyRun'
  | 'rememberRun'
  | 'settleRun'
  | 'releaseCredits'
  | 'notificationTargets'
  | 'deliverNotification'
  | 'recordApprovalAudit'
  | 'revokedApprovers'
  | 'proposePlan'
  | 'writeAnswerPart'
  | 'answeredDeliveries'
  | 'offeredServerTools'
  | 'toolTurn'
  | 'verifyToolRun'
>;
type ActivityName = keyof RunActivities;

const HOUR = 60 * 60 * 1000;
const HOLD = 10;
const DELIVERY_INPUT = 'Compile the outage timeline and tell the team that the outage is over.';
const READ_ONLY_INPUT = 'Summarise the quarterly incident report: two outages, both under an hour.';

interface Hold {
  amount: number;
  status: 'held' | 'released' | 'settled';
}

/** In-memory state the fakes write: what the workflow did, as the real activities would have persisted it. */
interface FakeState {
  transitions: RunTransition[];
  calls: Partial<Record<ActivityName, number>>;
  holds: Map<string, Hold>;
  toolSteps: string[];
  /** Endpoint ids notificationTargets answers; none by default. */
  subscribers: string[];
  /** Notification events delivered to the subscribed endpoints, in order. */
  notified: string[];
  /** Approval audit records the workflow wrote. */
  audits: Parameters<RunActivities['recordApprovalAudit']>[0][];
}

function estimateOf(model: UsageEstimate['model']): UsageEstimate {
  return {
    model,
    provider: 'local',
    basis: { input_tokens: 12, output_tokens_max: 40, tool_calls: {} },
    amounts: { model: HOLD - 2, tools: 2, total: HOLD },
    terms: { unit: 'credit', pricing_version: 'test', credits_per_1k_tokens: 1, tool_credits: {}, method: 'fake', settlement: 'fake' },
  };
}

/** What each tool would record for `step`, digests included, so the real verifyRun checks the outputs. */
function perform(step: PlanStep): StepResult {
  const done = (detail: string, output: unknown, sources: string[]): StepResult => ({
    step_id: step.id,
    tool: step.tool,
    status: 'done',
    detail,
    output,
    scope: step.scope,
    output_digest: digestOf(output),
    sources,
  });
  switch (step.tool) {
    case 'text_analysis': {
      const output = textAnalysisOutput(step.scope);
      return done(`Analysed ${output.sentences} sentence(s).`, output, ['input']);
    }
    case 'memory_recall':
      return done('Recalled 0 memory entries.', { entries: [] }, []);
    case 'webhook_delivery':
      return done('Delivered (HTTP 200).', { delivered: true, status: 200, payload_digest: digestOf('payload') }, []);
    default:
      throw new Error(`no fake for ${step.tool}`);
  }
}

/**
 * Fake activities with the real activities' names and signatures. `override`
 * replaces some of them and may delegate to the defaults (`base`). Every call,
 * retries included, is counted in `state.calls`.
 */
function makeFakes(override: (base: RunActivities, state: FakeState) => Partial<RunActivities> = () => ({})) {
  const state: FakeState = { transitions: [], calls: {}, holds: new Map(), toolSteps: [], subscribers: [], notified: [], audits: [] };
  const base: RunActivities = {
    async recordTransition(t) {
      state.transitions.push(t);
    },
    async estimateRun(input) {
      return estimateOf(input.model);
    },
    async reserveCredits(input) {
      const existing = state.holds.get(input.runId);
      if (existing) return { status: 'held', holdId: 1, amount: existing.amount };
      state.holds.set(input.runId, { amount: input.amount, status: 'held' });
      return { status: 'held', holdId: 1, amount: input.amount };
    },
    async planRun(input) {
      return planLocally(input.input, input.memory);
    },
    async runTool(call) {
      state.toolSteps.push(call.step.id);
      return perform(call.step);
    },
    async verifyRun(v) {
      const { result, receipt } = verifyRun(v);
      return { result, receipt, summary: result.summary };
    },
    async rememberRun() {
      return 'mem_test';
    },
    async settleRun(input) {
      const hold = state.holds.get(input.runId)!;
      const ran = input.results.filter((r) => r.status === 'done');
      const amount = Math.min(ran.length, hold.amount);
      hold.status = 'settled';
      return { input_tokens: 12, output_tokens: 20, tool_calls: {}, amount, charged: amount, released: hold.amount - amount };
    },
    async releaseCredits(input) {
      const hold = state.holds.get(input.runId);
      if (hold && hold.status === 'held') hold.status = 'released';
      return { charged: 0, released: hold?.amount ?? 0 };
    },
    // No subscribers unless a test says so (a subscriber makes the run start a notification child workflow).
    async notificationTargets() {
      return state.subscribers;
    },
    async deliverNotification(input) {
      state.notified.push(input.event);
      return { status: 204 };
    },
    async recordApprovalAudit(input) {
      if (!state.audits.some((a) => a.eventKey === input.eventKey)) state.audits.push(input);
      return { digest: digestOf(input.subject) };
    },
    // No key is ever revoked here (tests/approvers.test.ts revokes real ones).
    async revokedApprovers() {
      return [];
    },
    // Model runs only (an estimate whose provider is a model's): none by default.
    async proposePlan() {
      throw ApplicationFailure.nonRetryable('no model in this test');
    },
    async writeAnswerPart() {
      throw ApplicationFailure.nonRetryable('no model in this test');
    },
    async answeredDeliveries(input) {
      return withAnsweredMessages(input.plan, input.parts);
    },
    // Tool-calling runs (an estimate with protocol tool_calls): no model unless a test scripts one.
    async offeredServerTools() {
      return { serverTools: {}, notShown: [] };
    },
    async toolTurn() {
      throw ApplicationFailure.nonRetryable('no model in this test');
    },
    async verifyToolRun(v) {
      const { result, receipt, outcome } = verifyToolRun(v);
      return { result, receipt, summary: outcome };
    },
  };
  const chosen: RunActivities = { ...base, ...override(base, state) };
  const activities = Object.fromEntries(
    Object.entries(chosen).map(([name, fn]) => [
      name,
      (...args: unknown[]) => {
        state.calls[name as ActivityName] = (state.calls[name as ActivityName] ?? 0) + 1;
        return (fn as (...a: unknown[]) => Promise<unknown>)(...args);
      },
    ]),
  ) as unknown as RunActivities;
  return { activities, state };
}

type Fakes = ReturnType<typeof makeFakes>;

let env: TestWorkflowEnvironment;
let workflowBundle: { code: string };
const logs: LogEntry[] = [];

beforeAll(async () => {
  // Worker logs (every failed activity attempt, the failed workflow task) go to memory, shown only when a test fails.
  Runtime.install({
    logger: new DefaultLogger('WARN', (entry) => void logs.push(entry)),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'WARN' }), forward: {} } },
  });
  // One bundle of the production workflows (workflows/index.ts) for every worker of this file.
  [env, workflowBundle] = await Promise.all([createTimeSkippingEnv(), bundleServiceWorkflows().then((code) => ({ code }))]);
}, 120_000);

afterAll(async () => {
  await env?.teardown();
});

function showLogsOnFailure() {
  const from = logs.length;
  onTestFailed(() => {
    for (const e of logs.slice(from)) console.error(`[${e.level}] ${e.message}`, e.meta ?? '');
  });
}

/** Runs `body` while a worker with `fakes` polls a task queue of its own. */
async function withWorker<T>(fakes: Fakes, body: (taskQueue: string) => Promise<T>): Promise<T> {
  showLogsOnFailure();
  const taskQueue = `wf-test-${randomUUID()}`;
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle, activities: fakes.activities });
  return worker.runUntil(() => body(taskQueue));
}

function runInput(input: string, extra: Partial<AgentRunInput> = {}): AgentRunInput {
  return { runId: `run_${randomUUID()}`, tenantId: 'tenant_test', input, memory: false, approvalTimeoutMs: 24 * HOUR, behaviour: RUN_BEHAVIOUR, ...extra };
}

/**
 * The run's final status from its workflow result. A failed run ends its execution Failed (after
 * compensation) with a content-free RunFailed failure naming the failure code, so the result throws.
 */
async function finalStatus(handle: { result(): Promise<string> }): Promise<string> {
  try {
    return await handle.result();
  } catch (err) {
    const cause = (err as { cause?: { type?: string; message?: string } }).cause;
    if (cause?.type !== 'RunFailed') throw err;
    expect(cause.message).toMatch(/^The run ended failed \([a-z_]+\)\.$/);
    return 'failed';
  }
}

function start(taskQueue: string, run: AgentRunInput) {
  return env.client.workflow.start(agentRunWorkflow, { taskQueue, workflowId: run.runId, args: [run] });
}

/** Starts the run and awaits its result; the test server skips time while the result is awaited. */
async function execute(taskQueue: string, run: AgentRunInput) {
  return finalStatus(await start(taskQueue, run));
}

const awaitingApproval = (fakes: Fakes) => () => fakes.state.transitions.at(-1)?.status === 'awaiting_approval';
const statuses = (fakes: Fakes) => fakes.state.transitions.map((t) => t.status);
const lastPatch = (fakes: Fakes) => fakes.state.transitions.at(-1)!.patch as Record<string, any>;

describe('agent-run workflow (time-skipping test server, fake activities)', () => {
  it('read-only plan: every step runs once, verifies, settles, and needs attention (key phrases perform no analysis)', async () => {
    const fakes = makeFakes();
    const run = runInput(READ_ONLY_INPUT);
    const status = await withWorker(fakes, (tq) => execute(tq, run));

    expect(status).toBe('needs_attention');
    expect(statuses(fakes)).toEqual(['accepted', 'planning', 'planning', 'planning', 'executing', 'executing', 'verifying', 'verifying', 'needs_attention']);
    expect(fakes.state.transitions.map((t) => t.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(fakes.state.toolSteps).toEqual(['step_1']);
    expect(fakes.state.calls).toMatchObject({ estimateRun: 1, reserveCredits: 1, planRun: 1, runTool: 1, verifyRun: 1, settleRun: 1 });
    expect(fakes.state.calls.releaseCredits).toBeUndefined();
    expect(fakes.state.holds.get(run.runId)).toEqual({ amount: HOLD, status: 'settled' });
    expect(lastPatch(fakes)).toMatchObject({ completed: true, failure: { code: 'unresolved_remainder' }, reservation: { amount: HOLD, status: 'settled' } });
  });

  it("an embedded plan runs as planned: the model's answer to each action first, then the approved delivery, carrying it", async () => {
    const order: string[] = [];
    const carried: unknown[] = [];
    const part = { action: 1, status: 'performed' as const, result: 'The database failed over at 09:12 and was back by 09:40.' };
    const delivery: PlanStep = { id: 'step_1', tool: 'webhook_delivery', effect: 'external', purpose: 'Send it', scope: 'result', covers: [2], arguments: {} };
    const fakes = makeFakes((base) => ({
      async estimateRun(input) {
        return { ...(await base.estimateRun(input)), provider: 'embedded' };
      },
      async proposePlan() {
        return { kind: 'planned', plan: { planner: 'model', execution: 'steps', choice: 'ranked', answer: [1], steps: [delivery] } };
      },
      async writeAnswerPart(t) {
        order.push(`answer:${t.action}`);
        return { kind: 'part', part };
      },
      async runTool(call) {
        order.push(call.step.id);
        carried.push(call.answers);
        return base.runTool(call);
      },
    }));
    const run = runInput('Summarise the incident timeline and tell the on-call channel that the incident is closed.');
    const status = await withWorker(fakes, async (tq) => {
      const handle = await start(tq, run);
      await until(awaitingApproval(fakes), 'awaiting_approval');
      expect(order).toEqual([]); // nothing before the approval, not even the answer
      await handle.signal(approvalSignal, { decision: 'approve' });
      return finalStatus(handle);
    });

    expect(status).toBe('completed');
    expect(order).toEqual(['answer:1', 'step_1']);
    expect(carried).toEqual([[part]]);
    const settled = fakes.state.transitions.find((t) => t.patch.receipt)!.patch;
    expect(settled.receipt!.actions).toEqual([
      { n: 1, kind: 'analysis', outcome: 'performed', by: ['answer'], checked: false },
      { n: 2, kind: 'delivery', outcome: 'performed', by: ['step_1'], checked: true },
    ]);
  });

  it('an embedded plan asks no answer from a read that failed: the action stays unresolved, nothing is made up from nothing', async () => {
    const asked: number[] = [];
    const read: PlanStep = { id: 'step_1', tool: 'files__read_text_file', effect: 'read', purpose: 'Read it', scope: 'files__read_text_file', covers: [1] };
    const fakes = makeFakes((base) => ({
      async estimateRun(input) {
        return { ...(await base.estimateRun(input)), provider: 'embedded' };
      },
      async proposePlan() {
        return { kind: 'planned', plan: { planner: 'model', execution: 'steps', choice: 'ranked', answer: [], steps: [read] } };
      },
      async writeAnswerPart(t) {
        asked.push(t.action);
        return { kind: 'part', part: { action: t.action, status: 'performed', result: 'Something the model wrote anyway.' } };
      },
      async runTool(call) {
        return { step_id: call.step.id, tool: call.step.tool, status: 'failed', detail: 'The tool reported an error.', output: null, sources: [] };
      },
    }));
    const status = await withWorker(fakes, (tq) => execute(tq, runInput('What does /tmp/notes.txt say?')));
    expect(status).toBe('needs_attention');
    expect(asked).toEqual([]);
  });

  describe("a delivery of an earlier action's result, on a plan run step by step", () => {
    const INPUT = 'Summarise these notes and post the summary to the team channel: the audit passed, June is next.';
    const SUMMARY = 'The audit passed; the next one is in June.';
    const deliver: PlanStep = {
      id: 'step_1',
      tool: 'webhook_delivery',
      effect: 'external',
      purpose: 'Send it',
      scope: 'result',
      covers: [2],
      arguments: {},
      message_from: 1,
    };
    const steppedFakes = (asked: string[], sent: unknown[], answer: { status: string; result?: string; reason?: string }) =>
      makeFakes((base) => ({
        async estimateRun(input) {
          return { ...(await base.estimateRun(input)), provider: 'embedded' };
        },
        async proposePlan() {
          return { kind: 'planned', plan: { planner: 'model', execution: 'steps', choice: 'ranked', answer: [1], steps: [deliver], gaps: [] } };
        },
        async writeAnswerPart(t) {
          asked.push(`answer:${t.action}`);
          return { kind: 'part', part: { action: t.action, ...answer } } as Awaited<ReturnType<RunActivities['writeAnswerPart']>>;
        },
        async runTool(call) {
          sent.push(call.step.arguments);
          return await base.runTool(call);
        },
      }));

    it('writes the result before the approval wait, shows it as the message, and sends exactly what was approved', async () => {
      const asked: string[] = [];
      const sent: unknown[] = [];
      const fakes = steppedFakes(asked, sent, { status: 'performed', result: SUMMARY });
      const { status, waiting } = await withWorker(fakes, async (tq) => {
        const handle = await start(tq, runInput(INPUT));
        await until(async () => (await handle.query(stateQuery)).status === 'awaiting_approval', 'the run waits');
        const waiting = { asked: [...asked], sent: [...sent] };
        await handle.executeUpdate(approvalUpdate, { args: [{ decision: 'approve' }] });
        return { status: await finalStatus(handle), waiting };
      });
      // The answer was written before the wait; nothing was sent before the approval.
      expect(waiting).toEqual({ asked: ['answer:1'], sent: [] });
      const awaiting = fakes.state.transitions.find((t) => t.status === 'awaiting_approval')!.patch as Record<string, any>;
      expect(awaiting.approval.effects).toEqual([
        expect.objectContaining({
          tool: 'webhook_delivery',
          arguments: { message: SUMMARY },
          args_digest: digestOf({ message: SUMMARY }),
          message_from: { action: 1, request: '' },
        }),
      ]);
      expect(status).toBe('completed');
      expect(asked).toEqual(['answer:1']);
      expect(sent).toEqual([{ message: SUMMARY }]);
    });

    it('continued as new at its wait, it carries what it prepared: no answer is written again, the approved message is sent', async () => {
      const asked: string[] = [];
      const sent: unknown[] = [];
      const fakes = steppedFakes(asked, sent, { status: 'performed', result: 'written again' });
      const run = runInput(INPUT);
      const status = await withWorker(fakes, async (tq) => {
        const deadline = new Date((await env.currentTimeMs()) + 24 * HOUR).toISOString();
        const step = { ...deliver, arguments: { message: SUMMARY }, args_digest: digestOf({ message: SUMMARY }) };
        const wait: ApprovalWait = {
          estimate: { ...estimateOf('svc-workspace'), provider: 'embedded' } as ApprovalWait['estimate'],
          model: 'svc-workspace',
          reservation: { amount: HOLD, status: 'held' },
          plan: { planner: 'model', execution: 'steps', choice: 'ranked', answer: [1], steps: [step], gaps: [] },
          approval: { state: 'pending', effects: [], reason: 'r', deadline, decided_at: null, decision_reason: null },
          pending: [{ step_id: step.id, tool: step.tool }],
          seq: 5,
          signals: 0,
          prepared: { results: [], parts: [{ action: 1, status: 'performed', result: SUMMARY }], stopped: null },
        };
        fakes.state.holds.set(run.runId, { amount: HOLD, status: 'held' });
        const handle = await start(tq, { ...run, resume: wait });
        await until(async () => (await handle.query(stateQuery)).status === 'awaiting_approval', 'the continued run waits');
        await handle.executeUpdate(approvalUpdate, { args: [{ decision: 'approve' }] });
        return await finalStatus(handle);
      });
      expect(status).toBe('completed');
      expect(asked).toEqual([]);
      expect(sent).toEqual([{ message: SUMMARY }]);
    });

    it('asks no approval when the result was not written: nothing to send, nothing sent', async () => {
      const sent: unknown[] = [];
      const fakes = steppedFakes([], sent, { status: 'unresolved', reason: 'the model wrote nothing for it' });
      const status = await withWorker(fakes, (tq) => execute(tq, runInput(INPUT)));
      expect(status).toBe('needs_attention');
      expect(fakes.state.transitions.some((t) => t.status === 'awaiting_approval')).toBe(false);
      expect(sent).toEqual([]);
    });
  });

  it('approval deadline: no decision within 24 h ends needs_attention/approval_expired, releases the hold, runs no tool', async () => {
    const fakes = makeFakes();
    const run = runInput(DELIVERY_INPUT);
    const startedAt = await env.currentTimeMs();
    const wallStart = Date.now();
    const status = await withWorker(fakes, (tq) => execute(tq, run));

    expect(status).toBe('needs_attention');
    expect(statuses(fakes)).toEqual(['accepted', 'planning', 'planning', 'planning', 'awaiting_approval', 'needs_attention']);
    const awaiting = fakes.state.transitions[4]!.patch as Record<string, any>;
    expect(awaiting.approval).toMatchObject({ state: 'pending', effects: [{ step_id: 'step_2', tool: 'webhook_delivery' }] });
    expect(lastPatch(fakes)).toMatchObject({
      approval: { state: 'expired' },
      reservation: { amount: HOLD, status: 'released' },
      failure: { code: 'approval_expired' },
      completed: true,
    });
    expect(fakes.state.calls.releaseCredits).toBe(1);
    expect(fakes.state.calls.runTool).toBeUndefined();
    expect(fakes.state.calls.settleRun).toBeUndefined();
    expect(fakes.state.holds.get(run.runId)!.status).toBe('released');
    // 24 h of workflow time passed, in seconds of wall time.
    expect((await env.currentTimeMs()) - startedAt).toBeGreaterThanOrEqual(24 * HOUR);
    expect(Date.parse(awaiting.approval.deadline) - Date.parse(lastPatch(fakes).approval.decided_at)).toBeLessThanOrEqual(0);
    expect(Date.now() - wallStart).toBeLessThan(10_000);
  });

  it('rejection through the approval update ends failed/approval_rejected, releases the hold, executes nothing', async () => {
    const fakes = makeFakes();
    const run = runInput(DELIVERY_INPUT);
    const { status, outcome } = await withWorker(fakes, async (tq) => {
      const handle = await start(tq, run);
      await until(awaitingApproval(fakes), 'awaiting_approval');
      expect(await handle.query(stateQuery)).toMatchObject({ status: 'awaiting_approval', approval: 'pending', stepsTotal: 2, stepsDone: 0 });
      const outcome = await handle.executeUpdate(approvalUpdate, { args: [{ decision: 'reject', reason: 'not this week' }] });
      return { status: await finalStatus(handle), outcome };
    });

    expect(outcome).toEqual({ decision: 'reject', accepted: true });
    expect(status).toBe('failed');
    expect(statuses(fakes)).toEqual(['accepted', 'planning', 'planning', 'planning', 'awaiting_approval', 'failed']);
    expect(lastPatch(fakes)).toMatchObject({
      approval: { state: 'rejected', decision_reason: 'not this week' },
      reservation: { status: 'released' },
      failure: { code: 'approval_rejected', message: 'Approval rejected: not this week' },
    });
    expect(fakes.state.calls.releaseCredits).toBe(1);
    expect(fakes.state.calls.runTool).toBeUndefined();
    expect(fakes.state.calls.verifyRun).toBeUndefined();
    expect(fakes.state.holds.get(run.runId)!.status).toBe('released');
  });

  it('the sandbox records no stack traces (workflows/sandbox-preload.ts): a waiting run answers the stack trace query without frames', async () => {
    const fakes = makeFakes();
    const stack = await withWorker(fakes, async (tq) => {
      const handle = await start(tq, runInput(DELIVERY_INPUT));
      await until(awaitingApproval(fakes), 'awaiting_approval');
      const stack = await handle.query<string>('__stack_trace');
      await handle.cancel();
      await finalStatus(handle);
      return stack;
    });
    // With frames, each pending promise shows where it waits: "at awaitApproval (…/run-phases.ts:…)".
    expect(stack).not.toMatch(/\bat \S/);
  });

  it('approval through the signal runs both steps, the delivery included, and ends (needs attention: its analysis needs a model)', async () => {
    const fakes = makeFakes();
    const run = runInput(DELIVERY_INPUT);
    const status = await withWorker(fakes, async (tq) => {
      const handle = await start(tq, run);
      await until(awaitingApproval(fakes), 'awaiting_approval');
      await handle.signal(approvalSignal, { decision: 'approve', reason: 'ship it' });
      return finalStatus(handle);
    });

    expect(status).toBe('needs_attention');
    expect(fakes.state.toolSteps).toEqual(['step_1', 'step_2']);
    expect(fakes.state.calls.releaseCredits).toBeUndefined();
    const executing = fakes.state.transitions.find((t) => t.status === 'executing')!.patch as Record<string, any>;
    expect(executing.approval).toMatchObject({ state: 'approved', decision_reason: 'ship it' });
    expect(fakes.state.holds.get(run.runId)!.status).toBe('settled');
  });

  /** The RunStatus values a run's history upserted, in order. */
  async function upsertedStatuses(handle: { fetchHistory(): Promise<{ events?: any[] | null }> }): Promise<string[]> {
    const { events } = await handle.fetchHistory();
    return (events ?? [])
      .map((e) => e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.RunStatus?.data)
      .filter(Boolean)
      .map((data: Uint8Array) => JSON.parse(Buffer.from(data).toString('utf8')));
  }

  it.each([
    // Runs started now: where an operator acts (the wait, the decision, the end), not at each working state.
    [RUN_BEHAVIOUR, ['awaiting_approval', 'executing', 'needs_attention']],
    // Runs started before keep upserting every change, as their histories say.
    [1, ['planning', 'awaiting_approval', 'executing', 'verifying', 'needs_attention']],
  ])('behaviour %s upserts the status search attribute %j', async (behaviour, expected) => {
    const fakes = makeFakes();
    const run = runInput(DELIVERY_INPUT, { behaviour });
    const upserted = await withWorker(fakes, async (tq) => {
      const handle = await start(tq, run);
      await until(awaitingApproval(fakes), 'awaiting_approval');
      await handle.signal(approvalSignal, { decision: 'approve' });
      await finalStatus(handle);
      return upsertedStatuses(handle);
    });
    expect(statuses(fakes)).toEqual(expect.arrayContaining(['planning', 'verifying']));
    expect(upserted).toEqual(expected);
  });

  /** What a run carries when a deploy moves it at its approval wait (workflows/run-resume.ts), `deadline` its approval's. */
  /** Fakes that record the arguments of every delivery the run sends. */
  function recordingDeliveries() {
    const sent: unknown[] = [];
    const fakes = makeFakes((base) => ({
      async runTool(call) {
        if (call.step.tool === 'webhook_delivery') sent.push(call.step.arguments);
        return await base.runTool(call);
      },
    }));
    return { sent, fakes };
  }

  function waitingState(deadline: string): ApprovalWait {
    const plan = planLocally(DELIVERY_INPUT, false);
    const delivery = plan.steps.find((s) => s.effect === 'external')!;
    return {
      estimate: estimateOf('svc-workspace') as ApprovalWait['estimate'],
      model: 'svc-workspace',
      reservation: { amount: HOLD, status: 'held' },
      plan,
      approval: {
        state: 'pending',
        effects: [{ step_id: delivery.id, tool: delivery.tool, why: delivery.purpose }],
        reason: 'The plan has external effects; a person must approve them.',
        deadline,
        decided_at: null,
        decision_reason: null,
      },
      pending: [{ step_id: delivery.id, tool: delivery.tool }],
      seq: 5,
      signals: 2,
    };
  }

  it('a run continued as new at its approval wait starts at that wait: approved there, it runs its plan and settles its hold once; its moves follow on', async () => {
    const fakes = makeFakes();
    const run = runInput(DELIVERY_INPUT);
    const { status, state, wait } = await withWorker(fakes, async (tq) => {
      const wait = waitingState(new Date((await env.currentTimeMs()) + 24 * HOUR).toISOString());
      fakes.state.holds.set(run.runId, { amount: HOLD, status: 'held' });
      const handle = await start(tq, { ...run, resume: wait });
      await until(async () => (await handle.query(stateQuery)).status === 'awaiting_approval', 'the continued run waits');
      const state = await handle.query(stateQuery);
      await handle.executeUpdate(approvalUpdate, { args: [{ decision: 'approve' }] });
      return { status: await finalStatus(handle), state, wait };
    });

    expect(state).toMatchObject({ status: 'awaiting_approval', approval: 'pending', stepsTotal: 2 });
    expect(status).toBe('needs_attention');
    // Nothing before the wait again: no estimate, reserve or plan; one settle of the carried hold.
    expect(fakes.state.calls.estimateRun).toBeUndefined();
    expect(fakes.state.calls.reserveCredits).toBeUndefined();
    expect(fakes.state.calls.planRun).toBeUndefined();
    expect(fakes.state.calls.settleRun).toBe(1);
    expect(fakes.state.toolSteps).toEqual(['step_1', 'step_2']);
    expect(fakes.state.transitions.map((t) => t.seq)[0]).toBe(wait.seq + 1);
    expect(fakes.state.transitions[0]!.patch).toMatchObject({ approval: { state: 'approved', deadline: wait.approval.deadline } });
    expect(fakes.state.holds.get(run.runId)!.status).toBe('settled');
  });

  it('a run continued as new between two required approvals sends what the first approver edited, approved by both', async () => {
    const { sent, fakes } = recordingDeliveries();
    const run = runInput(DELIVERY_INPUT);
    const first = { key_id: 'key_first', name: 'First Approver' };
    const { status } = await withWorker(fakes, async (tq) => {
      const wait = waitingState(new Date((await env.currentTimeMs()) + 24 * HOUR).toISOString());
      const [effect] = wait.approval.effects;
      // As the build before left it: the first approver edited the message and approved; one more is needed.
      const edited = {
        ...effect!,
        required: 2,
        arguments: { message: 'the edited message' },
        args_digest: 'sha256:edited',
        proposed_digest: 'sha256:proposed',
        approved_by: [first],
      };
      const approval = {
        ...wait.approval,
        effects: [edited],
        approvals: [{ by: first, decision: 'approve' as const, reason: null, at: 't', channel: 'api' as const, edited: [effect!.step_id] }],
        approvals_needed: 1,
      };
      fakes.state.holds.set(run.runId, { amount: HOLD, status: 'held' });
      const handle = await start(tq, { ...run, resume: { ...wait, approval } });
      await until(async () => (await handle.query(stateQuery)).status === 'awaiting_approval', 'the continued run waits');
      await handle.executeUpdate(approvalUpdate, {
        args: [
          { decision: 'approve', digests: ['sha256:edited'] },
          { channel: 'api', key_id: 'key_second', name: 'Second Approver' },
        ],
      });
      return { status: await finalStatus(handle) };
    });
    expect(status).toBe('needs_attention');
    expect(sent).toEqual([{ message: 'the edited message' }]);
    const approved = fakes.state.transitions.find((t) => t.patch.approval?.state === 'approved')!.patch.approval!;
    expect(approved.effects[0]!.approved_by!.map((a) => a.name)).toEqual(['First Approver', 'Second Approver']);
  });

  it('a run continued as new onto a build with other rules keeps the actions its plan recorded: verification and the delivery read the plan, not the input again', async () => {
    const { sent, fakes } = recordingDeliveries();
    const run = runInput(DELIVERY_INPUT);
    const { status } = await withWorker(fakes, async (tq) => {
      const wait = waitingState(new Date((await env.currentTimeMs()) + 24 * HOUR).toISOString());
      // As the build that planned it read the input: other words for action 1, another message for action 2.
      const recorded = wait.plan.actions!.map((a) =>
        a.n === 1 ? { ...a, clause: 'Compile the timeline (as the planning build read it)' } : { ...a, message: 'the planned message' },
      );
      const steps = wait.plan.steps.map((s) => (s.tool === 'webhook_delivery' ? { ...s, arguments: { message: 'the planned message' } } : s));
      fakes.state.holds.set(run.runId, { amount: HOLD, status: 'held' });
      const handle = await start(tq, { ...run, resume: { ...wait, plan: { ...wait.plan, actions: recorded, steps } } });
      await until(async () => (await handle.query(stateQuery)).status === 'awaiting_approval', 'the continued run waits');
      await handle.executeUpdate(approvalUpdate, { args: [{ decision: 'approve' }] });
      return { status: await finalStatus(handle) };
    });
    expect(status).toBe('needs_attention');
    expect(sent).toEqual([{ message: 'the planned message' }]);
    const settled = fakes.state.transitions.find((t) => t.patch.receipt)!.patch;
    expect(settled.receipt!.unresolved[0]).toMatch(/^action 1 "Compile the timeline \(as the planning build read it\)": not done/);
  });

  it('a run continued as new keeps its deadline: one that passed meanwhile ends it approval_expired at once and releases the hold', async () => {
    const fakes = makeFakes();
    const run = runInput(DELIVERY_INPUT);
    const { status, wait } = await withWorker(fakes, async (tq) => {
      const wait = waitingState(new Date((await env.currentTimeMs()) - 1_000).toISOString());
      fakes.state.holds.set(run.runId, { amount: HOLD, status: 'held' });
      return { status: await execute(tq, { ...run, resume: wait }), wait };
    });

    expect(status).toBe('needs_attention');
    expect(lastPatch(fakes)).toMatchObject({ approval: { state: 'expired', deadline: wait.approval.deadline }, failure: { code: 'approval_expired' } });
    // Expired at once, not a fresh APPROVAL_TIMEOUT (24 h) later.
    expect(Date.parse(lastPatch(fakes).approval.decided_at) - Date.parse(wait.approval.deadline)).toBeLessThan(60_000);
    expect(fakes.state.calls.runTool).toBeUndefined();
    expect(fakes.state.holds.get(run.runId)!.status).toBe('released');
  });

  it('cancel while awaiting approval ends failed/cancelled, releases the hold, marks the approval cancelled', async () => {
    const fakes = makeFakes();
    const run = runInput(DELIVERY_INPUT);
    const status = await withWorker(fakes, async (tq) => {
      const handle = await start(tq, run);
      await until(awaitingApproval(fakes), 'awaiting_approval');
      await handle.cancel();
      return finalStatus(handle);
    });

    expect(status).toBe('failed');
    expect(statuses(fakes)).toEqual(['accepted', 'planning', 'planning', 'planning', 'awaiting_approval', 'failed']);
    expect(lastPatch(fakes)).toMatchObject({
      approval: { state: 'cancelled' },
      reservation: { status: 'released' },
      failure: { code: 'cancelled' },
      completed: true,
    });
    expect(lastPatch(fakes).approval.decided_at).toEqual(expect.any(String));
    expect(fakes.state.calls.releaseCredits).toBe(1);
    expect(fakes.state.calls.runTool).toBeUndefined();
    expect(fakes.state.holds.get(run.runId)!.status).toBe('released');
  });

  it('a tool that keeps failing is a failed step after 5 attempts; the run still verifies, settles and needs attention', async () => {
    const fakes = makeFakes(() => ({
      async runTool() {
        throw new Error('tool backend unavailable');
      },
    }));
    const run = runInput(READ_ONLY_INPUT);
    const status = await withWorker(fakes, (tq) => execute(tq, run));

    expect(status).toBe('needs_attention');
    expect(fakes.state.calls.runTool).toBe(5); // the tools' retry policy: maximumAttempts 5
    const finished = fakes.state.transitions.find((t) => t.kind === 'run.step_finished')!.patch as Record<string, any>;
    expect(finished.stepResults).toEqual([
      { step_id: 'step_1', tool: 'text_analysis', status: 'failed', detail: 'The tool kept failing after retries.', output: null, sources: [] },
    ]);
    expect(statuses(fakes).slice(-3)).toEqual(['verifying', 'verifying', 'needs_attention']);
    expect(fakes.state.calls).toMatchObject({ verifyRun: 1, settleRun: 1 });
    expect(fakes.state.calls.releaseCredits).toBeUndefined();
    expect(lastPatch(fakes)).toMatchObject({
      failure: { code: 'unresolved_remainder' },
      reservation: { status: 'settled' },
      usage: { charged: 0, released: HOLD },
    });
  });

  it.each([
    ['may have reached the receiver (a 5xx, a worker gone mid-send)', () => new Error('webhook answered 503'), 'outcome_unknown'],
    ['provably sent nothing', () => ApplicationFailure.retryable('The webhook could not be reached; nothing was sent.', WEBHOOK_NOT_SENT), 'failed'],
    // A tool server that was never connected sent nothing either (activities/server-tool.ts): the same rule.
    [
      'provably sent nothing (a tool server not connected)',
      () => ApplicationFailure.retryable('The server was not connected; nothing was sent.', TOOL_NOT_SENT),
      'failed',
    ],
  ] as const)('a delivery that keeps failing and %s ends %s, never claimed not performed when it may have been', async (_what, failure, expected) => {
    const fakes = makeFakes((base) => ({
      async runTool(call) {
        if (call.step.tool === 'webhook_delivery') throw failure();
        return base.runTool(call);
      },
    }));
    const status = await withWorker(fakes, async (tq) => {
      const handle = await start(tq, runInput(DELIVERY_INPUT));
      await until(awaitingApproval(fakes), 'awaiting_approval');
      await handle.signal(approvalSignal, { decision: 'approve' });
      return finalStatus(handle);
    });
    expect(status).toBe('needs_attention');
    const finished = fakes.state.transitions.filter((t) => t.kind === 'run.step_finished').at(-1)!.patch as Record<string, any>;
    expect(finished.stepResults[1]).toMatchObject({ step_id: 'step_2', tool: 'webhook_delivery', status: expected });
  });

  it('a database outage of 30 failed attempts (more than the old limit of 20) is retried through; the run ends as it would have', async () => {
    // reserveCredits is a regular activity, so its retry backoff (200 ms doubling, at most 30 s) is server
    // time, which the test server skips. (recordTransition is a local activity now: its shorter backoffs are
    // slept in the worker in real time, so an outage there cannot be simulated fast.)
    const OUTAGE = 30;
    const attempts: number[] = [];
    const fakes = makeFakes((base) => ({
      async reserveCredits(input) {
        const { attempt } = Context.current().info;
        attempts.push(attempt);
        if (attempt <= OUTAGE) throw ApplicationFailure.retryable(`connect ECONNREFUSED 127.0.0.1:5432 (attempt ${attempt})`, 'DatabaseUnavailable');
        return base.reserveCredits(input);
      },
    }));
    const run = runInput(READ_ONLY_INPUT);
    const startedAt = await env.currentTimeMs();
    const wallStart = Date.now();
    const status = await withWorker(fakes, (tq) => execute(tq, run));
    const wallMs = Date.now() - wallStart;

    expect(status).toBe('needs_attention');
    expect(fakes.state.calls.reserveCredits).toBe(OUTAGE + 1);
    expect(attempts).toEqual(Array.from({ length: OUTAGE + 1 }, (_, i) => i + 1));
    expect(fakes.state.holds.get(run.runId)).toEqual({ amount: HOLD, status: 'settled' });
    expect(fakes.state.calls.releaseCredits).toBeUndefined();
    expect(statuses(fakes)).toEqual(['accepted', 'planning', 'planning', 'planning', 'executing', 'executing', 'verifying', 'verifying', 'needs_attention']);
    // Backoffs of 0.2 + 0.4 + ... + 25.6 s, then 22 of 30 s: about 12 minutes of workflow time, skipped.
    expect((await env.currentTimeMs()) - startedAt).toBeGreaterThan(10 * 60 * 1000);
    expect(wallMs).toBeLessThan(15_000);
  });

  it('a bug in workflow code (plan.steps not an array) fails the workflow task, not the run: it stays running', async () => {
    const fakes = makeFakes(() => ({
      async planRun() {
        return { planner: 'broken', steps: null } as unknown as Plan;
      },
    }));
    const run = runInput(READ_ONLY_INPUT);
    const logsBefore = logs.length;
    const { description, events } = await withWorker(fakes, async (tq) => {
      const handle = await start(tq, run);
      await until(async () => (await handle.fetchHistory()).events?.some((e) => e.workflowTaskFailedEventAttributes) ?? false, 'a failed workflow task');
      // Temporal gives the task to the worker again, and it fails again: still nothing ends the run.
      const failures = () => logs.slice(logsBefore).filter((e) => inspect(e).includes('Cannot read properties of null')).length;
      await until(() => failures() >= 2, 'the workflow task retried and failed again');
      const description = await handle.describe();
      const { events } = await handle.fetchHistory();
      await handle.terminate('test over');
      return { description, events: events ?? [] };
    });

    expect(description.status.name).toBe('RUNNING');
    const failedAt = events.findIndex((e) => e.workflowTaskFailedEventAttributes);
    expect(events[failedAt]!.workflowTaskFailedEventAttributes!.failure!.message).toMatch(/^Cannot read properties of null/);
    // Temporal schedules the task again (a fixed worker would pick it up); the workflow itself did not complete or fail.
    expect(events.slice(failedAt + 1).some((e) => e.workflowTaskScheduledEventAttributes)).toBe(true);
    expect(events.some((e) => e.workflowExecutionCompletedEventAttributes || e.workflowExecutionFailedEventAttributes)).toBe(false);
    expect(statuses(fakes)).toEqual(['accepted', 'planning', 'planning', 'planning']);
    expect(fakes.state.calls.planRun).toBe(1);
    expect(fakes.state.calls.releaseCredits).toBeUndefined();
    expect(fakes.state.calls.runTool).toBeUndefined();
    expect(fakes.state.holds.get(run.runId)!.status).toBe('held');
  });

  /** A gate a fake activity waits at until the test opens it. */
  function gate() {
    let open!: () => void;
    let reached!: () => void;
    const opened = new Promise<void>((r) => (open = r));
    const arrived = new Promise<void>((r) => (reached = r));
    return {
      open,
      arrived,
      async pass() {
        reached();
        await opened;
      },
    };
  }

  /** The failure type an approval Update was refused with (null when it was accepted). */
  async function refusal(handle: Awaited<ReturnType<typeof start>>, updateId: string): Promise<string | null> {
    try {
      await handle.executeUpdate(approvalUpdate, { args: [{ decision: 'approve' }], updateId });
      return null;
    } catch (err) {
      return (err as { cause?: { type?: string } }).cause?.type ?? String(err);
    }
  }

  it('a cancel while an external step runs does not claim that step did nothing', async () => {
    const executing = gate();
    const fakes = makeFakes((base) => ({
      async runTool(call) {
        if (call.step.tool === 'webhook_delivery') await executing.pass();
        return base.runTool(call);
      },
    }));
    const status = await withWorker(fakes, async (tq) => {
      const handle = await start(tq, runInput(DELIVERY_INPUT));
      await until(awaitingApproval(fakes), 'awaiting_approval');
      await handle.signal(approvalSignal, { decision: 'approve' });
      await executing.arrived;
      await handle.cancel();
      const final = await finalStatus(handle);
      executing.open();
      return final;
    });
    expect(status).toBe('failed');
    expect(lastPatch(fakes).failure).toMatchObject({
      code: 'cancelled',
      message: expect.stringContaining('step_2 was running: that step may or may not have taken effect'),
    });
  });

  it('refuses an approval while the run is planning, and another while it is executing: only the decision made while awaiting it counts', async () => {
    const planning = gate();
    const executing = gate();
    const fakes = makeFakes((base) => ({
      async planRun(input) {
        await planning.pass();
        return base.planRun(input);
      },
      async runTool(call) {
        if (call.step.tool === 'webhook_delivery') {
          const beat = setInterval(() => Context.current().heartbeat(), 500);
          try {
            await executing.pass();
          } finally {
            clearInterval(beat);
          }
        }
        return base.runTool(call);
      },
    }));
    const run = runInput(DELIVERY_INPUT);
    const refused = await withWorker(fakes, async (tq) => {
      const handle = await start(tq, run);
      await planning.arrived;
      expect(await handle.query(stateQuery)).toMatchObject({ status: 'planning' });
      const whilePlanning = await refusal(handle, 'early');
      planning.open();
      await until(awaitingApproval(fakes), 'awaiting_approval');
      expect(await refusal(handle, 'real')).toBeNull();
      await executing.arrived;
      expect(await handle.query(stateQuery)).toMatchObject({ status: 'executing' });
      const whileExecuting = await refusal(handle, 'late');
      executing.open();
      await finalStatus(handle);
      return [whilePlanning, whileExecuting];
    });
    expect(refused).toEqual(['NotAwaitingApproval', 'NotAwaitingApproval']);
    expect(fakes.state.audits.map((a) => [a.action, a.eventKey])).toEqual([['run.approval.approve', `run:${run.runId}:real`]]);
  });

  it('every decision is audited by the workflow whatever its channel; a typo in a signal is refused, audited, and changes nothing', async () => {
    const fakes = makeFakes();
    const run = runInput(DELIVERY_INPUT);
    const status = await withWorker(fakes, async (tq) => {
      const handle = await start(tq, run);
      await until(awaitingApproval(fakes), 'awaiting_approval');
      await handle.signal(approvalSignal, { decision: 'approved' } as never);
      await until(() => fakes.state.audits.length === 1, 'the refused signal audited');
      expect(await handle.query(stateQuery)).toMatchObject({ status: 'awaiting_approval', approval: 'pending' });
      // An operator's Update from the Temporal UI or CLI carries no API metadata.
      await handle.executeUpdate(approvalUpdate, { args: [{ decision: 'approve', reason: 'ops ok' }], updateId: 'ui-1' });
      return finalStatus(handle);
    });

    expect(status).toBe('needs_attention');
    expect(fakes.state.audits.map((a) => [a.action, a.channel, a.keyId, a.eventKey])).toEqual([
      ['run.approval.signal_refused', 'temporal:signal', null, `run:${run.runId}:signal:1`],
      ['run.approval.approve', 'temporal:update', null, `run:${run.runId}:ui-1`],
    ]);
    expect(fakes.state.audits[1]!.subject).toEqual({ decision: 'approve', reason: 'ops ok' });
    expect(fakes.state.toolSteps).toEqual(['step_1', 'step_2']);
  });

  it('the API channel audits with the caller key id under the Update id', async () => {
    const fakes = makeFakes();
    const run = runInput(DELIVERY_INPUT);
    await withWorker(fakes, async (tq) => {
      const handle = await start(tq, run);
      await until(awaitingApproval(fakes), 'awaiting_approval');
      await handle.executeUpdate(approvalUpdate, {
        args: [{ decision: 'reject' }, { channel: 'api', key_id: 'key_1', name: 'Dana Lee' }],
        updateId: 'approval:abc',
      });
      return finalStatus(handle);
    });
    expect(fakes.state.audits).toEqual([
      expect.objectContaining({
        action: 'run.approval.reject',
        channel: 'api',
        keyId: 'key_1',
        eventKey: `run:${run.runId}:approval:abc`,
        subject: { decision: 'reject' },
      }),
    ]);
  });

  it('notifications: awaiting_approval, then the terminal state, each to every subscribed endpoint; a failed run ends its execution Failed', async () => {
    const approved = makeFakes();
    approved.state.subscribers.push('we_test');
    const approvedRun = runInput(DELIVERY_INPUT);
    expect(
      await withWorker(approved, async (tq) => {
        const handle = await start(tq, approvedRun);
        await until(awaitingApproval(approved), 'awaiting_approval');
        await handle.executeUpdate(approvalUpdate, { args: [{ decision: 'approve' }] });
        const status = await finalStatus(handle);
        // Deliveries run in child workflows the run abandons when it closes.
        await until(() => approved.state.notified.length === 2, 'both notifications');
        return status;
      }),
    ).toBe('needs_attention');
    expect(approved.state.notified).toEqual(['run.awaiting_approval', 'run.needs_attention']);

    const rejected = makeFakes();
    rejected.state.subscribers.push('we_test');
    const rejectedRun = runInput(DELIVERY_INPUT);
    const failure = await withWorker(rejected, async (tq) => {
      const handle = await start(tq, rejectedRun);
      await until(awaitingApproval(rejected), 'awaiting_approval');
      await handle.executeUpdate(approvalUpdate, { args: [{ decision: 'reject', reason: 'secret customer words' }] });
      const cause = await handle.result().then(
        () => null,
        (err: { cause?: { type?: string; message?: string } }) => err.cause,
      );
      await until(() => rejected.state.notified.length === 2, 'both notifications');
      return cause;
    });
    expect(failure).toMatchObject({ type: 'RunFailed', message: 'The run ended failed (approval_rejected).' });
    expect(rejected.state.notified).toEqual(['run.awaiting_approval', 'run.failed']);
  });

  it('each transition carries content-free progress: waiting for approval, then step n of m, then ended', async () => {
    const fakes = makeFakes();
    const run = runInput(DELIVERY_INPUT);
    await withWorker(fakes, async (tq) => {
      const handle = await start(tq, run);
      await until(awaitingApproval(fakes), 'awaiting_approval');
      await handle.executeUpdate(approvalUpdate, { args: [{ decision: 'approve' }] });
      return finalStatus(handle);
    });
    const progress = fakes.state.transitions.map((t) => t.progress!);
    expect(progress.find((p) => p.state === 'awaiting_approval')).toEqual({
      state: 'awaiting_approval',
      steps_done: 0,
      steps_total: 2,
      current_step: 'approval',
      current_plan_step: null,
      waiting_for: 'approval',
    });
    expect(
      fakes.state.transitions
        .filter((t) => t.kind === 'run.step_finished')
        .map((t) => [t.progress!.steps_done, t.progress!.steps_total, t.progress!.current_plan_step]),
    ).toEqual([
      [1, 2, 'step_1'],
      [2, 2, 'step_2'],
    ]);
    expect(progress.at(-1)).toEqual({
      state: 'needs_attention',
      steps_done: 2,
      steps_total: 2,
      current_step: null,
      current_plan_step: null,
      waiting_for: null,
    });
  });
});

describe('a tool-calling run (time-skipping test server, fake activities)', () => {
  const INPUT = 'Tell Dana the invoice was paid. Then tell finance that Dana knows.';
  const send = (id: string, to: string) => ({
    id,
    name: 'webhook_delivery',
    arguments: { to, message: 'The invoice was paid.' },
    problem: null,
    digest: digestOf({ to, message: 'The invoice was paid.' }),
  });
  const report = {
    parts: [
      { quote: 'Tell Dana the invoice was paid.', asks: 'effect', status: 'performed', calls: ['c1'], answer: '', reason: '' },
      { quote: 'Then tell finance that Dana knows.', asks: 'effect', status: 'performed', calls: ['c2'], answer: '', reason: '' },
    ],
  };
  /** A model that proposes one delivery per turn, then reports; the estimate takes the tool-calling protocol. */
  const toolCallingFakes = () =>
    makeFakes((base) => ({
      async estimateRun(input) {
        const e = await base.estimateRun(input);
        return { ...e, provider: 'upstream', protocol: 'tool_calls', basis: { ...e.basis, max_turns: 6, max_tool_calls: 8, tool_results_tokens_max: 8_192 } };
      },
      async toolTurn(t) {
        const turn = t.transcript.filter((m) => m.role === 'assistant').length;
        if (turn === 2) return { kind: 'report', content: JSON.stringify(report) };
        const call = send(`c${turn + 1}`, turn === 0 ? 'Dana' : 'finance');
        const assistant = {
          role: 'assistant' as const,
          content: '',
          tool_calls: [{ id: call.id, type: 'function' as const, function: { name: call.name, arguments: JSON.stringify(call.arguments) } }],
        };
        return { kind: 'tool_calls', assistant, calls: [call] };
      },
    }));

  it('waits a second round for a call proposed after the first ran, notifies each round apart, and completes', async () => {
    const fakes = toolCallingFakes();
    fakes.state.subscribers = ['we_1'];
    const run = runInput(INPUT);
    const status = await withWorker(fakes, async (tq) => {
      const handle = await start(tq, run);
      await until(awaitingApproval(fakes), 'round 1');
      await handle.executeUpdate(approvalUpdate, { args: [{ decision: 'approve' }] });
      await until(() => fakes.state.transitions.filter((t) => t.status === 'awaiting_approval').length >= 2 && awaitingApproval(fakes)(), 'round 2');
      expect(fakes.state.toolSteps).toEqual(['step_1']);
      await handle.executeUpdate(approvalUpdate, { args: [{ decision: 'approve' }] });
      return finalStatus(handle);
    });
    expect(status).toBe('completed');
    expect(fakes.state.toolSteps).toEqual(['step_1', 'step_2']);
    expect(fakes.state.notified.filter((e) => e === 'run.awaiting_approval')).toHaveLength(2);
    expect(fakes.state.audits.map((a) => a.action)).toEqual(['run.approval.approve', 'run.approval.approve']);
    const moves = statuses(fakes).filter((s, i, all) => s !== all[i - 1]);
    expect(moves).toEqual(['accepted', 'planning', 'awaiting_approval', 'executing', 'awaiting_approval', 'executing', 'verifying', 'completed']);
    expect(fakes.state.holds.get(run.runId)!.status).toBe('settled');
  });

  it('ends needs_attention when the second round expires: the first effect stands, the second never ran, the hold ends', async () => {
    const fakes = toolCallingFakes();
    // A deadline short enough to pass in real time: time skipping is not relied on here.
    const run = runInput(INPUT, { approvalTimeoutMs: 5_000 });
    const status = await withWorker(fakes, async (tq) => {
      const handle = await start(tq, run);
      await until(awaitingApproval(fakes), 'round 1');
      await handle.signal(approvalSignal, { decision: 'approve' });
      return finalStatus(handle);
    });
    expect(status).toBe('needs_attention');
    expect(fakes.state.toolSteps).toEqual(['step_1']);
    expect(lastPatch(fakes)).toMatchObject({ failure: { code: 'approval_expired' } });
    expect(fakes.state.transitions.flatMap((t) => (t.patch.approval ? [t.patch.approval] : [])).at(-1)).toMatchObject({ state: 'expired', round: 2 });
    // What was done before the round expired is verified and charged: round 1's delivery stands in the receipt.
    const receipt = fakes.state.transitions.find((t) => t.patch.receipt)!.patch.receipt!;
    expect(receipt.action_boundary.effects_performed).toEqual(['webhook_delivery:step_1']);
    expect(receipt.action_boundary.effects_not_performed).toEqual(['webhook_delivery:step_2']);
    expect(fakes.state.holds.get(run.runId)!.status).toBe('settled');
  });

  it('continued as new at its second round, it waits there with its loop, runs the approved call once and reports', async () => {
    const run = runInput(INPUT);
    const seen: number[] = [];
    const fakesWithTurns = makeFakes(() => ({
      async toolTurn(t) {
        seen.push(t.transcript.length);
        return { kind: 'report', content: JSON.stringify(report) };
      },
    }));
    const first = send('c1', 'Dana');
    const second = send('c2', 'finance');
    const stepOf = (call: typeof first, n: number, round: number) => ({
      id: `step_${n}`,
      tool: 'webhook_delivery',
      effect: 'external' as const,
      purpose: 'An external call the model proposed',
      scope: 'webhook_delivery',
      arguments: call.arguments,
      args_digest: call.digest,
      call_id: call.id,
      round,
    });
    const assistant = (call: typeof first) => ({
      role: 'assistant' as const,
      content: '',
      tool_calls: [{ id: call.id, type: 'function' as const, function: { name: call.name, arguments: JSON.stringify(call.arguments) } }],
    });
    const done = perform({ id: 'step_1', tool: 'webhook_delivery', effect: 'external', purpose: '', scope: 'webhook_delivery' });
    const plan: Plan = {
      planner: 'model',
      protocol: 'tool_calls',
      serverTools: {},
      steps: [{ ...stepOf(first, 1, 1), decision: 'approved' }, stepOf(second, 2, 2)],
    };
    const status = await withWorker(fakesWithTurns, async (tq) => {
      const now = await env.currentTimeMs();
      const estimate = {
        ...estimateOf('svc-workspace'),
        provider: 'upstream',
        protocol: 'tool_calls',
        basis: { ...estimateOf('svc-workspace').basis, max_turns: 6, max_tool_calls: 8 },
      };
      const wait: ApprovalWait = {
        estimate: estimate as ApprovalWait['estimate'],
        model: 'svc-workspace',
        reservation: { amount: HOLD, status: 'held' },
        plan,
        approval: {
          state: 'pending',
          effects: [{ step_id: 'step_2', tool: 'webhook_delivery', why: '', arguments: second.arguments, args_digest: second.digest }],
          reason: 'round 2',
          deadline: new Date(now + 24 * HOUR).toISOString(),
          round: 2,
          decided_at: null,
          decision_reason: null,
        },
        pending: [{ step_id: 'step_2', tool: 'webhook_delivery' }],
        seq: 12,
        signals: 0,
        toolLoop: {
          transcript: [assistant(first), { role: 'tool', tool_call_id: 'c1', content: '{"status":"done"}' }, assistant(second)],
          results: [done],
          round: 2,
          turn: 2,
          counts: { reads: 0, external: 2, refused: 0 },
          shownLeft: 30_000,
        },
      };
      fakesWithTurns.state.holds.set(run.runId, { amount: HOLD, status: 'held' });
      const handle = await start(tq, { ...run, resume: wait });
      await until(async () => (await handle.query(stateQuery)).status === 'awaiting_approval', 'the continued run waits');
      expect(fakesWithTurns.state.toolSteps).toEqual([]);
      await handle.executeUpdate(approvalUpdate, { args: [{ decision: 'approve' }] });
      return finalStatus(handle);
    });
    expect(status).toBe('completed');
    // The approved call of round 2 ran once; round 1's was not run again.
    expect(fakesWithTurns.state.toolSteps).toEqual(['step_2']);
    // The model's next turn saw the carried transcript and round 2's result.
    expect(seen).toEqual([4]);
    expect(fakesWithTurns.state.transitions[0]!.seq).toBe(13);
  });
});
