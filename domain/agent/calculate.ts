// The built-in `calculate` tool: arithmetic a model would otherwise do in its prose, done exactly.
// mathjs parses the expression; only numbers, the arithmetic operators, parentheses and a short
// list of functions may appear in its syntax tree (no symbols, assignments, accessors, units,
// strings or matrices), and it is evaluated in 64-digit decimal arithmetic, so nothing in an
// expression can reach code, state or a float rounding. Every number it uses must stand in the
// evidence (the request, or the output of an earlier tool call): the result is then a
// deterministic function of the call's arguments and that evidence, checked again at verification.
import { all, create, type MathNode } from 'mathjs';

const math = create(all!, { number: 'BigNumber', precision: 64 });

/** The functions an expression may call, by their mathjs names. */
const FUNCTIONS = new Set(['sum', 'mean', 'median', 'min', 'max', 'round', 'abs', 'sqrt', 'floor', 'ceil']);
const OPERATORS = new Set(['add', 'subtract', 'multiply', 'divide', 'pow', 'mod', 'unaryMinus', 'unaryPlus']);

/**
 * Numbers an expression may use without the evidence stating them: 1 and 100, for percentages and
 * shares (x / total * 100). Any other number must stand in the evidence.
 */
const UNIT_CONSTANTS = new Set(['1', '100']);

export const MAX_EXPRESSION_CHARS = 500;
const MAX_MAGNITUDE = '1e30';
const MIN_MAGNITUDE = '1e-30';

export type Calculation = { ok: true; value: string; expression: string; operands: string[] } | { ok: false; problem: string };

/** The numbers written in a text, in canonical decimal form ("1,200.50" and "1200.5" are one number). */
export function numbersIn(text: string): Set<string> {
  const found = new Set<string>();
  for (const m of text.matchAll(/\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+/g)) {
    found.add(canonical(m[0].replaceAll(',', '')));
  }
  return found;
}

const canonical = (decimal: string) => math.bignumber(decimal).toString();

/** round(x, n): n is how many decimals to keep, not a number the calculation is about. */
function isPrecisionOf(n: MathNode, parent: MathNode | null): boolean {
  if (parent?.type !== 'FunctionNode') return false;
  const call = parent as unknown as { fn: { name?: string }; args: MathNode[] };
  return call.fn.name === 'round' && call.args[1] === n;
}

/** Why the tree is not an allowed expression, or null. Collects the numbers it uses into `operands`. */
function disallowed(node: MathNode, operands: string[]): string | null {
  let problem: string | null = null;
  node.traverse((n, _path, parent) => {
    if (problem) return;
    switch (n.type) {
      case 'ConstantNode': {
        const value = (n as unknown as { value: unknown }).value;
        if (!math.isBigNumber(value)) problem = 'only numbers may appear as values';
        else if (!isPrecisionOf(n, parent)) operands.push(value.toString());
        return;
      }
      case 'OperatorNode': {
        const fn = (n as unknown as { fn: string }).fn;
        if (!OPERATORS.has(fn)) problem = `the operator ${(n as unknown as { op: string }).op} is not allowed`;
        return;
      }
      case 'ParenthesisNode':
        return;
      case 'FunctionNode': {
        const name = (n as unknown as { fn: { name?: string } }).fn.name ?? '';
        if (!FUNCTIONS.has(name)) problem = `the function ${name || '(unnamed)'} is not allowed`;
        return;
      }
      case 'SymbolNode':
        // A function's name is a SymbolNode under its FunctionNode; any other symbol is a variable.
        if (parent?.type === 'FunctionNode' && (parent as unknown as { fn: MathNode }).fn === n) return;
        problem = `the name ${(n as unknown as { name: string }).name} is not a number`;
        return;
      default:
        problem = `${n.type.replace(/Node$/, '').toLowerCase()} expressions are not allowed`;
    }
  });
  return problem;
}

/**
 * Evaluates `expression` exactly. `evidence` is every text its numbers may come from; a number that
 * stands in none of them (other than UNIT_CONSTANTS) refuses the calculation.
 */
export function calculate(expression: string, evidence: string[]): Calculation {
  if (expression.length > MAX_EXPRESSION_CHARS) return { ok: false, problem: `the expression is longer than ${MAX_EXPRESSION_CHARS} characters` };
  let tree: MathNode;
  try {
    tree = math.parse(expression);
  } catch (err) {
    return { ok: false, problem: `the expression does not parse (${(err as Error).message.slice(0, 120)})` };
  }
  const operands: string[] = [];
  const problem = disallowed(tree, operands);
  if (problem) return { ok: false, problem };
  const stated = new Set(evidence.flatMap((e) => [...numbersIn(e)]));
  const unstated = operands.filter((o) => !UNIT_CONSTANTS.has(o) && !stated.has(o) && !stated.has(canonical(o.replace(/^-/, ''))));
  if (unstated.length)
    return { ok: false, problem: `the number(s) ${[...new Set(unstated)].join(', ')} stand in neither the request nor an earlier tool result` };
  let value: unknown;
  try {
    value = tree.compile().evaluate({});
  } catch (err) {
    return { ok: false, problem: `the expression cannot be evaluated (${(err as Error).message.slice(0, 120)})` };
  }
  if (!math.isBigNumber(value)) return { ok: false, problem: 'the expression does not give one number' };
  if (!value.isFinite()) return { ok: false, problem: 'the result is not a finite number (a division by zero?)' };
  // A result is written out in full: one past these bounds would be a string of any length.
  if (!value.isZero() && (value.abs().greaterThan(MAX_MAGNITUDE) || value.abs().lessThan(MIN_MAGNITUDE))) {
    return { ok: false, problem: 'the result is beyond 1e30 or below 1e-30 in size, more than a calculation of a request needs' };
  }
  return { ok: true, value: value.toSignificantDigits(34).toFixed(), expression, operands: [...new Set(operands)] };
}
