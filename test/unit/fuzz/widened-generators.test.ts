/**
 * The widened dimensions of issue 23 in both fuzzers' generators: drawn per
 * seed from a stream of their own (a seed that draws none plans as before),
 * and the names they write are valid at the API's limits.
 */
import { Random } from '../../fuzz/random.js';
import {
  dimensionRandom,
  drawDimensions,
  drawDrift,
  drawRbac,
  drawReplicas,
  driftRandom,
  drawHoldBack,
  holdBackRandom,
  longName,
  Naming,
  rbacRandom,
  replicaRandom,
} from '../../fuzz/softdelete/dimensions.js';
import { SoftDeleteModel, type Entry } from '../../fuzz/softdelete/model.js';
import { StepGenerator, type Step, type WidenedWorld } from '../../fuzz/softdelete/steps.js';
import { NO_DIMENSIONS, type SoftDeleteDimensions } from '../../fuzz/softdelete/dimensions.js';
import { operatorRoles, revokedRights, withoutRights } from '../../fuzz/softdelete/rbac.js';
import { generatePlan, objectName, type Plan } from '../../fuzz/gc/plan.js';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

describe('widened generators (issue 23)', () => {
  it('long names are DNS subdomains of exactly the length asked, starting with the logical name', () => {
    const rnd = new Random(7);
    for (let i = 0; i < 200; i++) {
      const length = rnd.int(64, 253);
      const name = longName('gate-b1', length, rnd);
      expect(name).toHaveLength(length);
      expect(name).toMatch(DNS_SUBDOMAIN);
      expect(name.startsWith('gate-b1')).toBe(true);
    }
  });

  it('Naming maps logical names to the cluster and back; without long names they are the same', () => {
    const logical = { bundles: ['b1', 'b2'], objects: ['cm-0', 'gate-b1'] };
    const long = new Naming(logical, true, new Random(3));
    for (const n of [...logical.bundles, ...logical.objects]) {
      expect(long.real(n).length).toBeGreaterThanOrEqual(64);
      expect(long.logical(long.real(n))).toBe(n);
    }
    expect(long.real('cm-0')).toHaveLength(253);
    expect(long.logical('fuzz-anchor')).toBeUndefined();
    const short = new Naming(logical, false, new Random(3));
    expect(short.real('b1')).toBe('b1');
  });

  it('soft-delete dimensions: each drawn on some seeds and not on others', () => {
    const drawn = Array.from({ length: 200 }, (_, i) => drawDimensions(dimensionRandom(9000 + i)));
    for (const pick of [
      (d: (typeof drawn)[number]) => d.handEdits,
      (d: (typeof drawn)[number]) => d.crdVersions,
      (d: (typeof drawn)[number]) => d.longNames,
      (d: (typeof drawn)[number]) => d.budget !== undefined,
    ]) {
      const n = drawn.filter(pick).length;
      expect(n).toBeGreaterThan(20);
      expect(n).toBeLessThan(180);
    }
    expect(drawn.some((d) => !d.handEdits && !d.crdVersions && !d.longNames && !d.budget)).toBe(true);
  });

  it('soft-delete drift: on some seeds, from a stream of its own, never changing the other draws', () => {
    let withDrift = 0;
    for (let seed = 18000; seed < 18100; seed++) {
      const base = drawRbac(drawReplicas(drawDimensions(dimensionRandom(seed)), replicaRandom(seed)), rbacRandom(seed), 12);
      const d = drawDrift(base, driftRandom(seed));
      expect({ ...d, drift: undefined }).toEqual({ ...base, drift: undefined });
      if (d.drift === true) withDrift++;
    }
    expect(withDrift).toBeGreaterThan(20);
    expect(withDrift).toBeLessThan(80);
  });

  it('soft-delete rbac: on some seeds, never changing the other draws, never on the widened CI seeds, revocations in order', () => {
    let withRbac = 0;
    for (let seed = 9000; seed < 9200; seed++) {
      const base = drawReplicas(drawDimensions(dimensionRandom(seed)), replicaRandom(seed));
      const d = drawRbac(base, rbacRandom(seed), 12);
      expect({ ...d, rbac: undefined }).toEqual({ ...base, rbac: undefined });
      if (!d.rbac) continue;
      withRbac++;
      let free = 0;
      for (const r of d.rbac.revocations) {
        expect(r.at).toBeGreaterThanOrEqual(free);
        expect(r.at).toBeLessThan(12);
        free = r.at + r.steps + 1;
      }
    }
    expect(withRbac).toBeGreaterThan(20);
    expect(withRbac).toBeLessThan(180);
    for (const seed of [9002, 9032, 9044, 9051, 9060, 9921])
      expect(drawRbac(drawDimensions(dimensionRandom(seed)), rbacRandom(seed), 12).rbac).toBeUndefined();
  });

  it('soft-delete holdBack: on some seeds, from a stream of its own, never on budget seeds nor on the widened CI seeds', () => {
    let withHold = 0;
    let withoutBudget = 0;
    for (let seed = 19000; seed < 19100; seed++) {
      const base = drawDrift(
        drawRbac(drawReplicas(drawDimensions(dimensionRandom(seed)), replicaRandom(seed)), rbacRandom(seed), 12),
        driftRandom(seed),
      );
      const d = drawHoldBack(base, holdBackRandom(seed));
      expect({ ...d, holdBack: undefined }).toEqual({ ...base, holdBack: undefined });
      if (!base.budget) withoutBudget++;
      if (d.holdBack !== true) continue;
      withHold++;
      expect(d.budget).toBeUndefined();
    }
    expect(withHold).toBeGreaterThan(0.25 * withoutBudget);
    expect(withHold).toBeLessThan(0.55 * withoutBudget);
    for (const seed of [9002, 9032, 9044, 9051, 9060, 9921]) {
      const base = drawDrift(
        drawRbac(drawReplicas(drawDimensions(dimensionRandom(seed)), replicaRandom(seed)), rbacRandom(seed), 12),
        driftRandom(seed),
      );
      expect(drawHoldBack(base, holdBackRandom(seed)).holdBack).toBeUndefined();
    }
  });

  describe('soft-delete holdBack steps', () => {
    const gateOf = (b: string) => `gate-${b}`;
    const OBJECTS = ['cm-0', 'cm-1', 'cm-2', 'cm-3'];
    const cm = (object: string, ms = 3000): Entry => ({
      object,
      kind: 'ConfigMap',
      delay: { kind: 'valid', text: `${ms}ms`, ms },
      gated: false,
    });
    const gate = (b: string): Entry => ({ object: gateOf(b), kind: 'Gate', delay: { kind: 'none' }, gated: false });
    /** b1 listed cm-0 and was deleted (cm-0 released); b2 lists cm-1. */
    function world(): SoftDeleteModel {
      const m = new SoftDeleteModel(['b1', 'b2'], OBJECTS, gateOf);
      m.applyBundle('b1', [gate('b1'), cm('cm-0')], 'none', 0, 10);
      m.applyBundle('b2', [gate('b2'), cm('cm-1')], 'none', 0, 10);
      m.deleteBundle('b1', 1000, 1010);
      return m;
    }
    function widened(dims: SoftDeleteDimensions, holdRandom?: { chance(p: number): boolean } & object): WidenedWorld {
      return {
        dims,
        isVersioned: (o) => o.startsWith('cr-'),
        bulk: [],
        stage: () => 'v1alpha1',
        pauseLeader: () => false,
        ...(holdRandom ? { holdRandom: holdRandom as Random } : {}),
      };
    }

    it('drawn from their own stream: the other steps are those of a seed without them', () => {
      for (const seed of [1, 2, 3, 4, 5]) {
        for (const handEdits of [false, true]) {
          const dims = { ...NO_DIMENSIONS, handEdits };
          const m = world();
          const withHold = new StepGenerator(new Random(seed), m, OBJECTS, gateOf, widened({ ...dims, holdBack: true }, new Random(99)));
          const without = new StepGenerator(new Random(seed), m, OBJECTS, gateOf, widened(dims));
          const a: Step[] = [];
          const b: Step[] = [];
          while (b.length < 60) b.push(without.next().step);
          while (a.filter((x) => x.kind !== 'hold-back').length < 60) a.push(withHold.next().step);
          const held = a.filter((x): x is Extract<Step, { kind: 'hold-back' }> => x.kind === 'hold-back');
          expect(a.filter((x) => x.kind !== 'hold-back')).toEqual(b);
          expect(held.length).toBeGreaterThan(0);
          expect(new Set(held.map((h) => h.holder)).size).toBe(held.length);
          for (const [i, h] of a.entries()) {
            if (h.kind !== 'hold-back') continue;
            // Released, or about to be: queued right after a background deletion of a Bundle listing it (the model is not advanced).
            const prev = a[i - 1];
            const releasing =
              prev?.kind === 'delete-bundle' &&
              prev.propagation === 'background' &&
              m.bundle(prev.bundle).entries.some((e) => e.object === h.object);
            expect(m.object(h.object).standing.kind === 'released' || releasing).toBe(true);
            expect(h.object.startsWith('cr-') || h.object.startsWith('bulk-')).toBe(false);
            expect(h.holdMs).toBeGreaterThanOrEqual(2000);
            expect(h.holdMs).toBeLessThanOrEqual(8000);
            if (h.drop === 'unlist') expect(h.how).toBe('nobody');
            if (!handEdits) {
              expect(h.before).toBeUndefined();
              expect(h.whileListed).toBeUndefined();
              expect(h.afterDrop).toBeUndefined();
            }
          }
        }
      }
    });

    it('queued right after a background deletion, before its re-apply; not after a foreground or orphan one', () => {
      // Every chance of one half or more comes true (a hold after each background deletion), none of less (no hold before a drawn step).
      const always = Object.assign(new Random(5), { chance: (p: number) => p >= 0.5 });
      for (const propagation of ['background', 'foreground', 'orphan'] as const) {
        let found = false;
        for (let seed = 0; seed < 400 && !found; seed++) {
          const m = world();
          const g = new StepGenerator(new Random(seed), m, OBJECTS, gateOf, widened({ ...NO_DIMENSIONS, holdBack: true }, always));
          for (let i = 0; i < 30; i++) {
            const { step } = g.next();
            expect(step.kind).not.toBe('hold-back');
            if (step.kind !== 'delete-bundle' || step.bundle !== 'b2') continue;
            if (step.propagation !== propagation) break;
            m.deleteBundle('b2', 5000, 5010, propagation);
            const after = g.next().step;
            if (propagation === 'background') expect(after).toMatchObject({ kind: 'hold-back', object: 'cm-1' });
            else expect(after.kind).not.toBe('hold-back');
            found = true;
            break;
          }
        }
        expect(found).toBe(true);
      }
    });
  });

  it("soft-delete rbac: a revocation narrows the chart's wildcards and takes exactly its verbs", () => {
    const kinds = ['gates'];
    const [, objects, gc] = operatorRoles('ns', ['apps', 'fuzz.bundlesmith.dev', 'smith.atlassian.com'], kinds, 'default', false);
    const may = (rules: ReturnType<typeof withoutRights>, group: string, resource: string, verb: string) =>
      rules.some(
        (r) => r.apiGroups.includes(group) && (r.resources.includes(resource) || r.resources.includes('*')) && r.verbs.includes(verb),
      );
    const gcRules = withoutRights(gc?.rules ?? [], revokedRights('bundles-status', kinds), kinds);
    expect(may(gcRules, 'smith.atlassian.com', 'bundles/status', 'patch')).toBe(false);
    expect(may(gcRules, 'smith.atlassian.com', 'bundles', 'patch')).toBe(true);
    expect(may(gcRules, 'apps', 'deployments', 'delete')).toBe(true);
    const objectRules = withoutRights(objects?.rules ?? [], revokedRights('configmaps-delete', kinds), kinds);
    expect(may(objectRules, '', 'configmaps', 'delete')).toBe(false);
    expect(may(objectRules, '', 'configmaps', 'patch')).toBe(true);
    expect(may(objectRules, '', 'secrets', 'delete')).toBe(true);
    const crRules = withoutRights(gc?.rules ?? [], revokedRights('crs-list', kinds), kinds);
    expect(may(crRules, 'fuzz.bundlesmith.dev', 'gates', 'list')).toBe(false);
    expect(may(crRules, 'fuzz.bundlesmith.dev', 'gates', 'delete')).toBe(true);
  });

  it('soft-delete replicas: only with a budget, on some of those seeds, and never changing the other draws', () => {
    let withReplicas = 0;
    let budgets = 0;
    for (let seed = 9000; seed < 9200; seed++) {
      const base = drawDimensions(dimensionRandom(seed));
      const d = drawReplicas(base, replicaRandom(seed));
      expect({ ...d, replicas: undefined }).toEqual({ ...base, replicas: undefined });
      if (base.budget) budgets++;
      if (d.replicas) {
        withReplicas++;
        expect(base.budget).toBeDefined();
      }
    }
    expect(withReplicas).toBeGreaterThan(5);
    expect(withReplicas).toBeLessThan(budgets);
  });

  const ops = (p: Plan) => p.steps.map((s) => s.op);

  it('gc: widen false plans no widened step; a seed that draws no dimension plans the same steps either way', () => {
    let unchanged = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const old = generatePlan(seed, { widen: false });
      expect(old.dims).toBeUndefined();
      expect(ops(old)).not.toContain('touch');
      expect(ops(old)).not.toContain('crdVersion');
      expect(old.objects.some((o) => o.longName)).toBe(false);
      const widened = generatePlan(seed);
      const d = widened.dims;
      if (d && !d.handEdits && !d.crdVersions) {
        unchanged++;
        // The rbac dimension adds its revocation, its grant and the settle after it, and nothing else.
        const steps = widened.steps.filter((s, i) => s.op !== 'rbac' && !(s.op === 'settle' && widened.steps[i - 1]?.op === 'rbac'));
        expect(JSON.stringify(steps)).toBe(JSON.stringify(old.steps));
      }
    }
    expect(unchanged).toBeGreaterThan(20);
  });

  it('gc: a versioned CRD is created at v1alpha1, gains v1, then its old version is unserved, each followed by a settle', () => {
    let versioned = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const plan = generatePlan(seed);
      if (!plan.dims?.crdVersions) continue;
      versioned++;
      expect(plan.gadget?.versioned).toBe(true);
      const o = ops(plan);
      const install = o.indexOf('installCrd');
      const stages = plan.steps.flatMap((s, i) => (s.op === 'crdVersion' ? [[s.stage, i] as const] : []));
      expect(stages.map(([stage]) => stage)).toEqual(['add-v1', 'unserve-old']);
      for (const [, i] of stages) {
        expect(i).toBeGreaterThan(install);
        expect(o[i + 1]).toBe('settle');
      }
    }
    expect(versioned).toBeGreaterThan(20);
  });

  it('gc: long object names are 253 characters and valid', () => {
    const plan = generatePlan(9000);
    const long = plan.objects.filter((o) => o.longName);
    expect(long.length).toBeGreaterThan(0);
    for (const o of long) {
      expect(objectName(plan.seed, o)).toHaveLength(253);
      expect(objectName(plan.seed, o)).toMatch(DNS_SUBDOMAIN);
    }
  });
});
