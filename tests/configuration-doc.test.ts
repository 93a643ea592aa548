// docs/configuration.md lists exactly the variables config/env.ts reads (Temporal's connection
// variables through config/temporal-env.ts): none undocumented, none dead.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { envSchema } from '../config/env.ts';
import { TEMPORAL_CONNECTION_VARIABLES } from '../config/temporal-env.ts';

describe('docs/configuration.md', () => {
  it('documents every variable of the config schema, and no other', () => {
    const doc = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');
    // A row's first cell names one variable or several (`A` / `B`).
    const firstCells = [...doc.matchAll(/^\| (`[A-Z][^|]*)\|/gm)].map((m) => m[1]!);
    const documented = firstCells.flatMap((cell) => [...cell.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!));
    expect(new Set(documented).size, 'a variable documented twice').toBe(documented.length);
    expect([...documented].sort()).toEqual([...Object.keys(envSchema.shape), ...TEMPORAL_CONNECTION_VARIABLES].sort());
  });
});
