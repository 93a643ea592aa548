// What every command gets: the typed client, where to write, and how (the display mode).
import type { Writable } from 'node:stream';
import type { GwsClient } from '../../client/index.ts';
import type { DisplayMode } from './display.ts';

export interface CommandContext {
  client: GwsClient;
  mode: DisplayMode;
  out: Writable;
  err: Writable;
  /** Aborted on Ctrl+C. */
  signal: AbortSignal;
}

export const writeLine = (stream: Writable, text: string) => stream.write(`${text}\n`);
export const writeJson = (stream: Writable, value: unknown) => stream.write(`${JSON.stringify(value)}\n`);
