// Fetches context_url: only from allow-listed hosts, only http(s), bounded in
// size and time. Anything else is a 400 naming context_url.
import { errors } from '../../domain/errors.ts';

export interface ContextUrlPolicy {
  allowedHosts: string[];
  maxBytes: number;
  timeoutMs: number;
}

function refuse(message: string): never {
  throw errors.invalidRequest(`context_url ${message}`, 'context_url');
}

export async function fetchContext(raw: string, policy: ContextUrlPolicy, signal: AbortSignal): Promise<string> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    refuse('is not a valid URL.');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') refuse('must use http or https.');
  const host = url.host.toLowerCase();
  if (!policy.allowedHosts.includes(host) && !policy.allowedHosts.includes(url.hostname.toLowerCase())) {
    refuse(`host ${url.hostname} is not on this service's allow-list.`);
  }
  let res: Response;
  try {
    res = await fetch(url, { redirect: 'error', signal: AbortSignal.any([signal, AbortSignal.timeout(policy.timeoutMs)]) });
  } catch {
    if (signal.aborted) throw signal.reason;
    refuse(`could not be fetched within ${policy.timeoutMs} ms.`);
  }
  if (!res.ok) refuse(`answered HTTP ${res.status}.`);
  const declared = Number(res.headers.get('content-length') ?? 0);
  if (declared > policy.maxBytes) refuse(`is larger than ${policy.maxBytes} bytes.`);
  const reader = res.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (reader) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > policy.maxBytes) {
      await reader.cancel();
      refuse(`is larger than ${policy.maxBytes} bytes.`);
    }
    chunks.push(value);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  const isHtml = (res.headers.get('content-type') ?? '').includes('html');
  return (isHtml ? text.replace(/<script[\s\S]*?<\/script>|<style[\s\S]*?<\/style>/gi, ' ').replace(/<[^>]+>/g, ' ') : text).replace(/\s+/g, ' ').trim();
}
