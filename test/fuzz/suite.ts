/**
 * What every fuzz suite offers the runner (test/fuzz/main.ts) and the CI
 * tests that run a fixed set of seeds (test/integration/fuzz-*.test.ts).
 */
export type SuiteName = 'gc' | 'softdelete';

export interface SeedResult {
  suite: SuiteName;
  seed: number;
  /** One line per divergence from the reference (empty: the seed passed). */
  divergences: string[];
  /** One line for humans: what the seed did (objects, steps, restarts). */
  summary: string;
  /**
   * For a failing seed: the smallest step list known to reproduce it, as
   * text a person can read and replay (`npm run fuzz -- --suite S --seed N`
   * reruns the whole seed).
   */
  replay?: string;
}

export interface SuiteContext {
  /** Progress for humans (stderr). */
  log(line: string): void;
  /**
   * A running control plane to use when the suite needs only a plain one
   * (jest's global setup passes its own); suites that need another kind
   * (kube-controller-manager as the reference) start their own.
   */
  kubeconfig?: string;
}

export interface FuzzSuite {
  readonly name: SuiteName;
  /** Starts what the suite needs (control planes, CRDs). Called once per run. */
  setup(ctx: SuiteContext): Promise<void>;
  /** Runs one seed from scratch (fresh namespaces) and judges it. */
  runSeed(seed: number): Promise<SeedResult>;
  /** Stops everything setup started, on every exit path. */
  teardown(): Promise<void>;
}
