/**
 * Which Bundles declared which keys on their last pass, both ways: a
 * Bundle's keys are replaced as a whole on each pass, and an event on a key
 * finds the Bundles to wake. The object cache (coordinates a Bundle lists)
 * and the envRefHash watch (ConfigMaps and Secrets its workloads read) each
 * keep one.
 */
import type { BundleKey } from './bundle-key.js';

export class BundleIndex {
  private readonly byKey = new Map<string, Set<BundleKey>>();
  private readonly byBundle = new Map<BundleKey, Set<string>>();

  /** Replaces what `bundle` declared with `keys`. */
  declare(bundle: BundleKey, keys: Iterable<string>): void {
    this.undeclare(bundle);
    const mine = new Set(keys);
    if (mine.size === 0) return;
    this.byBundle.set(bundle, mine);
    for (const k of mine) {
      let set = this.byKey.get(k);
      if (!set) this.byKey.set(k, (set = new Set()));
      set.add(bundle);
    }
  }

  undeclare(bundle: BundleKey): void {
    for (const k of this.byBundle.get(bundle) ?? []) {
      const set = this.byKey.get(k);
      set?.delete(bundle);
      if (set?.size === 0) this.byKey.delete(k);
    }
    this.byBundle.delete(bundle);
  }

  /** The Bundles that declared `key`. */
  bundles(key: string): ReadonlySet<BundleKey> {
    return this.byKey.get(key) ?? EMPTY;
  }
}

const EMPTY: ReadonlySet<BundleKey> = new Set();
