/**
 * CEL expressions over a live object, compiled once and evaluated with a cost
 * bound. @bufbuild/cel (a conformant CEL evaluator without I/O) does the
 * language; this module adds what an operator needs around it:
 *
 * - a compile step that refuses, before any object is seen, what cannot run:
 *   a syntax error, an unknown function, an expression whose result can only
 *   be a non-bool (a literal, arithmetic, a map() or filter()) (cel-check.ts);
 * - a cost bound (cel-cost.ts): the parsed tree is rewritten so that every
 *   node's value passes through a meter, and an evaluation past its budget
 *   ends with an error.
 */
import { isCelError, isCelList, isCelMap, parse, plan, type CelInput, type CelValue } from '@bufbuild/cel';
import { staticProblem } from './cel-check.js';
import { COST_EXCEEDED, COST_LIMIT, metered, meteredEnv, type Meter } from './cel-cost.js';

/** Longest expression text accepted (the schema holds the same bound). */
export const MAX_EXPRESSION_LENGTH = 4096;

type ParsedExpr = ReturnType<typeof parse>;

export type CompiledExpression =
  | { ok: true; text: string; evaluate: (bindings: Readonly<Record<string, unknown>>, limit?: number) => Evaluation }
  | { ok: false; text: string; message: string };

/** A bool, or why there is none: the expression failed on this object, returned another type, or ran out of budget. */
export type Evaluation = { ok: true; value: boolean; cost: number } | { ok: false; reason: 'error' | 'not-bool' | 'cost'; message: string };

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
