// Checks every response a test receives against the service's own
// /openapi.json: the status must be documented for that operation, every
// header the document marks required for that status must be on the response,
// and the JSON body must validate against its schema (JSON Schema 2020-12, via Ajv).
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';

type DocResponse = { content?: Record<string, { schema?: unknown }>; headers?: Record<string, { required?: boolean }> };
type Doc = { paths: Record<string, Record<string, { responses: Record<string, DocResponse> }>> };

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  // `any`: tests read arbitrary JSON
  json: any;
}

/** Headers the contract defines, checked in both directions. */
const CONTRACT_HEADERS = ['x-request-id', 'ratelimit', 'ratelimit-policy', 'retry-after', 'x-should-retry'];

export class ContractChecker {
  private readonly ajv: InstanceType<typeof Ajv2020.default>;
  private readonly validators = new Map<string, ReturnType<InstanceType<typeof Ajv2020.default>['compile']>>();
  private readonly routes: { method: string; template: string; pattern: RegExp }[];
  readonly checked: string[] = [];

  constructor(private readonly doc: Doc) {
    this.ajv = new Ajv2020.default({ strict: false, allErrors: true });
    addFormats.default(this.ajv);
    this.ajv.addSchema(doc as object, 'openapi');
    // A static path wins over a template that also matches it (/v1/agent-runs/events over /v1/agent-runs/{run_id}), as in the router.
    const params = (template: string) => template.split('{').length;
    this.routes = Object.entries(doc.paths)
      .sort(([a], [b]) => params(a) - params(b))
      .flatMap(([template, item]) =>
        Object.keys(item).map((method) => ({
          method,
          template,
          pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
        })),
      );
  }

  private validator(pointer: string) {
    let v = this.validators.get(pointer);
    if (!v) {
      v = this.ajv.compile({ $ref: `openapi#${pointer}` });
      this.validators.set(pointer, v);
    }
    return v;
  }

  check(method: string, path: string, reply: Reply): void {
    const pathname = new URL(path, 'http://x').pathname;
    const route = this.routes.find((r) => r.method === method.toLowerCase() && r.pattern.test(pathname));
    const isJson = (reply.headers.get('content-type') ?? '').includes('application/json');
    let pointer: string;
    if (!route) {
      expect(reply.status, `${method} ${pathname} is undocumented, so it must answer an error`).toBeGreaterThanOrEqual(400);
      pointer = '/components/schemas/ErrorObject';
    } else {
      const escaped = route.template.replace(/~/g, '~0').replace(/\//g, '~1');
      const responses = this.doc.paths[route.template]![route.method]!.responses;
      expect(Object.keys(responses), `${method} ${route.template} documents status ${reply.status}`).toContain(String(reply.status));
      const documented = responses[String(reply.status)]?.headers ?? {};
      for (const [name, header] of Object.entries(documented)) {
        if (header.required) expect(reply.headers.get(name), `${method} ${route.template} ${reply.status} sends the required header ${name}`).not.toBeNull();
      }
      // And the other way: the contract's own headers are sent only where the document lists them.
      const listed = new Set(Object.keys(documented).map((h) => h.toLowerCase()));
      for (const name of CONTRACT_HEADERS) {
        if (reply.headers.has(name)) expect(listed.has(name), `${method} ${route.template} ${reply.status} documents the header ${name} it sends`).toBe(true);
      }
      if (!isJson || !responses[String(reply.status)]?.content?.['application/json']?.schema) return;
      pointer = `/paths/${escaped}/${route.method}/responses/${reply.status}/content/application~1json/schema`;
    }
    expect(isJson, `${method} ${pathname} answers JSON`).toBe(true);
    const validate = this.validator(pointer);
    const ok = validate(reply.json);
    expect(ok, `${method} ${pathname} ${reply.status} body matches the OpenAPI document: ${this.ajv.errorsText(validate.errors)}`).toBe(true);
    if (reply.status >= 400) expect(reply.json.error.request_id).toBe(reply.headers.get('x-request-id'));
    this.checked.push(`${method} ${route?.template ?? pathname} ${reply.status}`);
  }
}
