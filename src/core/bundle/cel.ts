/**
 * CEL expressions over a live object, compiled once and evaluated with a cost
 * bound. @bufbuild/cel (a conformant CEL evaluator without I/O) does the
 * language; this module adds what an operator needs around it:
 *
 * - a compile step that refuses, before any object is seen, what cannot run:
 *   a syntax error, an unknown function, an expression whose result can only
 *   be a non-bool (a literal, arithmetic, a map() or filter());
 * - a cost bound. @bufbuild/cel has no cost limits, so the parsed tree is
 *   rewritten: every node's value passes through a metering function that
 *   charges its size (its deep size where a function will walk it: the
 *   arguments of ==, in, string functions), and every comprehension step
 *   charges one. Past the budget the meter returns an error, and a
 *   comprehension whose loop condition errs stops at once: a hostile
 *   expression ends in about the time the budget allows, whatever it asks.
 */
import { strings } from '@bufbuild/cel/ext';
import {
  celEnv,
  celFunc,
  CelScalar,
  isCelError,
  isCelList,
  isCelMap,
  parse,
  plan,
  type CelEnv,
  type CelInput,
  type CelValue,
} from '@bufbuild/cel';

/** Longest expression text accepted (the schema holds the same bound). */
export const MAX_EXPRESSION_LENGTH = 4096;

/**
 * Cost units one evaluation may spend: one per node evaluated and per
 * comprehension step, plus the size of the values (list and map entries,
 * 64 characters of string) read from the object, and the deep size of what
 * a function is handed. Spent at worst in about 20 ms on one core (the
 * unit tests hold it under a bound); a readiness rule over a real object
 * spends tens to a few thousand.
 */
export const COST_LIMIT = 100_000;

type ParsedExpr = ReturnType<typeof parse>;
type Expr = ParsedExpr['expr'];

export type CompiledExpression =
  | { ok: true; text: string; evaluate: (bindings: Readonly<Record<string, unknown>>, limit?: number) => Evaluation }
  | { ok: false; text: string; message: string };

/** A bool, or why there is none: the expression failed on this object, returned another type, or ran out of budget. */
export type Evaluation = { ok: true; value: boolean; cost: number } | { ok: false; reason: 'error' | 'not-bool' | 'cost'; message: string };

/** Names the planner handles itself rather than through the function table. */
const SPECIAL_FUNCTIONS = new Set(['_&&_', '_||_', '_?_:_', '_[_]', '_[?_]', '_?._', '@not_strictly_false', '__not_strictly_false__']);

/** Calls whose result is never a bool: an expression made of one of these at its root cannot be a readiness answer. */
const NON_BOOL_FUNCTIONS = new Set([
  '_+_',
  '_-_',
  '_*_',
  '_/_',
  '_%_',
  '-_',
  'size',
  'int',
  'uint',
  'double',
  'string',
  'bytes',
  'timestamp',
  'duration',
  'type',
  'getField',
  'lowerAscii',
  'upperAscii',
  'replace',
  'split',
  'substring',
  'trim',
  'join',
  'format',
  'charAt',
  'indexOf',
  'lastIndexOf',
]);

const METER_SHALLOW = '@bundlesmith_meter';
const METER_DEEP = '@bundlesmith_meter_deep';
/** For values computed by the expression: their making was charged through their inputs. */
const METER_UNIT = '@bundlesmith_meter_unit';
const COST_EXCEEDED = 'evaluation cost limit exceeded';

interface Meter {
  remaining: number;
  exhausted: boolean;
}

/** CEL's strings extension (lowerAscii, split, join, ...), which Flux's environment also loads. */
const EXTENSIONS = strings;

/** The functions the rewritten tree calls, bound to one meter. */
function meteredEnv(meter: Meter): CelEnv {
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

/** Functions known to the environment, for the compile-time check. */
const STANDARD_ENV = celEnv({ funcs: EXTENSIONS });

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
function metered(e: Expr, deep: boolean, accumulators: ReadonlySet<string>): Expr {
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

/**
 * How deep the tree may nest. The planner and the evaluator recurse over it:
 * `a.b.b.b...` two thousand deep overflows the stack inside @bufbuild/cel.
 * Real rules nest a few tens deep at most.
 */
export const MAX_NESTING = 100;

/** Problems visible without an object: nesting too deep, unknown functions, and a root that can only be a non-bool. */
function staticProblem(root: Expr): string | undefined {
  const unknown = new Set<string>();
  const stack: [Expr, number][] = [[root, 1]];
  while (stack.length > 0) {
    const [e, depth] = stack.pop() as [Expr, number];
    if (depth > MAX_NESTING) return `nests deeper than ${MAX_NESTING} levels`;
    const push = (...children: Expr[]): void => {
      for (const child of children) stack.push([child, depth + 1]);
    };
    const kind = e.exprKind;
    if (kind.case === 'callExpr') {
      const name = kind.value.function;
      if (!SPECIAL_FUNCTIONS.has(name) && STANDARD_ENV.funcs.find(name) === undefined) unknown.add(name);
      if (kind.value.target) push(kind.value.target);
      push(...kind.value.args);
    } else if (kind.case === 'selectExpr' && kind.value.operand) push(kind.value.operand);
    else if (kind.case === 'listExpr') push(...kind.value.elements);
    else if (kind.case === 'structExpr') {
      for (const entry of kind.value.entries) {
        if (entry.keyKind.case === 'mapKey') push(entry.keyKind.value);
        if (entry.value) push(entry.value);
      }
    } else if (kind.case === 'comprehensionExpr') {
      const c = kind.value;
      for (const x of [c.iterRange, c.accuInit, c.loopCondition, c.loopStep, c.result]) if (x) push(x);
    }
  }
  if (unknown.size > 0) return `unknown function${unknown.size > 1 ? 's' : ''}: ${[...unknown].sort().join(', ')}`;
  const kind = root.exprKind;
  if (kind.case === 'constExpr' && kind.value.constantKind.case !== 'boolValue')
    return `returns a ${constantTypeName(kind.value.constantKind.case)}, not a bool`;
  if (kind.case === 'listExpr') return 'returns a list, not a bool';
  if (kind.case === 'structExpr') return 'returns a map, not a bool';
  if (kind.case === 'callExpr' && NON_BOOL_FUNCTIONS.has(kind.value.function))
    return `returns the result of ${kind.value.function.replace(/_/g, ' ').trim() || kind.value.function}, not a bool`;
  if (kind.case === 'comprehensionExpr') {
    const c = kind.value;
    // map() and filter() accumulate a list and return it.
    if (c.accuInit?.exprKind.case === 'listExpr' && c.result?.exprKind.case === 'identExpr' && c.result.exprKind.value.name === c.accuVar)
      return 'returns a list (map or filter), not a bool';
  }
  return undefined;
}

function constantTypeName(c: string | undefined): string {
  switch (c) {
    case 'stringValue':
      return 'string';
    case 'int64Value':
      return 'int';
    case 'uint64Value':
      return 'uint';
    case 'doubleValue':
      return 'double';
    case 'bytesValue':
      return 'bytes';
    case 'nullValue':
      return 'null';
    default:
      return 'value';
  }
}

/** Compiled programs by text: a Bundle's rules are compiled once, not at every pass. */
const compiled = new Map<string, CompiledExpression>();
const MAX_CACHED = 512;

export function compileExpression(text: string): CompiledExpression {
  const cached = compiled.get(text);
  if (cached !== undefined) return cached;
  const result = compileUncached(text);
  if (compiled.size >= MAX_CACHED) compiled.delete(compiled.keys().next().value as string);
  compiled.set(text, result);
  return result;
}

function compileUncached(text: string): CompiledExpression {
  if (text.trim() === '') return { ok: false, text, message: 'empty expression' };
  if (text.length > MAX_EXPRESSION_LENGTH)
    return { ok: false, text, message: `expression is ${text.length} characters, over the limit of ${MAX_EXPRESSION_LENGTH}` };
  let parsed: ParsedExpr;
  try {
    parsed = parse(text);
  } catch (e) {
    // A parser overflow on absurd nesting is a syntax error like any other.
    return { ok: false, text, message: `does not compile: ${e instanceof Error ? e.message.replace(/^<input>:/, 'at ') : String(e)}` };
  }
  const problem = staticProblem(parsed.expr);
  if (problem !== undefined) return { ok: false, text, message: problem };
  const meter: Meter = { remaining: 0, exhausted: false };
  let program: ReturnType<typeof plan>;
  try {
    parsed.expr = metered(parsed.expr, false, new Set());
    program = plan(meteredEnv(meter), parsed);
  } catch (e) {
    // Never expected past the nesting bound; a planner that throws still must not take a reconcile down.
    return { ok: false, text, message: `cannot be planned: ${e instanceof Error ? e.message : String(e)}` };
  }
  const evaluate = (bindings: Readonly<Record<string, unknown>>, limit = COST_LIMIT): Evaluation => {
    meter.remaining = limit;
    meter.exhausted = false;
    const result = program(toCelBindings(bindings));
    if (meter.exhausted) return { ok: false, reason: 'cost', message: `${COST_EXCEEDED} (${limit} units)` };
    if (isCelError(result)) return { ok: false, reason: 'error', message: result.message };
    if (typeof result !== 'boolean') return { ok: false, reason: 'not-bool', message: `returned ${describeValue(result)}, not a bool` };
    return { ok: true, value: result, cost: limit - meter.remaining };
  };
  return { ok: true, text, evaluate };
}

function describeValue(v: CelValue): string {
  if (typeof v === 'string') return 'a string';
  if (typeof v === 'bigint') return 'an int';
  if (typeof v === 'number') return 'a double';
  if (v === null) return 'null';
  if (isCelList(v)) return 'a list';
  if (isCelMap(v)) return 'a map';
  return `a ${typeof v}`;
}

/**
 * JSON as CEL sees Kubernetes objects: a whole number is an int (as the API
 * server's CEL and Flux read it), so `status.replicas == 3` compares ints.
 */
export function toCelValue(value: unknown): CelInput {
  if (typeof value === 'number') return Number.isInteger(value) && Number.isSafeInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return value.map(toCelValue);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, CelInput> = {};
    for (const [k, v] of Object.entries(value)) out[k] = toCelValue(v);
    return out;
  }
  if (value === undefined) return null;
  return value as CelInput;
}

function toCelBindings(bindings: Readonly<Record<string, unknown>>): Record<string, CelInput> {
  const out: Record<string, CelInput> = {};
  for (const [k, v] of Object.entries(bindings)) out[k] = toCelValue(v);
  return out;
}
