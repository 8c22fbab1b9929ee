/** Placeholder: the gc suite is being written (see issue 9). */
import type { FuzzSuite, SeedResult } from '../suite.js';

export class GcFuzzSuite implements FuzzSuite {
  readonly name = 'gc' as const;
  async setup(): Promise<void> {}
  runSeed(seed: number): Promise<SeedResult> {
    return Promise.resolve({ suite: this.name, seed, divergences: ['the gc suite is not written yet'], summary: 'not implemented' });
  }
  async teardown(): Promise<void> {}
}
