/**
 * The Bundle API (smith.atlassian.com/v1), as zod schemas. These are the
 * single source of truth: the CRD in crds/ is generated from them
 * (see crd.ts), and the controller parses every Bundle it reads with them.
 */
import { z } from 'zod';
import { API_VERSION, APPLY_MODES, BUNDLE_KIND, DELETE_WHEN_GATES, DELETION_POLICIES, DRIFT_MODES } from './names.js';

/** Marks a schema whose content the apiserver must keep as-is (a full Kubernetes object, free-form values). */
const preserveUnknown = { 'x-kubernetes-preserve-unknown-fields': true } as const;

/**
 * Bounds that keep one Bundle's validation and ordering cheap; the CRD
 * refuses larger Bundles at the door, and the operator's own parse for
 * Bundles stored under an older CRD.
 */
export const MAX_RESOURCES = 256;
export const MAX_REFERENCES = 32;

export const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const dns1123Subdomain = z
  .string()
  .min(1)
  .max(253)
  .regex(
    DNS1123_SUBDOMAIN,
    'must be a DNS-1123 subdomain: lower case alphanumerics, "-" and ".", starting and ending with an alphanumeric',
  );

export const OwnerReferenceSchema = z
  .object({
    apiVersion: z.string().describe('API version of the owner.'),
    kind: z.string().describe('Kind of the owner.'),
    name: z.string().describe("Name of the owner, in the object's namespace for a namespaced owner."),
    uid: z.string().describe('UID of the owner: a reference names exactly one incarnation of it.'),
    controller: z
      .boolean()
      .optional()
      .describe(
        'Whether the owner is the managing controller; a Bundle object may not name a controller of its own (the Bundle is its controller).',
      ),
    blockOwnerDeletion: z.boolean().optional().describe('In a foreground deletion, the owner waits until this object is gone.'),
  })
  .describe(
    'An owner of the object, as Kubernetes ownerReferences; the operator adds the Bundle and the referenced resources to the ones written here.',
  );
export type OwnerReference = z.infer<typeof OwnerReferenceSchema>;

/** What the operator needs of an object's metadata; everything else is kept. */
export const ObjectMetaSchema = z
  .object({
    name: z.string().min(1).describe('Name of the object.'),
    namespace: z.string().optional().describe("Must be empty or the Bundle's own namespace: a Bundle writes only there."),
    labels: z.record(z.string(), z.string()).optional().describe('Labels of the object.'),
    annotations: z
      .record(z.string(), z.string())
      .optional()
      .describe(
        'Annotations of the object. How it may leave the cluster once it leaves the Bundle: smith.atlassian.com/deletionDelay (a Go duration: a cancellable countdown), smith.atlassian.com/deletionPolicy (Delete, Orphan: kept, Approve: deleted once approved) and smith.atlassian.com/deleteWhen (BundleReady); each overrides spec.deletionDefaults. How it is kept in line: smith.atlassian.com/apply (Always, IfNotPresent), smith.atlassian.com/ignore (comma-separated JSON pointers) and smith.atlassian.com/drift (Correct, Warn); each overrides spec.driftDefaults.',
      ),
    ownerReferences: z
      .array(OwnerReferenceSchema)
      .optional()
      .describe('Owners the user declares (non-controller); kept when the operator releases the object.'),
  })
  .loose()
  .meta({ ...preserveUnknown, description: 'Metadata of the object; fields not listed here are kept as written.' });

/** A full Kubernetes object as written in a Bundle. */
export const KubeObjectSchema = z
  .object({
    apiVersion: z.string().min(1).describe('API version of the object, e.g. v1 or apps/v1.'),
    kind: z.string().min(1).describe('Kind of the object, e.g. ConfigMap.'),
    metadata: ObjectMetaSchema,
  })
  .loose()
  .meta({
    ...preserveUnknown,
    description:
      'The full Kubernetes object to apply (server-side apply, field manager bundlesmith); "!{name}" placeholders are replaced by reference values.',
  });
export type KubeObjectManifest = z.infer<typeof KubeObjectSchema>;

export const ReferenceSchema = z
  .object({
    name: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Name of this reference: "!{name}" in the object is replaced by the referenced value. Without a name the reference only orders.',
      ),
    resource: z.string().min(1).max(253).describe('Name of the Bundle resource referred to; it is applied and Ready before this one.'),
    path: z
      .string()
      .optional()
      .describe(
        'Path to the value on the referenced live object, in dot form (status.clusterIP, data.key, spec.ports[0].port) or kubectl form ({.status.host}).',
      ),
    example: z
      .unknown()
      .optional()
      .meta({ ...preserveUnknown, description: 'An example value, for tooling; ignored by the operator.' }),
    modifier: z.string().optional().describe("Smith's value modifiers (e.g. bindsecret): not supported, reported as an error."),
  })
  .describe('A dependency of this resource on another resource of the Bundle, optionally reading a value from it.');
export type Reference = z.infer<typeof ReferenceSchema>;

export const PluginSpecSchema = z
  .object({
    name: z.string().min(1).describe('Name of the Smith plugin.'),
    objectName: z.string().min(1).describe('Name of the object the plugin would create.'),
    spec: z
      .record(z.string(), z.unknown())
      .optional()
      .meta({ ...preserveUnknown, description: 'Input of the plugin.' }),
  })
  .describe('A Smith plugin: accepted so Smith manifests apply, reported as unsupported.');

export const ResourceSpecSchema = z
  .object({
    object: KubeObjectSchema.optional(),
    plugin: PluginSpecSchema.optional(),
  })
  .describe('What the resource is: an object (a plugin is reported as unsupported).');

export const ResourceSchema = z
  .object({
    name: dns1123Subdomain.describe('Name of the resource within the Bundle (DNS-1123 subdomain), used by references and in status.'),
    references: z
      .array(ReferenceSchema)
      .max(MAX_REFERENCES)
      .optional()
      .describe(
        `Resources this one depends on: they are applied and Ready first, and values are read from them. At most ${MAX_REFERENCES}.`,
      ),
    spec: ResourceSpecSchema,
  })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: '!has(self.references) || self.references.all(ref, ref.resource != self.name)',
        message: 'a resource may not reference itself',
        fieldPath: '.references',
      },
    ],
  })
  .describe('One object of the Bundle.');
export type Resource = z.infer<typeof ResourceSchema>;

/** A non-negative Go duration, as src/core/duration.ts reads it (the deletion guard's test too): the syntax, then Go's range. */
export const GO_DURATION_RULE =
  "self.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self) >= duration('0s')";

export const DeletionDefaultsSchema = z
  .object({
    deletionDelay: z
      .string()
      .max(64)
      .meta({
        // The API server refuses a default no one can read: the chart's deletion guard reads only objects, so an
        // unreadable default would let a collector delete in a foreground cascade what the finalizer keeps (red team 8).
        'x-kubernetes-validations': [{ rule: GO_DURATION_RULE, message: 'must be a non-negative Go duration, such as "24h" or "1h30m"' }],
      })
      .optional()
      .describe(
        'Go duration (e.g. "24h"): the deletionDelay of every object of the Bundle without its own smith.atlassian.com/deletionDelay annotation.',
      ),
    deletionPolicy: z
      .enum(DELETION_POLICIES)
      .optional()
      .describe(
        'Delete (default), Orphan (released, never deleted) or Approve (deleted only once approved): for every object without its own smith.atlassian.com/deletionPolicy annotation.',
      ),
    deleteWhen: z
      .enum(DELETE_WHEN_GATES)
      .optional()
      .describe(
        'BundleReady: an object that leaves the Bundle is deleted only once the Bundle is Ready again; for every object without its own smith.atlassian.com/deleteWhen annotation.',
      ),
  })
  .describe(
    "How the Bundle's objects leave the cluster, unless an object's own annotations say otherwise. An extension of Smith's schema.",
  );
export type DeletionDefaults = z.infer<typeof DeletionDefaultsSchema>;

/** At most this many JSON pointers to ignore, in spec.driftDefaults.ignore and in one object's annotation alike. */
export const MAX_IGNORED_POINTERS = 64;
export const MAX_POINTER_LENGTH = 1024;

/** An RFC 6901 JSON pointer into an object: "/" then segments, "~" only as "~0" or "~1" (core/bundle/drift-controls.ts reads the same). */
export const JSON_POINTER_PATTERN = '^(/([^~]|~[01])*)+$';

/**
 * What no ignore may name, as CEL over one pointer: the object's identity and
 * ownership, and the operator's own annotations and labels (core/bundle/drift-controls.ts
 * refuses the same, for annotations and Bundles stored under an older CRD).
 */
export const UNIGNORABLE_POINTERS = [
  { pattern: '^/(apiVersion|kind)(/.*)?$', message: 'may not ignore apiVersion or kind' },
  {
    pattern: '^/metadata(/(name|namespace|ownerReferences)(/.*)?|/annotations|/labels)?$',
    message: 'may not ignore metadata, its name, namespace or ownerReferences, or all of its annotations or labels',
  },
  {
    pattern: '^/metadata/(annotations|labels)/smith[.]atlassian[.]com~1.*$',
    message: "may not ignore the operator's own smith.atlassian.com annotations and labels",
  },
] as const;
export const IGNORABLE_POINTER_RULES = UNIGNORABLE_POINTERS.map((p) => ({ rule: `!self.matches('${p.pattern}')`, message: p.message }));

export const DriftDefaultsSchema = z
  .object({
    apply: z
      .enum(APPLY_MODES)
      .optional()
      .describe(
        'Always (default: every pass applies the manifest) or IfNotPresent (created when absent, never updated afterwards; still owned, pruned and soft-deleted): for every object without its own smith.atlassian.com/apply annotation.',
      ),
    ignore: z
      .array(
        z
          .string()
          .min(1)
          .max(MAX_POINTER_LENGTH)
          .regex(new RegExp(JSON_POINTER_PATTERN), 'must be a JSON pointer (RFC 6901), such as "/spec/replicas"')
          .meta({ 'x-kubernetes-validations': IGNORABLE_POINTER_RULES }),
      )
      .max(MAX_IGNORED_POINTERS)
      .optional()
      .describe(
        `JSON pointers (RFC 6901, e.g. "/spec/replicas") left to other field managers once an object exists: applied with the live value (left out once another field manager owns it), never counted as drift. For every object without its own smith.atlassian.com/ignore annotation (a comma-separated list). At most ${MAX_IGNORED_POINTERS}.`,
      ),
    drift: z
      .enum(DRIFT_MODES)
      .optional()
      .describe(
        "Correct (default: a changed field is put back) or Warn (reported as the resource's Drifted condition, a Drifted event and a metric, not written; an edit of the manifest is still applied): for every object without its own smith.atlassian.com/drift annotation.",
      ),
  })
  .describe(
    "How the Bundle's objects are kept in line with their manifests, unless an object's own annotations say otherwise. An extension of Smith's schema.",
  );
export type DriftDefaults = z.infer<typeof DriftDefaultsSchema>;

/** Longest CEL expression accepted (core/bundle/cel.ts holds the same bound). */
export const MAX_HEALTH_CHECK_EXPRESSION = 4096;
export const MAX_HEALTH_CHECKS = 64;

const celExpression = (what: string) => z.string().min(1).max(MAX_HEALTH_CHECK_EXPRESSION).describe(what);

export const HealthCheckSchema = z
  .object({
    apiVersion: z
      .string()
      .min(1)
      .max(316)
      .describe('API version of the objects the rule is for (group/version, or version for the core group), e.g. "cert-manager.io/v1".'),
    kind: z.string().min(1).max(63).describe('Kind of the objects the rule is for.'),
    current: celExpression(
      'CEL over the live object (its top-level fields are the variables: metadata, spec, status...): true when the object is ready. Required.',
    ),
    inProgress: celExpression('CEL: true while the object is still working; checked first.').optional(),
    failed: celExpression(
      'CEL: true when the object has failed for good: a terminal error of the resource; checked after inProgress.',
    ).optional(),
  })
  .describe(
    "A readiness rule for one kind, in Flux's healthCheckExprs shape: the object's status.observedGeneration must match its generation, then inProgress, failed and current are tried in that order; none true is in progress. An extension of Smith's schema.",
  );
export type HealthCheck = z.infer<typeof HealthCheckSchema>;

/**
 * The operator's --health-checks-file: a list of rules, or an object holding
 * it under healthChecks (a Bundle's field) or healthCheckExprs (a Flux
 * Kustomization's), so a block can be pasted from either.
 */
export const HealthChecksFileSchema = z.union([
  z.array(HealthCheckSchema).max(MAX_HEALTH_CHECKS),
  z.object({ healthChecks: z.array(HealthCheckSchema).max(MAX_HEALTH_CHECKS) }).transform((o) => o.healthChecks),
  z.object({ healthCheckExprs: z.array(HealthCheckSchema).max(MAX_HEALTH_CHECKS) }).transform((o) => o.healthCheckExprs),
]);

export const BundleSpecSchema = z
  .object({
    resources: z
      .array(ResourceSchema)
      .max(MAX_RESOURCES)
      .default([])
      .meta({
        // Names are keys: the apiserver refuses duplicates at the door.
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        // A CEL check that every reference names a listed resource costs
        // resources x references x resources string comparisons, far over
        // the apiserver's budget at these bounds: the operator checks that.
      })
      .describe(
        `The objects of the Bundle, applied dependencies first; an object that leaves this list is deleted as its deletion rules say (after its deletionDelay, once approved, or never for deletionPolicy Orphan). At most ${MAX_RESOURCES}, names unique.`,
      ),
    serviceAccountName: z
      .string()
      .min(1)
      .max(253)
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/)
      .optional()
      .describe(
        "A ServiceAccount in the Bundle's namespace whose rights every request for the Bundle's objects uses (reads, adoption, apply, prune, soft-delete stamps and deletes, release): the operator impersonates it. An extension of Smith's schema. Unset: the operator's --default-service-account if it has one, else the operator's own identity.",
      ),
    deletionDefaults: DeletionDefaultsSchema.optional(),
    driftDefaults: DriftDefaultsSchema.optional(),
    healthChecks: z
      .array(HealthCheckSchema)
      .max(MAX_HEALTH_CHECKS)
      .optional()
      .meta({ 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['apiVersion', 'kind'] })
      .describe(
        `Readiness rules (CEL) by apiVersion and kind, tried before every built-in rule; over the operator's --health-checks-file rules for the same kind. At most ${MAX_HEALTH_CHECKS}, one per apiVersion and kind. An extension of Smith's schema.`,
      ),
  })
  .describe('What the Bundle holds.');
export type BundleSpec = z.infer<typeof BundleSpecSchema>;

export const ConditionStatusSchema = z.enum(['True', 'False', 'Unknown']);
export type ConditionStatus = z.infer<typeof ConditionStatusSchema>;

export const ConditionSchema = z
  .object({
    type: z
      .string()
      .describe('InProgress, Ready, Error, Reconciling or Stalled (Bundle); Blocked, InProgress, Ready, Error or Drifted (resource).'),
    status: ConditionStatusSchema.describe('True, False or Unknown.'),
    reason: z.string().optional().describe('Why, in one CamelCase word.'),
    message: z.string().optional().describe('Why, for humans.'),
    lastTransitionTime: z.string().optional().describe('When the status last changed (RFC 3339).'),
    observedGeneration: z.number().int().optional().describe('The generation of the spec the condition was decided on.'),
  })
  .describe('A condition.');
export type Condition = z.infer<typeof ConditionSchema>;

export const ResourceStatusSchema = z
  .object({
    name: z.string().describe('Name of the resource in the Bundle.'),
    conditions: z.array(ConditionSchema).optional().describe('Conditions of this resource.'),
  })
  .describe('The state of one resource.');
export type ResourceStatus = z.infer<typeof ResourceStatusSchema>;

export const ObjectToDeleteSchema = z
  .object({
    group: z.string().optional().describe('API group of the object (empty for the core group).'),
    version: z.string().describe('API version of the object.'),
    kind: z.string().describe('Kind of the object.'),
    name: z.string().describe('Name of the object.'),
  })
  .describe('An object that left the spec and is still to be deleted.');
export type ObjectToDelete = z.infer<typeof ObjectToDeleteSchema>;

export const PendingDeletionSchema = z
  .object({
    apiVersion: z.string().describe('API version of the object.'),
    kind: z.string().describe('Kind of the object.'),
    name: z.string().describe('Name of the object.'),
    deletionTimestamp: z.string().describe("When the countdown started: the object's smith.atlassian.com/deletionTimestamp annotation."),
    deleteAfter: z.string().describe('deletionTimestamp + deletionDelay: the earliest time the object is deleted.'),
    waitingFor: z
      .enum(['Delay', 'Approval', 'BundleReady'])
      .optional()
      .describe(
        'What the deletion waits for now: the delay to pass, an approval (deletionPolicy Approve), or the Bundle to be Ready (deleteWhen BundleReady).',
      ),
  })
  .describe('An object that left the spec and waits for its deletionDelay; putting it back cancels the deletion.');
export type PendingDeletion = z.infer<typeof PendingDeletionSchema>;

export const DeclaredRulesSchema = z
  .object({
    group: z.string().optional().describe('API group of the object (absent for the core group).'),
    kind: z.string().describe('Kind of the object.'),
    name: z.string().describe('Name of the object.'),
    deletionDelay: z.string().optional().describe('The smith.atlassian.com/deletionDelay its manifest declares.'),
    deletionPolicy: z.string().optional().describe('The smith.atlassian.com/deletionPolicy its manifest declares.'),
    deleteWhen: z.string().optional().describe('The smith.atlassian.com/deleteWhen its manifest declares.'),
  })
  .describe("The deletion rules one listed object's manifest declares.");
export type DeclaredRules = z.infer<typeof DeclaredRulesSchema>;

export const BundleStatusSchema = z
  .object({
    observedGeneration: z.number().int().optional().describe('The generation of the spec this status describes.'),
    conditions: z
      .array(ConditionSchema)
      .optional()
      .describe(
        "Smith's InProgress, Ready and Error conditions of the Bundle, and kstatus' Reconciling and Stalled (read by Helm's --wait, Flux and Config Sync).",
      ),
    message: z
      .string()
      .optional()
      .describe('What blocks the Bundle, what is wrong, what it waits for, or Ready: one short line (printer column).'),
    resourceStatuses: z.array(ResourceStatusSchema).optional().describe('Conditions of each resource, by name.'),
    objectsToDelete: z.array(ObjectToDeleteSchema).optional().describe('Objects that left the spec and are still to be deleted.'),
    pendingDeletions: z.array(PendingDeletionSchema).optional().describe('Objects that left the spec and wait for their deletionDelay.'),
    declaredRules: z
      .array(DeclaredRulesSchema)
      .optional()
      .describe(
        "The deletion rules each listed object's manifest declares, as the operator last read the spec: when the object leaves the spec, its deletion is never looser than these (over spec.deletionDefaults), whatever its own annotations say.",
      ),
    pendingDeletionCount: z.number().int().optional().describe('How many objects wait for their deletionDelay (printer column).'),
    awaitingApprovalCount: z
      .number()
      .int()
      .optional()
      .describe('How many objects are due and wait for their deletion to be approved (printer column).'),
    resourcesReady: z.string().optional().describe('Ready resources out of all, as "ready/total" (printer column).'),
    // Kinds, so that a restarted operator watches them, prunes leftovers of
    // kinds that left the spec and finds released objects.
    managedKinds: z
      .array(z.string())
      .optional()
      .describe(
        'The kind inventory: Kind.group (Kind for the core group) of every kind this Bundle may control objects of, by group and kind, resolved at the version the server serves now. Recorded before any object of the kind is written; kept until a list of the kind shows nothing referencing the Bundle. Entries group/version/Kind written by earlier versions are read too.',
      ),
  })
  .describe('What the operator observed and did.');
export type BundleStatus = z.infer<typeof BundleStatusSchema>;

/** The parts of a live Bundle's metadata that the controller uses. */
export const BundleMetaSchema = z
  .object({
    name: z.string(),
    namespace: z.string(),
    uid: z.string(),
    generation: z.number().int().optional(),
    resourceVersion: z.string().optional(),
    deletionTimestamp: z.string().optional(),
    finalizers: z.array(z.string()).optional(),
    labels: z.record(z.string(), z.string()).optional(),
    annotations: z.record(z.string(), z.string()).optional(),
  })
  .loose();

export const BundleSchema = z.object({
  apiVersion: z.literal(API_VERSION),
  kind: z.literal(BUNDLE_KIND),
  metadata: BundleMetaSchema,
  spec: BundleSpecSchema.default({ resources: [] }),
  status: BundleStatusSchema.optional(),
});
export type Bundle = z.infer<typeof BundleSchema>;

/** Turns zod issues into one readable line per problem, with the path of each. */
export function formatIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const path =
      issue.path.length > 0
        ? issue.path
            .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
            .join('')
            .replace(/^\./, '')
        : '(root)';
    return `${path}: ${issue.message}`;
  });
}
