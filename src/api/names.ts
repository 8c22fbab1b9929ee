/**
 * Every name bundlesmith reads or writes on the API: the group, annotations,
 * labels, finalizers, conditions, reasons and event reasons. Smith's names are
 * kept verbatim so existing manifests and tooling keep working.
 */
export const GROUP = 'smith.atlassian.com';
export const VERSION = 'v1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const BUNDLE_KIND = 'Bundle';
export const BUNDLE_PLURAL = 'bundles';
export const BUNDLE_RESOURCE = `${BUNDLE_PLURAL}.${GROUP}`;

/** Field manager for every server-side apply and patch the operator sends. */
export const FIELD_MANAGER = 'bundlesmith';

export const Annotations = {
  /** Go duration; on a live object, opts it into soft deletion. */
  deletionDelay: `${GROUP}/deletionDelay`,
  /** RFC 3339 time at which the soft-deletion countdown started. Written only by the operator. */
  deletionTimestamp: `${GROUP}/deletionTimestamp`,
  /**
   * How an object may leave the cluster once it leaves its Bundle (or its
   * Bundle is deleted): Delete (the default), Orphan (never deleted by the
   * operator: released instead) or Approve (deleted only once approved, after
   * its delay). Overrides spec.deletionDefaults.deletionPolicy.
   */
  deletionPolicy: `${GROUP}/deletionPolicy`,
  /**
   * RFC 3339 time: approves the deletion of an Approve object. Counts only
   * when later than the object's deletionTimestamp, so an approval written
   * before the countdown (or left from an earlier one) never counts.
   */
  deletionApproved: `${GROUP}/deletionApproved`,
  /**
   * BundleReady: an object that left its Bundle is deleted only once every
   * resource of the Bundle is Ready with the spec that dropped it (and not
   * before its delay).
   * Overrides spec.deletionDefaults.deleteWhen.
   */
  deleteWhen: `${GROUP}/deleteWhen`,
  /** Hash of the manifest bundlesmith last applied; with a field-by-field check it lets a no-op pass send nothing. */
  appliedHash: `${GROUP}/applied-hash`,
  /**
   * Comma-separated uids of the non-controller ownerReferences the operator
   * wrote for the resource's `references` (one per dependency). Release,
   * cancel and hand-over remove exactly these and the Bundle's controller
   * reference; every other ownerReference is the user's and stays.
   */
  dependencyReferences: `${GROUP}/dependencyReferences`,
  /**
   * Comma-separated uids of the Bundles whose claim (a non-controller
   * ownerReference a Bundle that lost a Conflict writes) the operator wrote
   * on the object, written in the same patch as the claim. A non-controller
   * reference to a Bundle it does not record is the user's: kept on every
   * release and never withdrawn. Kept on the object, not in managedFields,
   * which a reset or the API server's cap on update managers reassigns.
   */
  claimReferences: `${GROUP}/claimReferences`,
  /**
   * On an object a deleted Bundle released with a countdown: an HMAC over
   * the object's uid and namespace, the former Bundle, the stamp and the
   * delay, keyed by a Secret in the operator's namespace. The released-object
   * sweeper deletes only objects whose proof checks; a label or annotation
   * anyone could write is no permission (core/softdelete/provenance.ts).
   */
  releaseProof: `${GROUP}/release-proof`,
  /**
   * On a workload's pod template: Smith's SHA-256 over the ConfigMap and
   * Secret data its containers read (env and envFrom), so that a change to
   * them rolls the Pods. Written by the operator; "disabled" in the manifest
   * turns it off for that template.
   */
  envRefHash: `${GROUP}/envRefHash`,
  /** On a workload: "volumes" also hashes the ConfigMaps and Secrets it mounts (beyond Smith). */
  rollOnChange: `${GROUP}/rollOnChange`,
  /**
   * Beside a countdown stamp the operator wrote: an HMAC over the object's
   * uid, the stamp and the rules the countdown started under, which it also
   * carries (core/softdelete/stamp-seal.ts). A stamp without one that checks
   * is read as no stamp: the countdown starts now; the rules it carries are
   * a floor for the live ones.
   */
  stampProof: `${GROUP}/stamp-proof`,
  /**
   * On an applied object whose manifest sets deletion rules (deletionDelay,
   * deletionPolicy, deleteWhen): those rules, with an HMAC over them and the
   * object's group, kind, namespace and name (core/softdelete/stamp-seal.ts).
   * They are a floor for the live annotations, so a rule written or
   * overwritten by hand on the live object cannot bring its deletion forward.
   */
  declaredRules: `${GROUP}/declared-rules`,
  /**
   * On a released object: the name of the Bundle that released it, whole (a
   * name may be longer than a label value; the former-bundle label only marks
   * the object released).
   */
  formerBundle: `${GROUP}/former-bundle`,
  /**
   * Drift control: Always (the default: every pass applies the manifest) or
   * IfNotPresent (created when absent, its fields never written again; still
   * owned, pruned and soft-deleted: the operator's bookkeeping, its
   * ownerReferences, label and smith.atlassian.com annotations, goes on).
   * Overrides spec.driftDefaults.apply.
   */
  apply: `${GROUP}/apply`,
  /**
   * Drift control: comma-separated JSON pointers (RFC 6901) the operator
   * leaves to others once the object exists: applied with the live value
   * (the manifest's only at creation), left out once another field manager
   * owns it, never counted as drift. Replaces spec.driftDefaults.ignore.
   */
  ignore: `${GROUP}/ignore`,
  /**
   * Drift control: Correct (the default: a changed field is put back by the
   * next apply) or Warn (reported, as the resource's Drifted condition, an
   * event and a metric, and not written; an edit of the manifest is still
   * applied). Overrides spec.driftDefaults.drift.
   */
  drift: `${GROUP}/drift`,
  /** On a CRD: JSONPath (dot form) of the field that says a custom resource is ready. */
  crReadyWhenFieldPath: `${GROUP}/CrReadyWhenFieldPath`,
  /** On a CRD: the value that field has when the custom resource is ready. */
  crReadyWhenFieldValue: `${GROUP}/CrReadyWhenFieldValue`,
} as const;

export const Labels = {
  /**
   * On an object a deleted Bundle released; kept until the object goes. The
   * value is the Bundle's name when it fits a label value (63 characters),
   * else a prefix and a hash of it; the whole name is in the annotation of the
   * same name (core/softdelete/former-bundle.ts).
   */
  formerBundle: `${GROUP}/former-bundle`,
  /**
   * "true" on every object the operator applies. It scopes the Bundle
   * controller's caches (a label-selected watch keeps only these in memory,
   * not every Secret and Pod of the cluster) and decides nothing: ownership
   * is read from ownerReferences, always.
   */
  managed: `${GROUP}/managed`,
} as const;

/**
 * The label on the release records (controllers/softdelete/release-records.ts:
 * a ConfigMap per released object beside the release key, naming the proof of
 * the release's latest signing and its state), by which they are listed.
 */
export const ReleaseRecordLabel = { key: 'app.kubernetes.io/component', value: 'release-record' } as const;

/**
 * ApplySet (KEP-3659, kubectl's `apply --prune --applyset`): every Bundle is
 * an ApplySet parent and the objects it holds are its members, so tools
 * that speak the protocol see the set. The names are the KEP's, verbatim.
 * They describe; they never decide: what the operator deletes goes by the
 * controller reference and status.managedKinds alone.
 */
export const ApplySetLabels = {
  /** On the Bundle: its ApplySet id (core/bundle/applyset.ts applySetId). */
  id: 'applyset.kubernetes.io/id',
  /** On each object the Bundle holds: the Bundle's ApplySet id. Taken off when the object is let go. */
  partOf: 'applyset.kubernetes.io/part-of',
  /** On the Bundle CRD: "true" makes Bundles a parent type kubectl accepts in `--applyset=bundles.smith.atlassian.com/NAME`. */
  isParentType: 'applyset.kubernetes.io/is-parent-type',
} as const;

export const ApplySetAnnotations = {
  /** On the Bundle: which tool manages the set. kubectl refuses to prune a set whose tooling is not its own. */
  tooling: 'applyset.kubernetes.io/tooling',
  /** On the Bundle: the kinds its members may be of, `Kind.group` sorted and comma-separated (status.managedKinds). */
  containsGroupKinds: 'applyset.kubernetes.io/contains-group-kinds',
} as const;

/** The tooling annotation's value, `<tool>/<version>` as the KEP asks: the version of this protocol's use, not of the release. */
export const APPLYSET_TOOLING = 'bundlesmith/v1';

/**
 * Field manager of the Bundle's ApplySet metadata (the id label, the tooling
 * and contains-group-kinds annotations), and of nothing else: a server-side
 * apply under a manager of its own owns exactly those three fields, so it
 * can neither take nor drop a label, annotation or finalizer that the user,
 * Helm or another operator write path set on the Bundle.
 */
export const APPLYSET_FIELD_MANAGER = 'bundlesmith-applyset';

/** The label selector of the Bundle controller's object caches. */
export const MANAGED_SELECTOR = `${GROUP}/managed=true`;

export const Finalizers = {
  /** On Bundles: the operator deletes the Bundle's objects before the Bundle goes. */
  deleteResources: `${GROUP}/deleteResources`,
  /** Kubernetes' own finalizers, honoured by the garbage collector. */
  foregroundDeletion: 'foregroundDeletion',
  orphan: 'orphan',
} as const;

export const BundleConditionTypes = {
  InProgress: 'InProgress',
  Ready: 'Ready',
  Error: 'Error',
  /** kstatus: True while the spec's generation is not yet observed or a pass has work in flight. */
  Reconciling: 'Reconciling',
  /** kstatus: True when the Bundle cannot progress without a change (to its spec, an object, or its rights). */
  Stalled: 'Stalled',
} as const;

export const ResourceConditionTypes = {
  Blocked: 'Blocked',
  InProgress: 'InProgress',
  Ready: 'Ready',
  Error: 'Error',
  /** True while fields of a drift: Warn object differ from its manifest (not written); informational: the resource stays Ready. */
  Drifted: 'Drifted',
} as const;

/** Condition reasons. */
export const Reasons = {
  TerminalError: 'TerminalError',
  RetriableError: 'RetriableError',
  InvalidSpec: 'InvalidSpec',
  Conflict: 'Conflict',
  DependenciesNotReady: 'DependenciesNotReady',
  /** A workload reads a ConfigMap or Secret (not optional) that does not exist: it waits for it. */
  EnvSourceNotFound: 'EnvSourceNotFound',
  BeingDeleted: 'BeingDeleted',
  /** An object's deletion rules cannot be read: its deletionDelay, deletionPolicy, deleteWhen or deletionApproved, or spec.deletionDefaults. */
  InvalidDeletionDelay: 'InvalidDeletionDelay',
  /** The Bundle's identity (its service account) may not do what the resource needs; the message names identity, verb and resource. */
  Forbidden: 'Forbidden',
  /**
   * Being deleted, and a kind the Bundle may control cannot be listed (not served, forbidden, discovery failing): the
   * finalizer holds, since what it cannot see it cannot keep from the collector.
   */
  KindNotListable: 'KindNotListable',
  /** A kind the Bundle lists or may control cannot be watched (forbidden, not served, failing): the Bundle waits for it. */
  WatchNotSynced: 'WatchNotSynced',
  /** The API server refused a write as invalid (422) for a reason other than a change since it was read; not retried silently. */
  InvalidWrite: 'InvalidWrite',
  AllResourcesReady: 'AllResourcesReady',
  ResourcesNotReady: 'ResourcesNotReady',
  Ready: 'Ready',
  Working: 'Working',
  /** Reconciling=False: the generation is observed and every resource is ready. */
  Reconciled: 'Reconciled',
  /** Reconciling=False because Stalled=True. */
  Stalled: 'Stalled',
  /** Stalled=False. */
  CanProgress: 'CanProgress',
  /** Drifted=True: live fields of a drift: Warn object differ from its manifest. */
  FieldsDrifted: 'FieldsDrifted',
  /** Drifted=False. */
  NoDrift: 'NoDrift',
} as const;

/** Event reasons, on the Bundle unless said otherwise. */
export const EventReasons = {
  Adopted: 'Adopted',
  Applied: 'Applied',
  Conflict: 'Conflict',
  InvalidSpec: 'InvalidSpec',
  Ready: 'Ready',
  ReconcileError: 'ReconcileError',
  Pruned: 'Pruned',
  DeletionScheduled: 'DeletionScheduled',
  DeletionCancelled: 'DeletionCancelled',
  DeletedAfterDelay: 'DeletedAfterDelay',
  /** Unreadable deletion rules (any of them, as the condition reason) keep an object. */
  InvalidDeletionDelay: 'InvalidDeletionDelay',
  Released: 'Released',
  /** An object with deletionPolicy Approve is due and waits for its approval. */
  AwaitingApproval: 'AwaitingApproval',
  /** An object with deleteWhen BundleReady is due and waits for every resource of its Bundle to be Ready. */
  AwaitingBundleReady: 'AwaitingBundleReady',
  /** On an object: it carries the former-bundle label but no valid release proof, so the sweeper keeps it. */
  UnprovenRelease: 'UnprovenRelease',
  /** On an object: its release record may not be written (RBAC, an admission policy), so no countdown of it that the record cannot follow counts. */
  ReleaseRecordRefused: 'ReleaseRecordRefused',
  /** An object counting down after its Bundle dropped it moved to the Bundle that lists it now (on both Bundles). */
  HandedOver: 'HandedOver',
  /** Warning: live fields of a drift: Warn object differ from its manifest (named, capped); written when the set changes. */
  Drifted: 'Drifted',
  /** Garbage collector events, on the object concerned. */
  GarbageCollected: 'GarbageCollected',
  OwnerRefInvalidNamespace: 'OwnerRefInvalidNamespace',
  ForegroundCycleBroken: 'ForegroundCycleBroken',
} as const;

/** Component name on events the operator writes. */
export const EVENT_SOURCE = 'bundlesmith';

/**
 * reportingController on every event the operator writes (Bundle controller,
 * sweeper and garbage collector alike); events.k8s.io wants a domain-prefixed
 * path.
 */
export const REPORTING_CONTROLLER = `${EVENT_SOURCE}.smith.atlassian.com/${EVENT_SOURCE}`;

/** Values of the deletionPolicy annotation and of spec.deletionDefaults.deletionPolicy. */
export const DELETION_POLICIES = ['Delete', 'Orphan', 'Approve'] as const;
export type DeletionPolicy = (typeof DELETION_POLICIES)[number];

/** Values of the deleteWhen annotation and of spec.deletionDefaults.deleteWhen. */
export const DELETE_WHEN_GATES = ['BundleReady'] as const;
export type DeleteWhenGate = (typeof DELETE_WHEN_GATES)[number];

/**
 * How an owner's deletion reaches its dependents (metav1.DeletionPropagation,
 * the API's values): the one word for it, in a Bundle's finalizer, the
 * garbage collector and a DELETE's propagationPolicy.
 */
export type DeletionPropagation = 'Background' | 'Foreground' | 'Orphan';

/** Values of the apply annotation and of spec.driftDefaults.apply. */
export const APPLY_MODES = ['Always', 'IfNotPresent'] as const;
export type ApplyMode = (typeof APPLY_MODES)[number];

/** Values of the drift annotation and of spec.driftDefaults.drift. */
export const DRIFT_MODES = ['Correct', 'Warn'] as const;
export type DriftMode = (typeof DRIFT_MODES)[number];
