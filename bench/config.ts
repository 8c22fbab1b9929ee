/**
 * Benchmark sizes, read once from the environment (and `--quick`) at the
 * entry point; scenarios receive the result and never read env vars.
 */

/** Every scenario, in the order they run; BENCH_ONLY picks a subset. */
export const BENCH_SCENARIOS = ['cascade', 'policies', 'unthrottled', 'memory', 'reconciler', 'sharding', 'hostile', 'expiry'] as const;

export interface BenchConfig {
  quick: boolean;
  /** Scenarios to run (BENCH_ONLY=cascade,policies,...: see BENCH_SCENARIOS; default all). */
  only: ReadonlySet<string>;
  /**
   * Where to write benchmarks.md and results.json instead of the committed
   * files (BENCH_OUT_DIR or `--out DIR`): any run, quick or partial, writes
   * both there, and the committed ones are left alone. The smoke test uses it.
   */
  outDir: string | undefined;
  /** Garbage-collector workers (the operator's --gc-workers default). */
  gcWorkers: number;
  /** A second, higher worker count for the unthrottled comparison. */
  gcWorkersHigh: number;
  cascade: {
    /** Dependents per cascade (BENCH_N). */
    n: number;
    /** Client QPS and burst for both collectors (BENCH_QPS, BENCH_BURST). */
    qps: number;
    burst: number;
    /** Measurements per collector (BENCH_RUNS, at least 2 outside --quick). */
    runs: number;
    /** Dependents per unthrottled cascade (BENCH_UNTHROTTLED_N): more than BENCH_N, since these runs last about a second per thousand. */
    unthrottledN: number;
    /** Measurements per unthrottled variant (BENCH_UNTHROTTLED_RUNS; the median is reported). */
    unthrottledRuns: number;
    /** DELETEs in flight for the raw apiserver rate (BENCH_RAW_CONCURRENCY). */
    rawConcurrency: number;
    /** Also time our collector with its Events on a client of their own (BENCH_EVENTS_APART=0 to skip). */
    eventsApartVariant: boolean;
  };
  policies: {
    /** Foreground: the owner's dependents (BENCH_FOREGROUND_WIDTH), each with this many of its own (BENCH_FOREGROUND_LEAVES). */
    width: number;
    leaves: number;
    /** Orphan: the owner's dependents (BENCH_ORPHAN_N). */
    orphanN: number;
  };
  sharding: {
    /** Bundles (BENCH_SHARDING_BUNDLES) of this many ConfigMaps each (BENCH_SHARDING_OBJECTS). */
    bundles: number;
    objectsPerBundle: number;
    /** --workers of each operator process (BENCH_SHARDING_WORKERS; the operator's default). */
    workers: number;
    /** Runs per layout (BENCH_SHARDING_RUNS): one by default, as 1000 x 20 takes about three minutes a layout on 2 busy cores. */
    runs: number;
  };
  memory: {
    /** Synthetic objects fed to the graph (BENCH_MEMORY_OBJECTS); a 10k row is measured besides. */
    syntheticObjects: number;
    /** The large synthetic row (BENCH_MEMORY_LARGE_OBJECTS, 0 to skip; skipped under --quick). */
    largeObjects: number;
    /** Objects created on a real apiserver for the same measurement (BENCH_MEMORY_REAL_OBJECTS, 0 to skip). */
    realObjects: number;
    /** Objects per owner (one owner per this many objects). */
    objectsPerOwner: number;
  };
  reconciler: {
    /** ConfigMaps in the one Bundle timed against raw parallel apply and kubectl (BENCH_SINGLE_BUNDLE_OBJECTS, 0 to skip). */
    singleObjects: number;
    /** Bundles (BENCH_BUNDLES, 0 to skip) of this many ConfigMaps each (BENCH_BUNDLE_OBJECTS). */
    bundles: number;
    objectsPerBundle: number;
    /** Operator reconcile workers (the operator's --workers default). */
    workers: number;
    /** No-op passes over every Bundle (BENCH_NOOP_ROUNDS). */
    noopRounds: number;
  };
  expiry: {
    /** ConfigMaps whose countdowns start together (BENCH_EXPIRY_OBJECTS). */
    objects: number;
    /** Their deletionDelay in seconds (BENCH_EXPIRY_DELAY_SECONDS): long enough for every stamp to be written first. */
    delaySeconds: number;
  };
  hostile: {
    /** ConfigMaps in the wide Bundle (BENCH_HOSTILE_RESOURCES): over the CRD's bound of 256, as an older CRD would store it. */
    resources: number;
    /** Length of the reference chain (BENCH_HOSTILE_CHAIN). */
    chain: number;
    /** Nesting depth of the deep object (BENCH_HOSTILE_DEPTH). */
    depth: number;
    /** Bytes of the long string (BENCH_HOSTILE_STRING_BYTES). */
    stringBytes: number;
    /** Passes per hostile Bundle (BENCH_HOSTILE_RUNS): cheap, so more than the other scenarios' runs. */
    runs: number;
    /** Unrelated Secrets, and as many unrelated Pods, created beside one Bundle (BENCH_HOSTILE_OBJECTS). */
    unrelatedPerKind: number;
    /** Namespaces they are spread over, the Bundle's own among them (BENCH_HOSTILE_NAMESPACES). */
    namespaces: number;
  };
}

function positiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return n;
}

export function benchConfig(argv: readonly string[], env: NodeJS.ProcessEnv): BenchConfig {
  const quick = argv.includes('--quick');
  const only = new Set(
    (env.BENCH_ONLY ?? BENCH_SCENARIOS.join(','))
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
  const runs = positiveInt(env, 'BENCH_RUNS', quick ? 1 : 2);
  const outFlag = argv.findIndex((a) => a === '--out' || a.startsWith('--out='));
  const outArg = outFlag < 0 ? undefined : argv[outFlag]?.startsWith('--out=') ? argv[outFlag]?.slice('--out='.length) : argv[outFlag + 1];
  const outDir = outArg || env.BENCH_OUT_DIR || undefined;
  for (const name of only)
    if (!(BENCH_SCENARIOS as readonly string[]).includes(name))
      throw new Error(`BENCH_ONLY: unknown scenario ${JSON.stringify(name)} (known: ${BENCH_SCENARIOS.join(', ')})`);
  return {
    quick,
    only,
    outDir,
    gcWorkers: positiveInt(env, 'BENCH_GC_WORKERS', 32),
    gcWorkersHigh: positiveInt(env, 'BENCH_GC_WORKERS_HIGH', 64),
    cascade: {
      n: positiveInt(env, 'BENCH_N', quick ? 100 : 1000),
      qps: positiveInt(env, 'BENCH_QPS', 100),
      burst: positiveInt(env, 'BENCH_BURST', 150),
      runs: Math.max(1, runs),
      unthrottledN: positiveInt(env, 'BENCH_UNTHROTTLED_N', quick ? 100 : 3000),
      unthrottledRuns: Math.max(1, positiveInt(env, 'BENCH_UNTHROTTLED_RUNS', quick ? 1 : 3)),
      rawConcurrency: positiveInt(env, 'BENCH_RAW_CONCURRENCY', 64),
      eventsApartVariant: env.BENCH_EVENTS_APART !== '0',
    },
    policies: {
      width: positiveInt(env, 'BENCH_FOREGROUND_WIDTH', quick ? 5 : 50),
      leaves: positiveInt(env, 'BENCH_FOREGROUND_LEAVES', quick ? 4 : 20),
      orphanN: positiveInt(env, 'BENCH_ORPHAN_N', quick ? 50 : 2000),
    },
    sharding: {
      bundles: positiveInt(env, 'BENCH_SHARDING_BUNDLES', quick ? 10 : 1000),
      objectsPerBundle: positiveInt(env, 'BENCH_SHARDING_OBJECTS', quick ? 3 : 20),
      workers: Math.max(1, positiveInt(env, 'BENCH_SHARDING_WORKERS', 4)),
      runs: Math.max(1, positiveInt(env, 'BENCH_SHARDING_RUNS', 1)),
    },
    memory: {
      syntheticObjects: positiveInt(env, 'BENCH_MEMORY_OBJECTS', quick ? 2_000 : 100_000),
      largeObjects: positiveInt(env, 'BENCH_MEMORY_LARGE_OBJECTS', quick ? 0 : 1_000_000),
      realObjects: positiveInt(env, 'BENCH_MEMORY_REAL_OBJECTS', quick ? 200 : 10_000),
      objectsPerOwner: positiveInt(env, 'BENCH_OBJECTS_PER_OWNER', 10),
    },
    reconciler: {
      singleObjects: positiveInt(env, 'BENCH_SINGLE_BUNDLE_OBJECTS', quick ? 50 : 200),
      bundles: positiveInt(env, 'BENCH_BUNDLES', quick ? 10 : 1000),
      objectsPerBundle: positiveInt(env, 'BENCH_BUNDLE_OBJECTS', quick ? 5 : 20),
      workers: positiveInt(env, 'BENCH_WORKERS', 4),
      noopRounds: Math.max(1, positiveInt(env, 'BENCH_NOOP_ROUNDS', quick ? 1 : 3)),
    },
    expiry: {
      objects: positiveInt(env, 'BENCH_EXPIRY_OBJECTS', quick ? 100 : 1000),
      delaySeconds: Math.max(1, positiveInt(env, 'BENCH_EXPIRY_DELAY_SECONDS', quick ? 5 : 15)),
    },
    hostile: {
      // The hostile inputs keep their size under --quick: they are the point, and take well under a second each.
      resources: positiveInt(env, 'BENCH_HOSTILE_RESOURCES', 15_000),
      chain: positiveInt(env, 'BENCH_HOSTILE_CHAIN', 12_000),
      depth: positiveInt(env, 'BENCH_HOSTILE_DEPTH', 2_000),
      stringBytes: positiveInt(env, 'BENCH_HOSTILE_STRING_BYTES', 1_048_576),
      runs: Math.max(1, positiveInt(env, 'BENCH_HOSTILE_RUNS', quick ? 1 : 5)),
      unrelatedPerKind: positiveInt(env, 'BENCH_HOSTILE_OBJECTS', quick ? 200 : 10_000),
      namespaces: Math.max(1, positiveInt(env, 'BENCH_HOSTILE_NAMESPACES', 5)),
    },
  };
}
