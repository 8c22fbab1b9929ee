/**
 * The model the soft-delete fuzzer judges the operator against. Pure: no
 * client, no clock; every transition is given the wall-clock times of the
 * request that caused it (`sentAt` just before it left, `ackedAt` once the
 * apiserver answered).
 *
 * For each object (by name: ConfigMaps the steps move around, and one Gate
 * per Bundle) the model keeps the intended state (listed by a live Bundle,
 * removed from the Bundle that controls it, released by a deleted Bundle)
 * and derives two instants:
 *
 * - `notBefore`: the earliest time a deletion is allowed. Infinity while a
 *   live Bundle lists it, while the Bundle that removed it has an invalid
 *   spec, when its deletionDelay is unreadable, or its deletionPolicy is
 *   Orphan; for Approve, no earlier than an approval written after the
 *   countdown began; for deleteWhen BundleReady, no earlier than the Bundle
 *   that dropped it may be Ready (its Gate open, its spec whole). A setting
 *   the object does not name comes from the spec.deletionDefaults of a
 *   Bundle that may decide on it.
 * - `dueBy`: the latest time it must be gone; Infinity whenever the rules
 *   allow it to stay (or the model cannot be sure it must go).
 *
 * Where the model cannot know what the operator saw (which manifest was last
 * applied, so which deletionDelay the live object carries), it keeps every
 * possibility and takes the least strict answer on each side: the shortest
 * delay for `notBefore`, the longest for `dueBy`. A divergence is therefore
 * always a rule broken in every possible history.
 *
 * Each change of `notBefore` is kept as a window, so a deletion observed at
 * t is judged against what the rules said at t: allowed iff some window
 * [max(from, notBefore), to + CLOSE_GRACE_MS) contains t (no grace for the
 * window before the object was first listed). `from` is the
 * sending time of the request that opened the window (nothing can act on a
 * request before it is sent); `to` the answer time of the one that closed it.
 */

/** What a Bundle entry says about the deletion delay of its object. */
import { APPROVAL_AHEAD_MS } from '../../../src/core/softdelete/decide.js';

export type Delay = { kind: 'none' } | { kind: 'valid'; text: string; ms: number } | { kind: 'invalid'; text: string };

export const NO_DELAY: Delay = { kind: 'none' };

export function delayText(d: Delay): string {
  return d.kind === 'none' ? 'no delay' : d.kind === 'valid' ? `delay ${d.text}` : `invalid delay ${JSON.stringify(d.text)}`;
}

/**
 * How an entry's object may leave besides its delay (issue 16): `Delete`
 * (no annotation, as in Smith), `Orphan` (deletionPolicy Orphan: released,
 * never deleted), `Approve` (deletionPolicy Approve: deleted only after an
 * approval later than its stamp) or `BundleReady` (deleteWhen BundleReady:
 * not before the Bundle that dropped it is Ready again).
 */
export type Rule = 'Delete' | 'Orphan' | 'Approve' | 'BundleReady';

export function ruleText(r: Rule | undefined): string {
  switch (r ?? 'Delete') {
    case 'Delete':
      return '';
    case 'Orphan':
      return ', policy Orphan';
    case 'Approve':
      return ', policy Approve';
    case 'BundleReady':
      return ', deleteWhen BundleReady';
  }
}

export type ObjectKind = 'ConfigMap' | 'Gate';

export type Spoil = 'none' | 'invalid' | 'failing';

/** What keeps a Bundle from pruning: its spoil, or a resource at a version the server no longer serves. */
type Blocked = Spoil | 'unserved';

const SPOIL_WORDS: Record<Exclude<Blocked, 'none'>, string> = {
  invalid: 'whose spec is invalid',
  failing: 'one of whose resources fails to apply',
  unserved: 'which lists a resource at a version the server no longer serves (it cannot apply it)',
};

/**
 * A Bundle's spec.deletionDefaults: a delay and a rule for objects whose own
 * annotations name none. The operator writes a default Orphan or Approve
 * onto each object it applies; a default delay or deleteWhen it reads from
 * the Bundle when it decides (and writes onto an object it releases).
 */
export interface Defaults {
  delay?: Delay;
  rule?: Exclude<Rule, 'Delete'>;
}

export function defaultsText(d: Defaults): string {
  const parts = [...(d.delay ? [delayText(d.delay)] : []), ...(d.rule ? [ruleText(d.rule).slice(2)] : [])];
  return parts.length === 0 ? 'no defaults' : `defaults ${parts.join(', ')}`;
}

/** What applying `e` under `defaults` writes onto the object: its own delay, and its own rule or a default Orphan / Approve. */
function writtenBy(e: Entry, defaults: Defaults): { delay: Delay; rule: Rule } {
  const ownRule = e.rule ?? 'Delete';
  const rule = ownRule !== 'Delete' ? ownRule : defaults.rule === 'Orphan' || defaults.rule === 'Approve' ? defaults.rule : 'Delete';
  return { delay: e.delay, rule };
}

/** One resource of a Bundle's spec, as the model sees it. */
export interface Entry {
  object: string;
  kind: ObjectKind;
  delay: Delay;
  /** The deletion policy or gate the object carries; absent is Delete (no annotation). */
  rule?: Rule;
  /** Ordered behind the Bundle's Gate (blocked while the Gate is not Ready). */
  gated: boolean;
  /**
   * The object is a custom resource of the seed's versioned CRD and the
   * manifest names its old version (v1alpha1). Once that version is no
   * longer served (versionUnserved), the Bundle cannot apply the resource:
   * its passes fail and it prunes nothing, like a spoiled Bundle, until the
   * manifest names the new version. Deleting the Bundle must still release
   * or keep what it controlled by the usual rules.
   */
  legacy?: boolean;
}

export interface BundleModel {
  name: string;
  exists: boolean;
  /**
   * Why the Bundle must delete nothing now, if it must: its spec is invalid
   * (a reference to a missing resource), or one of its resources fails to
   * apply (the apiserver rejects it), and nothing is pruned unless every
   * apply of the pass succeeded.
   */
  spoil: Spoil;
  /** Since when the spec is valid (sentAt of the edit that made it so), for countdowns that waited on it. */
  validSince: number;
  validSinceAck: number;
  gateReady: boolean;
  /** Its spec.deletionDefaults. */
  defaults: Defaults;
  /**
   * Since when the Bundle may be Ready (sentAt of the step that made its
   * spec whole and its Gate open): a deleteWhen BundleReady gate opens no
   * earlier. Infinity while it cannot be Ready (a closed Gate, a spoiled
   * spec), as every Bundle lists its Gate.
   */
  mayBeReadySince: number;
  /** In spec order; the Gate entry first. */
  entries: Entry[];
  /** When each listed object was claimed by this Bundle (older claims win a conflict). */
  claimedAt: Map<string, number>;
  /** Objects listed since the last settle: the operator may not have acted on that listing yet. */
  unseen: Set<string>;
}

/**
 * Where an object stands in the intended semantics.
 * - `absent`: no Bundle has listed it yet (nothing to protect).
 * - `listed`: some live Bundle lists it.
 * - `removed`: no live Bundle lists it; `by` still controls it (countdown from `start`).
 * - `released`: the Bundle that controlled it was deleted (countdown from `start`).
 * - `collected`: the Bundle that controlled it was deleted in the foreground:
 *   the collector deletes it from `start`, whatever its delay.
 * - `orphaned`: the Bundle that controlled it was deleted with orphan
 *   propagation: kept, whatever its delay.
 */
export type Standing =
  | { kind: 'absent' }
  | { kind: 'listed' }
  | { kind: 'removed'; by: string; start: number; startAck: number; handoverUnseen?: boolean }
  | {
      kind: 'released';
      from: string;
      start: number;
      startAck: number;
      relistingUnseen?: boolean;
      mayBeHeldBy?: string;
      mayBeKept?: boolean;
    }
  | { kind: 'collected'; from: string; start: number }
  | { kind: 'orphaned'; from: string };

/** How a Bundle is deleted (kubectl delete --cascade=...). */
export type Propagation = 'background' | 'foreground' | 'orphan';

interface Window {
  from: number;
  to: number;
  notBefore: number;
  /** What made the rule so, for messages. */
  why: string;
  /** How long after `to` a deletion may still be judged by this window (none before the object was ever listed: nothing could be in flight). */
  graceMs: number;
  /** Beside the rule in force: a race the operator cannot win, open until the next settle. */
  race?: boolean;
}

/** One manifest's deletion settings the live object may carry. */
interface PossibleDelay {
  delay: Delay;
  rule: Rule;
  addedAt: number;
}

/** An approval written on the object (smith.atlassian.com/deletionApproved). */
interface Approval {
  /** The time the annotation names: it counts only if later than the stamp. */
  time: number;
  /** When the write was sent: nothing could act on it before. */
  sentAt: number;
}

export interface ObjectModel {
  name: string;
  kind: ObjectKind;
  standing: Standing;
  /** Every deletionDelay the live object may carry (manifests applied since the last confirmation). */
  possibleDelays: PossibleDelay[];
  /**
   * The deletion defaults of every Bundle that may have controlled it: the
   * one that decides may be any of them (a Bundle that took it over without
   * applying it reads its annotations over its own defaults).
   */
  possibleDefaults: Defaults[];
  /** Approvals written on any incarnation of it; each counts only for a countdown that began before its time. */
  approvals: Approval[];
  windows: Window[];
  /** Whether the model believes an incarnation exists now (from the watch). */
  exists: boolean;
  uid?: string;
  /** Latest end of any countdown that ever ran on it (the final wait runs past these). */
  lastCountdownEnd: number;
  /**
   * The countdown that was running when the object was listed again, until a
   * settle shows the operator has seen that listing. The operator is
   * level-based: a listing undone before it looked is never seen, and that
   * countdown simply goes on, so a removal before the settle counts from it.
   */
  unseenRelisting?: { start: number; released?: { from: string; startAck: number }; removed?: { by: string; startAck: number } };
  /**
   * The Bundle that controlled the object stopped listing it while another
   * listed it: the other takes it over on its next pass, but until a settle
   * shows that pass ran, the old controller may still be the one in charge.
   * If the new lister drops it before then, the old controller's countdown
   * (from its removal) is the one that may run.
   */
  unseenHandover?: { from: string; start: number; startAck: number };
  /**
   * Another field manager put an ownerReference to a live object outside
   * the seed on it (a hand edit): the collector never takes it while that
   * owner lives, and whether the operator still deletes it on expiry is not
   * judged (only "not before").
   */
  foreignOwner?: boolean;
  /**
   * Another field manager wrote back its deletion annotations as an earlier
   * read saw them (red team 4): an older, stricter proof may hold the
   * deletion back, so only "not before" is judged for this incarnation.
   */
  replayed?: boolean;
  /**
   * Removed from its Bundle with deletionPolicy Orphan in every possible
   * history, and a settle has shown the Bundle's pass over that removal ran
   * (nothing blocking its prunes): the pass released it (took the
   * operator's references off), so it is no longer that Bundle's, and a
   * later foreground deletion of the Bundle must not take it (issue 23's
   * fifth class: a release that the API server refused left it controlled).
   */
  orphanReleased?: boolean;
  /**
   * Orphaned (kept, controlled by nothing) and listed again since: a Bundle
   * takes such an object only by applying it, which a Bundle that is
   * invalid, failing or blocked never does. Until a read shows a controller,
   * removing it or deleting its Bundle may leave it for good: nothing is due.
   */
  mayBeUncontrolled?: boolean;
  /**
   * A Bundle that never takes hold of it (the hold-back step: it runs as a
   * ServiceAccount that does not exist, or the object waits on a dependency
   * never Ready) lists it now: kept, whatever its countdown (a listing
   * cancels it: docs/safety.md). Only inside that step.
   */
  heldBy?: string;
}

export interface Deletion {
  object: string;
  uid: string;
  /** When the watch reported it: an upper bound on the true time. */
  seenAt: number;
}

/** A deletion observed up to this long after a window closed is still judged by it: watch latency, and a decision in flight when the re-listing landed. */
export const CLOSE_GRACE_MS = 1000;
/**
 * How long after the latest possible end of a countdown (or an operator
 * restart) the object may still be there: watch and queue latency, the
 * restarted process's start (discovery, informers syncing) on a busy 2-core
 * machine. Generous on purpose: only the "not after" side gets slack.
 */
export const DUE_MARGIN_MS = 15_000;

function delayMsOf(delay: Delay): number {
  return delay.kind === 'none' ? 0 : delay.kind === 'valid' ? delay.ms : Infinity;
}

function maxDelayMs(delays: readonly { delay: Delay }[]): number {
  let max = 0;
  for (const { delay } of delays) max = Math.max(max, delayMsOf(delay));
  return max;
}

function sameDelay(a: Delay, b: Delay): boolean {
  return a.kind === b.kind && (a.kind === 'none' || a.text === (b as { text: string }).text);
}

function samePossibility(p: { delay: Delay; rule: Rule }, q: { delay: Delay; rule: Rule }): boolean {
  return sameDelay(p.delay, q.delay) && p.rule === q.rule;
}

/** Whether a Bundle lists an object whose delay cannot be read (the operator refuses to apply it and prunes nothing). */
function listsUnreadableRules(b: BundleModel): boolean {
  return b.entries.some((e) => e.delay.kind === 'invalid');
}

function sameDefaults(a: Defaults, b: Defaults): boolean {
  return defaultsText(a) === defaultsText(b);
}

export class SoftDeleteModel {
  readonly bundles = new Map<string, BundleModel>();
  readonly objects = new Map<string, ObjectModel>();
  /** Latest time an operator (re)started: countdowns that ran out while it was down end no earlier. */
  private lastRestartAt = 0;
  /**
   * Since when part of the operator's rights is revoked (the rbac
   * dimension), undefined while it has them all: nothing is due meanwhile
   * (it may be unable to delete, release, list or write status).
   */
  private revokedSince: number | undefined;
  /**
   * When the operator may have caught up after its rights came back: the
   * grant, plus its backoff (its failed passes and watches retry after
   * delays that double while they fail). Countdowns that ran out before end
   * no earlier, as after a restart.
   */
  private rightsBackAt = 0;
  private claimSeq = 0;
  /** The versioned CRD's old version is no longer served (legacy entries cannot be applied). */
  private oldVersionUnserved = false;
  /** Objects of the versioned CRD: once its old version is unserved, their liveness is not judged. */
  private readonly versioned = new Set<string>();

  /**
   * `dueMarginMs`: the slack on the "not after" side (DUE_MARGIN_MS; a seed
   * whose operator runs under a tight request budget gets more: a prune of
   * a hundred objects at 10 requests a second takes ten seconds).
   */
  constructor(
    bundleNames: readonly string[],
    configMaps: readonly string[],
    gateOf: (bundle: string) => string,
    private readonly dueMarginMs = DUE_MARGIN_MS,
  ) {
    for (const name of bundleNames) {
      this.bundles.set(name, {
        name,
        exists: false,
        spoil: 'none',
        validSince: -Infinity,
        validSinceAck: -Infinity,
        gateReady: false,
        defaults: {},
        mayBeReadySince: Infinity,
        entries: [],
        claimedAt: new Map(),
        unseen: new Set(),
      });
      this.addObject(gateOf(name), 'Gate');
    }
    for (const name of configMaps) this.addObject(name, 'ConfigMap');
  }

  private addObject(name: string, kind: ObjectKind): void {
    this.objects.set(name, {
      name,
      kind,
      standing: { kind: 'absent' },
      possibleDelays: [],
      possibleDefaults: [],
      approvals: [],
      windows: [{ from: -Infinity, to: Infinity, notBefore: -Infinity, why: 'never listed', graceMs: 0 }],
      exists: false,
      lastCountdownEnd: -Infinity,
    });
  }

  bundle(name: string): BundleModel {
    const b = this.bundles.get(name);
    if (!b) throw new Error(`no Bundle ${name} in the model`);
    return b;
  }

  object(name: string): ObjectModel {
    const o = this.objects.get(name);
    if (!o) throw new Error(`no object ${name} in the model`);
    return o;
  }

  /**
   * What keeps `b` from pruning now: its spoil, else a legacy entry while
   * the old version is unserved.
   */
  blocked(b: BundleModel): Blocked {
    if (b.spoil !== 'none') return b.spoil;
    return this.listsUnserved(b) ? 'unserved' : 'none';
  }

  /** Whether `b` lists a resource at the versioned CRD's old version while it is unserved (spoiled or not). */
  listsUnserved(b: BundleModel): boolean {
    return this.oldVersionUnserved && b.entries.some((e) => e.legacy === true);
  }

  /** Live Bundles listing `object`, oldest claim first. */
  listers(object: string): BundleModel[] {
    return [...this.bundles.values()]
      .filter((b) => b.exists && b.entries.some((e) => e.object === object))
      .sort((x, y) => (x.claimedAt.get(object) ?? 0) - (y.claimedAt.get(object) ?? 0));
  }

  /**
   * A Bundle's spec was applied (created or edited): `entries` and `spoil`
   * are the new spec. Returns the objects whose standing changed.
   */
  applyBundle(name: string, entries: Entry[], spoil: Spoil, sentAt: number, ackedAt: number, defaults?: Defaults): string[] {
    const b = this.bundle(name);
    if (defaults !== undefined) b.defaults = { ...defaults };
    else if (!b.exists) b.defaults = {};
    const before = new Set(b.exists ? b.entries.map((e) => e.object) : []);
    const wasSpoiled = b.exists && this.blocked(b) !== 'none';
    const hadUnreadable = b.exists && listsUnreadableRules(b);
    if (!b.exists) {
      b.exists = true;
      b.claimedAt = new Map();
      b.unseen = new Set();
      b.gateReady = false;
    }
    b.entries = entries.map((e) => ({ ...e }));
    b.spoil = spoil;
    // A listed object whose delay cannot be read withholds the Bundle's prunes while the operator can reach it (not
    // while it is blocked): once it is gone or fixed, a due countdown may take until then plus the usual margin.
    if (hadUnreadable && !listsUnreadableRules(b)) b.validSinceAck = Math.max(b.validSinceAck, ackedAt);
    this.updateReadiness(b, sentAt);
    if (this.blocked(b) === 'none' && (wasSpoiled || b.validSince === -Infinity)) {
      b.validSince = sentAt;
      b.validSinceAck = ackedAt;
    }
    const touched = new Set<string>();
    for (const e of b.entries) {
      const o = this.object(e.object);
      if (!b.claimedAt.has(e.object)) b.claimedAt.set(e.object, ++this.claimSeq);
      if (!before.has(e.object)) b.unseen.add(e.object);
      // The operator may apply this manifest (an invalid spec applies nothing, but it may become valid as is).
      const written = writtenBy(e, b.defaults);
      if (!o.possibleDelays.some((p) => samePossibility(p, written))) o.possibleDelays.push({ ...written, addedAt: sentAt });
      if (!o.possibleDefaults.some((d) => sameDefaults(d, b.defaults))) o.possibleDefaults.push({ ...b.defaults });
      if (o.standing.kind !== 'listed') touched.add(e.object);
      if (o.standing.kind === 'orphaned') o.mayBeUncontrolled = true;
      if (o.standing.kind === 'removed' || o.standing.kind === 'released') {
        // A released object stays the sweeper's until the operator takes it: remember whose countdown that is.
        const released =
          o.standing.kind === 'released' ? { from: o.standing.from, startAck: o.standing.startAck } : o.unseenRelisting?.released;
        // Counting down under another Bundle: that one stays in charge until this one takes it.
        const removed =
          o.standing.kind === 'removed' && o.standing.by !== name
            ? { by: o.standing.by, startAck: o.standing.startAck }
            : o.unseenRelisting?.removed;
        o.unseenRelisting = {
          start: Math.min(o.standing.start, o.unseenRelisting?.start ?? Infinity),
          ...(released ? { released } : {}),
          ...(removed ? { removed } : {}),
        };
      }
      o.standing = { kind: 'listed' };
      delete o.orphanReleased;
      if (!before.has(e.object)) touched.add(e.object);
    }
    for (const object of before) {
      if (b.entries.some((e) => e.object === object)) continue;
      const claim = b.claimedAt.get(object) ?? Infinity;
      b.claimedAt.delete(object);
      b.unseen.delete(object);
      touched.add(object);
      const o = this.object(object);
      const others = this.listers(object);
      if (others.length > 0) {
        // Another live Bundle lists it: handed over, once that Bundle's pass runs. Only the oldest claim controlled it.
        const controlled = others.every((x) => (x.claimedAt.get(object) ?? Infinity) > claim);
        if (controlled && !o.unseenHandover) o.unseenHandover = { from: name, start: sentAt, startAck: ackedAt };
        continue;
      }
      const handover = o.unseenHandover;
      const previous = handover ? this.bundles.get(handover.from) : undefined;
      delete o.unseenHandover;
      if (handover && previous?.exists && this.blocked(previous) === 'none') {
        // The hand-over may never have happened: the old controller's countdown, from its own removal, may run.
        // Or it did, and the new lister's rules hold: no "due by" either way.
        o.standing = {
          kind: 'removed',
          by: handover.from,
          start: Math.min(handover.start, o.unseenRelisting?.start ?? Infinity),
          startAck: handover.startAck,
          handoverUnseen: true,
        };
      } else if (o.unseenRelisting?.released) {
        // Released, listed again and dropped before the operator looked: it may never have been taken, and
        // the sweeper's countdown goes on (from the release). Or it was taken: no "due by" either way.
        const { from, startAck } = o.unseenRelisting.released;
        o.standing = { kind: 'released', from, start: o.unseenRelisting.start, startAck, relistingUnseen: true, mayBeHeldBy: name };
      } else {
        o.standing = { kind: 'removed', by: name, start: Math.min(sentAt, o.unseenRelisting?.start ?? Infinity), startAck: ackedAt };
      }
      delete o.unseenRelisting;
    }
    if (wasSpoiled && this.blocked(b) === 'none')
      for (const o of this.objects.values()) if (o.standing.kind === 'removed' && o.standing.by === name) touched.add(o.name);
    this.recompute(sentAt, ackedAt, `Bundle ${name} applied`);
    return [...touched];
  }

  /**
   * A Bundle was deleted and is gone. Background: what it controlled is
   * released (countdown from the delete; no delay: at once). Foreground: the
   * collector deletes what it controlled, delays included. Orphan: all of it
   * is kept. Whatever the propagation, what another live Bundle lists stays
   * listed; in the foreground, though, while no other lister's pass has run
   * since it listed the object (no claim written, no hand-over yet), the
   * collector may get there first: a window allows that deletion until the
   * next settle.
   */
  deleteBundle(name: string, sentAt: number, ackedAt: number, propagation: Propagation = 'background'): string[] {
    const b = this.bundle(name);
    const touched: string[] = [];
    const listed = b.entries.map((e) => e.object);
    // The finalizer reads a background deletion as an orphan one when an object at the Bundle's coordinates looks
    // orphaned (applied by the operator, controlled by nothing): a leftover of an earlier orphan deletion that this
    // incarnation never took does. Then everything is kept (the safe reading); the model cannot tell, so nothing is due.
    const mayReadAsOrphan = propagation === 'background' && listed.some((x) => this.object(x).mayBeUncontrolled === true);
    // Listing a version the server no longer serves, the finalizer may hold the Bundle (Stalled) until its manifests
    // are moved on: the releases may come late, so nothing it releases is due (their "not before" stands).
    const mayBeHeld = this.listsUnserved(b);
    const mayBeKept = mayReadAsOrphan || mayBeHeld;
    b.exists = false;
    b.entries = [];
    b.claimedAt = new Map();
    b.unseen = new Set();
    b.spoil = 'none';
    b.validSince = -Infinity;
    b.validSinceAck = -Infinity;
    b.gateReady = false;
    b.mayBeReadySince = Infinity;
    for (const o of this.objects.values()) {
      const removedByIt = o.standing.kind === 'removed' && o.standing.by === name;
      // Released, listed again by this Bundle and dropped before a settle: it may have taken the object (then it
      // counts down under this Bundle) or not (the release's countdown goes on). Only a foreground cascade changes that.
      const maybeHeld = o.standing.kind === 'released' && o.standing.mayBeHeldBy === name;
      if (maybeHeld) {
        touched.push(o.name);
        if (propagation === 'foreground') o.standing = { kind: 'collected', from: name, start: sentAt };
        continue;
      }
      // It dropped the object while another Bundle listed it, or before another listed it again: until that one's
      // pass ran, this one may still control it (seed 5123).
      const mayStillControl = o.unseenHandover?.from === name || (o.standing.kind === 'listed' && o.unseenRelisting?.removed?.by === name);
      if (!listed.includes(o.name) && !removedByIt && !mayStillControl) continue;
      touched.push(o.name);
      const others = this.listers(o.name);
      if (others.length > 0) {
        if (propagation === 'foreground' && others.every((x) => x.unseen.has(o.name)))
          this.openRace(o, sentAt, `foreground deletion of ${name} before ${others.map((x) => x.name).join(', ')} took it or claimed it`);
        continue;
      }
      const released = o.unseenRelisting?.released;
      if (propagation === 'foreground' && removedByIt && o.orphanReleased) {
        // Released by the pass that saw its removal: not the Bundle's any more, the cascade does not reach it.
        o.standing = { kind: 'orphaned', from: name };
      } else if (propagation === 'foreground') {
        o.standing = { kind: 'collected', from: name, start: sentAt };
      } else if (propagation === 'orphan') {
        // Listed again but maybe never taken (the operator had not looked): then it is still the sweeper's, on
        // the first release's countdown, which orphaning does not stop. Taken, it is orphaned: kept.
        const removed = o.unseenRelisting?.removed;
        const holder = removed ? this.bundles.get(removed.by) : undefined;
        if (released && listed.includes(o.name))
          o.standing = {
            kind: 'released',
            from: released.from,
            start: o.unseenRelisting?.start ?? sentAt,
            startAck: released.startAck,
            relistingUnseen: true,
          };
        // Counting down under another live Bundle when this one listed it, never taken: that countdown goes on (seed 714).
        else if (removed && holder?.exists && listed.includes(o.name))
          o.standing = {
            kind: 'removed',
            by: removed.by,
            start: o.unseenRelisting?.start ?? sentAt,
            startAck: removed.startAck,
            handoverUnseen: true,
          };
        else o.standing = { kind: 'orphaned', from: name };
      } else if (removedByIt && o.standing.kind === 'removed') {
        o.standing = {
          kind: 'released',
          from: name,
          start: o.standing.start,
          startAck: Math.max(o.standing.startAck, ackedAt),
          ...(mayBeKept ? { mayBeKept: true } : {}),
        };
      } else {
        o.standing = {
          kind: 'released',
          from: name,
          start: Math.min(sentAt, o.unseenRelisting?.start ?? Infinity),
          startAck: ackedAt,
          ...(mayBeKept ? { mayBeKept: true } : {}),
        };
      }
      delete o.unseenRelisting;
    }
    this.recompute(sentAt, ackedAt, `Bundle ${name} deleted (${propagation})`);
    return touched;
  }

  /** A deletion allowed from `at` until the next settle, beside whatever rule stands (kept as the last window). */
  private openRace(o: ObjectModel, at: number, why: string): void {
    o.windows.splice(o.windows.length - 1, 0, { from: at, to: Infinity, notBefore: at, why, graceMs: CLOSE_GRACE_MS, race: true });
  }

  /** The test opened or closed a Bundle's Gate (sent at `sentAt`, answered at `ackedAt`). */
  setGateReady(bundle: string, ready: boolean, sentAt: number, ackedAt: number): void {
    const b = this.bundle(bundle);
    b.gateReady = ready;
    this.updateReadiness(b, sentAt);
    this.recompute(sentAt, ackedAt, `Gate of ${bundle} ${ready ? 'opened' : 'closed'}`);
  }

  /** Keeps mayBeReadySince in step with the Gate and the spec: the Bundle may be Ready only while both allow it. */
  private updateReadiness(b: BundleModel, at: number): void {
    if (!(b.exists && this.blocked(b) === 'none' && b.gateReady)) b.mayBeReadySince = Infinity;
    else if (b.mayBeReadySince === Infinity) b.mayBeReadySince = at;
  }

  /**
   * An approval (smith.atlassian.com/deletionApproved naming `time`) was
   * written on the live object. It counts only for a countdown stamped
   * before `time`, and a stamp is never earlier than the countdown's start.
   */
  approve(object: string, time: number, sentAt: number, ackedAt: number): void {
    this.object(object).approvals.push({ time, sentAt });
    const when = time <= sentAt - 1000 ? 'backdated' : time > sentAt + APPROVAL_AHEAD_MS ? 'dated a year ahead' : 'now';
    this.recompute(sentAt, ackedAt, `approval of ${object} (${when})`);
  }

  operatorStarted(at: number): void {
    this.lastRestartAt = Math.max(this.lastRestartAt, at);
  }

  /** Part of the operator's rights was revoked (the request was sent at `sentAt`). */
  rightsRevoked(sentAt: number): void {
    this.revokedSince ??= sentAt;
  }

  /** Its rights are whole again (in force at `at`); it may take `backoffMs` more to retry what failed meanwhile. */
  rightsRestored(at: number, backoffMs: number): void {
    this.revokedSince = undefined;
    this.rightsBackAt = Math.max(this.rightsBackAt, at + backoffMs);
  }

  /** Whether the operator may still be catching up on a revocation at `now` (a settle then proves nothing about its passes). */
  rightsInDoubt(now: number): boolean {
    return this.revokedSince !== undefined || now < this.rightsBackAt;
  }

  /** When the operator may have caught up after the last revocation (0: none yet). */
  caughtUpBy(): number {
    return this.revokedSince !== undefined ? Infinity : this.rightsBackAt;
  }

  /**
   * The live object was read and carries `annotation` as its deletionDelay:
   * when that is what the only Bundle listing it asks for, no other manifest
   * can be applied any more (applies follow the spec's order), so the other
   * possibilities go.
   */
  confirmDelay(object: string, annotation: string | undefined, rule: Rule = 'Delete'): void {
    const o = this.object(object);
    const listers = this.listers(object);
    if (listers.length !== 1 || o.standing.kind !== 'listed') return;
    const entry = listers[0]?.entries.find((e) => e.object === object);
    if (!entry) return;
    const matches =
      (entry.delay.kind === 'none' ? annotation === undefined : annotation === entry.delay.text) &&
      writtenBy(entry, listers[0]?.defaults ?? {}).rule === rule;
    if (!matches) return;
    const kept = o.possibleDelays.find((p) => samePossibility(p, writtenBy(entry, listers[0]?.defaults ?? {})));
    if (kept) o.possibleDelays = [kept];
  }

  /** A settle showed the operator has seen every live Bundle's current spec: listings in them are no longer unseen. */
  listingsSeen(at = Infinity): void {
    for (const b of this.bundles.values()) b.unseen.clear();
    for (const o of this.objects.values()) {
      for (const w of o.windows) if (w.race && w.to === Infinity) w.to = at;
      if (o.standing.kind === 'removed' && !o.standing.handoverUnseen && !o.mayBeUncontrolled) {
        const b = this.bundle(o.standing.by);
        const prunes =
          b.exists && this.blocked(b) === 'none' && !listsUnreadableRules(b) && !b.entries.some((e) => this.listers(e.object).length > 1);
        // (An unreadable delay is refused, not released.)
        if (prunes && this.effectiveRules(o).every((p) => p.rule === 'Orphan' && p.delay.kind !== 'invalid')) o.orphanReleased = true;
      }
      if (o.standing.kind !== 'listed') continue;
      delete o.unseenRelisting;
      delete o.unseenHandover;
    }
  }

  /** The objects of the seed's versioned CRD (custom resources whose CRD moves from v1alpha1 to v1). */
  markVersioned(objects: Iterable<string>): void {
    for (const o of objects) this.versioned.add(o);
  }

  /**
   * The versioned CRD stopped serving its old version (sent at `sentAt`,
   * answered at `ackedAt`): every Bundle that lists a resource at it is
   * blocked (prunes nothing, cannot be Ready) until its manifest names the
   * new version (an applyBundle without legacy entries). What a Bundle
   * controls is still its own: deleting the Bundle releases, keeps or
   * collects by the usual rules (deleteBundle does not look at this).
   * Returns the objects whose rules may have changed.
   */
  versionUnserved(sentAt: number, ackedAt: number): string[] {
    this.oldVersionUnserved = true;
    const touched = new Set<string>(this.versioned);
    for (const b of this.bundles.values()) {
      if (!b.exists) continue;
      this.updateReadiness(b, sentAt);
      if (this.blocked(b) === 'none') continue;
      for (const e of b.entries) touched.add(e.object);
      for (const o of this.objects.values()) if (o.standing.kind === 'removed' && o.standing.by === b.name) touched.add(o.name);
    }
    this.recompute(sentAt, ackedAt, 'old version of the CRD unserved');
    return [...touched];
  }

  /**
   * Another field manager removed every ownerReference from the live object
   * (a hand edit): no Bundle controls it until one applies it again (a
   * settle's read confirms that), so nothing is due; the rules' "not
   * before" stays as it was (a decision taken before the edit may land).
   */
  handDisowned(object: string): void {
    this.object(object).mayBeUncontrolled = true;
  }

  /** Another field manager added a non-controller ownerReference to a live object outside the seed (a hand edit). */
  handForeignOwner(object: string): void {
    this.object(object).foreignOwner = true;
  }

  /** Another field manager wrote back the object's deletion annotations as an earlier read saw them (a hand edit). */
  handReplayed(object: string): void {
    this.object(object).replayed = true;
  }

  /**
   * Another status writer cleared part of the Bundle's record: the
   * countdowns of what it removed may start again (a stamp the record does
   * not hold reads as none), so only "not before" is judged for them, as
   * for a replay. Returns those objects.
   */
  recordWiped(bundle: string): string[] {
    const counting = [...this.objects.values()].filter((o) => o.standing.kind === 'removed' && o.standing.by === bundle);
    for (const o of counting) o.replayed = true;
    return counting.map((o) => o.name);
  }

  /** A read showed a controller on the object: a Bundle took it. */
  confirmControlled(object: string): void {
    delete this.object(object).mayBeUncontrolled;
  }

  /** The watch saw an incarnation appear. */
  created(object: string, uid: string): void {
    const o = this.object(object);
    o.exists = true;
    o.uid = uid;
  }

  /**
   * The watch saw an incarnation go: a new one (if any) is created from a
   * current manifest, so only those (and any added since) remain possible.
   */
  deleted(object: string, uid: string, seenAt: number): void {
    const o = this.object(object);
    if (o.uid !== uid) return;
    o.exists = false;
    delete o.mayBeUncontrolled;
    delete o.foreignOwner;
    delete o.replayed;
    delete o.orphanReleased;
    const listers = this.listers(object);
    const current = listers.flatMap((b) => b.entries.filter((e) => e.object === object).map((e) => writtenBy(e, b.defaults)));
    const kept = o.possibleDelays.filter((p) => p.addedAt >= seenAt - CLOSE_GRACE_MS || current.some((w) => samePossibility(p, w)));
    for (const w of current) if (!kept.some((p) => samePossibility(p, w))) kept.push({ ...w, addedAt: seenAt });
    o.possibleDelays = kept;
    // A new incarnation is applied by a current lister; until then, the Bundles that may hold it stay possible.
    for (const b of listers) if (!o.possibleDefaults.some((d) => sameDefaults(d, b.defaults))) o.possibleDefaults.push({ ...b.defaults });
  }

  /**
   * A Bundle that never takes hold (`holder`, not one of the model's) lists
   * the released object from now (hold-back): it must stay while listed.
   */
  holdBack(object: string, holder: string, sentAt: number, ackedAt: number): void {
    const o = this.object(object);
    if (o.standing.kind !== 'released') throw new Error(`hold-back of ${object}, which is ${o.standing.kind}`);
    o.heldBy = holder;
    this.recompute(sentAt, ackedAt, `Bundle ${holder} (never takes hold) lists ${object}`);
  }

  /**
   * The held Bundle was deleted or dropped the object. `seen`: the release
   * record showed the listing (cancelled or ended), so whatever release was
   * current is over and a new countdown starts at the drop; relistings and
   * hand-overs unseen before are settled by it, so "due by" is judged again
   * (a finalizer that may have kept it stays so). Not seen: the old
   * countdown may go on, or it was cancelled; nothing is due.
   */
  dropHold(object: string, holder: string, seen: boolean, sentAt: number, ackedAt: number): string[] {
    const o = this.object(object);
    const s = o.standing;
    delete o.heldBy;
    if (s.kind !== 'released') throw new Error(`drop of ${object}, which is ${s.kind}`);
    o.standing = seen
      ? { kind: 'released', from: s.from, start: sentAt, startAck: ackedAt, ...(s.mayBeKept === true ? { mayBeKept: true } : {}) }
      : { ...s, relistingUnseen: true };
    this.recompute(sentAt, ackedAt, `Bundle ${holder} dropped ${object}${seen ? '' : ' (the listing not confirmed seen)'}`);
    return [object];
  }

  /** The earliest time the rules allow the object's deletion, and why. */
  notBefore(o: ObjectModel): { at: number; why: string } {
    if (o.heldBy !== undefined)
      return { at: Infinity, why: `listed by ${o.heldBy}, which never takes hold of it (the listing cancels its countdown)` };
    const s = o.standing;
    switch (s.kind) {
      case 'absent':
        return { at: -Infinity, why: 'never listed' };
      case 'listed':
        return {
          at: Infinity,
          why: `listed by ${this.listers(o.name)
            .map((b) => b.name)
            .join(', ')}`,
        };
      case 'removed': {
        const b = this.bundle(s.by);
        const blocked = this.blocked(b);
        if (blocked !== 'none') return { at: Infinity, why: `removed from ${s.by}, ${SPOIL_WORDS[blocked]} (it deletes nothing)` };
        const end = this.earliestEnd(o, s.start, b);
        if (end === Infinity) return { at: Infinity, why: `removed from ${s.by}: ${this.delayWords(o)} (kept)` };
        return { at: Math.max(b.validSince, end), why: `removed from ${s.by}: ${this.delayWords(o)}` };
      }
      case 'collected':
        // Whatever its delay and policy: the finalizer releases Orphan and Approve objects as soon as it sees the
        // deletion, but the collector may get there first (the documented foreground window).
        return { at: s.start, why: `its Bundle ${s.from} was deleted in the foreground (collected, whatever its delay)` };
      case 'orphaned':
        return { at: Infinity, why: `its Bundle ${s.from} was deleted with orphan propagation (kept)` };
      case 'released': {
        // The Bundle is gone: the sweeper reads a deleteWhen BundleReady gate as open.
        const end = this.earliestEnd(o, s.start, undefined);
        if (end === Infinity) return { at: Infinity, why: `released by deleted ${s.from}: ${this.delayWords(o)} (kept)` };
        return { at: end, why: `released by deleted ${s.from}: ${this.delayWords(o)}` };
      }
    }
  }

  /** The latest time the object must be gone by (Infinity: it may stay). */
  dueBy(o: ObjectModel): number {
    const s = o.standing;
    // Collected: the collector's timing is not judged here (the GC fuzzer judges it); orphaned: kept.
    if (s.kind === 'absent' || s.kind === 'listed' || s.kind === 'collected' || s.kind === 'orphaned') return Infinity;
    if (o.heldBy !== undefined) return Infinity;
    // Without all its rights the operator may be unable to act at all: only "not before" is judged meanwhile.
    if (this.revokedSince !== undefined) return Infinity;
    // A policy or gate may keep it for good (Orphan), or until an approval that the model cannot tell counted
    // (it must be later than a stamp the model does not read) or a readiness it does not observe: only the
    // "not before" side is judged for those.
    const effective = this.effectiveRules(o);
    if (effective.some((p) => p.rule !== 'Delete')) return Infinity;
    if (
      (s.kind === 'released' && (s.relistingUnseen === true || s.mayBeKept === true)) ||
      o.mayBeUncontrolled ||
      o.foreignOwner ||
      o.replayed
    )
      return Infinity;
    // Once the old version is unserved the operator may not reach these objects at all: only "not before" is judged.
    if (this.oldVersionUnserved && this.versioned.has(o.name)) return Infinity;
    const delay = maxDelayMs(effective);
    if (delay === Infinity) return Infinity;
    if (s.kind === 'removed') {
      if (s.handoverUnseen) return Infinity;
      const b = this.bundle(s.by);
      // Nothing is pruned while the Bundle is spoiled, one of its resources conflicts with another Bundle, or one
      // it lists has a delay that cannot be read (refused when it is applied: seed 5339).
      if (this.blocked(b) !== 'none' || listsUnreadableRules(b) || b.entries.some((e) => this.listers(e.object).length > 1))
        return Infinity;
      return Math.max(Math.max(s.startAck, b.validSinceAck) + delay, this.lastRestartAt, this.rightsBackAt) + this.dueMarginMs;
    }
    return Math.max(s.startAck + delay, this.lastRestartAt, this.rightsBackAt) + this.dueMarginMs;
  }

  /**
   * The earliest instant any manifest the live object may carry lets a
   * countdown from `start` end: its delay, then an approval later than
   * `start` (a stamp is never earlier) for Approve, and the remover's
   * readiness for deleteWhen BundleReady (`remover` undefined: the Bundle is
   * gone, the gate open). Orphan and an unreadable delay: never.
   */
  private earliestEnd(o: ObjectModel, start: number, remover: BundleModel | undefined): number {
    let earliest = Infinity;
    for (const p of this.effectiveRules(o)) {
      const delay = delayMsOf(p.delay);
      if (delay === Infinity || p.rule === 'Orphan') continue;
      let end = start + delay;
      // An approval dated more than a minute ahead of the server's clock never counts (red team 13: one dated a year ahead).
      const counted = o.approvals.filter((a) => a.time > start && a.time <= a.sentAt + APPROVAL_AHEAD_MS);
      if (p.rule === 'Approve') end = Math.max(end, Math.min(Infinity, ...counted.map((a) => a.sentAt)));
      if (p.rule === 'BundleReady' && remover) end = Math.max(end, remover.mayBeReadySince);
      earliest = Math.min(earliest, end);
    }
    return earliest;
  }

  /**
   * The rules the operator may decide on: what each manifest may have
   * written on the object, over the defaults of each Bundle that may decide
   * (a setting the object does not name comes from them; an own gate and a
   * default policy both holding is read as the own one alone, which can only
   * allow more).
   */
  private effectiveRules(o: ObjectModel): { delay: Delay; rule: Rule }[] {
    const own = o.possibleDelays.length > 0 ? o.possibleDelays : [{ delay: NO_DELAY, rule: 'Delete' as const }];
    const defaults = o.possibleDefaults.length > 0 ? o.possibleDefaults : [{}];
    return own.flatMap((p) =>
      defaults.map((d) => ({
        delay: p.delay.kind === 'none' ? (d.delay ?? NO_DELAY) : p.delay,
        rule: p.rule !== 'Delete' ? p.rule : (d.rule ?? 'Delete'),
      })),
    );
  }

  private delayWords(o: ObjectModel): string {
    const possible = this.effectiveRules(o)
      .map((p) => `${delayText(p.delay)}${ruleText(p.rule)}`)
      .join(' or ');
    return o.approvals.length === 0 ? possible : `${possible}; ${o.approvals.length} approval(s) written`;
  }

  /** Opens a new window for every object whose notBefore changed. */
  recompute(sentAt: number, ackedAt: number, cause: string): void {
    for (const o of this.objects.values()) {
      const nb = this.notBefore(o);
      const current = o.windows[o.windows.length - 1];
      const why = `${cause}: ${nb.why}`;
      if (current && current.notBefore === nb.at) {
        // Same rule, new reason (e.g. handed over to another Bundle): say so in messages; judgement is unchanged.
        if (!current.why.endsWith(`: ${nb.why}`)) {
          current.to = ackedAt;
          o.windows.push({ from: sentAt, to: Infinity, notBefore: nb.at, why, graceMs: CLOSE_GRACE_MS });
        }
        continue;
      }
      if (current) current.to = ackedAt;
      o.windows.push({ from: sentAt, to: Infinity, notBefore: nb.at, why, graceMs: CLOSE_GRACE_MS });
      const s = o.standing;
      if (Number.isFinite(nb.at) && (s.kind === 'removed' || s.kind === 'released')) {
        const startedBy = s.kind === 'removed' ? Math.max(s.startAck, this.bundle(s.by).validSinceAck) : s.startAck;
        o.lastCountdownEnd = Math.max(
          o.lastCountdownEnd,
          startedBy + maxDelayMs(this.effectiveRules(o).filter((p) => p.delay.kind !== 'invalid')),
        );
      }
    }
  }

  /**
   * Judges one observed deletion: undefined when some rule in force at
   * `seenAt` allowed it, else why it was wrongful.
   */
  judge(d: Deletion, origin: number): string | undefined {
    const o = this.object(d.object);
    for (const w of o.windows) {
      const opens = Math.max(w.from, w.notBefore);
      if (opens <= d.seenAt && d.seenAt < w.to + w.graceMs) return undefined;
    }
    const inForce = [...o.windows].reverse().find((w) => w.from <= d.seenAt) ?? o.windows[0];
    const rel = (t: number) => (Number.isFinite(t) ? `+${((t - origin) / 1000).toFixed(2)}s` : t > 0 ? 'never' : 'any time');
    return `${o.kind} ${o.name} (uid ${d.uid}) deleted at ${rel(d.seenAt)}, but the rule then was "${inForce?.why ?? '?'}" (earliest allowed: ${rel(inForce?.notBefore ?? Infinity)})`;
  }
}
