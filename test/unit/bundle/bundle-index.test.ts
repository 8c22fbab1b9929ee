/** The two-way index behind the object cache's declared coordinates and the envRefHash watch. */
import { BundleIndex } from '../../../src/controllers/bundle/bundle-index.js';

describe('BundleIndex', () => {
  it('a pass replaces what a Bundle declared; undeclare forgets it; a key keeps the other Bundles', () => {
    const index = new BundleIndex();
    index.declare('ns/a', ['k1', 'k2']);
    index.declare('ns/b', ['k2']);
    expect([...index.bundles('k2')].sort()).toEqual(['ns/a', 'ns/b']);
    index.declare('ns/a', ['k3']);
    expect([...index.bundles('k1')]).toEqual([]);
    expect([...index.bundles('k2')]).toEqual(['ns/b']);
    expect([...index.bundles('k3')]).toEqual(['ns/a']);
    index.undeclare('ns/a');
    index.declare('ns/b', []);
    expect([...index.bundles('k2')]).toEqual([]);
    expect([...index.bundles('k3')]).toEqual([]);
  });
});
