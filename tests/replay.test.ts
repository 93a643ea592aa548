// Determinism guard: every recorded history (tests/fixtures/<version>-<path>.history.json)
// must replay against the current workflow code, so a change that would break runs
// already in flight fails here. Histories are append-only: older versions stay, and the
// current version must cover every path a run can take. Record a new version with
// scripts/record-histories.ts after a change guarded by patched(). Replay uses the service's
// payload codec: histories recorded before it are plaintext and pass through it; later ones
// are encrypted with the fixtures' key.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';
import { payloadKeyOf } from '../config/env.ts';
import { EncryptionCodec, serviceDataConverter } from '../runtime/payload-codec.ts';
import { tracedBundlePath, workflowBundleFor } from '../runtime/temporal-tracing.ts';
import { FIXTURE_PAYLOAD_KEY, HISTORY_PATHS, HISTORY_VERSION } from './support/history-paths.ts';

const fixtureCodec = new EncryptionCodec({ current: payloadKeyOf(FIXTURE_PAYLOAD_KEY.id, Buffer.from(FIXTURE_PAYLOAD_KEY.base64, 'base64')), previous: [] });

const dir = path.join(import.meta.dirname, 'fixtures');
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.history.json'))
  .sort();

describe('workflow replay', () => {
  it(`has a ${HISTORY_VERSION} history for every path, and keeps the older versions`, () => {
    const current = files.filter((f) => f.startsWith(`${HISTORY_VERSION}-`)).map((f) => f.slice(HISTORY_VERSION.length + 1, -'.history.json'.length));
    expect(current.sort()).toEqual([...HISTORY_PATHS].sort());
    expect(files.filter((f) => f.startsWith('v1-'))).toEqual([
      'v1-approved-with-memory.history.json',
      'v1-cancelled.history.json',
      'v1-read-only.history.json',
      'v1-upstream-agent-loop.history.json',
    ]);
    expect(files.filter((f) => f.startsWith('v2-'))).toHaveLength(9);
    for (const v of ['v3', 'v4', 'v5', 'v6', 'v7']) expect(files.filter((f) => f.startsWith(`${v}-`))).toHaveLength(10);
  });

  // Both bundles serve one build (runtime/temporal-tracing.ts): a run started with tracing on or off replays on either.
  const bundles = { untraced: () => inject('workflowBundlePath'), traced: () => tracedBundlePath(inject('workflowBundlePath')) };
  it.each(files.flatMap((file) => (['untraced', 'traced'] as const).map((variant) => [file, variant] as const)))(
    '%s replays without nondeterminism on the %s bundle',
    async (file, variant) => {
      const history = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
      await expect(
        Worker.runReplayHistory(
          { workflowBundle: { codePath: bundles[variant]() }, dataConverter: serviceDataConverter(fixtureCodec) },
          history,
          `replay-${file}`,
        ),
      ).resolves.toBeUndefined();
    },
  );

  // A run started by an API on newer code (its input says a newer behaviour) on a worker still on the
  // code before, then replayed on this code: what the worker recorded decides. v5: the worker asked
  // the patch and recorded its marker, so the replay asks it too (workflows/run-context.ts); v6: the
  // worker upserted the status at every change.
  it.each([
    ['v5-read-only.history.json', undefined, 1],
    ['v6-read-only.history.json', 1, 2],
  ])('replays %s whose input says behaviour %s → %s (started by a newer API on the worker before)', async (file, was, now) => {
    const history = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
    const started = history.events[0].workflowExecutionStartedEventAttributes.input.payloads;
    const fromJson = (p: { metadata: Record<string, string>; data: string }) => ({
      metadata: Object.fromEntries(Object.entries(p.metadata).map(([k, v]) => [k, Buffer.from(v, 'base64')])),
      data: Buffer.from(p.data, 'base64'),
    });
    const [plain] = await fixtureCodec.decode([fromJson(started[0])]);
    const input = JSON.parse(Buffer.from(plain!.data!).toString('utf8'));
    expect(input.behaviour).toBe(was);
    const [sealed] = await fixtureCodec.encode([{ ...plain!, data: Buffer.from(JSON.stringify({ ...input, behaviour: now })) }]);
    started[0] = {
      metadata: Object.fromEntries(Object.entries(sealed!.metadata!).map(([k, v]) => [k, Buffer.from(v!).toString('base64')])),
      data: Buffer.from(sealed!.data!).toString('base64'),
    };
    await expect(
      Worker.runReplayHistory(
        { workflowBundle: { codePath: inject('workflowBundlePath') }, dataConverter: serviceDataConverter(fixtureCodec) },
        history,
        'replay-mixed',
      ),
    ).resolves.toBeUndefined();
  });

  it('bundles the OpenTelemetry workflow interceptor into the traced variant only', () => {
    const marker = 'OpenTelemetryInboundInterceptor';
    expect(readFileSync(inject('workflowBundlePath'), 'utf8')).not.toContain(marker);
    expect(readFileSync(tracedBundlePath(inject('workflowBundlePath')), 'utf8')).toContain(marker);
    expect(workflowBundleFor('/b/workflow-bundle.js', false)).toBe('/b/workflow-bundle.js');
    expect(workflowBundleFor('/b/workflow-bundle.js', true)).toBe('/b/workflow-bundle.traced.js');
  });
});
