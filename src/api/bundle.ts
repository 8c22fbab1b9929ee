/**
 * The Bundle API (smith.atlassian.com/v1), as zod schemas. These are the
 * single source of truth: the CRD in crds/ is generated from them
 * (see crd.ts), and the controller parses every Bundle it reads with them.
 */
import { z } from 'zod';
import { API_VERSION, BUNDLE_KIND } from './names.js';

/** Marks a schema whose content the apiserver must keep as-is (a full Kubernetes object, free-form values). */
const preserveUnknown = { 'x-kubernetes-preserve-unknown-fields': true } as const;

export const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const dns1123Subdomain = z
  .string()
  .min(1)
  .max(253)
  .regex(DNS1123_SUBDOMAIN, 'must be a DNS-1123 subdomain: lower case alphanumerics, "-" and ".", starting and ending with an alphanumeric');

export const OwnerReferenceSchema = z.object({
  apiVersion: z.string(),
  kind: z.string(),
  name: z.string(),
  uid: z.string(),
  controller: z.boolean().optional(),
  blockOwnerDeletion: z.boolean().optional(),
});
export type OwnerReference = z.infer<typeof OwnerReferenceSchema>;

/** What the operator needs of an object's metadata; everything else is kept. */
export const ObjectMetaSchema = z
  .object({
    name: z.string().min(1),
    namespace: z.string().optional(),
    labels: z.record(z.string(), z.string()).optional(),
    annotations: z.record(z.string(), z.string()).optional(),
    ownerReferences: z.array(OwnerReferenceSchema).optional(),
  })
  .loose()
  .meta(preserveUnknown);

/** A full Kubernetes object as written in a Bundle. */
export const KubeObjectSchema = z
  .object({
    apiVersion: z.string().min(1),
    kind: z.string().min(1),
    metadata: ObjectMetaSchema,
  })
  .loose()
  .meta(preserveUnknown);
export type KubeObjectManifest = z.infer<typeof KubeObjectSchema>;

export const ReferenceSchema = z.object({
  /** Name of this reference; `!{name}` in the object is replaced by the referenced value. */
  name: z.string().min(1).optional(),
  /** Name of the Bundle resource referred to. */
  resource: z.string().min(1),
  /** Path to the value on the referenced live object, in dot form (`status.clusterIP`, `data.key`). */
  path: z.string().optional(),
  /** An example value, for tooling; ignored by the controller. */
  example: z.unknown().optional().meta(preserveUnknown),
  /** Smith's value modifiers (e.g. bindsecret); not supported, reported as an error. */
  modifier: z.string().optional(),
});
export type Reference = z.infer<typeof ReferenceSchema>;

export const PluginSpecSchema = z.object({
  name: z.string().min(1),
  objectName: z.string().min(1),
  spec: z.record(z.string(), z.unknown()).optional().meta(preserveUnknown),
});

export const ResourceSpecSchema = z.object({
  object: KubeObjectSchema.optional(),
  /** Smith plugins: accepted by the schema so Smith manifests apply; reported as unsupported. */
  plugin: PluginSpecSchema.optional(),
});

export const ResourceSchema = z.object({
  name: dns1123Subdomain,
  references: z.array(ReferenceSchema).optional(),
  spec: ResourceSpecSchema,
});
export type Resource = z.infer<typeof ResourceSchema>;

export const BundleSpecSchema = z.object({
  resources: z.array(ResourceSchema).default([]),
});
export type BundleSpec = z.infer<typeof BundleSpecSchema>;

export const ConditionStatusSchema = z.enum(['True', 'False', 'Unknown']);
export type ConditionStatus = z.infer<typeof ConditionStatusSchema>;

export const ConditionSchema = z.object({
  type: z.string(),
  status: ConditionStatusSchema,
  reason: z.string().optional(),
  message: z.string().optional(),
  lastTransitionTime: z.string().optional(),
});
export type Condition = z.infer<typeof ConditionSchema>;

export const ResourceStatusSchema = z.object({
  name: z.string(),
  conditions: z.array(ConditionSchema).optional(),
});
export type ResourceStatus = z.infer<typeof ResourceStatusSchema>;

export const ObjectToDeleteSchema = z.object({
  group: z.string().optional(),
  version: z.string(),
  kind: z.string(),
  name: z.string(),
});
export type ObjectToDelete = z.infer<typeof ObjectToDeleteSchema>;

export const PendingDeletionSchema = z.object({
  apiVersion: z.string(),
  kind: z.string(),
  name: z.string(),
  /** When the countdown started (the object's deletionTimestamp annotation). */
  deletionTimestamp: z.string(),
  /** deletionTimestamp + deletionDelay: when the object will be deleted. */
  deleteAfter: z.string(),
});
export type PendingDeletion = z.infer<typeof PendingDeletionSchema>;

export const BundleStatusSchema = z.object({
  observedGeneration: z.number().int().optional(),
  conditions: z.array(ConditionSchema).optional(),
  resourceStatuses: z.array(ResourceStatusSchema).optional(),
  objectsToDelete: z.array(ObjectToDeleteSchema).optional(),
  pendingDeletions: z.array(PendingDeletionSchema).optional(),
  /** Count of pendingDeletions, for the printer column. */
  pendingDeletionCount: z.number().int().optional(),
  /** "ready/total" resources, for the printer column. */
  resourcesReady: z.string().optional(),
  /**
   * apiVersion/Kind of every kind this Bundle controls objects of, so that a
   * restarted operator watches them, prunes leftovers of kinds that left the
   * spec and finds released objects.
   */
  managedKinds: z.array(z.string()).optional(),
});
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
    const path = issue.path.length > 0 ? issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('').replace(/^\./, '') : '(root)';
    return `${path}: ${issue.message}`;
  });
}
