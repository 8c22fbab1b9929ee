/** Placeholder: the softdelete suite is being written (see issue 9). */
import type { FuzzSuite, SeedResult } from '../suite.js';

export class SoftDeleteFuzzSuite implements FuzzSuite {
  readonly name = 'softdelete' as const;
  async setup(): Promise<void> {}
  runSeed(seed: number): Promise<SeedResult> {
    return Promise.resolve({ suite: this.name, seed, divergences: ['the softdelete suite is not written yet'], summary: 'not implemented' });
  }
  async teardown(): Promise<void> {}
}
