// A quiet install: every dependency's install script is declared in package.json's allowScripts
// (npm 11 blocks undeclared ones and warns about each). None of them is needed here: the model and
// the Temporal binaries come from the project's own postinstall, which npm always runs.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

describe('install scripts', () => {
  it('are all declared, so a fresh install prints no warning about them', () => {
    const out = execFileSync('npm', ['install-scripts', 'ls'], { encoding: 'utf8' });
    expect(out.trim()).toBe('No packages with unreviewed install scripts.');
  });

  it('run none of the dependencies, and the project its own postinstall', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { allowScripts: Record<string, boolean>; scripts: Record<string, string> };
    expect(Object.values(pkg.allowScripts).every((allowed) => allowed === false)).toBe(true);
    expect(pkg.scripts.postinstall).toContain('ensure-embedded-model.sh');
  });
});
