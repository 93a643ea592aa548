// A small HTTP client for tests: every response is checked against the
// service's OpenAPI document before the test sees it.
import { ContractChecker, type Reply } from './contract.ts';

export interface RequestOptions {
  key?: string;
  body?: unknown;
  /** Sent as-is instead of JSON-encoding `body`. */
  rawBody?: string;
  headers?: Record<string, string>;
}

export class ApiClient {
  private constructor(
    readonly baseUrl: string,
    private readonly contract: ContractChecker,
  ) {}

  static async connect(baseUrl: string): Promise<ApiClient> {
    const doc = await (await fetch(`${baseUrl}/openapi.json`)).json();
    return new ApiClient(baseUrl, new ContractChecker(doc));
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.key) headers.authorization = `Bearer ${options.key}`;
    let body: string | undefined = options.rawBody;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(`${this.baseUrl}${path}`, { method, headers, body });
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    const reply: Reply = { status: res.status, headers: res.headers, text, json };
    this.contract.check(method, path, reply);
    return reply;
  }

  get(path: string, options?: RequestOptions) {
    return this.request('GET', path, options);
  }

  post(path: string, body: unknown, options?: RequestOptions) {
    return this.request('POST', path, { ...options, body });
  }
}
