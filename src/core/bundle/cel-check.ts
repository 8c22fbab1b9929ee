/**
 * The compile-time check of a CEL expression: what can be refused before any
 * object is seen (nesting too deep, an unknown function, a root that can only
 * be a non-bool), and the function environment that check and the metered
 * evaluator share. Separate from cel.ts so that the rules of what compiles
 * read apart from the cost bound (cel-cost.ts) and the compile step itself.
 */
import { strings } from '@bufbuild/cel/ext';
import { celEnv, type parse } from '@bufbuild/cel';

export type Expr = ReturnType<typeof parse>['expr'];

/** Names the planner handles itself rather than through the function table. */
export const SPECIAL_FUNCTIONS = new Set([
  '_&&_',
  '_||_',
  '_?_:_',
  '_[_]',
  '_[?_]',
  '_?._',
  '@not_strictly_false',
  '__not_strictly_false__',
]);

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

/** CEL's strings extension (lowerAscii, split, join, ...), which Flux's environment also loads. */
export const EXTENSIONS = strings;

/** Functions known to the environment, for the compile-time check. */
const STANDARD_ENV = celEnv({ funcs: EXTENSIONS });

/**
 * How deep the tree may nest. The planner and the evaluator recurse over it:
 * `a.b.b.b...` two thousand deep overflows the stack inside @bufbuild/cel.
 * Real rules nest a few tens deep at most.
 */
export const MAX_NESTING = 100;

/** Problems visible without an object: nesting too deep, unknown functions, and a root that can only be a non-bool. */
export function staticProblem(root: Expr): string | undefined {
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
