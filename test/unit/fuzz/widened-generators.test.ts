/**
 * The widened dimensions of issue 23 in both fuzzers' generators: drawn per
 * seed from a stream of their own (a seed that draws none plans as before),
 * and the names they write are valid at the API's limits.
 */
import { Random } from '../../fuzz/random.js';
import { dimensionRandom, drawDimensions, drawReplicas, longName, Naming, replicaRandom } from '../../fuzz/softdelete/dimensions.js';
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
    for (const pick of [(d: (typeof drawn)[number]) => d.handEdits, (d: (typeof drawn)[number]) => d.crdVersions, (d: (typeof drawn)[number]) => d.longNames, (d: (typeof drawn)[number]) => d.budget !== undefined]) {
      const n = drawn.filter(pick).length;
      expect(n).toBeGreaterThan(20);
      expect(n).toBeLessThan(180);
    }
    expect(drawn.some((d) => !d.handEdits && !d.crdVersions && !d.longNames && !d.budget)).toBe(true);
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
        expect(JSON.stringify(widened.steps)).toBe(JSON.stringify(old.steps));
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
