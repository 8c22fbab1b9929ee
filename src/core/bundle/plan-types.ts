/**
 * What a Bundle's plan is decided on (PlanInput) and what it says of each
 * resource (ResourcePlan): the types plan.ts, plan-resource.ts and take-holds.ts
 * share, kept apart so that none of them imports another in a circle.
 */
import type { BundleSpec } from '../../api/bundle.js';
import type { KubeObjectManifest, OwnerReference } from '../../api/resource.js';
import type { Reasons } from '../../api/names.js';
import type { SourceData } from './env-ref-hash.js';
import type { HealthCheckTable } from './health-checks.js';
import type { CrdReadinessTable, KindTable } from './kinds.js';
import type { JsonPatchOperation, LiveObject } from './objects.js';
import type { StampSeal } from '../softdelete/stamp-seal.js';
import type { BundleListing } from './ownership.js';
import type { PlannedEvent } from './prune.js';
import type { Readiness } from './readiness.js';
import type { CountdownRecord } from './countdown-record.js';
import type { ClaimRecords } from './claim-record.js';

export interface PlanBundle {
  name: string;
  namespace: string;
  uid: string;
  generation?: number;
  /** When the Bundle was created: the age of its claims (the older claim wins an object two Bundles list). */
  creationTimestamp?: string;
}

export interface PlanInput {
  bundle: PlanBundle;
  spec: BundleSpec;
  kinds: KindTable;
  crdReadiness: CrdReadinessTable;
  /** The CEL readiness rules that apply (the operator's defaults under spec.healthChecks); none when absent. */
  healthChecks?: HealthCheckTable;
  /** The live object at each resource's coordinates, by resource name; absent when there is none. */
  live: ReadonlyMap<string, LiveObject>;
  /** Every live object whose controller ownerReference has the Bundle's uid, wherever found. */
  controlled: readonly LiveObject[];
  /** Epoch milliseconds: a lower bound of the API server's time; expiry is decided on it. */
  now: number;
  /** Epoch milliseconds: an upper bound of the API server's time, written in new countdown stamps. Defaults to `now`. */
  stampAt?: number;
  /**
   * Every live Bundle in the namespace that lists each object (by objectKey),
   * this one included or not. Absent: no other Bundle lists anything.
   */
  listings?: ReadonlyMap<string, readonly BundleListing[]>;
  /**
   * Live objects this Bundle does not control that carry its claim (a
   * non-controller reference to it, written when it lost a Conflict). Those
   * it no longer lists get the claim withdrawn.
   */
  claimed?: readonly LiveObject[];
  /** The claims the namespace's Bundles record in their statuses (claim-record.ts), this one's included. */
  claimRecords?: ClaimRecords;
  /**
   * Whether every resource of the Bundle was reported Ready with this spec
   * (plan-input.ts isReadyWithCurrentSpec). A deleteWhen BundleReady gate
   * opens on it; absent, the gate stays shut.
   */
  bundleReady?: boolean;
  /** Proves the countdown stamps this operator wrote (core/softdelete/stamp-seal.ts); absent, every stamp is taken as written. */
  stampSeal?: StampSeal;
  /** What the Bundle's status records of its countdowns (core/bundle/countdown.ts): it decides over proofs written back on an object. */
  countdownRecord?: CountdownRecord;
  /**
   * What was read of each ConfigMap and Secret the Bundle's workloads read
   * (workload-env-hash.ts), by `${kind}/${name}` in the Bundle's namespace:
   * its data, null when it does not exist, or why it could not be read.
   * Absent entries count as not existing.
   */
  envSources?: ReadonlyMap<string, EnvSourceRead>;
}

export type EnvSourceRead = SourceData | null | { unreadable: string };

/** What to send for a resource: the manifest to server-side apply and whether it differs from the live object. */
export interface ApplyStep {
  desired: KubeObjectManifest;
  hash: string;
  /** False when the live object already matches: send nothing. */
  needed: boolean;
  /** True when there is no live object yet. */
  create: boolean;
  /** What the references substituted: blanked out of every message about this apply (see redact.ts). */
  redactions: readonly string[];
  /**
   * Set when the drift controls hold the user's fields back (IfNotPresent,
   * or drift Warn with the manifest unchanged; drift.ts): instead of the
   * apply, this JSON patch of the operator's bookkeeping is sent (when
   * `needed`).
   */
  bookkeeping?: JsonPatchOperation[];
  /** drift Warn: the JSON pointers of the manifest's fields the live object differs in (empty: none). */
  drifted?: readonly string[];
}

export type ResourcePlan =
  | { name: string; action: 'apply'; apply: ApplyStep; readiness: Readiness }
  /** The live object has no controller: the apply takes ownership. */
  | { name: string; action: 'adopt'; apply: ApplyStep; readiness: Readiness; event: PlannedEvent }
  /** Waiting for dependencies, or (EnvSourceNotFound) for a ConfigMap or Secret its pod template reads. */
  | {
      name: string;
      action: 'blocked';
      reason: typeof Reasons.DependenciesNotReady | typeof Reasons.EnvSourceNotFound;
      message: string;
      waitingFor: string[];
      blockedByError: boolean;
    }
  /** Controlled by something else: left untouched. */
  | { name: string; action: 'conflict'; message: string; controller?: OwnerReference; event: PlannedEvent }
  /** The live object is being deleted by the API server; apply again once it is gone. */
  | { name: string; action: 'wait-deleting'; message: string }
  | { name: string; action: 'error'; terminal: boolean; message: string };
