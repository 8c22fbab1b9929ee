import { generatePlan, TEST_GROUP, type GcRevocation } from '../../../test/fuzz/gc/plan.js';
import { collectorRules } from '../../../test/fuzz/gc/rbac.js';

const allowed = (rules: ReturnType<typeof collectorRules>, verb: string, group: string, resource: string): boolean =>
  rules.some(
    (r) =>
      (r.apiGroups.includes(group) || r.apiGroups.includes('*')) &&
      (r.resources.includes(resource) || r.resources.includes('*')) &&
      (r.verbs.includes(verb) || r.verbs.includes('*')),
  );

describe('gc fuzz: rbac dimension', () => {
  const groups = ['', 'apps', 'events.k8s.io', 'smith.atlassian.com', TEST_GROUP];
  const resources = ['widgets', 'realms', 'gadgets1'];

  it.each<[GcRevocation, string, string, string]>([
    ['configmaps-delete', 'delete', '', 'configmaps'],
    ['configmaps-patch', 'patch', '', 'configmaps'],
    ['configmaps-list', 'watch', '', 'configmaps'],
    ['crs-list', 'list', TEST_GROUP, 'gadgets1'],
  ])('%s takes %s on %s/%s and nothing else the collector needs', (what, verb, group, resource) => {
    const whole = collectorRules(groups, resources);
    const narrowed = collectorRules(groups, resources, what);
    expect(allowed(whole, verb, group, resource)).toBe(true);
    expect(allowed(narrowed, verb, group, resource)).toBe(false);
    for (const [v, g, r] of [
      ['list', 'apps', 'deployments'],
      ['delete', 'apps', 'deployments'],
      ['get', '', 'configmaps'],
      ['list', '', 'secrets'],
      ['list', 'smith.atlassian.com', 'bundles'],
    ] as const)
      expect(allowed(narrowed, v, g, r)).toBe(true);
  });

  it('a seed that draws it revokes once, inside the plan, and grants back before a settle', () => {
    let drawn = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const plan = generatePlan(seed);
      const at = plan.steps.flatMap((s, i) => (s.op === 'rbac' ? [i] : []));
      if (plan.dims?.rbac === undefined) {
        expect(at).toEqual([]);
        continue;
      }
      drawn++;
      expect(at).toHaveLength(2);
      const [revoke = -1, grant = -1] = at;
      expect(plan.steps[revoke]).toEqual({ op: 'rbac', revoke: plan.dims.rbac });
      expect(plan.steps[grant]).toEqual({ op: 'rbac' });
      expect(plan.steps[grant + 1]).toEqual({ op: 'settle' });
      expect(plan.steps.at(-1)?.op).toBe('settle');
    }
    expect(drawn).toBeGreaterThan(50);
  });
});
