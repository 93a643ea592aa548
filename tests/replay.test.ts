// Determinism guard: recorded histories of real runs must replay against the
// current workflow code. A change that would break runs already in flight
// fails here. Re-record on purpose with scripts/record-histories.ts.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';

const dir = path.join(import.meta.dirname, 'fixtures');
const files = readdirSync(dir).filter((f) => f.endsWith('.history.json'));

describe('workflow replay', () => {
  it('has recorded histories to replay', () => {
    expect(files.sort()).toEqual(['approved-with-memory.history.json', 'cancelled.history.json', 'read-only.history.json', 'upstream-agent-loop.history.json']);
  });

  it.each(files)('%s replays without nondeterminism', async (file) => {
    const history = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
    await expect(
      Worker.runReplayHistory({ workflowBundle: { codePath: inject('workflowBundlePath') } }, history, `replay-${file}`),
    ).resolves.toBeUndefined();
  });
});
