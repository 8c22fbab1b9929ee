/**
 * The steps of a soft-delete seed and their generator. The generator reads
 * only the model's spec-level state (which Bundles exist, what they list,
 * whether they are valid, which Gates the test opened), never timings or
 * observations, so a seed always produces the same steps.
 */
import type { Random } from '../random.js';
import { NO_DIMENSIONS, RBAC_REVOCATION_TEXT, type HandEdit, type RbacRevocation, type SoftDeleteDimensions } from './dimensions.js';
import {
  defaultsText,
  delayText,
  ruleText,
  type BundleModel,
  type Defaults,
  type Delay,
  type Entry,
  type Propagation,
  type Rule,
  type SoftDeleteModel,
  type Spoil,
} from './model.js';

export type Step =
  | { kind: 'add'; bundle: string; object: string; delay: Delay; rule: Rule; gated: boolean; legacy?: boolean }
  | { kind: 'remove'; bundle: string; object: string }
  | {
      kind: 'move';
      from: string;
      to: string;
      object: string;
      delay: Delay;
      rule: Rule;
      gated: boolean;
      addFirst: boolean;
      legacy?: boolean;
    }
  | { kind: 'set-delay'; bundle: string; object: string; delay: Delay; rule: Rule }
  /** Writes smith.atlassian.com/deletionApproved on the live object: now, or backdated (before any stamp it may carry). */
  | { kind: 'approve'; object: string; backdated: boolean }
  | { kind: 'set-gated'; bundle: string; object: string; gated: boolean }
  | { kind: 'gate'; bundle: string; open: boolean }
  | { kind: 'delete-bundle'; bundle: string; propagation: Propagation }
  | { kind: 'reapply'; bundle: string; entries: Entry[]; spoil: Spoil; defaults: Defaults }
  /** Changes a live Bundle's spec.deletionDefaults. */
  | { kind: 'set-defaults'; bundle: string; defaults: Defaults }
  | { kind: 'spoil'; bundle: string; how: Exclude<Spoil, 'none'> }
  | { kind: 'repair'; bundle: string }
  | { kind: 'kill'; afterMs: number; downMs: number }
  | { kind: 'sleep'; ms: number }
  | { kind: 'settle' }
  // ---- the widened dimensions (dimensions.ts) ----
  /** Another field manager edits the live objects by hand. */
  | { kind: 'hand-edit'; edit: HandEdit; objects: string[] }
  /** Another status writer clears part of the Bundle's record (status.pendingDeletions, declaredRules, managedKinds): red team 9. */
  | { kind: 'wipe-record'; bundle: string; fields: RecordField[] }
  /** The Bundle drops every ConfigMap it lists (its Gate and custom resources stay): the kind may leave status.managedKinds. */
  | { kind: 'drop-configmaps'; bundle: string }
  /** The seed's versioned CRD: gains v1 as its storage version, or stops serving v1alpha1. */
  | { kind: 'crd-version'; stage: 'add-v1' | 'unserve-old' }
  /** The Bundle's manifests of the versioned kind move to v1. */
  | { kind: 'migrate'; bundle: string }
  /** Drops these objects from the Bundle and puts them back `gapMs` later (a broken template corrected). */
  | { kind: 'flap'; bundle: string; objects: string[]; gapMs: number; pauseLeader?: boolean }
  /** Takes part of the operator's rights away (rbac; scheduled from that dimension's stream, never drawn here). */
  | { kind: 'rbac-revoke'; what: RbacRevocation }
  /** Grants them back (a no-op when a held Bundle deletion already did). */
  | { kind: 'rbac-grant' }
  /**
   * A fresh Bundle lists a released object but never takes hold of it, for
   * `holdMs`, then is deleted or drops it (red teams 30-40). No delay or
   * rule of its own: its manifest copies the live object's (world.applyHeld).
   */
  | {
      kind: 'hold-back';
      object: string;
      /** A fresh logical name, `held-<n>`: never one of the model's Bundles. */
      holder: string;
      how: HoldHow;
      holdMs: number;
      /** `unlist` only with `nobody`: pruning by a Bundle whose dependency never becomes Ready is not modelled. */
      drop: 'delete' | 'unlist';
      before?: 'legacy-release';
      whileListed?: 'strip-release-proof';
      afterDrop?: 'replay-annotations';
      kill?: { afterMs: number; downMs: number };
    };

/** How a held Bundle never takes hold: it runs as a ServiceAccount that does not exist, or its object waits on a Deployment never Ready. */
export type HoldHow = 'nobody' | 'blocked-dependency';

/** Steps that write a Bundle may be followed at once by a settle (wait for the operator), or not (races). */
export interface PlannedStep {
  step: Step;
  settle: boolean;
}

const SPOIL_TEXT: Record<Exclude<Spoil, 'none'>, string> = {
  invalid: 'invalid (a resource references a missing one)',
  failing: 'fail to apply (a ConfigMap with a key the apiserver rejects)',
};

export function describeStep(s: Step): string {
  const gate = (g: boolean) => (g ? ', behind the gate' : '');
  switch (s.kind) {
    case 'add':
      return `add ${s.object} to ${s.bundle} (${delayText(s.delay)}${ruleText(s.rule)}${gate(s.gated)}${s.legacy === true ? ', at v1alpha1' : ''})`;
    case 'remove':
      return `remove ${s.object} from ${s.bundle}`;
    case 'move':
      return `move ${s.object} from ${s.from} to ${s.to} (${delayText(s.delay)}${ruleText(s.rule)}${gate(s.gated)}; ${s.addFirst ? 'add to the new Bundle first' : 'remove from the old Bundle first'})`;
    case 'set-delay':
      return `set ${s.object} in ${s.bundle} to ${delayText(s.delay)}${ruleText(s.rule)}`;
    case 'approve':
      return `approve the deletion of ${s.object} (${s.backdated ? 'backdated a minute' : 'now'})`;
    case 'set-gated':
      return `${s.gated ? 'put' : 'take'} ${s.object} in ${s.bundle} ${s.gated ? 'behind' : 'out from behind'} the gate`;
    case 'gate':
      return `${s.open ? 'open' : 'close'} the gate of ${s.bundle} (Ready=${s.open ? 'true' : 'false'})`;
    case 'delete-bundle':
      return `delete Bundle ${s.bundle} (${s.propagation}) and wait until it is gone`;
    case 'reapply': {
      const configMaps = s.entries.filter((e) => e.kind === 'ConfigMap');
      const bulk = configMaps.filter((e) => e.object.startsWith('bulk-')).length;
      const listed = [
        ...configMaps
          .filter((e) => !e.object.startsWith('bulk-'))
          .map((e) => `${e.object} (${delayText(e.delay)}${ruleText(e.rule)}${gate(e.gated)}${e.legacy === true ? ', at v1alpha1' : ''})`),
        ...(bulk > 0 ? [`${bulk} bulk ConfigMaps (no delay)`] : []),
      ];
      return `re-apply Bundle ${s.bundle} with ${listed.join(', ') || 'only its gate'}${s.spoil === 'none' ? '' : `, ${SPOIL_TEXT[s.spoil]}`}, ${defaultsText(s.defaults)}`;
    }
    case 'set-defaults':
      return `set the deletion defaults of ${s.bundle}: ${defaultsText(s.defaults)}`;
    case 'spoil':
      return `make ${s.bundle} ${SPOIL_TEXT[s.how]}`;
    case 'repair':
      return `make ${s.bundle} whole again (drop the broken resource)`;
    case 'kill':
      return `SIGKILL the operator ${s.afterMs} ms later, restart it ${s.downMs} ms after that`;
    case 'sleep':
      return `sleep ${s.ms} ms`;
    case 'settle':
      return 'settle (every Bundle observed by the operator)';
    case 'hand-edit':
      return `by hand (field manager fuzz-hand): ${HAND_EDIT_TEXT[s.edit]} on ${s.objects.length > 3 ? `all ${s.objects.length} objects` : s.objects.join(', ')}`;
    case 'drop-configmaps':
      return `drop every ConfigMap from ${s.bundle}`;
    case 'crd-version':
      return s.stage === 'add-v1' ? 'CRD: add v1 and make it the storage version (v1alpha1 still served)' : 'CRD: stop serving v1alpha1';
    case 'migrate':
      return `move ${s.bundle}'s manifests of the versioned kind to v1`;
    case 'rbac-revoke':
      return `RBAC: revoke ${RBAC_REVOCATION_TEXT[s.what]} from the operator's ServiceAccount`;
    case 'rbac-grant':
      return 'RBAC: grant the operator its rights back';
    case 'wipe-record':
      return `another status writer clears ${s.bundle}'s ${s.fields.map((f) => `status.${f}`).join(', ')}`;
    case 'hold-back': {
      const edits = [
        ...(s.before ? [`${HAND_EDIT_TEXT[s.before]} before the listing`] : []),
        ...(s.whileListed ? [`${HAND_EDIT_TEXT[s.whileListed]} while listed`] : []),
        ...(s.afterDrop ? [`${HAND_EDIT_TEXT[s.afterDrop]} after the drop`] : []),
      ];
      const how = s.how === 'nobody' ? 'serviceAccountName nobody' : 'behind a Deployment that never becomes Ready';
      return `list ${s.object} in Bundle ${s.holder}, which never takes hold (${how}) for ${s.holdMs} ms${s.kill ? ` (SIGKILL the operator ${s.kill.afterMs} ms in, restart it ${s.kill.downMs} ms after)` : ''}, then ${s.drop === 'delete' ? 'delete it' : 'drop it from its spec'}${edits.length > 0 ? `; by hand: ${edits.join('; ')}` : ''}`;
    }
    case 'flap':
      return `drop ${s.objects.length} objects from ${s.bundle} and put them back ${s.gapMs} ms later${s.pauseLeader ? ' (SIGSTOP the leader half-way; SIGCONT it past its Lease, SIGKILL it 2 s later)' : ''}`;
  }
}

/**
 * The fields of a Bundle's record the generator clears, as a status writer
 * other than the operator would (the chart's record guard, which refuses
 * it, is not installed here). Not status.declaredRules: with it cleared and
 * an earlier declared-rules proof written back, the floor is that proof's (a
 * documented limit the record guard closes, docs/safety.md).
 */
export type RecordField = 'pendingDeletions' | 'managedKinds';
export const RECORD_FIELDS: readonly RecordField[] = ['pendingDeletions', 'managedKinds'];

const HAND_EDIT_TEXT: Record<HandEdit, string> = {
  'unlabel-managed': 'remove the label smith.atlassian.com/managed',
  'label-managed-false': 'set smith.atlassian.com/managed=false',
  'label-other': 'set the label team.example.com/owner',
  'annotate-other': 'set the annotation example.com/last-edited-by',
  'drop-owner-refs': 'remove every ownerReference',
  'add-foreign-owner': 'add an ownerReference to a live Secret outside the seed',
  'replay-annotations':
    "write back its deletion annotations as an earlier read saw them (stamp, proofs, rules; a released object's release proof: red team 27)",
  'strip-release-proof':
    'kubectl annotate smith.atlassian.com/release-proof- on a released object (a replay may write it back later: red team 32)',
  'legacy-release':
    'turn a released object into one an earlier version released: its record deleted, the same facts under a v2 proof (red teams 32, 33)',
  'blank-claim-record': 'kubectl annotate --overwrite smith.atlassian.com/claimReferences= (red team 16)',
  'reset-managed-fields': 'reset its managedFields to [{}] (red team 14)',
  'blank-dependency-record': 'kubectl annotate --overwrite smith.atlassian.com/dependencyReferences= (red team 21)',
  'relabel-part-of': "write another ApplySet's applyset.kubernetes.io/part-of (a kubectl ApplySet: red team 20)",
  'erase-traces':
    'kubectl label part-of- and kubectl annotate applied-hash- dependencyReferences-: every orphan trace off (during an orphan deletion: red team 26)',
  'copy-object':
    'a person copies it (kubectl get -o yaml, renamed, kubectl apply --server-side; references to its siblings kept or not: red team 23)',
};

/** What the generator needs to know of the widened dimensions. */
export interface WidenedWorld {
  dims: SoftDeleteDimensions;
  /** Objects of the versioned CRD. */
  isVersioned(object: string): boolean;
  /** The bulk ConfigMaps (budget): not drawn by the ordinary steps. */
  bulk: readonly string[];
  /** The versioned CRD's stage. */
  stage(): 'v1alpha1' | 'v1' | 'unserved';
  /** Whether this flap pauses the leader (replicas; drawn from that dimension's own stream). */
  pauseLeader(): boolean;
  /** The holdBack dimension's stream (dimensions.ts holdBackRandom): where its steps go and their fields. */
  holdRandom?: Random;
}

const NOT_WIDENED: WidenedWorld = {
  dims: NO_DIMENSIONS,
  isVersioned: () => false,
  bulk: [],
  stage: () => 'v1alpha1',
  pauseLeader: () => false,
};

function randomDelay(rnd: Random): Delay {
  return rnd.weighted<() => Delay>([
    [3, () => ({ kind: 'none' })],
    [
      7,
      () => {
        const ms = rnd.int(2, 10) * 500;
        const text = ms % 1000 === 0 && rnd.chance(0.7) ? `${ms / 1000}s` : `${ms}ms`;
        return { kind: 'valid', text, ms };
      },
    ],
    [2, () => ({ kind: 'invalid', text: rnd.pick(['banana', '-2s', '']) })],
  ])();
}

/** Mostly none (Smith's manifests have none), else a delay, a rule or both. */
export function randomDefaults(rnd: Random): Defaults {
  if (!rnd.chance(0.35)) return {};
  const delay = rnd.chance(0.5) ? randomDelay(rnd) : undefined;
  const rule = rnd.chance(0.6) ? rnd.pick(['Orphan', 'Approve', 'BundleReady'] as const) : undefined;
  return { ...(delay && delay.kind === 'valid' ? { delay } : {}), ...(rule ? { rule } : {}) };
}

/** Mostly plain deletes, as in Smith; the policies of issue 16 often enough that most seeds meet each. */
function randomRule(rnd: Random): Rule {
  return rnd.weighted<Rule>([
    [5, 'Delete'],
    [1.5, 'Orphan'],
    [2, 'Approve'],
    [1.5, 'BundleReady'],
  ]);
}

export class StepGenerator {
  /** What each Bundle listed when it was deleted, to re-apply it. */
  private readonly lastSpec = new Map<string, Entry[]>();
  /** Its deletion defaults then. */
  private readonly lastDefaults = new Map<string, Defaults>();
  /** Steps decided ahead (the second half of a pair), taken before drawing new ones. */
  private readonly queued: Step[] = [];
  /** Held Bundles named so far (hold-back). */
  private holders = 0;

  constructor(
    private readonly rnd: Random,
    private readonly model: SoftDeleteModel,
    private readonly configMaps: readonly string[],
    private readonly gateOf: (bundle: string) => string,
    private readonly widened: WidenedWorld = NOT_WIDENED,
  ) {}

  /**
   * Whether a new entry of `object` names the versioned kind's old version:
   * always before v1 exists, often after (old manifests live on), sometimes
   * even once it is unserved (a stale template). Undefined for other kinds.
   */
  private legacyFor(object: string): { legacy?: boolean } {
    if (!this.widened.isVersioned(object)) return {};
    const stage = this.widened.stage();
    return { legacy: stage === 'v1alpha1' ? true : this.rnd.chance(stage === 'v1' ? 0.6 : 0.25) };
  }

  /** Bookkeeping of a Bundle deletion: what to re-apply later (and, sometimes, a re-apply at once). */
  private deleting(bundle: string, propagation: Propagation): void {
    const last = this.model.bundle(bundle).entries.map((e) => ({ ...e }));
    this.lastSpec.set(bundle, last);
    // holdBack: right after a background deletion, while a released countdown runs, a Bundle that never takes hold
    // lists one of the released objects (the red teams' timing). Drawn from that dimension's stream only.
    const h = this.widened.holdRandom;
    if (h && this.widened.dims.holdBack === true && propagation === 'background' && h.chance(0.9)) {
      const released = this.model
        .bundle(bundle)
        .entries.filter(
          (e) =>
            e.kind === 'ConfigMap' &&
            !this.widened.bulk.includes(e.object) &&
            !this.widened.isVersioned(e.object) &&
            this.model.listers(e.object).length === 1,
        );
      // Preferably one counting down (a valid delay); else one the release keeps (an unreadable delay, Orphan, Approve,
      // BundleReady). Not one that goes at once (no delay, plain delete): there is nothing to list by the time the step runs.
      const counting = released.filter((e) => e.delay.kind === 'valid');
      const kept = released.filter((e) => e.delay.kind === 'invalid' || (e.rule ?? 'Delete') !== 'Delete');
      const pool = counting.length > 0 ? counting : kept;
      if (pool.length > 0) this.queued.push(this.holdBackStep(h, h.pick(pool).object));
    }
    // Often the Bundle comes straight back with what it released now behind its new Gate, which is
    // not Ready: listed again, but blocked (the countdown must be cancelled all the same).
    const defaults = this.model.bundle(bundle).defaults;
    this.lastDefaults.set(bundle, defaults);
    if (this.rnd.chance(0.4))
      this.queued.push({
        kind: 'reapply',
        bundle,
        entries: last.map((e) => ({ ...e, gated: e.kind === 'ConfigMap' })),
        spoil: 'none',
        defaults,
      });
  }

  /** The first apply of a Bundle: its gate and a random handful of objects no other Bundle lists. */
  initialSpec(bundle: string, taken: ReadonlySet<string>): Entry[] {
    const entries: Entry[] = [{ object: this.gateOf(bundle), kind: 'Gate', delay: { kind: 'none' }, gated: false }];
    for (const object of this.configMaps) {
      if (taken.has(object) || !this.rnd.chance(0.5)) continue;
      entries.push({
        object,
        kind: 'ConfigMap',
        delay: randomDelay(this.rnd),
        rule: randomRule(this.rnd),
        gated: this.rnd.chance(0.25),
        ...this.legacyFor(object),
      });
    }
    return entries;
  }

  next(): PlannedStep {
    const rnd = this.rnd;
    const queued = this.queued.shift();
    if (queued) {
      // Only the widened dimensions queue a deletion (the scenario of drop-configmaps).
      if (queued.kind === 'delete-bundle') this.deleting(queued.bundle, queued.propagation);
      return { step: queued, settle: false };
    }
    // holdBack: now and then, before a drawn step, a Bundle that never takes hold lists a released object (one kept, or
    // awaiting an approval, or still counting down). Drawn from that dimension's stream only: the steps drawn stay as they were.
    const h = this.widened.holdRandom;
    if (h && this.widened.dims.holdBack === true && h.chance(0.35)) {
      // Not one its releasing Bundle listed with no delay and a plain delete (gone at once: nothing to list).
      const goesAtOnce = (object: string, from: string) =>
        (this.lastSpec.get(from) ?? []).some((e) => e.object === object && e.delay.kind === 'none' && (e.rule ?? 'Delete') === 'Delete');
      const released = [...this.model.objects.values()]
        .filter(
          (o) =>
            o.kind === 'ConfigMap' &&
            o.standing.kind === 'released' &&
            !goesAtOnce(o.name, o.standing.from) &&
            !this.widened.bulk.includes(o.name) &&
            !this.widened.isVersioned(o.name),
        )
        .map((o) => o.name);
      if (released.length > 0) return { step: this.holdBackStep(h, h.pick(released)), settle: false };
    }
    const bundles = [...this.model.bundles.values()];
    const live = bundles.filter((b) => b.exists);
    const pickLive = () => (live.length === 0 ? undefined : rnd.pick(live));
    // The bulk ConfigMaps (budget) are only dropped and put back together (flap).
    const listedIn = (b: (typeof bundles)[number]) =>
      b.entries.filter((e) => e.kind === 'ConfigMap' && !this.widened.bulk.includes(e.object));
    const choices: [number, () => Step | undefined][] = [
      [
        3,
        () => {
          const b = pickLive();
          if (!b) return undefined;
          const free = this.configMaps.filter((o) => !b.entries.some((e) => e.object === o));
          // Mostly objects nobody lists (or that wait for deletion); sometimes one another Bundle lists (a conflict).
          const unlisted = free.filter((o) => this.model.listers(o).length === 0);
          const pool = unlisted.length > 0 && rnd.chance(0.8) ? unlisted : free;
          if (pool.length === 0) return undefined;
          const object = rnd.pick(pool);
          return {
            kind: 'add',
            bundle: b.name,
            object,
            delay: randomDelay(rnd),
            rule: randomRule(rnd),
            gated: rnd.chance(0.3),
            ...this.legacyFor(object),
          };
        },
      ],
      [
        3,
        () => {
          const b = pickLive();
          if (!b) return undefined;
          const listed = listedIn(b);
          if (listed.length === 0) return undefined;
          return { kind: 'remove', bundle: b.name, object: rnd.pick(listed).object };
        },
      ],
      [
        1.8,
        () => {
          if (live.length < 2) return undefined;
          const [from, to] = rnd.shuffle(live);
          if (!from || !to) return undefined;
          const movable = listedIn(from).filter((e) => !to.entries.some((t) => t.object === e.object));
          if (movable.length === 0) return undefined;
          const e = rnd.pick(movable);
          const delay = rnd.chance(0.6) ? e.delay : randomDelay(rnd);
          const rule = rnd.chance(0.6) ? (e.rule ?? 'Delete') : randomRule(rnd);
          return {
            kind: 'move',
            from: from.name,
            to: to.name,
            object: e.object,
            delay,
            rule,
            gated: rnd.chance(0.3),
            addFirst: rnd.chance(0.4),
            ...this.legacyFor(e.object),
          };
        },
      ],
      [
        2,
        () => {
          const b = pickLive();
          if (!b) return undefined;
          const listed = listedIn(b);
          if (listed.length === 0) return undefined;
          return { kind: 'set-delay', bundle: b.name, object: rnd.pick(listed).object, delay: randomDelay(rnd), rule: randomRule(rnd) };
        },
      ],
      [
        2,
        () => {
          // Mostly an object that waits for deletion; sometimes one still listed (an approval before the stamp never counts).
          const waiting = this.configMaps.filter((o) => ['removed', 'released'].includes(this.model.object(o).standing.kind));
          const pool = waiting.length > 0 && rnd.chance(0.8) ? waiting : this.configMaps;
          return { kind: 'approve', object: rnd.pick(pool), backdated: rnd.chance(0.25) };
        },
      ],
      [
        1.5,
        () => {
          const b = pickLive();
          if (!b) return undefined;
          const listed = listedIn(b);
          if (listed.length === 0) return undefined;
          const e = rnd.pick(listed);
          return { kind: 'set-gated', bundle: b.name, object: e.object, gated: !e.gated };
        },
      ],
      [
        1.5,
        () => {
          const b = pickLive();
          if (!b) return undefined;
          return { kind: 'gate', bundle: b.name, open: !b.gateReady };
        },
      ],
      [
        2,
        () =>
          live.length === 0
            ? undefined
            : {
                kind: 'delete-bundle',
                bundle: rnd.pick(live).name,
                propagation: rnd.weighted<Propagation>([
                  [6, 'background'],
                  [2.5, 'foreground'],
                  [1.5, 'orphan'],
                ]),
              },
      ],
      [
        6,
        () => {
          const gone = bundles.filter((b) => !b.exists);
          if (gone.length === 0) return undefined;
          const b = rnd.pick(gone);
          const last = this.lastSpec.get(b.name);
          // Mostly the manifest as it was (adopting what it released back), often with objects now behind
          // the new Gate, which is not Ready yet; sometimes a fresh one.
          const entries = last && rnd.chance(0.85) ? last : this.initialSpec(b.name, new Set());
          const spoil = rnd.weighted<Spoil>([
            [8, 'none'],
            [1, 'invalid'],
            [1, 'failing'],
          ]);
          const defaults = rnd.chance(0.7) ? (this.lastDefaults.get(b.name) ?? {}) : randomDefaults(rnd);
          return {
            kind: 'reapply',
            bundle: b.name,
            entries: entries.map((e) => ({ ...e, gated: e.kind === 'ConfigMap' && rnd.chance(e.gated ? 0.3 : 0.6) ? !e.gated : e.gated })),
            spoil,
            defaults,
          };
        },
      ],
      [
        0.7,
        () => {
          const whole = live.filter((b) => b.spoil === 'none');
          return whole.length === 0
            ? undefined
            : { kind: 'spoil', bundle: rnd.pick(whole).name, how: rnd.pick(['invalid', 'failing'] as const) };
        },
      ],
      [
        2,
        () => {
          const spoiled = live.filter((b) => b.spoil !== 'none');
          return spoiled.length === 0 ? undefined : { kind: 'repair', bundle: rnd.pick(spoiled).name };
        },
      ],
      [
        1,
        () => {
          const b = pickLive();
          return b ? { kind: 'set-defaults', bundle: b.name, defaults: randomDefaults(rnd) } : undefined;
        },
      ],
      [1.2, () => ({ kind: 'kill', afterMs: rnd.int(0, 400), downMs: rnd.int(0, 2500) })],
      [3.5, () => ({ kind: 'sleep', ms: rnd.int(3, 25) * 100 })],
      [1, () => ({ kind: 'settle' })],
      // The widened dimensions: weight 0 when the seed did not draw them, so the draws above are unchanged.
      ...this.widenedChoices(live),
    ];
    for (;;) {
      const step = rnd.weighted(choices)();
      if (!step) continue;
      if (step.kind === 'delete-bundle') this.deleting(step.bundle, step.propagation);
      const writes =
        step.kind !== 'kill' &&
        step.kind !== 'sleep' &&
        step.kind !== 'settle' &&
        step.kind !== 'delete-bundle' &&
        step.kind !== 'approve' &&
        step.kind !== 'hand-edit' &&
        step.kind !== 'wipe-record' &&
        step.kind !== 'crd-version' &&
        step.kind !== 'hold-back';
      return { step, settle: writes && rnd.chance(0.35) };
    }
  }

  /** A hold-back step of `object`, every field drawn from the holdBack stream `h`. */
  private holdBackStep(h: Random, object: string): Step {
    const how = h.weighted<HoldHow>([
      [0.65, 'nobody'],
      [0.35, 'blocked-dependency'],
    ]);
    const holdMs = h.int(20, 80) * 100;
    const drop = how === 'nobody' && h.chance(0.3) ? 'unlist' : 'delete';
    const hand = this.widened.dims.handEdits;
    const before = hand && h.chance(0.15);
    const whileListed = hand && h.chance(0.2);
    const afterDrop = hand && h.chance(0.35);
    const kill = h.chance(0.15) ? { afterMs: h.int(0, Math.floor(holdMs / 2)), downMs: h.int(0, 2500) } : undefined;
    return {
      kind: 'hold-back',
      object,
      holder: `held-${++this.holders}`,
      how,
      holdMs,
      drop,
      ...(before ? { before: 'legacy-release' as const } : {}),
      ...(whileListed ? { whileListed: 'strip-release-proof' as const } : {}),
      ...(afterDrop ? { afterDrop: 'replay-annotations' as const } : {}),
      ...(kill ? { kill } : {}),
    };
  }

  /** The widened dimensions' steps, each with weight 0 unless the seed drew its dimension. */
  private widenedChoices(live: readonly BundleModel[]): [number, () => Step | undefined][] {
    const rnd = this.rnd;
    const { dims, bulk } = this.widened;
    const handObjects = () =>
      [...this.model.objects.values()].filter((o) => o.kind === 'ConfigMap' && o.standing.kind !== 'absent').map((o) => o.name);
    return [
      [
        dims.handEdits ? 2 : 0,
        () => {
          const edit = rnd.weighted<HandEdit>([
            [3, 'unlabel-managed'],
            [1, 'label-managed-false'],
            [1, 'label-other'],
            [1, 'annotate-other'],
            [1.5, 'drop-owner-refs'],
            [1.5, 'add-foreign-owner'],
            [2, 'replay-annotations'],
            [1, 'strip-release-proof'],
            [1.5, 'legacy-release'],
            [1.5, 'blank-claim-record'],
            [1, 'reset-managed-fields'],
            [1.5, 'blank-dependency-record'],
            [1, 'relabel-part-of'],
            [1, 'erase-traces'],
            [1, 'copy-object'],
          ]);
          const pool = handObjects();
          if (pool.length === 0) return undefined;
          // Labels are often changed on every object at once (kubectl label --all); references one at a time.
          const all = (edit === 'unlabel-managed' || edit === 'label-managed-false' || edit === 'label-other') && rnd.chance(0.4);
          return { kind: 'hand-edit', edit, objects: all ? pool : [rnd.pick(pool)] };
        },
      ],
      [
        dims.handEdits ? 2 : 0,
        () => {
          // Issue 23's second class: the Bundle lists no ConfigMap any more, the ones counting down lose the
          // managed label, and the Bundle is deleted: its finalizer must still find them.
          const withConfigMaps = live.filter((b) => b.entries.some((e) => e.kind === 'ConfigMap' && !this.widened.isVersioned(e.object)));
          if (withConfigMaps.length === 0) return undefined;
          const b = rnd.pick(withConfigMaps);
          const objects = b.entries.filter((e) => e.kind === 'ConfigMap' && !this.widened.isVersioned(e.object)).map((e) => e.object);
          this.queued.push(
            { kind: 'sleep', ms: rnd.int(3, 12) * 100 },
            { kind: 'hand-edit', edit: rnd.chance(0.8) ? 'unlabel-managed' : 'label-managed-false', objects },
            { kind: 'sleep', ms: rnd.int(5, 20) * 100 },
          );
          if (rnd.chance(0.7)) this.queued.push({ kind: 'delete-bundle', bundle: b.name, propagation: 'background' });
          return { kind: 'drop-configmaps', bundle: b.name };
        },
      ],
      [
        dims.crdVersions && this.widened.stage() === 'unserved' ? 1 : 0,
        () => {
          const stale = live.filter((b) => b.entries.some((e) => e.legacy === true));
          return stale.length === 0 ? undefined : { kind: 'migrate', bundle: rnd.pick(stale).name };
        },
      ],
      [
        dims.crdVersions && this.widened.stage() === 'unserved' ? 1.5 : 0,
        () => {
          // Issue 23's first class: a Bundle deleted while its manifests name the unserved version; its finalizer
          // must still find what it controls (released with the delay, Orphan kept).
          const stale = live.filter((b) => b.entries.some((e) => e.legacy === true));
          return stale.length === 0
            ? undefined
            : {
                kind: 'delete-bundle',
                bundle: rnd.pick(stale).name,
                propagation: rnd.weighted<Propagation>([
                  [7, 'background'],
                  [1.5, 'foreground'],
                  [1.5, 'orphan'],
                ]),
              };
        },
      ],
      [
        dims.crdVersions && this.widened.stage() === 'unserved' ? 1.5 : 0,
        () => {
          // Issue 23's first class, the other way: an object of the versioned kind leaves its Bundle (counting down)
          // while its manifest named the now unserved version, and the Bundle is deleted before it expires. The
          // finalizer must find it by group and kind, whatever version status.managedKinds recorded.
          const withLegacy = live.filter((b) => b.entries.some((e) => e.legacy === true));
          if (withLegacy.length === 0) return undefined;
          const b = rnd.pick(withLegacy);
          const legacy = b.entries.filter((e) => e.legacy === true);
          const kept = legacy.filter((e) => e.delay.kind === 'valid' || (e.rule ?? 'Delete') !== 'Delete');
          const e = rnd.pick(kept.length > 0 ? kept : legacy);
          this.queued.push(
            { kind: 'sleep', ms: rnd.int(3, 8) * 100 },
            { kind: 'delete-bundle', bundle: b.name, propagation: 'background' },
          );
          return { kind: 'remove', bundle: b.name, object: e.object };
        },
      ],
      [
        dims.handEdits ? 1 : 0,
        () => {
          // Red team 9: another status writer clears the Bundle's record, often with an earlier copy of a counting-down
          // object's annotations written back after it; a countdown may then only start again, never end early.
          if (live.length === 0) return undefined;
          const b = rnd.pick(live);
          const fields = RECORD_FIELDS.filter(() => rnd.chance(0.6));
          const removed = [...this.model.objects.values()]
            .filter((o) => o.kind === 'ConfigMap' && o.standing.kind === 'removed' && o.standing.by === b.name)
            .map((o) => o.name);
          if (removed.length > 0 && rnd.chance(0.6))
            this.queued.push(
              { kind: 'sleep', ms: rnd.int(1, 10) * 100 },
              { kind: 'hand-edit', edit: 'replay-annotations', objects: [rnd.pick(removed)] },
            );
          return { kind: 'wipe-record', bundle: b.name, fields: fields.length > 0 ? fields : ['pendingDeletions'] };
        },
      ],
      // Issue 23's fifth class: a Bundle with a long name releasing what it controls (a label value holds the name).
      [
        dims.longNames ? 1 : 0,
        () => (live.length === 0 ? undefined : { kind: 'delete-bundle', bundle: rnd.pick(live).name, propagation: 'background' }),
      ],
      [
        dims.budget ? 2.5 : 0,
        () => {
          const withBulk = live.filter((b) => b.entries.some((e) => bulk.includes(e.object)));
          if (withBulk.length === 0) return undefined;
          const b = rnd.pick(withBulk);
          const pause = this.widened.pauseLeader();
          return {
            kind: 'flap',
            bundle: b.name,
            objects: b.entries.filter((e) => bulk.includes(e.object)).map((e) => e.object),
            gapMs: rnd.int(3, 20) * 100,
            ...(pause ? { pauseLeader: true } : {}),
          };
        },
      ],
    ];
  }
}
