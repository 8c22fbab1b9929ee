/**
 * core/bundle/cel.ts: compile-time refusals, the cost bound, and a share of
 * the upstream CEL conformance suite (shipped by @bufbuild/cel-spec) run
 * through the metered tree, so metering is shown not to change a result.
 */
import { isCelError, run } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { getConformanceSuite } from '@bufbuild/cel-spec/testdata/tests.js';
import { compileExpression, type Evaluation } from '../../../src/core/bundle/cel.js';
import { COST_LIMIT } from '../../../src/core/bundle/cel-cost.js';

function evaluate(text: string, bindings: Record<string, unknown> = {}): Evaluation | { compileError: string } {
  const compiled = compileExpression(text);
  return compiled.ok ? compiled.evaluate(bindings) : { compileError: compiled.message };
}

const certificate = {
  apiVersion: 'cert-manager.io/v1',
  kind: 'Certificate',
  metadata: { name: 'c', generation: 2 },
  status: {
    observedGeneration: 2,
    replicas: 3,
    ratio: 0.5,
    conditions: [
      { type: 'Ready', status: 'True' },
      { type: 'Synced', status: 'True' },
    ],
    atProvider: { arn: 'x' },
  },
};

describe('compileExpression', () => {
  it.each<[string, RegExp]>([
    ['status.phase ==', /^does not compile: at 1:/],
    ['', /^empty expression$/],
    ['frobnicate(status)', /^unknown function: frobnicate$/],
    ['"Ready"', /^returns a string, not a bool$/],
    ['1', /^returns a int, not a bool$/],
    ['status.replicas + 1', /^returns the result of \+, not a bool$/],
    ['size(status.conditions)', /^returns the result of size, not a bool$/],
    ['status.conditions.map(c, c.type)', /^returns a list \(map or filter\), not a bool$/],
    ['status.conditions.filter(c, c.status == "True")', /^returns a list \(map or filter\), not a bool$/],
    ['[true]', /^returns a list, not a bool$/],
    ['{"a": true}', /^returns a map, not a bool$/],
    ['x'.repeat(5000), /over the limit of 4096/],
    ['('.repeat(3000) + 'true' + ')'.repeat(3000), /over the limit|does not compile/],
    // Deep nesting within the length limit: the parser's or the planner's stack would overflow; refused, never thrown.
    ['('.repeat(2040) + 'true' + ')'.repeat(2040), /does not compile|nests deeper/],
    [`a${'.b'.repeat(2040)} == 1`, /^nests deeper than 100 levels$/],
    ['['.repeat(2040) + ']'.repeat(2040) + ' == []', /does not compile|nests deeper/],
    [`${'size('.repeat(500)}a${')'.repeat(500)} > 0`, /^nests deeper than 100 levels$/],
  ])('refuses %s', (text, message) => {
    const compiled = compileExpression(text);
    expect(compiled.ok).toBe(false);
    if (!compiled.ok) expect(compiled.message).toMatch(message);
  });

  it.each<[string, boolean]>([
    ['status.conditions.exists(c, c.type == "Ready" && c.status == "True")', true],
    ['status.conditions.filter(c, c.type in ["Ready", "Synced"]).all(c, c.status == "True")', true],
    ['status.observedGeneration == metadata.generation', true],
    // Whole JSON numbers are ints, as the API server's CEL reads them.
    ['status.replicas == 3 && status.replicas > 2', true],
    ['status.ratio < 1.0', true],
    ['has(status.atProvider.arn) && !has(status.atProvider.id)', true],
    ['status.conditions.exists_one(c, c.type == "Ready")', true],
    ['status.conditions.size() == 3', false],
    // The strings extension, as in Flux's environment.
    ['status.conditions.exists(c, c.type.lowerAscii() == "synced")', true],
  ])('evaluates %s', (text, value) => {
    expect(evaluate(text, certificate)).toMatchObject({ ok: true, value });
  });

  it('reports a field the object does not have yet as an evaluation error, not false', () => {
    expect(evaluate('status.phase == "Ready"', { metadata: {} })).toMatchObject({ ok: false, reason: 'error' });
  });

  it('reports a non-bool result found only on the object', () => {
    expect(evaluate('status.atProvider', certificate)).toEqual({ ok: false, reason: 'not-bool', message: 'returned a map, not a bool' });
    expect(evaluate('status.conditions[0].type', certificate)).toEqual({
      ok: false,
      reason: 'not-bool',
      message: 'returned a string, not a bool',
    });
  });

  it('compiles a text once', () => {
    expect(compileExpression('status.ratio < 1.0')).toBe(compileExpression('status.ratio < 1.0'));
  });
});

describe('cost bound', () => {
  const hundred = `[${Array.from({ length: 100 }, (_, i) => i).join(',')}]`;
  const items = Array.from({ length: 3000 }, (_, i) => ({ name: `item-${i}`, labels: { a: 'b', c: 'd' } }));
  const big = { spec: { items }, status: { blob: 'x'.repeat(1_000_000) } };

  it.each<[string, string, Record<string, unknown>]>([
    ['nested comprehensions over literals (10^6 steps)', `${hundred}.all(a, ${hundred}.all(b, ${hundred}.all(c, a + b + c >= 0)))`, {}],
    ['pairwise comparison of a large list', 'spec.items.all(a, spec.items.all(b, a.name != b.name || a == b))', big],
    ['deep equality in every step', 'spec.items.all(a, spec == spec)', big],
    ['a large string walked in every step', 'spec.items.all(a, status.blob.contains(a.name) || true)', big],
    ['quadratic map', 'spec.items.map(a, spec.items.map(b, b.name)).size() > 0', big],
  ])('stops %s within the budget', (_name, text, bindings) => {
    // The bound is in units, not time (timings belong in `npm run bench`, never in a test).
    expect(evaluate(text, bindings)).toEqual({
      ok: false,
      reason: 'cost',
      message: `evaluation cost limit exceeded (${COST_LIMIT} units)`,
    });
  });

  it('lets a linear rule over a large list through', () => {
    expect(evaluate('spec.items.exists(a, a.name == "item-2999")', big)).toMatchObject({ ok: true, value: true });
    expect(evaluate('spec.items.map(a, a.name).size() == 3000', big)).toMatchObject({ ok: true, value: true });
  });

  it('charges a readiness rule over a real object little', () => {
    const result = evaluate('status.conditions.exists(c, c.type == "Ready" && c.status == "True")', certificate);
    expect('ok' in result && result.ok ? result.cost : Infinity).toBeLessThan(100);
  });
});

/**
 * Upstream conformance cases with a bool (or error) result, no bindings and
 * no message types, from the suites of the functions a readiness rule uses.
 * Each is first run by @bufbuild/cel unmetered: only cases the library
 * passes are kept, and the metered evaluation must give the same answer.
 */
describe('CEL conformance (upstream cases through the metered evaluator)', () => {
  const SUITES = new Set([
    'basic',
    'comparisons',
    'logic',
    'macros',
    'macros2',
    'lists',
    'string',
    'string_ext',
    'fields',
    'integer_math',
    'fp_math',
    'conversions',
    'plumbing',
  ]);
  interface Case {
    name: string;
    expr: string;
    expected: boolean | 'error';
  }
  type Suite = {
    name: string;
    suites?: Suite[];
    tests?: {
      name: string;
      original: {
        expr: string;
        container: string;
        typeEnv: unknown[];
        bindings: Record<string, unknown>;
        disableMacros: boolean;
        checkOnly: boolean;
        resultMatcher: { case?: string; value?: unknown };
      };
    }[];
  };
  const cases: Case[] = [];
  const walk = (suite: Suite, path: string): void => {
    for (const t of suite.tests ?? []) {
      const o = t.original;
      if (o.container !== '' || o.typeEnv.length > 0 || Object.keys(o.bindings).length > 0 || o.disableMacros || o.checkOnly) continue;
      const matcher = o.resultMatcher;
      let expected: boolean | 'error' | undefined;
      if (matcher.case === 'evalError') expected = 'error';
      else if (matcher.case === 'value') {
        const kind = (matcher.value as { kind?: { case?: string; value?: unknown } }).kind;
        if (kind?.case === 'boolValue') expected = kind.value as boolean;
      }
      if (expected === undefined) continue;
      const reference = run(o.expr, {}, { funcs: strings });
      const passes = expected === 'error' ? isCelError(reference) : reference === expected;
      if (passes) cases.push({ name: `${path}/${t.name}`, expr: o.expr, expected });
    }
    for (const s of suite.suites ?? []) walk(s, `${path}/${s.name}`);
  };
  for (const s of (getConformanceSuite() as unknown as Suite).suites ?? []) if (SUITES.has(s.name)) walk(s, s.name);

  it('runs a share of the suite', () => {
    expect(cases.length).toBeGreaterThan(300);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const compiled = compileExpression(c.expr);
    if (!compiled.ok) {
      // Refused at compile time: an expected error, or an unknown function that the spec only fails on when it
      // runs (unbound_is_runtime_error: `f_unknown(17) || true`). A rule naming a function that does not exist is
      // refused at once, as a type-checking CEL (the API server's) refuses it.
      if (c.expected !== 'error') expect(compiled.message).toMatch(/^unknown function/);
      return;
    }
    const result = compiled.evaluate({});
    if (c.expected === 'error') expect(result.ok).toBe(false);
    else expect(result).toMatchObject({ ok: true, value: c.expected });
  });
});
