/**
 * The Bundle API (smith.atlassian.com/v1), as zod schemas. These are the
 * single source of truth: the CRD in crds/ is generated from them
 * (see crd.ts), and the controller parses every Bundle it reads with them.
 * This file holds the Bundle and its spec; the parts are in resource.ts (one
 * resource: its object and references), spec-defaults.ts (deletion and drift
 * defaults), health-checks.ts (readiness rules) and bundle-status.ts.
 */
import { z } from 'zod';
import { API_VERSION, BUNDLE_KIND } from './names.js';
import { MAX_RESOURCES, ResourceSchema } from './resource.js';
import { DeletionDefaultsSchema, DriftDefaultsSchema } from './spec-defaults.js';
import { HealthCheckSchema, MAX_HEALTH_CHECKS } from './health-checks.js';
import { BundleStatusSchema } from './bundle-status.js';

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
