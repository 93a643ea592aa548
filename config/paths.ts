// Absolute paths of project files, valid both from source (tsx) and from the
// compiled dist/ tree, found by walking up to the package.json.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findProjectRoot(start: string): string {
  let dir = start;
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`package.json not found above ${start}`);
    dir = parent;
  }
  return dir;
}

export const projectRoot = findProjectRoot(path.dirname(fileURLToPath(import.meta.url)));
export const migrationsFolder = path.join(projectRoot, 'db', 'migrations');
export const ensureTemporalCliScript = path.join(projectRoot, 'scripts', 'ensure-temporal-cli.sh');
/** Where scripts/ensure-embedded-model.sh puts the embedded provider's default model. */
export const defaultEmbeddedModelPath = path.join(projectRoot, '.tools', 'models', 'SmolLM2-135M-Instruct.Q4_1.gguf');
