/** The end of every reason a part is left to a stronger model: it says how to route one. */
const ROUTE_ONE = 'it needs a stronger model (route one with POST /v1/routing-policies)';

/** Why a part is unresolved because the small model cannot be trusted with it. */
export function needsStronger(why: string): string {
  return `${why}; ${ROUTE_ONE}`;
}
