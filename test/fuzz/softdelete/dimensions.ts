/**
 * The soft-delete generator's widened dimensions (issue 23): what real
 * clusters do that the first generator never drew. Each is drawn per seed,
 * from a stream of its own (so a seed that draws none runs exactly the
 * steps it ran before the widening), and with a probability below one (so
 * the old behaviour stays covered):
 *
 * - `handEdits`: another field manager (`fuzz-hand`) edits live objects by
 *   hand: takes the managed label off (one object or every object of the
 *   namespace, as `kubectl label --all` does), sets it to another value,
 *   adds other labels and annotations, removes every ownerReference, or adds
 *   one to a live object outside the seed, or writes back the object's
 *   deletion annotations as an earlier read saw them (an old `kubectl get
 *   -o yaml` re-applied, a restore: its stamp, proofs and rules), or blanks
 *   the claim record annotation of an object a Bundle claimed
 *   (`kubectl annotate --overwrite`: red team 16), or resets its
 *   managedFields (`[{}]`: red team 14); and the
 *   scenario of issue 23's
 *   second class (a Bundle drops all its ConfigMaps, their managed label is
 *   taken off, the Bundle is deleted).
 * - `crdVersions`: two of the seed's objects (`cr-2`, `cr-3`) are custom
 *   resources of a CRD of the seed's own, served at v1alpha1 only; mid-run
 *   it gains v1, moves storage to it, and then stops serving v1alpha1. The
 *   Bundles' manifests mostly still name v1alpha1 (a step migrates them).
 * - `longNames`: Bundle names from 64 to 253 characters (a DNS subdomain)
 *   and object names of 253 (the ConfigMaps', the Gates' and the custom
 *   resources' limit).
 * - `budget`: the operator runs with a small `--qps/--burst`, Bundle b1
 *   lists 60-120 more ConfigMaps (`bulk-NNN`, no delay), and a step removes
 *   them all and puts them back 0.3-2 s later (a broken template corrected
 *   a second later).
 * - `replicas` (only with `budget`; drawn from a third stream, so that the
 *   seeds run before it was added keep their other draws): two operator
 *   replicas with leader election (a short Lease); some of the drop-and-put-
 *   back steps SIGSTOP the leader mid-prune, put the objects back, wait past
 *   its Lease (the standby takes over), SIGCONT it, and SIGKILL it two
 *   seconds later (issue 23's fourth class: a leader that lost its Lease
 *   must send nothing).
 * - `rbac` (drawn from a fourth stream, `rbacRandom`, as are its schedule
 *   and what each revocation takes, so every seed keeps its other draws and
 *   steps): the operator runs as a ServiceAccount of the seed
 *   (`--impersonate system:serviceaccount:<ns>:bundlesmith`), bound to the
 *   rules of the chart's RBAC (charts/bundlesmith/templates/rbac.yaml with
 *   `watchNamespace=<ns>`, `gc.mode=cluster`, mirrored in world.ts
 *   `operatorRoles`); one to three times a run, before a planned step, part
 *   of its rights is revoked (delete, patch, or list and watch on
 *   ConfigMaps; list and watch on the Gates and the seed's custom
 *   resources; list and watch on Bundles; patch on bundles/status; or every
 *   binding) and granted back one to three steps later, at least 1-8 s
 *   after (at once when a Bundle deletion is held by the revocation). Liveness is judged with the
 *   revoked interval plus the operator's backoff added; "not before" stays
 *   strict.
 * - `drift` (drawn from a fifth stream, `driftRandom`, which also draws
 *   every Bundle write's drift annotations, so every seed keeps its other
 *   draws and steps): each object of each Bundle write may carry issue 27's
 *   drift controls, `smith.atlassian.com/apply: IfNotPresent`, an
 *   `ignore` of its data or spec, `drift: Warn`, and a Bundle's
 *   spec.driftDefaults may say IfNotPresent or Warn for all: drawn again at
 *   every write, so objects removed, re-added and moved between Bundles
 *   carry them, lose them and gain them. They hold back the user's fields,
 *   never the operator's bookkeeping: the model is unchanged (nothing may
 *   be deleted, kept or left differently).
 * - `holdBack` (drawn from a sixth stream, `holdBackRandom`, which also
 *   draws where its steps go and their fields, so every seed keeps its
 *   other draws and steps; not on budget seeds for now): a `hold-back`
 *   step lists a released object in a fresh Bundle that never takes hold
 *   of it (`serviceAccountName: nobody`, or behind a Deployment that never
 *   becomes Ready) for 2-8 s, then deletes that Bundle or drops the object
 *   from it (red teams 30-40: the listing must cancel the countdown, and a
 *   new one starts at the drop).
 */
import { Annotations } from '../../../src/api/names.js';
import { Random } from '../random.js';

export interface SoftDeleteDimensions {
  handEdits: boolean;
  crdVersions: boolean;
  longNames: boolean;
  budget?: { qps: number; burst: number; bulk: number };
  replicas?: { leaseSeconds: number };
  rbac?: { revocations: RbacRevocationPlan[] };
  drift?: boolean;
  holdBack?: boolean;
}

/** What a revocation takes away from the operator's ServiceAccount. */
export type RbacRevocation =
  | 'configmaps-delete'
  | 'configmaps-patch'
  | 'configmaps-list'
  | 'crs-list'
  | 'bundles-list'
  | 'bundles-status'
  | 'binding'
  /** Every right on the release records (ConfigMaps in the release key's namespace: its Role's, and the collector's cluster-wide ones): red team 40. */
  | 'records'
  /** Not RBAC: an admission policy refuses the operator's writes of ConfigMaps with 422 Invalid (a webhook refusing them). */
  | 'admission-configmaps';

/** A revocation before planned step `at`, granted back before step `at + steps` (or before the final wait). */
export interface RbacRevocationPlan {
  at: number;
  steps: number;
  what: RbacRevocation;
  /** The revocation lasts at least this long (the grant waits for it). */
  minMs: number;
}

export const RBAC_REVOCATION_TEXT: Record<RbacRevocation, string> = {
  'configmaps-delete': 'delete on configmaps',
  'configmaps-patch': 'patch on configmaps',
  'configmaps-list': 'list and watch on configmaps',
  'crs-list': "list and watch on the Gates and the seed's custom resources",
  'bundles-list': 'list and watch on bundles',
  'bundles-status': 'patch and update on bundles/status',
  binding: 'every binding',
  records: "every right on the release records (configmaps in the release key's namespace)",
  'admission-configmaps': 'every write of configmaps (create, update, delete), refused by an admission policy as 422 Invalid',
};

export const NO_DIMENSIONS: SoftDeleteDimensions = { handEdits: false, crdVersions: false, longNames: false };

/** The stream the dimensions (and their own schedule and names) are drawn from: never the steps' stream. */
export function dimensionRandom(seed: number): Random {
  return new Random((Math.imul(seed, 2654435761) + 0x23) >>> 0);
}

export function drawDimensions(rnd: Random): SoftDeleteDimensions {
  const handEdits = rnd.chance(0.45);
  const crdVersions = rnd.chance(0.4);
  const longNames = rnd.chance(0.35);
  const budget = rnd.chance(0.3)
    ? rnd.pick([
        { qps: 10, burst: 15 },
        { qps: 20, burst: 30 },
        { qps: 5, burst: 10 },
      ])
    : undefined;
  return { handEdits, crdVersions, longNames, ...(budget ? { budget: { ...budget, bulk: rnd.int(60, 120) } } : {}) };
}

/** The replicas dimension's own stream (see the top of this file): whether, and which flaps pause the leader. */
export function replicaRandom(seed: number): Random {
  return new Random((Math.imul(seed, 2246822519) + 0x51) >>> 0);
}

/** Adds the replicas dimension to a seed with a budget, one time in two. */
export function drawReplicas(d: SoftDeleteDimensions, rnd: Random): SoftDeleteDimensions {
  if (!d.budget || !rnd.chance(0.5)) return d;
  return { ...d, replicas: { leaseSeconds: rnd.int(4, 6) } };
}

/**
 * The rbac dimension's own stream (see the top of this file); its constant
 * is one with which none of the widened CI seeds (9002, 9032, 9044, 9051,
 * 9060, 9921) draws it, so they keep testing what they were added for.
 */
export function rbacRandom(seed: number): Random {
  return new Random((Math.imul(seed, 3266489917) + 0x7f) >>> 0);
}

/** Adds the rbac dimension about one time in three, with its revocations scheduled among the planned steps (`steps` of them). */
export function drawRbac(d: SoftDeleteDimensions, rnd: Random, steps: number): SoftDeleteDimensions {
  if (!rnd.chance(0.35)) return d;
  const revocations: RbacRevocationPlan[] = [];
  let at = rnd.int(0, 4);
  for (let i = rnd.int(1, 3); i > 0 && at < steps; i--) {
    const plan: RbacRevocationPlan = {
      at,
      steps: rnd.int(1, 3),
      what: rnd.weighted<RbacRevocation>([
        [2, 'configmaps-delete'],
        [1.5, 'configmaps-patch'],
        [2, 'configmaps-list'],
        [1.5, 'crs-list'],
        [1, 'bundles-list'],
        [1, 'bundles-status'],
        [1.5, 'binding'],
        [1.5, 'admission-configmaps'],
        [1.5, 'records'],
      ]),
      minMs: rnd.int(10, 80) * 100,
    };
    revocations.push(plan);
    at += plan.steps + rnd.int(1, 4);
  }
  return { ...d, rbac: { revocations } };
}

/** The drift dimension's own stream (see the top of this file): whether, and each write's annotations. */
/**
 * The stream deciding which approvals are dated a year ahead (red team 13:
 * an approval the operator does not count, which the chart's deletion guard
 * once did). Its own stream: every other draw of a seed stays as it was.
 */
export function approvalRandom(seed: number): Random {
  return new Random((Math.imul(seed, 3266489917) + 0x2b) >>> 0);
}

export function driftRandom(seed: number): Random {
  return new Random((Math.imul(seed, 668265263) + 0x3d) >>> 0);
}

/** Adds the drift dimension about one seed in two. */
export function drawDrift(d: SoftDeleteDimensions, rnd: Random): SoftDeleteDimensions {
  return rnd.chance(0.5) ? { ...d, drift: true } : d;
}

/**
 * The holdBack dimension's own stream (see the top of this file): whether,
 * and where its steps go. Its constant is one with which none of the
 * widened CI seeds (9002, 9032, 9044, 9051, 9060, 9921) draws it.
 */
export function holdBackRandom(seed: number): Random {
  return new Random((Math.imul(seed, 2654435769) + 0x4d) >>> 0);
}

/** Adds the holdBack dimension about two seeds in five; not on budget seeds (a `nobody` Bundle's retries spend the budget). */
export function drawHoldBack(d: SoftDeleteDimensions, rnd: Random): SoftDeleteDimensions {
  const drawn = rnd.chance(0.4);
  return drawn && !d.budget ? { ...d, holdBack: true } : d;
}

/** What one object of one Bundle write carries of the drift controls (pointers into a ConfigMap's data or a custom resource's spec). */
export function drawDriftAnnotations(rnd: Random): Record<string, string> {
  const out: Record<string, string> = {};
  if (rnd.chance(0.35)) out[Annotations.apply] = 'IfNotPresent';
  if (rnd.chance(0.3))
    out[Annotations.ignore] = rnd.pick(['/data/bundle', '/spec/bundle', '/data/bundle,/metadata/labels/team', '/data/missing']);
  if (rnd.chance(0.3)) out[Annotations.drift] = 'Warn';
  return out;
}

/** A Bundle write's spec.driftDefaults, or none. */
export function drawDriftDefaults(rnd: Random): Record<string, unknown> | undefined {
  if (!rnd.chance(0.2)) return undefined;
  return rnd.pick([{ apply: 'IfNotPresent' }, { drift: 'Warn' }, { ignore: ['/data/bundle'] }, { apply: 'IfNotPresent', drift: 'Warn' }]);
}

export function dimensionsText(d: SoftDeleteDimensions): string {
  const parts = [
    ...(d.handEdits ? ['hand edits'] : []),
    ...(d.crdVersions ? ['CRD versions'] : []),
    ...(d.longNames ? ['long names'] : []),
    ...(d.budget ? [`qps ${d.budget.qps}/burst ${d.budget.burst} with ${d.budget.bulk} bulk ConfigMaps`] : []),
    ...(d.replicas ? [`two replicas (Lease ${d.replicas.leaseSeconds} s)`] : []),
    ...(d.drift ? ['drift controls'] : []),
    ...(d.holdBack ? ['held-back listings'] : []),
    ...(d.rbac
      ? [
          `RBAC revoked ${d.rbac.revocations.map((r) => `${r.what} (before step ${r.at + 1}, for ${r.steps} steps and at least ${r.minMs / 1000} s)`).join(', ')}`,
        ]
      : []),
  ];
  return parts.length === 0 ? 'no widened dimension' : parts.join(', ');
}

/** The edits another field manager makes by hand. */
export type HandEdit =
  | 'unlabel-managed'
  | 'label-managed-false'
  | 'label-other'
  | 'annotate-other'
  | 'drop-owner-refs'
  | 'add-foreign-owner'
  | 'replay-annotations'
  | 'strip-release-proof'
  | 'legacy-release'
  | 'blank-claim-record'
  | 'reset-managed-fields'
  | 'blank-dependency-record'
  | 'relabel-part-of'
  | 'erase-traces'
  | 'copy-object';

/** A DNS-subdomain name of exactly `length` characters starting with `prefix`: dot-separated labels of letters and digits. */
export function longName(prefix: string, length: number, rnd: Random): string {
  let name = prefix;
  while (name.length < length) {
    const room = length - name.length;
    if (room === 1) {
      name += rnd.token(1);
      break;
    }
    // A separator then a label; never ending on a separator.
    name += rnd.chance(0.2) ? '.' : '-';
    name += rnd.token(Math.min(room - 1, rnd.int(4, 40)));
  }
  return name;
}

/** Logical names (the model's: b1, cm-0, gate-b1) and the names written to the cluster. */
export class Naming {
  private readonly toReal = new Map<string, string>();
  private readonly toLogical = new Map<string, string>();

  constructor(logical: { bundles: readonly string[]; objects: readonly string[] }, long: boolean, rnd: Random) {
    for (const b of logical.bundles) this.set(b, long ? longName(b, rnd.int(64, 253), rnd) : b);
    for (const o of logical.objects) this.set(o, long ? longName(o, 253, rnd) : o);
  }

  private set(logical: string, real: string): void {
    this.toReal.set(logical, real);
    this.toLogical.set(real, logical);
  }

  real(logical: string): string {
    return this.toReal.get(logical) ?? logical;
  }

  /** Undefined for names that are not the seed's (leftovers, the anchor). */
  logical(real: string): string | undefined {
    return this.toLogical.get(real);
  }
}
