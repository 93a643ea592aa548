// Public routes over a real socket: health, jobs, trial, docs, the OpenAPI
// document, request ids and the HTTP error classes.
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestOf } from '../domain/digest.ts';
import { ApiClient } from './support/client.ts';
import { startTestApp, type TestApp } from './support/test-app.ts';

let app: TestApp;
let api: ApiClient;

beforeAll(async () => {
  app = await startTestApp();
  api = await ApiClient.connect(app.url);
});
afterAll(() => app.close());

const trial = (recipe_id: string, objective: string, extra: object = {}) => api.post('/v1/trial', { recipe_id, objective, consent_to_process: true, ...extra });

describe('GET /health', () => {
  it('answers the contract shape when the database and Temporal are up', async () => {
    const r = await api.get('/health');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ status: 'ok', service: 'governed-workspace-service' });
  });
  // A healthy /health is answered before Koa (api/routes/health.ts healthProbe): the same answer as the route's.
  it("answers GET with a query and HEAD as the route does, with its headers and the caller's request id", async () => {
    const get = await fetch(`${app.url}/health?probe=1`, { headers: { 'x-request-id': 'probe-7' } });
    const body = await get.text();
    expect(get.status).toBe(200);
    expect(JSON.parse(body)).toEqual({ status: 'ok', service: 'governed-workspace-service' });
    expect(get.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(get.headers.get('content-length')).toBe(String(Buffer.byteLength(body)));
    expect(get.headers.get('x-request-id')).toBe('probe-7');
    const head = await fetch(`${app.url}/health`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe(String(Buffer.byteLength(body)));
    expect(head.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/);
    expect(await head.text()).toBe('');
  });
  it("answers another method on /health with the contract's error object", async () => {
    const r = await fetch(`${app.url}/health`, { method: 'POST' });
    expect(r.status).toBe(405);
    expect((await r.json()).error.request_id).toBe(r.headers.get('x-request-id'));
  });
});

describe('x-request-id', () => {
  it('is generated when the caller sends none', async () => {
    const r = await api.get('/health');
    expect(r.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{24}$/);
  });
  it('echoes a sane caller value, also inside error bodies', async () => {
    const r = await api.get('/v1/nowhere', { headers: { 'x-request-id': 'client-abc.123:X' } });
    expect(r.headers.get('x-request-id')).toBe('client-abc.123:X');
    expect(r.json.error.request_id).toBe('client-abc.123:X');
  });
  it('replaces an unsafe caller value', async () => {
    const r = await api.get('/health', { headers: { 'x-request-id': 'bad value <script>' } });
    expect(r.headers.get('x-request-id')).toMatch(/^req_/);
  });
});

describe('GET /v1/jobs', () => {
  it('lists the three customer jobs and three trial recipes with access paths, without a key', async () => {
    const r = await api.get('/v1/jobs');
    expect(r.status).toBe(200);
    const jobs = r.json.jobs as { id: string; kind: string; access: { path: string; routes: string[] } }[];
    expect(jobs.filter((j) => j.kind === 'customer_job').map((j) => j.id)).toEqual(['do_work', 'research_and_decide', 'continue_with_context']);
    expect(jobs.filter((j) => j.kind === 'trial_recipe').map((j) => j.id)).toEqual(['bounded_work_plan', 'decision_brief_outline', 'research_question_map']);
    for (const job of jobs) expect(job.access.routes.length).toBeGreaterThan(0);
  });
});

describe('POST /v1/trial', () => {
  const migration =
    'Migrate our billing service from MySQL to Postgres without downtime; then update the reporting dashboards, and retire the old cluster by March 31. Budget is $20,000 and the team has 3 engineers.';

  it("bounded_work_plan turns the objective's own actions into steps", async () => {
    const r = await trial('bounded_work_plan', migration);
    expect(r.status).toBe(200);
    const steps = r.json.result.steps as { action: string; done_when: string; focus_terms: string[] }[];
    expect(steps.map((s) => s.action)).toEqual([
      'Migrate our billing service from MySQL to Postgres without downtime',
      'Update the reporting dashboards',
      'Retire the old cluster by March 31',
    ]);
    expect(steps[0]!.done_when).toContain('without downtime');
    expect(steps[2]!.done_when).toContain('by March 31');
    expect(steps[1]!.focus_terms).toContain('reporting dashboards');
    expect(r.json.result.context).toEqual(['Budget is $20,000 and the team has 3 engineers']);
    expect(r.json.result.quantities).toEqual(expect.arrayContaining(['$20,000', 'March 31']));
    expect(r.json.result.out_of_scope[0]).toBe('downtime');
  });

  it('decision_brief_outline finds the options and criteria and leaves the recommendation open', async () => {
    const r = await trial(
      'decision_brief_outline',
      'Should we build our own search index or buy a hosted search service? Cost matters, and the risk of vendor lock-in worries the team. We need to ship by Q3.',
    );
    expect(r.status).toBe(200);
    const brief = r.json.result;
    expect(brief.options.map((o: { label: string }) => o.label)).toEqual(['Build our own search index', 'Buy a hosted search service']);
    expect(brief.criteria.map((c: { id: string }) => c.id)).toEqual(expect.arrayContaining(['cost', 'risk', 'vendor lock-in']));
    expect(brief.evidence_matrix).toHaveLength(brief.options.length * brief.criteria.length);
    expect(brief.recommendation.status).toBe('unresolved');
    expect(r.json.status).toBe('needs_attention');
    expect(r.json.receipt.unresolved.length).toBeGreaterThan(0);
  });

  it("research_question_map builds themes from the objective's key phrases", async () => {
    const r = await trial(
      'research_question_map',
      'Understand why customer churn increased after the pricing change in spring. We suspect onboarding quality dropped too.',
    );
    expect(r.status).toBe(200);
    const map = r.json.result;
    expect(map.central_question).toBe('Why customer churn increased after the pricing change in spring?');
    expect(map.themes.map((t: { term: string }) => t.term)).toEqual(expect.arrayContaining(['customer churn', 'pricing change', 'onboarding quality']));
    expect(map.assumptions_to_test).toEqual(['We suspect onboarding quality dropped too.']);
  });

  it('is deterministic and its receipt digests are recomputable', async () => {
    const objective = 'Plan the office move to Berlin. Pack the archive, and hire movers. Stay under 5000 EUR.';
    const a = await trial('bounded_work_plan', objective);
    const b = await trial('bounded_work_plan', objective);
    expect(a.text).toBe(b.text);
    const { receipt, result } = a.json;
    expect(receipt.digests.result).toBe(digestOf(result));
    expect(receipt.digests.input).toBe(digestOf({ recipe_id: 'bounded_work_plan', objective }));
    expect(receipt.action_boundary).toEqual({ effects_requested: [], effects_approved: [], effects_performed: [] });
    expect(receipt.persisted).toBe(false);
    expect(receipt.source_coverage.sources[0].units_total).toBe(3);
  });

  it('different objectives give different plans, not one template', async () => {
    const a = await trial('bounded_work_plan', 'Write the onboarding guide, then record a demo video.');
    const b = await trial('bounded_work_plan', 'Audit the firewall rules; then rotate the VPN certificates.');
    expect(a.json.result.steps[0].action).toBe('Write the onboarding guide');
    expect(b.json.result.steps[0].action).toBe('Audit the firewall rules');
    expect(a.json.receipt.digests.result).not.toBe(b.json.receipt.digests.result);
  });

  it.each([
    [{ objective: 'x', consent_to_process: true }, 'recipe_id', 'invalid_request'],
    [{ recipe_id: 'poem', objective: 'x', consent_to_process: true }, 'recipe_id', 'invalid_request'],
    [{ recipe_id: 'bounded_work_plan', objective: '   ', consent_to_process: true }, 'objective', 'invalid_request'],
    [{ recipe_id: 'bounded_work_plan', objective: 'y'.repeat(4001), consent_to_process: true }, 'objective', 'invalid_request'],
    [{ recipe_id: 'bounded_work_plan', objective: 'x' }, 'consent_to_process', 'invalid_request'],
    [{ recipe_id: 'bounded_work_plan', objective: 'x', consent_to_process: 'yes' }, 'consent_to_process', 'invalid_request'],
    [{ recipe_id: 'bounded_work_plan', objective: 'x', consent_to_process: false }, 'consent_to_process', 'consent_required'],
    [{ recipe_id: 'bounded_work_plan', objective: 'x', consent_to_process: true, api_key: 'sk-1' }, 'api_key', 'unsupported_parameter'],
  ])('rejects %j with 400 naming %s', async (body, param, code) => {
    const r = await api.post('/v1/trial', body);
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ type: 'invalid_request_error', param, code });
  });

  it('accepts an objective of exactly 4000 characters', async () => {
    const r = await trial('research_question_map', `${'word '.repeat(799)}last`);
    expect(r.status).toBe(200);
  });

  it('answers malformed JSON with 400 invalid_json', async () => {
    const r = await api.request('POST', '/v1/trial', { rawBody: '{"recipe_id": ', headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_json' });
  });

  it('answers a missing body with 400 and a non-JSON body with 415', async () => {
    const missing = await api.request('POST', '/v1/trial');
    expect(missing.status).toBe(400);
    expect(missing.json.error.code).toBe('invalid_request');
    const text = await api.request('POST', '/v1/trial', { rawBody: 'recipe_id=x', headers: { 'content-type': 'text/plain' } });
    expect(text.status).toBe(415);
    expect(text.json.error.code).toBe('unsupported_media_type');
  });

  it('answers an oversized body with 413', async () => {
    const r = await api.post('/v1/trial', { recipe_id: 'bounded_work_plan', objective: 'z'.repeat(1_100_000), consent_to_process: true });
    expect(r.status).toBe(413);
    expect(r.json.error).toMatchObject({ type: 'invalid_request_error', code: 'payload_too_large' });
  });
});

describe('unknown routes and methods', () => {
  it('GET /v1/capabilities is an opaque 404, like any unknown route', async () => {
    const caps = await api.get('/v1/capabilities');
    const other = await api.get('/v1/definitely-not-here');
    expect(caps.status).toBe(404);
    expect(caps.json.error).toMatchObject({ type: 'not_found', code: 'not_found', message: other.json.error.message });
  });
  it('planned surfaces are absent', async () => {
    expect((await api.get('/v1/schedules')).status).toBe(404);
    expect((await api.get('/v1/connectors')).status).toBe(404);
  });
  it('a known path with another method is 405 with Allow', async () => {
    const r = await api.request('DELETE', '/v1/jobs');
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toContain('GET');
    expect(r.json.error.code).toBe('method_not_allowed');
  });
});

describe('GET /openapi.json and /docs', () => {
  it('is a valid OpenAPI 3.1.0 document, version "current", covering every route', async () => {
    const r = await api.get('/openapi.json');
    expect(r.json.openapi).toBe('3.1.0');
    expect(r.json.info.version).toBe('current');
    const result = await new Validator().validate(r.json);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(Object.keys(r.json.paths)).toEqual(expect.arrayContaining(['/health', '/v1/jobs', '/v1/trial', '/v1/models', '/openapi.json', '/docs']));
    expect(r.json.paths['/v1/models'].get.security).toEqual([{ coreKey: [] }]);
    expect(r.json.paths['/v1/trial'].post.responses['429']).toBeDefined();
  });
  it('declares event streams as text (with their data schema published) and 204s without content', async () => {
    const doc = (await api.get('/openapi.json')).json;
    let streams = 0;
    let noContent = 0;
    for (const [path, item] of Object.entries(
      doc.paths as Record<
        string,
        Record<string, { responses: Record<string, { content?: Record<string, { schema?: { type?: string; description?: string } }> }> }>
      >,
    )) {
      for (const op of Object.values(item)) {
        for (const [status, response] of Object.entries(op.responses)) {
          if (status === '204') {
            expect(response.content, `${path} 204`).toBeUndefined();
            noContent++;
          }
          const stream = response.content?.['text/event-stream'];
          if (stream) {
            expect(stream.schema?.type, `${path} ${status}`).toBe('string');
            expect(stream.schema?.description).toMatch(/components\/schemas\/(RunEvent|ChatCompletionChunk)/);
            streams++;
          }
        }
      }
    }
    expect(streams).toBe(4);
    expect(noContent).toBeGreaterThanOrEqual(2);
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['RunEvent', 'ChatCompletionChunk']));
  });

  it('serves Swagger UI and its assets from the local package', async () => {
    const page = await api.get('/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.text).toContain('/openapi.json');
    expect(page.text).not.toMatch(/https?:\/\/(?!localhost)/);
    const js = await fetch(`${app.url}/docs/assets/swagger-ui-bundle.js`);
    expect(js.status).toBe(200);
    expect((await js.text()).length).toBeGreaterThan(100_000);
    expect((await api.get('/docs/assets/..%2Fpackage.json')).status).toBe(404);
  });
});
