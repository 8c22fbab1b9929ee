/** Placeholder: the softdelete suite is being written (see issue 9). */
import type { FuzzSuite, SeedResult } from '../suite.js';

export class SoftDeleteFuzzSuite implements FuzzSuite {
  readonly name = 'softdelete' as const;
  async setup(): Promise<void> {}
  async runSeed(seed: number): Promise<SeedResult> {
    return { suite: this.name, seed, divergences: ['the softdelete suite is not written yet'], summary: 'not implemented' };
  }
  async teardown(): Promise<void> {}
}
