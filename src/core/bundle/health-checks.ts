/**
 * Readiness rules in CEL (spec.healthChecks and the operator's
 * --health-checks-file), compiled into a table by apiVersion and kind.
 * A rule that does not compile never reaches the table: it is an issue of
 * the Bundle (or a refusal to start, for the operator's file), so no object
 * is ever judged ready by a rule that could not run.
 */
import { HealthChecksFileSchema, type HealthCheck } from '../../api/health-checks.js';
import { compileExpression, type CompiledExpression } from './cel.js';
import { kindKey } from './objects.js';

type Compiled = Extract<CompiledExpression, { ok: true }>;

export interface CompiledHealthCheck {
  /** Where the rule comes from, for messages: "spec.healthChecks[0]" or "--health-checks-file[2]". */
  source: string;
  current: Compiled;
  inProgress?: Compiled;
  failed?: Compiled;
}

/** Keyed by kindKey(apiVersion, kind), like KindTable. */
export type HealthCheckTable = ReadonlyMap<string, CompiledHealthCheck>;

export const EMPTY_HEALTH_CHECKS: HealthCheckTable = new Map();

const FIELDS = ['current', 'inProgress', 'failed'] as const;

/** Every expression of the rules that cannot run, as "<where>[i].<field>: <why>"; also two rules for one kind. */
export function healthCheckIssues(rules: readonly HealthCheck[] | undefined, where: string): string[] {
  const issues: string[] = [];
  const seen = new Map<string, number>();
  (rules ?? []).forEach((rule, i) => {
    const key = kindKey(rule.apiVersion, rule.kind);
    const first = seen.get(key);
    if (first !== undefined) issues.push(`${where}[${i}]: a second rule for ${rule.apiVersion} ${rule.kind} (first at ${where}[${first}])`);
    else seen.set(key, i);
    for (const field of FIELDS) {
      const text = rule[field];
      if (text === undefined) continue;
      const compiled = compileExpression(text);
      if (!compiled.ok) issues.push(`${where}[${i}].${field}: ${compiled.message}`);
    }
  });
  return issues;
}

function compileRule(rule: HealthCheck, source: string): CompiledHealthCheck | undefined {
  const out: Partial<Record<(typeof FIELDS)[number], Compiled>> = {};
  for (const field of FIELDS) {
    const text = rule[field];
    if (text === undefined) continue;
    const compiled = compileExpression(text);
    if (!compiled.ok) return undefined;
    out[field] = compiled;
  }
  return out.current === undefined
    ? undefined
    : {
        source,
        current: out.current,
        ...(out.inProgress ? { inProgress: out.inProgress } : {}),
        ...(out.failed ? { failed: out.failed } : {}),
      };
}

/**
 * The rules that apply to a Bundle: the operator's defaults, then the
 * Bundle's own, which win for the same apiVersion and kind. Rules with an
 * issue are left out here; healthCheckIssues stops the pass before any
 * readiness is read.
 */
export function healthCheckTable(defaults: readonly HealthCheck[] | undefined, spec: readonly HealthCheck[] | undefined): HealthCheckTable {
  if ((defaults === undefined || defaults.length === 0) && (spec === undefined || spec.length === 0)) return EMPTY_HEALTH_CHECKS;
  const table = new Map<string, CompiledHealthCheck>();
  const add = (rules: readonly HealthCheck[] | undefined, where: string): void =>
    (rules ?? []).forEach((rule, i) => {
      const compiled = compileRule(rule, `${where}[${i}]`);
      if (compiled !== undefined) table.set(kindKey(rule.apiVersion, rule.kind), compiled);
    });
  add(defaults, '--health-checks-file');
  add(spec, 'spec.healthChecks');
  return table;
}

/** The rules of a parsed --health-checks-file, or every reason it is refused. */
export function readHealthChecksFile(document: unknown): { ok: true; rules: HealthCheck[] } | { ok: false; issues: string[] } {
  const parsed = HealthChecksFileSchema.safeParse(document);
  if (!parsed.success)
    return { ok: false, issues: parsed.error.issues.map((i) => `${i.path.length > 0 ? i.path.join('.') : '(document)'}: ${i.message}`) };
  const issues = healthCheckIssues(parsed.data, '--health-checks-file');
  return issues.length > 0 ? { ok: false, issues } : { ok: true, rules: parsed.data };
}
