// The eval's verdict over its rows: the JSON line it prints last, and whether that meets issue 49's
// target. Pure, so the target is tested without running a model.
import { CATEGORIES, type Category } from './cases.ts';
import type { Catalog } from './catalog.ts';
import type { Verdict } from './judge.ts';

/**
 * What `npm run eval` must reach: the overall and the weakest category's pass rate, and no delivery
 * that arrived without its message (an effect without its content is a failure whatever the rates).
 */
export const TARGET = { pass_rate: 0.9, category_rate: 0.8, deliveries_without_message: 0 } as const;

export interface Row extends Verdict {
  id: string;
  category: Category;
  status: string;
  /** From creation to awaiting_approval, or to the end when no approval came. */
  toApprovalMs: number;
  /** From creation to leaving planning (what the plan took, with the queue before it). */
  planMs: number;
  failure: string | null;
  receipt: boolean;
  /** The run's deliveries whose body carried no message. */
  deliveriesWithoutMessage: number;
}

export interface RunSettings {
  quick: boolean;
  catalog: Catalog;
  provider?: string;
  model?: string;
  startSeconds: number;
}

const rate = (passed: number, of: number) => (of ? Math.round((passed / of) * 1000) / 1000 : 0);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)]! : 0;
};

const spread = (xs: number[]) => ({ median: median(xs), max: Math.max(0, ...xs) });

const withoutMessage = (rows: Row[]) => rows.reduce((n, r) => n + r.deliveriesWithoutMessage, 0);

/** Cases and passes per category that ran, in CATEGORIES' order. */
function perCategory(rows: Row[]) {
  return Object.fromEntries(
    CATEGORIES.filter((k) => rows.some((r) => r.category === k)).map((k) => {
      const of = rows.filter((r) => r.category === k);
      const passed = of.filter((r) => r.passed).length;
      return [k, { cases: of.length, passed, rate: rate(passed, of.length) }];
    }),
  );
}

/** Whether the rows meet TARGET. Compared on the counts, not the rounded rates, so 0.8996 is not 0.9. */
export function targetMet(rows: Row[]): boolean {
  const passes = (of: Row[], floor: number) => of.length > 0 && of.filter((r) => r.passed).length / of.length >= floor;
  const categories = CATEGORIES.map((k) => rows.filter((r) => r.category === k)).filter((of) => of.length > 0);
  return (
    passes(rows, TARGET.pass_rate) && categories.every((of) => passes(of, TARGET.category_rate)) && withoutMessage(rows) <= TARGET.deliveries_without_message
  );
}

/** The JSON line the eval prints last (tests, the bench and docs/models.md read it). */
export function summarise(rows: Row[], settings: RunSettings) {
  const passed = rows.filter((r) => r.passed).length;
  return {
    eval: settings.quick ? 'quick' : 'full',
    catalog: settings.catalog,
    provider: settings.provider ?? 'default',
    ...(settings.model ? { model: settings.model } : {}),
    cases: rows.length,
    passed,
    pass_rate: rate(passed, rows.length),
    categories: perCategory(rows),
    deliveries_without_message: withoutMessage(rows),
    target_met: targetMet(rows),
    plan_invalid: rows.filter((r) => r.failure === 'plan_invalid').length,
    plan_empty: rows.filter((r) => r.failure === 'plan_empty').length,
    receipts_missing: rows.filter((r) => !r.receipt).length,
    latency_to_approval_ms: spread(rows.map((r) => r.toApprovalMs)),
    plan_ms: spread(rows.map((r) => r.planMs)),
    start_seconds: Math.round(settings.startSeconds * 10) / 10,
  };
}

export type EvalSummary = ReturnType<typeof summarise>;
