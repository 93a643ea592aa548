// How a watched run is shown. Three forms, chosen once per command:
// - a terminal (stdout is a TTY): a live ora spinner with the state and step, a persisted line per
//   state passed, the effects an approval waits for, and the summary;
// - plain lines when stdout is not a terminal (a pipe, a file, CI): one line per event, no escape codes;
// - --json: one JSON object per line (NDJSON): each event as the stream sent it, then the result.
import type { Writable } from 'node:stream';
import ora, { type Ora } from 'ora';
import type { AgentRun, RunEvent } from '../../client/index.ts';
import { exitCodeOfState } from './exit-codes.ts';
import { approvalLines, describeProgress, describeRun, gwsCommand, summaryLines } from './format.ts';

export interface RunDisplay {
  /** The run as first read (after creating it, or before following it). */
  start(run: AgentRun): void;
  /** An event of the run's stream (or a change polling saw). */
  event(event: RunEvent): void;
  /** The run waits for approval: what it waits for, and how to decide. */
  approval(run: AgentRun): void;
  /** A note about the watch itself (reconnecting); not about the run. */
  notice(text: string): void;
  /** The run ended: its final state and summary. */
  finish(run: AgentRun): void;
  /** Stop showing anything live (interrupt, error). */
  abort(): void;
}

export type DisplayMode = 'tty' | 'plain' | 'json';

export function displayMode(json: boolean, stream: { isTTY?: boolean } = process.stdout): DisplayMode {
  if (json) return 'json';
  return stream.isTTY ? 'tty' : 'plain';
}

export function createDisplay(mode: DisplayMode, out: Writable = process.stdout, err: Writable = process.stderr): RunDisplay {
  if (mode === 'json') return new JsonDisplay(out);
  if (mode === 'plain') return new PlainDisplay(out, err);
  return new TerminalDisplay(out);
}

const line = (out: Writable, text: string) => out.write(`${text}\n`);

class PlainDisplay implements RunDisplay {
  constructor(
    private readonly out: Writable,
    private readonly err: Writable,
  ) {}
  start(run: AgentRun) {
    line(this.out, `run ${run.run_id}: ${describeRun(run)}`);
  }
  event(event: RunEvent) {
    line(this.out, `${event.created_at} ${event.kind}: ${describeProgress(event.state, event.progress, event.kind)}`);
  }
  approval(run: AgentRun) {
    for (const text of approvalLines(run)) line(this.out, text);
  }
  notice(text: string) {
    line(this.err, text);
  }
  finish(run: AgentRun) {
    for (const text of summaryLines(run)) line(this.out, text);
  }
  abort() {}
}

class JsonDisplay implements RunDisplay {
  constructor(private readonly out: Writable) {}
  private emit(value: unknown) {
    line(this.out, JSON.stringify(value));
  }
  start() {}
  event(event: RunEvent) {
    this.emit(event);
  }
  approval(run: AgentRun) {
    this.emit({
      kind: 'gws.approval_needed',
      run_id: run.run_id,
      effects: (run.approval?.effects ?? []).map((e) => ({
        step_id: e.step_id,
        tool: e.tool,
        ...(e.arguments ? { arguments: e.arguments } : {}),
        ...(e.message_from ? { message_from: e.message_from } : {}),
      })),
      deadline: run.approval?.deadline ?? null,
      approve: gwsCommand.approve(run.run_id),
      reject: gwsCommand.reject(run.run_id),
    });
  }
  notice(text: string) {
    this.emit({ kind: 'gws.notice', message: text });
  }
  finish(run: AgentRun) {
    this.emit({
      kind: 'gws.result',
      run_id: run.run_id,
      state: run.status,
      verification_class: run.receipt?.verification_class ?? null,
      unresolved: run.receipt?.unresolved.length ?? 0,
      failure_code: run.failure?.code ?? null,
      exit_code: exitCodeOfState(run.status),
      run,
    });
  }
  abort() {}
}

/** The live display: ora draws and redraws the spinner line; everything else is plain text between. */
class TerminalDisplay implements RunDisplay {
  private readonly spinner: Ora;
  private state: string | undefined;
  private text = '';

  constructor(private readonly out: Writable) {
    // A terminal that reports no size (a pseudo-terminal nobody sized, some serial consoles) has 0 columns,
    // and ora would count every line as infinitely many; assume COLUMNS, or 80.
    const tty = out as Writable & { columns?: number };
    if (!tty.columns) tty.columns = Number(process.env.COLUMNS) || 80;
    this.spinner = ora({ stream: out as NodeJS.WritableStream, discardStdin: false });
  }

  private show(state: string, text: string) {
    // A new state: the one before is done, and stays on screen.
    if (this.state !== undefined && state !== this.state) this.spinner.succeed(this.text);
    this.state = state;
    this.text = text;
    if (this.spinner.isSpinning) this.spinner.text = text;
    else this.spinner.start(text);
  }

  /** Writes plain lines without tearing the spinner: stop it, write, start it again. */
  private lines(texts: string[]) {
    const spinning = this.spinner.isSpinning;
    if (spinning) this.spinner.stop();
    for (const text of texts) line(this.out, text);
    if (spinning) this.spinner.start(this.text);
  }

  start(run: AgentRun) {
    this.lines([`run ${run.run_id}`]);
    // The run as read now, until the stream's first event (which may replay from the beginning) replaces it.
    this.text = describeRun(run);
    this.spinner.start(this.text);
  }
  event(event: RunEvent) {
    this.show(event.state, describeProgress(event.state, event.progress, event.kind));
  }
  approval(run: AgentRun) {
    this.spinner.info(this.text);
    this.lines(approvalLines(run).map((text, i) => (i === 0 ? text : `  ${text}`)));
    this.spinner.start(this.text);
  }
  notice(text: string) {
    this.spinner.text = `${this.text} (${text})`;
  }
  finish(run: AgentRun) {
    const text = describeRun(run);
    if (this.state !== undefined && this.state !== run.status && this.text) this.spinner.succeed(this.text);
    if (run.status === 'completed') this.spinner.succeed(text);
    else if (run.status === 'needs_attention') this.spinner.warn(text);
    else this.spinner.fail(text);
    for (const t of summaryLines(run)) line(this.out, `  ${t}`);
  }
  abort() {
    if (this.spinner.isSpinning) this.spinner.stop();
  }
}
