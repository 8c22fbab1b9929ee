/**
 * The CRD's CEL rules (x-kubernetes-validations), checked offline. There is
 * no CEL interpreter here: each rule the CRD declares has its TypeScript
 * reading below, keyed by the rule's text, and a unit test fails when the
 * CRD gains a rule without one (so `validate` never silently skips a rule
 * the API server enforces).
 */
import { GO_DURATION_RULE, IGNORABLE_POINTER_RULES, UNIGNORABLE_POINTERS } from '../api/spec-defaults.js';
import { isRecord } from '../core/bundle/objects.js';
import { readDelayText } from '../core/softdelete/rules.js';
import { formatFieldPath, type FieldPath } from './field-path.js';

export interface RuleProblem {
  path: FieldPath;
  message: string;
}

export interface CelRule {
  rule: string;
  message?: string;
  fieldPath?: string;
}

/** Each rule's reading: whether `self` satisfies it. */
export const CEL_RULE_READINGS: ReadonlyMap<string, (self: unknown) => boolean> = new Map([
  [GO_DURATION_RULE, (self: unknown) => typeof self !== 'string' || readDelayText(self, 'the value').ok],
  [
    '!has(self.references) || self.references.all(ref, ref.resource != self.name)',
    (self: unknown) => {
      if (!isRecord(self) || !Array.isArray(self.references)) return true;
      return self.references.every((ref) => !isRecord(ref) || ref.resource !== self.name);
    },
  ],
  // spec.driftDefaults.ignore: each rule is "!self.matches(pattern)", read with the same pattern (anchored: RE2 and JavaScript agree).
  ...IGNORABLE_POINTER_RULES.map((r, i): [string, (self: unknown) => boolean] => [
    r.rule,
    (self: unknown) => typeof self !== 'string' || !new RegExp(UNIGNORABLE_POINTERS[i]?.pattern ?? '$^').test(self),
  ]),
]);

/** Each rule `self` (at `path`) breaks, with the rule's message as the API server words it. */
export function checkCelRules(self: unknown, rules: readonly CelRule[], path: FieldPath): RuleProblem[] {
  const problems: RuleProblem[] = [];
  for (const rule of rules) {
    const reading = CEL_RULE_READINGS.get(rule.rule);
    const at = `${formatFieldPath(path)}${rule.fieldPath ?? ''}`;
    if (reading === undefined)
      problems.push({ path, message: `${at}: the CRD's rule ${JSON.stringify(rule.rule)} cannot be checked offline` });
    else if (!reading(self)) problems.push({ path, message: `${at}: Invalid value: ${rule.message ?? `failed rule: ${rule.rule}`}` });
  }
  return problems;
}
