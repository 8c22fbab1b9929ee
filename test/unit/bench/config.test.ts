/** The bench's sizes and outputs, read once from argv and env (bench/config.ts). */
import { BENCH_SCENARIOS, benchConfig } from '../../../bench/config.js';

describe('bench config', () => {
  it('writes nowhere special by default; --out DIR, --out=DIR and BENCH_OUT_DIR send the files elsewhere (the flag wins)', () => {
    expect(benchConfig([], {}).outDir).toBeUndefined();
    expect(benchConfig(['--quick', '--out', '/tmp/a'], {}).outDir).toBe('/tmp/a');
    expect(benchConfig(['--out=/tmp/b'], {}).outDir).toBe('/tmp/b');
    expect(benchConfig([], { BENCH_OUT_DIR: '/tmp/c' }).outDir).toBe('/tmp/c');
    expect(benchConfig(['--out', '/tmp/a'], { BENCH_OUT_DIR: '/tmp/c' }).outDir).toBe('/tmp/a');
  });

  it('runs every scenario unless BENCH_ONLY names some, and refuses a name it does not know', () => {
    expect([...benchConfig([], {}).only]).toEqual([...BENCH_SCENARIOS]);
    expect([...benchConfig([], { BENCH_ONLY: 'policies, sharding' }).only]).toEqual(['policies', 'sharding']);
    expect(() => benchConfig([], { BENCH_ONLY: 'cascade,shards' })).toThrow(/unknown scenario "shards"/);
  });

  it('uses the sizes issue 13 names for a full run (1 -> 50 -> 50x20 foreground, 2,000 orphaned, 1000 Bundles x 20 over the shards) and tiny ones under --quick', () => {
    const full = benchConfig([], {});
    expect({ policies: full.policies, sharding: full.sharding }).toEqual({
      policies: { width: 50, leaves: 20, orphanN: 2000 },
      sharding: { bundles: 1000, objectsPerBundle: 20, workers: 4, runs: 1 },
    });
    const quick = benchConfig(['--quick'], {});
    expect(quick.policies.width * (1 + quick.policies.leaves)).toBeLessThan(100);
    expect(quick.sharding.bundles * quick.sharding.objectsPerBundle).toBeLessThan(100);
    expect(benchConfig([], { BENCH_SHARDING_BUNDLES: '500', BENCH_ORPHAN_N: '300' })).toMatchObject({
      sharding: { bundles: 500 },
      policies: { orphanN: 300 },
    });
  });
});
