/**
 * The cost bound of a CEL evaluation. @bufbuild/cel has no cost limits, so
 * the parsed tree is rewritten: every node's value passes through a metering
 * function that charges its size (its deep size where a function will walk
 * it: the arguments of ==, in, string functions), and every comprehension
 * step charges one. Past the budget the meter returns an error, and a
 * comprehension whose loop condition errs stops at once: a hostile
 * expression ends in about the time the budget allows, whatever it asks.
 * Separate from cel.ts: the tree rewrite and its meter are one mechanism,
 * read and tested as such.
 */
import { celEnv, celFunc, CelScalar, isCelList, isCelMap, type CelEnv, type CelValue } from '@bufbuild/cel';
import { EXTENSIONS, SPECIAL_FUNCTIONS, type Expr } from './cel-check.js';

/**
 * Cost units one evaluation may spend: one per node evaluated and per
 * comprehension step, plus the size of the values (list and map entries,
 * 64 characters of string) read from the object, and the deep size of what
 * a function is handed. Spent at worst in about 20 ms on one core (the
 * unit tests hold it under a bound); a readiness rule over a real object
 * spends tens to a few thousand.
 */
export const COST_LIMIT = 100_000;

const METER_SHALLOW = '@bundlesmith_meter';
const METER_DEEP = '@bundlesmith_meter_deep';
/** For values computed by the expression: their making was charged through their inputs. */
const METER_UNIT = '@bundlesmith_meter_unit';
export const COST_EXCEEDED = 'evaluation cost limit exceeded';

export interface Meter {
  remaining: number;
  exhausted: boolean;
}

/** The functions the rewritten tree calls, bound to one meter. */
export function meteredEnv(meter: Meter): CelEnv {
  const charge = (cost: number, value: CelValue): CelValue => {
    meter.remaining -= cost;
    if (meter.remaining < 0) meter.exhausted = true;
    if (meter.exhausted) throw new Error(COST_EXCEEDED);
    return value;
  };
  return celEnv({
    funcs: [
      ...EXTENSIONS,
      celFunc(METER_SHALLOW, [CelScalar.DYN], CelScalar.DYN, (value) => charge(1 + shallowSize(value), value)),
      celFunc(METER_UNIT, [CelScalar.DYN], CelScalar.DYN, (value) => charge(1, value)),
      celFunc(METER_DEEP, [CelScalar.DYN], CelScalar.DYN, (value) => charge(deepSize(value, Math.max(meter.remaining, 0) + 1), value)),
    ],
  });
}

function shallowSize(value: CelValue): number {
  if (typeof value === 'string') return Math.floor(value.length / 64);
  if (value instanceof Uint8Array) return Math.floor(value.length / 64);
  if (isCelList(value) || isCelMap(value)) return value.size;
  return 0;
}

/** Entries and string blocks under a value, counted without recursion; stops past `cap` so that measuring never costs more than it charges. */
function deepSize(value: CelValue, cap: number): number {
  let total = 0;
  const stack: CelValue[] = [value];
  while (stack.length > 0 && total <= cap) {
    const v = stack.pop() as CelValue;
    total += 1 + shallowSize(v);
    if (total > cap) break;
    if (isCelList(v)) for (const item of v) stack.push(item);
    else if (isCelMap(v)) for (const item of v.values()) stack.push(item);
  }
  return total;
}

let nextId = 1n << 40n;

function meterCall(inner: Expr, deep: boolean | 'unit'): Expr {
  nextId += 1n;
  // Shaped as the parser's own nodes: the planner reads exprKind, function, args and target.
  return {
    $typeName: 'cel.expr.Expr',
    id: nextId,
    exprKind: {
      case: 'callExpr',
      value: { $typeName: 'cel.expr.Expr.Call', function: deep === 'unit' ? METER_UNIT : deep ? METER_DEEP : METER_SHALLOW, args: [inner] },
    },
  } as unknown as Expr;
}

/**
 * The tree with every non-constant node metered. What the expression reads
 * (variables, fields) is charged its size; what it computes (calls, literals,
 * comprehensions) one unit, unless a function is about to walk it (deep).
 * Accumulator variables are not metered: charging the growing result of
 * map()/filter() at every step would charge the square of the work done.
 */
export function metered(e: Expr, deep: boolean, accumulators: ReadonlySet<string>): Expr {
  const kind = e.exprKind;
  switch (kind.case) {
    case 'constExpr':
      return e;
    case 'identExpr':
      return accumulators.has(kind.value.name) ? e : meterCall(e, deep);
    case 'selectExpr':
      if (kind.value.operand) kind.value.operand = metered(kind.value.operand, false, accumulators);
      return meterCall(e, deep);
    case 'callExpr': {
      const call = kind.value;
      // An operator that only routes its arguments (&&, ?:, []) does not walk them: a shallow charge is enough.
      const argsDeep = !SPECIAL_FUNCTIONS.has(call.function);
      if (call.target) call.target = metered(call.target, argsDeep, accumulators);
      call.args = call.args.map((a) => metered(a, argsDeep, accumulators));
      return meterCall(e, deep || 'unit');
    }
    case 'listExpr':
      kind.value.elements = kind.value.elements.map((x) => metered(x, false, accumulators));
      return meterCall(e, deep || 'unit');
    case 'structExpr':
      for (const entry of kind.value.entries) {
        if (entry.keyKind.case === 'mapKey') entry.keyKind.value = metered(entry.keyKind.value, false, accumulators);
        if (entry.value) entry.value = metered(entry.value, false, accumulators);
      }
      return meterCall(e, deep || 'unit');
    case 'comprehensionExpr': {
      const c = kind.value;
      const inner = new Set([...accumulators, c.accuVar]);
      if (c.iterRange) c.iterRange = metered(c.iterRange, false, accumulators);
      if (c.accuInit) c.accuInit = metered(c.accuInit, false, accumulators);
      // The loop condition runs once per step: its meter is what stops a runaway loop.
      if (c.loopCondition) c.loopCondition = meterCall(metered(c.loopCondition, false, inner), 'unit');
      if (c.loopStep) c.loopStep = metered(c.loopStep, false, inner);
      if (c.result) c.result = metered(c.result, false, inner);
      return meterCall(e, deep || 'unit');
    }
    default:
      return e;
  }
}
