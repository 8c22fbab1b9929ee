/**
 * A bounded set with least-recently-used eviction (a Map keeps insertion
 * order; touching a key re-inserts it). The absent-owner cache: a UID once
 * verified absent never comes back, so remembering it is always right; the
 * bound only limits memory.
 */
export class LruSet<K> {
  private readonly entries = new Map<K, true>();

  constructor(readonly capacity: number) {
    if (!(capacity >= 1)) throw new Error(`LruSet capacity must be at least 1, got ${capacity}`);
  }

  get size(): number {
    return this.entries.size;
  }

  add(key: K): void {
    this.entries.delete(key);
    this.entries.set(key, true);
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }

  /** Membership; a hit makes the key most recently used. */
  has(key: K): boolean {
    if (!this.entries.has(key)) return false;
    this.entries.delete(key);
    this.entries.set(key, true);
    return true;
  }
}
