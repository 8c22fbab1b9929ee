/**
 * The soft-delete fuzzer's model (test/fuzz/softdelete/model.ts) on
 * hand-written timelines: what it allows and what it flags.
 */
import {
  CLOSE_GRACE_MS,
  DUE_MARGIN_MS,
  SoftDeleteModel,
  type Delay,
  type Entry,
  type Rule,
  type Spoil,
} from '../../fuzz/softdelete/model.js';

const gateOf = (b: string) => `gate-${b}`;
const gate = (b: string): Entry => ({ object: gateOf(b), kind: 'Gate', delay: { kind: 'none' }, gated: false });
const cm = (object: string, delay: Delay, gated = false, rule?: Rule): Entry => ({
  object,
  kind: 'ConfigMap',
  delay,
  gated,
  ...(rule ? { rule } : {}),
});
const s = (seconds: number): Delay => ({ kind: 'valid', text: `${seconds}s`, ms: seconds * 1000 });
const NONE: Delay = { kind: 'none' };

function fresh(): SoftDeleteModel {
  return new SoftDeleteModel(['b1', 'b2'], ['x', 'y'], gateOf);
}

/** Applies at t (sent at t, answered 10 ms later). */
function apply(m: SoftDeleteModel, t: number, bundle: string, entries: Entry[], spoil: Spoil = 'none'): void {
  m.applyBundle(bundle, [gate(bundle), ...entries], spoil, t, t + 10);
}

function verdict(m: SoftDeleteModel, object: string, at: number): 'allowed' | 'wrongful' {
  return m.judge({ object, uid: 'u', seenAt: at }, 0) === undefined ? 'allowed' : 'wrongful';
}

describe('soft-delete fuzz model', () => {
  it('rights revoked (rbac): nothing is due meanwhile, then not before the grant plus the backoff; "not before" unchanged', () => {
    const m = fresh();
    apply(m, 0, 'b1', [cm('x', s(3))]);
    apply(m, 1000, 'b1', []);
    const usual = m.dueBy(m.object('x'));
    m.rightsRevoked(2000);
    expect(m.dueBy(m.object('x'))).toBe(Infinity);
    expect(m.rightsInDoubt(2500)).toBe(true);
    expect(verdict(m, 'x', 3999)).toBe('wrongful');
    expect(verdict(m, 'x', 4000)).toBe('allowed');
    m.rightsRestored(30_000, 5_000);
    expect(m.dueBy(m.object('x'))).toBe(usual - 4010 + 35_000);
    expect(m.rightsInDoubt(34_999)).toBe(true);
    expect(m.rightsInDoubt(35_000)).toBe(false);
    expect(m.caughtUpBy()).toBe(35_000);
  });

  it('removal with a delay: wrongful before removal + delay, allowed after, due within the margin', () => {
    const m = fresh();
    apply(m, 0, 'b1', [cm('x', s(3))]);
    apply(m, 1000, 'b1', []);
    expect(verdict(m, 'x', 500)).toBe('wrongful');
    expect(verdict(m, 'x', 3999)).toBe('wrongful');
    expect(verdict(m, 'x', 4000)).toBe('allowed');
    expect(m.dueBy(m.object('x'))).toBeGreaterThan(4010);
    expect(Number.isFinite(m.dueBy(m.object('x')))).toBe(true);
  });

  it('re-adding cancels the countdown; removing again starts a new one', () => {
    const m = fresh();
    apply(m, 0, 'b1', [cm('x', s(3))]);
    apply(m, 1000, 'b1', []);
    apply(m, 2000, 'b1', [cm('x', s(3))]);
    m.listingsSeen();
    apply(m, 5000, 'b1', []);
    // The old expiry (4 s) falls while it is listed again, and before the new one (8 s).
    expect(verdict(m, 'x', 4500)).toBe('wrongful');
    expect(verdict(m, 'x', 7999)).toBe('wrongful');
    expect(verdict(m, 'x', 8000)).toBe('allowed');
  });

  it('a listing the operator may not have seen before it was undone does not restart the countdown; a seen one does', () => {
    const m = fresh();
    apply(m, 0, 'b1', [cm('x', s(3))]);
    m.confirmDelay('x', '3s');
    apply(m, 1000, 'b1', []);
    apply(m, 2000, 'b1', [cm('x', s(3))]);
    apply(m, 2040, 'b1', []);
    // Never seen: the first countdown (1 s + 3 s) may go on.
    expect(verdict(m, 'x', 4000)).toBe('allowed');
    const seen = fresh();
    apply(seen, 0, 'b1', [cm('x', s(3))]);
    seen.confirmDelay('x', '3s');
    apply(seen, 1000, 'b1', []);
    apply(seen, 2000, 'b1', [cm('x', s(3))]);
    seen.listingsSeen();
    apply(seen, 2040, 'b1', []);
    expect(verdict(seen, 'x', 4000)).toBe('wrongful');
    expect(verdict(seen, 'x', 5040)).toBe('allowed');
  });

  it('a deletion in flight when the object was listed again is tolerated only within the grace', () => {
    const m = fresh();
    apply(m, 0, 'b1', [cm('x', NONE)]);
    apply(m, 1000, 'b1', []);
    apply(m, 1100, 'b1', [cm('x', NONE)]);
    expect(verdict(m, 'x', 1100 + 10 + CLOSE_GRACE_MS - 1)).toBe('allowed');
    expect(verdict(m, 'x', 1100 + 10 + CLOSE_GRACE_MS + 1)).toBe('wrongful');
  });

  it('moving between Bundles hands the object over: never deleted', () => {
    const m = fresh();
    apply(m, 0, 'b1', [cm('x', s(2))]);
    apply(m, 0, 'b2', []);
    apply(m, 1000, 'b1', []);
    apply(m, 1500, 'b2', [cm('x', s(2))]);
    expect(verdict(m, 'x', 3500)).toBe('wrongful');
    expect(m.dueBy(m.object('x'))).toBe(Infinity);
  });

  it('an invalid spec deletes nothing; once valid, the countdown is honoured from the removal', () => {
    const m = fresh();
    apply(m, 0, 'b1', [cm('x', s(2)), cm('y', NONE)]);
    apply(m, 1000, 'b1', [cm('x', s(2)), cm('y', NONE)], 'invalid');
    apply(m, 2000, 'b1', [cm('x', s(2))], 'invalid');
    expect(verdict(m, 'y', 2500)).toBe('wrongful');
    expect(m.dueBy(m.object('y'))).toBe(Infinity);
    apply(m, 4000, 'b1', [cm('x', s(2))]);
    expect(verdict(m, 'y', 4000)).toBe('allowed');
  });

  it('a resource that fails to apply holds every prune of the Bundle', () => {
    const m = fresh();
    apply(m, 0, 'b1', [cm('x', NONE), cm('y', NONE)]);
    apply(m, 1000, 'b1', [cm('x', NONE)], 'failing');
    expect(verdict(m, 'y', 1500)).toBe('wrongful');
    apply(m, 2000, 'b1', [], 'failing');
    apply(m, 3000, 'b1', []);
    expect(verdict(m, 'x', 2500)).toBe('wrongful');
    expect(verdict(m, 'x', 3000)).toBe('allowed');
  });

  it('an unreadable delay keeps the object for good', () => {
    const m = fresh();
    apply(m, 0, 'b1', [cm('x', { kind: 'invalid', text: 'banana' })]);
    m.confirmDelay('x', 'banana');
    apply(m, 1000, 'b1', []);
    expect(verdict(m, 'x', 100_000)).toBe('wrongful');
    expect(m.dueBy(m.object('x'))).toBe(Infinity);
  });

  it('a manifest that may not have been applied yet counts: the shortest possible delay decides', () => {
    const m = fresh();
    apply(m, 0, 'b1', [cm('x', NONE)]);
    apply(m, 100, 'b1', [cm('x', s(5))]);
    apply(m, 200, 'b1', []);
    expect(verdict(m, 'x', 300)).toBe('allowed');
    // Once the live object showed the 5 s delay, only that one remains.
    const m2 = fresh();
    apply(m2, 0, 'b1', [cm('x', NONE)]);
    apply(m2, 100, 'b1', [cm('x', s(5))]);
    m2.confirmDelay('x', '5s');
    apply(m2, 200, 'b1', []);
    expect(verdict(m2, 'x', 300)).toBe('wrongful');
    expect(verdict(m2, 'x', 5200)).toBe('allowed');
  });

  it('deleting a Bundle deletes what has no delay at once and releases the rest until release + delay; re-applying adopts it back', () => {
    const m = fresh();
    apply(m, 0, 'b1', [cm('x', s(3)), cm('y', NONE)]);
    m.confirmDelay('x', '3s');
    m.confirmDelay('y', undefined);
    m.deleteBundle('b1', 1000, 1010);
    expect(verdict(m, 'y', 1000)).toBe('allowed');
    expect(verdict(m, gateOf('b1'), 1000)).toBe('allowed');
    // A sibling going (the gate) does not make the released object collectable.
    expect(verdict(m, 'x', 1100)).toBe('wrongful');
    expect(verdict(m, 'x', 4000)).toBe('allowed');
    apply(m, 2000, 'b1', [cm('x', s(3), true)]);
    // Listed again, even behind a Gate that is not Ready: never deleted.
    expect(verdict(m, 'x', 4000 + CLOSE_GRACE_MS)).toBe('wrongful');
  });

  it('an object two Bundles list stays when either lets go of it', () => {
    const m = fresh();
    apply(m, 0, 'b1', [cm('x', NONE)]);
    apply(m, 100, 'b2', [cm('x', NONE)]);
    m.deleteBundle('b1', 1000, 1010);
    expect(verdict(m, 'x', 1500)).toBe('wrongful');
  });

  it('an object never listed may go at any time (nothing protects it)', () => {
    expect(verdict(fresh(), 'x', 10)).toBe('allowed');
  });
  it("a hand-over the operator may not have carried out before the new Bundle dropped the object leaves the old controller's countdown in force (fuzz seed 45)", () => {
    const m = fresh();
    apply(m, 0, 'b2', [cm('x', s(4))]);
    m.listingsSeen();
    apply(m, 1000, 'b1', [cm('x', s(1))]);
    apply(m, 1010, 'b2', []);
    apply(m, 1080, 'b1', [], 'invalid');
    // b1 may never have taken it: b2's countdown (from 1010, 1 or 4 s) may run, although b1's spec is invalid.
    expect(verdict(m, 'x', 1500)).toBe('wrongful');
    expect(verdict(m, 'x', 2010)).toBe('allowed');
    // Or b1 did take it (and, invalid, keeps it): nothing says it must be gone.
    expect(m.dueBy(m.object('x'))).toBe(Infinity);
    // Seen by a settle, the hand-over happened: b1 (invalid) deletes nothing.
    const seen = fresh();
    apply(seen, 0, 'b2', [cm('x', s(4))]);
    seen.listingsSeen();
    apply(seen, 1000, 'b1', [cm('x', s(1))]);
    apply(seen, 1010, 'b2', []);
    seen.listingsSeen();
    apply(seen, 1080, 'b1', [], 'invalid');
    expect(verdict(seen, 'x', 9000)).toBe('wrongful');
  });

  describe('Bundle deletion propagation', () => {
    it('foreground: what the Bundle controlled may go at once, whatever its delay; nothing is due (the collector is judged elsewhere)', () => {
      const m = fresh();
      apply(m, 0, 'b1', [cm('x', s(30)), cm('y', { kind: 'invalid', text: 'banana' })]);
      m.listingsSeen(100);
      m.deleteBundle('b1', 1000, 1010, 'foreground');
      expect(verdict(m, 'x', 500)).toBe('wrongful');
      expect(verdict(m, 'x', 1000)).toBe('allowed');
      expect(verdict(m, 'y', 1000)).toBe('allowed');
      expect(m.dueBy(m.object('x'))).toBe(Infinity);
    });

    it('orphan: everything the Bundle controlled is kept, a countdown it had started included', () => {
      const m = fresh();
      apply(m, 0, 'b1', [cm('x', s(2)), cm('y', NONE)]);
      m.listingsSeen(100);
      apply(m, 500, 'b1', [cm('y', NONE)]);
      m.deleteBundle('b1', 1000, 1010, 'orphan');
      expect(verdict(m, 'x', 1000 + CLOSE_GRACE_MS + 100)).toBe('wrongful');
      expect(verdict(m, 'x', 60_000)).toBe('wrongful');
      expect(verdict(m, 'y', 60_000)).toBe('wrongful');
      expect(m.dueBy(m.object('x'))).toBe(Infinity);
    });

    it("foreground: an object another Bundle lists is kept once that Bundle's pass has run; before, the collector may win the race", () => {
      const racing = fresh();
      apply(racing, 0, 'b1', [cm('x', NONE)]);
      racing.listingsSeen(100);
      apply(racing, 500, 'b2', [cm('x', NONE)]);
      racing.deleteBundle('b1', 1000, 1010, 'foreground');
      expect(verdict(racing, 'x', 1200)).toBe('allowed');
      racing.listingsSeen(3000);
      expect(verdict(racing, 'x', 3000 + CLOSE_GRACE_MS + 100)).toBe('wrongful');

      const claimed = fresh();
      apply(claimed, 0, 'b1', [cm('x', NONE)]);
      apply(claimed, 500, 'b2', [cm('x', NONE)]);
      claimed.listingsSeen(700);
      claimed.deleteBundle('b1', 1000, 1010, 'foreground');
      expect(verdict(claimed, 'x', 1200)).toBe('wrongful');
    });

    it("a released object listed again and dropped before the operator looked: the release's countdown may go on (seed 225)", () => {
      const m = fresh();
      apply(m, 0, 'b1', [cm('x', s(3))]);
      m.confirmDelay('x', '3s');
      m.listingsSeen(100);
      m.deleteBundle('b1', 1000, 1010);
      apply(m, 2000, 'b2', [cm('x', s(3))]);
      apply(m, 2100, 'b2', []);
      // Released at 1 s with 3 s: the sweeper may delete it from 4 s, although b2 (created at 2 s) would wait until 5.1 s.
      expect(verdict(m, 'x', 3999)).toBe('wrongful');
      expect(verdict(m, 'x', 4000)).toBe('allowed');
      expect(m.dueBy(m.object('x'))).toBe(Infinity);
    });

    it('an orphaned object listed again is taken only by an apply: until a read shows a controller, nothing is due (seed 5)', () => {
      const m = fresh();
      apply(m, 0, 'b1', [cm('x', NONE)]);
      m.listingsSeen(100);
      m.deleteBundle('b1', 1000, 1010, 'orphan');
      apply(m, 2000, 'b1', [cm('x', NONE)], 'invalid');
      m.deleteBundle('b1', 3000, 3010);
      expect(m.dueBy(m.object('x'))).toBe(Infinity);
      const taken = fresh();
      apply(taken, 0, 'b1', [cm('x', NONE)]);
      taken.deleteBundle('b1', 1000, 1010, 'orphan');
      apply(taken, 2000, 'b1', [cm('x', NONE)]);
      taken.confirmControlled('x');
      taken.confirmControlled('gate-b1');
      taken.deleteBundle('b1', 3000, 3010);
      expect(Number.isFinite(taken.dueBy(taken.object('x')))).toBe(true);
    });

    it("a released object taken again and dropped before a settle goes with its Bundle's foreground cascade (seed 487)", () => {
      const m = fresh();
      apply(m, 0, 'b1', [cm('x', s(5))]);
      m.listingsSeen(100);
      m.deleteBundle('b1', 1000, 1010);
      apply(m, 1200, 'b1', [cm('x', s(5), true)]);
      apply(m, 3000, 'b1', []);
      // The release's countdown (1 s + 5 s) may go on; the re-created b1 may also hold it, and its cascade takes it.
      expect(verdict(m, 'x', 3500)).toBe('wrongful');
      m.deleteBundle('b1', 3600, 3610, 'foreground');
      expect(verdict(m, 'x', 3650)).toBe('allowed');
    });

    it('a background deletion the finalizer may read as orphan (a leftover orphan at its coordinates): nothing is due (seed 572)', () => {
      const m = fresh();
      apply(m, 0, 'b1', [cm('x', NONE), cm('y', s(1))]);
      m.listingsSeen(100);
      m.deleteBundle('b1', 1000, 1010, 'orphan');
      apply(m, 2000, 'b1', [cm('x', NONE, true), cm('y', s(1))]);
      m.confirmControlled('y');
      m.deleteBundle('b1', 3000, 3010);
      expect(m.dueBy(m.object('y'))).toBe(Infinity);
      // Deleting is still allowed once its delay has passed (the reading may be background after all).
      expect(verdict(m, 'y', 4000)).toBe('allowed');
    });

    it('an object counting down under another Bundle, listed by one that is orphan-deleted before it took it: the countdown goes on (seed 714)', () => {
      const m = fresh();
      apply(m, 0, 'b2', [cm('x', s(1))]);
      m.confirmDelay('x', '1s');
      m.listingsSeen(100);
      apply(m, 1000, 'b2', []);
      apply(m, 1500, 'b1', [cm('x', s(1))]);
      m.deleteBundle('b1', 1530, 1540, 'orphan');
      expect(verdict(m, 'x', 1999)).toBe('wrongful');
      expect(verdict(m, 'x', 2000)).toBe('allowed');
    });

    it('foreground: a Bundle that dropped an object another lists, before that one took it, may still cascade it until a settle (seed 731)', () => {
      const m = fresh();
      apply(m, 0, 'b1', [cm('x', s(3))]);
      m.listingsSeen(100);
      apply(m, 1000, 'b2', [cm('x', s(2))]);
      apply(m, 1010, 'b1', []);
      m.deleteBundle('b1', 1100, 1110, 'foreground');
      expect(verdict(m, 'x', 1200)).toBe('allowed');
      m.listingsSeen(2000);
      expect(verdict(m, 'x', 2000 + CLOSE_GRACE_MS + 100)).toBe('wrongful');
    });
  });
  it('foreground: a Bundle that dropped an object just before another listed it may still cascade it until a settle (seed 5123)', () => {
    const m = fresh();
    apply(m, 0, 'b2', [cm('x', NONE, false, 'Approve')]);
    m.listingsSeen(100);
    apply(m, 3100, 'b2', []);
    apply(m, 3190, 'b1', [cm('x', NONE, false, 'BundleReady')]);
    m.deleteBundle('b2', 3200, 3210, 'foreground');
    expect(verdict(m, 'x', 3270)).toBe('allowed');
    m.listingsSeen(5000);
    expect(verdict(m, 'x', 5000 + CLOSE_GRACE_MS + 100)).toBe('wrongful');
  });

  it("a listed object with an unreadable delay withholds the Bundle's prunes: nothing is due until it is gone (seed 5339)", () => {
    const m = fresh();
    apply(m, 0, 'b1', [cm('x', s(1)), cm('y', { kind: 'invalid', text: '' })]);
    m.listingsSeen(100);
    apply(m, 1000, 'b1', [cm('y', { kind: 'invalid', text: '' })]);
    // Allowed from its delay on (the operator may not have reached y), but not due while y is listed.
    expect(verdict(m, 'x', 2000)).toBe('allowed');
    expect(m.dueBy(m.object('x'))).toBe(Infinity);
    apply(m, 5000, 'b1', []);
    expect(m.dueBy(m.object('x'))).toBeGreaterThan(5010 + 1000);
    expect(Number.isFinite(m.dueBy(m.object('x')))).toBe(true);
  });

  describe('deletion policies (issue 16)', () => {
    it('Orphan: never deleted once removed, nor once its Bundle is deleted in the background; nothing is due', () => {
      const m = fresh();
      apply(m, 0, 'b1', [cm('x', s(1), false, 'Orphan'), cm('y', NONE, false, 'Orphan')]);
      m.listingsSeen(100);
      apply(m, 1000, 'b1', [cm('y', NONE, false, 'Orphan')]);
      expect(verdict(m, 'x', 60_000)).toBe('wrongful');
      expect(m.dueBy(m.object('x'))).toBe(Infinity);
      m.deleteBundle('b1', 2000, 2010);
      expect(verdict(m, 'y', 60_000)).toBe('wrongful');
      expect(m.notBefore(m.object('y')).at).toBe(Infinity);
    });

    it('Orphan, but an earlier manifest without the policy may still be on the object: its countdown is allowed', () => {
      const m = fresh();
      apply(m, 0, 'b1', [cm('x', s(1))]);
      apply(m, 50, 'b1', [cm('x', s(1), false, 'Orphan')]);
      apply(m, 1000, 'b1', []);
      expect(verdict(m, 'x', 2000)).toBe('allowed');
      // Once a read shows the live object carries the policy, only it counts.
      const seen = fresh();
      apply(seen, 0, 'b1', [cm('x', s(1))]);
      apply(seen, 50, 'b1', [cm('x', s(1), false, 'Orphan')]);
      seen.confirmDelay('x', '1s', 'Orphan');
      apply(seen, 1000, 'b1', []);
      expect(verdict(seen, 'x', 60_000)).toBe('wrongful');
    });

    it('Approve: not before an approval later than the removal, and not before the delay', () => {
      const m = fresh();
      apply(m, 0, 'b1', [cm('x', s(1), false, 'Approve')]);
      m.listingsSeen(100);
      // An approval written while it is listed never counts for the countdown that starts later.
      m.approve('x', 500, 500, 510);
      apply(m, 1000, 'b1', []);
      expect(verdict(m, 'x', 5000)).toBe('wrongful');
      // Backdated to before the removal: does not count either.
      m.approve('x', 900, 6000, 6010);
      expect(verdict(m, 'x', 6500)).toBe('wrongful');
      // Written after the removal, before the delay ran out: the delay still holds.
      m.approve('x', 1500, 1500, 1510);
      expect(verdict(m, 'x', 1800)).toBe('wrongful');
      expect(verdict(m, 'x', 2000)).toBe('allowed');
      expect(m.dueBy(m.object('x'))).toBe(Infinity);
    });

    it('Approve: an approval dated more than a minute ahead never counts (red team 13)', () => {
      const m = fresh();
      apply(m, 0, 'b1', [cm('x', s(1), false, 'Approve')]);
      m.listingsSeen(100);
      apply(m, 1000, 'b1', []);
      m.approve('x', 1500 + 365 * 24 * 3_600_000, 1500, 1510);
      expect(verdict(m, 'x', 60_000)).toBe('wrongful');
      m.approve('x', 61_000, 61_000, 61_010);
      expect(verdict(m, 'x', 61_001)).toBe('allowed');
    });

    it('Approve: released by a background deletion, the sweeper waits for an approval too', () => {
      const m = fresh();
      apply(m, 0, 'b1', [cm('x', NONE, false, 'Approve')]);
      m.listingsSeen(100);
      m.deleteBundle('b1', 1000, 1010);
      expect(verdict(m, 'x', 9000)).toBe('wrongful');
      m.approve('x', 10_000, 10_000, 10_010);
      expect(verdict(m, 'x', 10_001)).toBe('allowed');
    });

    it('deleteWhen BundleReady: not while the Gate of the Bundle that dropped it is closed; allowed once it opens', () => {
      const m = fresh();
      apply(m, 0, 'b1', [cm('x', s(1), false, 'BundleReady')]);
      m.listingsSeen(100);
      apply(m, 1000, 'b1', []);
      expect(verdict(m, 'x', 5000)).toBe('wrongful');
      m.setGateReady('b1', true, 6000, 6010);
      expect(verdict(m, 'x', 5999)).toBe('wrongful');
      expect(verdict(m, 'x', 6000)).toBe('allowed');
      // Closed again: a deletion long after the close (past the grace) is wrongful.
      m.setGateReady('b1', false, 7000, 7010);
      expect(verdict(m, 'x', 7010 + CLOSE_GRACE_MS + 500)).toBe('wrongful');
      expect(m.dueBy(m.object('x'))).toBe(Infinity);
    });

    it('deleteWhen BundleReady, released: the Bundle is gone and the gate open, the delay alone holds', () => {
      const m = fresh();
      apply(m, 0, 'b1', [cm('x', s(2), false, 'BundleReady')]);
      m.listingsSeen(100);
      m.deleteBundle('b1', 1000, 1010);
      expect(verdict(m, 'x', 2999)).toBe('wrongful');
      expect(verdict(m, 'x', 3000)).toBe('allowed');
    });

    it("spec.deletionDefaults: an object without its own settings takes the Bundle's delay and policy", () => {
      const m = fresh();
      m.applyBundle('b1', [gate('b1'), cm('x', NONE), cm('y', NONE)], 'none', 0, 10, { delay: s(2), rule: 'Orphan' });
      m.listingsSeen(100);
      // Its own manifest without a rule still carries the Orphan default (written onto it), and reads the default delay.
      m.confirmDelay('x', undefined, 'Orphan');
      m.applyBundle('b1', [gate('b1'), cm('y', NONE)], 'none', 1000, 1010);
      expect(verdict(m, 'x', 60_000)).toBe('wrongful');
      const d = fresh();
      d.applyBundle('b1', [gate('b1'), cm('x', NONE)], 'none', 0, 10, { delay: s(2) });
      d.listingsSeen(100);
      d.applyBundle('b1', [gate('b1')], 'none', 1000, 1010);
      expect(verdict(d, 'x', 2999)).toBe('wrongful');
      expect(verdict(d, 'x', 3000)).toBe('allowed');
      // Its own annotation wins over the default.
      const own = fresh();
      own.applyBundle('b1', [gate('b1'), cm('x', s(1), false, 'Approve')], 'none', 0, 10, { delay: s(5), rule: 'Orphan' });
      own.listingsSeen(100);
      own.applyBundle('b1', [gate('b1')], 'none', 1000, 1010);
      own.approve('x', 1500, 1500, 1510);
      expect(verdict(own, 'x', 2000)).toBe('allowed');
    });

    it('spec.deletionDefaults changed on a live Bundle: either the old or the new defaults may decide (least strict)', () => {
      const m = fresh();
      m.applyBundle('b1', [gate('b1'), cm('x', NONE)], 'none', 0, 10, { rule: 'Orphan' });
      m.listingsSeen(100);
      m.applyBundle('b1', [gate('b1'), cm('x', NONE)], 'none', 500, 510, {});
      m.applyBundle('b1', [gate('b1')], 'none', 1000, 1010);
      expect(verdict(m, 'x', 1000)).toBe('allowed');
      expect(m.dueBy(m.object('x'))).toBe(Infinity);
    });

    it('foreground: Orphan and Approve objects may be collected (the documented window before the finalizer releases them)', () => {
      const m = fresh();
      apply(m, 0, 'b1', [cm('x', NONE, false, 'Orphan'), cm('y', NONE, false, 'Approve')]);
      m.listingsSeen(100);
      m.deleteBundle('b1', 1000, 1010, 'foreground');
      expect(verdict(m, 'x', 1100)).toBe('allowed');
      expect(verdict(m, 'y', 1100)).toBe('allowed');
    });
  });
  describe('widened generator (issue 23): CRD versions and hand edits', () => {
    const legacy = (object: string, delay: Delay, rule?: Rule): Entry => ({ ...cm(object, delay, false, rule), legacy: true });

    it('an unserved old version blocks the Bundle that lists it: what it removed is not pruned (nor due) until its manifest names the new version', () => {
      const m = fresh();
      m.markVersioned(['x', 'y']);
      apply(m, 0, 'b1', [legacy('x', NONE), legacy('y', s(1))]);
      m.listingsSeen(100);
      apply(m, 1000, 'b1', [legacy('x', NONE)]);
      // Before the version goes, the removal of y counts down as usual.
      expect(verdict(m, 'y', 2100)).toBe('allowed');
      m.versionUnserved(3000, 3010);
      // x, still listed at v1alpha1, cannot be applied: the Bundle prunes nothing from then on.
      // (A prune decided before it may land within the grace after the change.)
      expect(verdict(m, 'y', 3500)).toBe('allowed');
      expect(verdict(m, 'y', 4500)).toBe('wrongful');
      expect(m.dueBy(m.object('y'))).toBe(Infinity);
      // The manifest moves to v1: prunes resume, not before then.
      apply(m, 5000, 'b1', [cm('x', NONE)]);
      expect(verdict(m, 'y', 4800)).toBe('wrongful');
      expect(verdict(m, 'y', 5000)).toBe('allowed');
      // Liveness of the versioned kind is not judged once its old version is unserved.
      expect(m.dueBy(m.object('y'))).toBe(Infinity);
    });

    it('a Bundle deleted while it lists an unserved version still releases with the delay and keeps Orphan (nothing collected early)', () => {
      const m = fresh();
      m.markVersioned(['x', 'y']);
      apply(m, 0, 'b1', [legacy('x', s(5)), legacy('y', NONE, 'Orphan')]);
      m.listingsSeen(100);
      m.versionUnserved(1000, 1010);
      m.deleteBundle('b1', 2000, 2010);
      expect(verdict(m, 'x', 2500)).toBe('wrongful');
      expect(verdict(m, 'x', 7000)).toBe('allowed');
      expect(verdict(m, 'y', 60_000)).toBe('wrongful');
      // Its finalizer may hold it (Stalled) until the manifests move on: the release may come late, nothing is due.
      expect(m.dueBy(m.object('x'))).toBe(Infinity);
      const plain = fresh();
      apply(plain, 0, 'b1', [cm('x', s(5))]);
      plain.listingsSeen(100);
      plain.versionUnserved(1000, 1010);
      plain.deleteBundle('b1', 2000, 2010);
      expect(Number.isFinite(plain.dueBy(plain.object('x')))).toBe(true);
    });

    it('an unserved version does not block a Bundle that lists nothing at it', () => {
      const m = fresh();
      m.markVersioned(['x']);
      apply(m, 0, 'b1', [legacy('x', NONE)]);
      apply(m, 0, 'b2', [cm('y', NONE)]);
      m.listingsSeen(100);
      m.versionUnserved(1000, 1010);
      apply(m, 2000, 'b2', []);
      expect(verdict(m, 'y', 2000)).toBe('allowed');
      expect(Number.isFinite(m.dueBy(m.object('y')))).toBe(true);
    });

    it('ownerReferences removed by hand: nothing is due until a read shows a controller again; "not before" is unchanged', () => {
      const m = fresh();
      apply(m, 0, 'b1', [cm('x', s(2))]);
      m.created('x', 'u');
      m.listingsSeen(100);
      m.handDisowned('x');
      apply(m, 1000, 'b1', []);
      expect(verdict(m, 'x', 2500)).toBe('wrongful');
      expect(verdict(m, 'x', 3000)).toBe('allowed');
      expect(m.dueBy(m.object('x'))).toBe(Infinity);
      apply(m, 4000, 'b1', [cm('x', s(2))]);
      m.listingsSeen(4100);
      m.confirmControlled('x');
      apply(m, 5000, 'b1', []);
      expect(Number.isFinite(m.dueBy(m.object('x')))).toBe(true);
    });

    it('a foreign owner added by hand: the release countdown still bounds "not before", nothing is due; a new incarnation drops it', () => {
      const m = fresh();
      apply(m, 0, 'b1', [cm('x', s(2))]);
      m.created('x', 'u');
      m.listingsSeen(100);
      m.handForeignOwner('x');
      m.deleteBundle('b1', 1000, 1010);
      expect(verdict(m, 'x', 1500)).toBe('wrongful');
      expect(verdict(m, 'x', 3000)).toBe('allowed');
      expect(m.dueBy(m.object('x'))).toBe(Infinity);
      m.deleted('x', 'u', 3000);
      expect(m.object('x').foreignOwner).toBeUndefined();
    });

    it("an Orphan object removed and seen released is not the Bundle's any more: its foreground deletion must not take it", () => {
      const m = fresh();
      apply(m, 0, 'b1', [cm('x', NONE, false, 'Orphan'), cm('y', NONE, false, 'Orphan')]);
      m.listingsSeen(100);
      apply(m, 1000, 'b1', [cm('y', NONE, false, 'Orphan')]);
      m.listingsSeen(2000);
      m.deleteBundle('b1', 3000, 3010, 'foreground');
      expect(verdict(m, 'x', 3500)).toBe('wrongful');
      // Still listed when the Bundle went: the documented foreground window.
      expect(verdict(m, 'y', 3500)).toBe('allowed');
      // Removed but no settle since: the release may not have happened yet.
      const unseen = fresh();
      apply(unseen, 0, 'b1', [cm('x', NONE, false, 'Orphan')]);
      unseen.listingsSeen(100);
      apply(unseen, 1000, 'b1', []);
      unseen.deleteBundle('b1', 1100, 1110, 'foreground');
      expect(verdict(unseen, 'x', 1500)).toBe('allowed');
      // A spoiled Bundle releases nothing: its foreground deletion may take it.
      const spoiled = fresh();
      apply(spoiled, 0, 'b1', [cm('x', NONE, false, 'Orphan')]);
      spoiled.listingsSeen(100);
      apply(spoiled, 1000, 'b1', [], 'failing');
      spoiled.listingsSeen(2000);
      spoiled.deleteBundle('b1', 3000, 3010, 'foreground');
      expect(verdict(spoiled, 'x', 3500)).toBe('allowed');
    });

    it('labels and annotations edited by hand change nothing: the managed label is no evidence (no model call)', () => {
      const m = fresh();
      apply(m, 0, 'b1', [cm('x', s(3), false, 'Orphan')]);
      m.listingsSeen(100);
      m.deleteBundle('b1', 1000, 1010);
      expect(verdict(m, 'x', 1100)).toBe('wrongful');
      expect(verdict(m, 'x', 100_000)).toBe('wrongful');
    });
  });
});

describe('soft-delete fuzz model: hold-back (a Bundle that lists a released object but never takes hold of it)', () => {
  /** b1 lists x (`delay`, `rule`) from 0 and is deleted at 1000 (answered 1010): x is released. */
  function released(delay: Delay, rule?: Rule): SoftDeleteModel {
    const m = fresh();
    apply(m, 0, 'b1', [cm('x', delay, false, rule)]);
    m.deleteBundle('b1', 1000, 1010);
    return m;
  }

  it('held back, seen: kept while listed and until drop + delay, then due', () => {
    const m = released(s(3));
    m.holdBack('x', 'held-1', 2000, 2010);
    expect(verdict(m, 'x', 3000)).toBe('wrongful');
    // The old countdown's expiry (4 s) falls while it is listed.
    expect(verdict(m, 'x', 4500)).toBe('wrongful');
    expect(m.dueBy(m.object('x'))).toBe(Infinity);
    m.dropHold('x', 'held-1', true, 7000, 7010);
    expect(verdict(m, 'x', 7500)).toBe('wrongful');
    expect(verdict(m, 'x', 9999)).toBe('wrongful');
    expect(verdict(m, 'x', 10_000)).toBe('allowed');
    expect(m.dueBy(m.object('x'))).toBe(10_010 + DUE_MARGIN_MS);
    expect(m.object('x').lastCountdownEnd).toBe(10_010);
  });

  it('a delete in flight when the listing landed is tolerated only within the grace', () => {
    const m = released(s(1));
    m.holdBack('x', 'held-1', 2500, 2510);
    expect(verdict(m, 'x', 2510 + CLOSE_GRACE_MS - 10)).toBe('allowed');
    expect(verdict(m, 'x', 3600)).toBe('wrongful');
  });

  it('held back, unseen: the old countdown may go on after the drop, nothing is due; still kept while listed', () => {
    const m = released(s(3));
    m.holdBack('x', 'held-1', 2000, 2010);
    m.dropHold('x', 'held-1', false, 7000, 7010);
    expect(verdict(m, 'x', 7500)).toBe('allowed');
    expect(verdict(m, 'x', 4500)).toBe('wrongful');
    expect(m.dueBy(m.object('x'))).toBe(Infinity);
  });

  it('an approval before the drop does not count after it', () => {
    const m = released(s(1), 'Approve');
    m.approve('x', 1500, 1500, 1510);
    m.holdBack('x', 'held-1', 2000, 2010);
    m.dropHold('x', 'held-1', true, 5000, 5010);
    expect(verdict(m, 'x', 6500)).toBe('wrongful');
    m.approve('x', 7000, 7000, 7010);
    expect(verdict(m, 'x', 6999)).toBe('wrongful');
    expect(verdict(m, 'x', 7000)).toBe('allowed');
  });

  it('Orphan stays kept through the hold and the drop', () => {
    const m = released(s(1), 'Orphan');
    expect(m.notBefore(m.object('x')).at).toBe(Infinity);
    m.holdBack('x', 'held-1', 2000, 2010);
    expect(m.notBefore(m.object('x')).at).toBe(Infinity);
    m.dropHold('x', 'held-1', true, 5000, 5010);
    expect(m.notBefore(m.object('x')).at).toBe(Infinity);
    expect(verdict(m, 'x', 60_000)).toBe('wrongful');
  });

  it('hand edits: "not before" strict, "due by" not judged', () => {
    const m = released(s(3));
    m.holdBack('x', 'held-1', 2000, 2010);
    m.dropHold('x', 'held-1', true, 7000, 7010);
    m.handReplayed('x');
    expect(verdict(m, 'x', 9999)).toBe('wrongful');
    expect(m.dueBy(m.object('x'))).toBe(Infinity);
  });

  it('a seen hold settles an unseen relisting: due again, from the drop', () => {
    const m = released(s(3));
    apply(m, 1500, 'b2', [cm('x', s(3))]);
    apply(m, 1800, 'b2', []);
    m.deleteBundle('b2', 1900, 1910);
    expect(m.dueBy(m.object('x'))).toBe(Infinity);
    m.holdBack('x', 'held-1', 6000, 6010);
    m.dropHold('x', 'held-1', true, 7000, 7010);
    expect(m.dueBy(m.object('x'))).toBe(10_010 + DUE_MARGIN_MS);
    expect(verdict(m, 'x', 9999)).toBe('wrongful');
    expect(verdict(m, 'x', 10_000)).toBe('allowed');
  });

  it('a hold-back of an object that is not released throws', () => {
    const m = fresh();
    expect(() => m.holdBack('x', 'held-1', 0, 10)).toThrow(/absent/);
    apply(m, 0, 'b1', [cm('x', s(3))]);
    expect(() => m.holdBack('x', 'held-1', 100, 110)).toThrow(/listed/);
  });
});
