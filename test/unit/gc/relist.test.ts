/**
 * The collector's informers keep no store: the graph is the index, and a
 * relist is diffed against the nodes its informer (source) observed. These
 * rows pin what a relist must still find: deletions that happened while the
 * watch was down.
 */
import { applyEvent } from '../../../src/core/gc/builder.js';
import { identityOf } from '../../../src/core/gc/graph-identity.js';
import { identity, obj, owners, ref, rv, Scenario } from './fixtures.js';

const CONFIG_MAPS = 1;
const SECRETS = 2;

describe('relists diffed against the graph', () => {
  it('an owner deleted while its watch was down leaves the graph at the relist, and its dependents are queued with it remembered absent', () => {
    const owner = obj('ConfigMap', 'owner');
    const a = obj('Secret', 'a', owners(ref(owner)));
    const b = obj('Secret', 'b', owners(ref(owner)));
    const s = new Scenario().observeFrom(CONFIG_MAPS, owner).observeFrom(SECRETS, a, b).drain();

    s.listed(CONFIG_MAPS);

    expect(s.graph.get('uid-owner')).toBeUndefined();
    expect(s.queued()).toEqual(['uid-a', 'uid-b']);
    expect(s.absent).toEqual([identity(owner)]);
  });

  it("removes only its own source's observed nodes that the list did not hold", () => {
    const owner = obj('ConfigMap', 'owner');
    const kept = obj('ConfigMap', 'kept');
    const a = obj('Secret', 'a', owners(ref(owner)));
    const b = obj('Secret', 'b', owners(ref(owner)));
    const s = new Scenario().observeFrom(CONFIG_MAPS, owner, kept).observeFrom(SECRETS, a, b).drain();

    s.listed(SECRETS, a);

    expect(s.graph.get('uid-b')).toBeUndefined();
    expect(s.graph.get('uid-a')?.observed).toBe(true);
    expect(s.graph.get('uid-owner')?.observed).toBe(true);
    expect(s.graph.get('uid-kept')?.observed).toBe(true);
    expect(s.dependentsOf('uid-owner')).toEqual(['uid-a']);
    expect(s.queued()).toEqual([]);
  });

  it('leaves virtual owners alone (only a live lookup removes them)', () => {
    const missing = obj('ConfigMap', 'missing');
    const dep = obj('Secret', 'dep', owners(ref(missing)));
    const s = new Scenario().observeFrom(SECRETS, dep).drain();

    s.listed(CONFIG_MAPS);

    expect(s.graph.get('uid-missing')?.virtual).toBe(true);
    expect(s.queued()).toEqual([]);
  });

  it('an object deleted and recreated under its name while the watch was down: the old UID goes, the new one stays', () => {
    const before = obj('ConfigMap', 'cm');
    const after = obj('ConfigMap', 'cm', (o) => (o.metadata.uid = 'uid-cm-2'), rv('7'));
    const dep = obj('Secret', 'dep', owners(ref(before)));
    const s = new Scenario().observeFrom(CONFIG_MAPS, before).observeFrom(SECRETS, dep).drain();

    s.observeFrom(CONFIG_MAPS, after).listed(CONFIG_MAPS, after);

    expect(s.graph.get('uid-cm')).toBeUndefined();
    expect(s.graph.get('uid-cm-2')?.observed).toBe(true);
    expect(s.queued()).toEqual(['uid-dep']);
  });

  it('an object listed again at the resourceVersion its source applied changes nothing; a new resourceVersion is applied', () => {
    const owner = obj('ConfigMap', 'owner');
    const s = new Scenario().observeFrom(CONFIG_MAPS, owner).drain();

    const same = applyEvent(s.graph, { type: 'observed', object: obj('ConfigMap', 'owner'), source: CONFIG_MAPS, at: 0 });
    expect(same.touched).toEqual([]);

    s.observeFrom(
      CONFIG_MAPS,
      obj(
        'ConfigMap',
        'owner',
        rv('2'),
        (o) => (o.metadata.finalizers = ['orphan']),
        (o) => (o.metadata.deletionTimestamp = '2026-01-01T00:00:00Z'),
      ),
    );
    expect([...s.attemptToOrphan]).toEqual(['uid-owner']);
  });

  it('the list of the next served version, at the same resourceVersion, moves the node to that version (fuzz softdelete 19718)', () => {
    // A CRD's preferred version moved from v1alpha1 to v1: the collector's informer of the group and resource (one
    // source across versions) lists at v1 what it observed at v1alpha1, unchanged. The node must be known at v1, or
    // every attempt to delete it resolves the unserved v1alpha1 and waits for good (a foreground owner with it).
    const GADGETS = 3;
    const owner = obj('ConfigMap', 'owner');
    const alpha = obj('g.test/v1alpha1 Gadget', 'g', owners(ref(owner, { controller: true, blocking: true })));
    const s = new Scenario().observeFrom(CONFIG_MAPS, owner).observeFrom(GADGETS, alpha).drain();

    s.observeFrom(GADGETS, obj('g.test/v1 Gadget', 'g', owners(ref(owner, { controller: true, blocking: true }))));

    const node = s.graph.get('uid-g');
    expect(node && identityOf(node).apiVersion).toBe('g.test/v1');
    expect(s.dependentsOf('uid-owner')).toEqual(['uid-g']);
  });

  it('a node observed from a source keeps it across updates; a list of another source does not touch it', () => {
    const cm = obj('ConfigMap', 'cm');
    const s = new Scenario().observeFrom(CONFIG_MAPS, cm).observeFrom(CONFIG_MAPS, obj('ConfigMap', 'cm', rv('2')));
    s.listed(SECRETS);
    expect(s.graph.get('uid-cm')?.source).toBe(CONFIG_MAPS);
    expect(s.graph.get('uid-cm')?.resourceVersion).toBe('2');
  });
});
