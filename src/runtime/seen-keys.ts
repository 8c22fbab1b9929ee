/**
 * Keys seen already, for work done once per key (an event reported, a
 * record written): bounded memory, the set is cleared past `limit` keys (a
 * key seen again after that is done again, which is only a repeat).
 */
export class SeenKeys {
  private readonly keys = new Set<string>();

  constructor(private readonly limit = 10_000) {}

  has(key: string): boolean {
    return this.keys.has(key);
  }

  add(key: string): void {
    if (this.keys.size >= this.limit) this.keys.clear();
    this.keys.add(key);
  }

  /** True the first time a key is given (and remembers it). */
  first(key: string): boolean {
    if (this.keys.has(key)) return false;
    this.add(key);
    return true;
  }
}
