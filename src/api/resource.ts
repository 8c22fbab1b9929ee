/**
 * One resource of a Bundle, as zod schemas (part of the Bundle API of
 * bundle.ts, from which the CRD is generated): the Kubernetes object it
 * holds (metadata, owner references), its references to other resources,
 * and Smith's plugins. Separate from bundle.ts: the object schemas are what
 * most of the operator reads, without the rest of the spec.
 */
import { z } from 'zod';

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
