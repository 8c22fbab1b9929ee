/**
 * Generates the Bundle CustomResourceDefinition from the zod schemas in
 * bundle.ts. zod's JSON Schema output is close to what the apiserver wants;
 * toStructural() turns it into a structural OpenAPI v3 schema (no $schema,
 * no additionalProperties beside properties, no JSON-Schema-only keywords).
 */
import { z } from 'zod';
import { stringify } from 'yaml';
import { BundleSpecSchema } from './bundle.js';
import { BundleStatusSchema } from './bundle-status.js';
import { ApplySetLabels, BUNDLE_KIND, BUNDLE_PLURAL, BUNDLE_RESOURCE, GROUP, VERSION } from './names.js';

type JsonSchema = { [key: string]: unknown };

const DROPPED_KEYWORDS = new Set(['$schema', 'propertyNames', 'default', '$id']);

function isRecord(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Rewrites one JSON Schema node (recursively) into the structural subset Kubernetes accepts. */
export function toStructural(node: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    if (DROPPED_KEYWORDS.has(key)) continue;
    if (key === 'properties' && isRecord(value)) {
      out.properties = Object.fromEntries(
        Object.entries(value).map(([name, child]) => [name, isRecord(child) ? toStructural(child) : child]),
      );
    } else if (key === 'items' && isRecord(value)) {
      out.items = toStructural(value);
    } else if (key === 'additionalProperties') {
      // A map (no properties) keeps its value schema; an object with
      // properties either prunes unknown fields (the default) or preserves
      // them through x-kubernetes-preserve-unknown-fields.
      if (isRecord(value) && node.properties === undefined && Object.keys(value).length > 0) {
        out.additionalProperties = toStructural(value);
      }
    } else if ((key === 'minimum' || key === 'maximum') && Math.abs(Number(value)) >= Number.MAX_SAFE_INTEGER) {
      continue; // zod's bounds for .int(); the apiserver's int64 is wider and needs none
    } else {
      out[key] = value;
    }
  }
  // A free-form value (zod's unknown) carries no type: structural schemas allow that only with preserve-unknown-fields.
  if (out.type === undefined && out['x-kubernetes-preserve-unknown-fields'] !== true && out.anyOf === undefined) {
    out['x-kubernetes-preserve-unknown-fields'] = true;
  }
  return out;
}

function schemaOf(schema: z.ZodType): JsonSchema {
  return toStructural(z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }));
}

/**
 * A Bundle the operator has not seen yet reads as in progress: kstatus
 * (Helm 4's --wait, Flux) takes a missing status.observedGeneration as
 * nothing to check and a Bundle without conditions as Current, so the
 * schema defaults observedGeneration to 0, behind every generation (1 and
 * up). The API server applies the default when it reads the object, so a
 * new Bundle shows it before the operator's first write. Conditions are
 * a map keyed by type, as metav1.Condition lists are: server-side apply
 * merges them by type, and no type appears twice.
 */
function statusSchema(): JsonSchema {
  const status = schemaOf(BundleStatusSchema);
  const properties = status.properties as Record<string, JsonSchema>;
  properties.conditions = conditionMap(properties.conditions);
  const resourceStatuses = properties.resourceStatuses as { items: { properties: Record<string, JsonSchema> } };
  resourceStatuses.items.properties.conditions = conditionMap(resourceStatuses.items.properties.conditions);
  return { ...status, default: { observedGeneration: 0 } };
}

function conditionMap(list: JsonSchema | undefined): JsonSchema {
  return { ...list, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] };
}

export function buildBundleCrd(): JsonSchema {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    // A Bundle is an ApplySet parent (KEP-3659): kubectl accepts `--applyset=bundles.smith.atlassian.com/NAME` only for a
    // CRD that says so, and then refuses to prune it, since its tooling annotation names bundlesmith.
    metadata: { name: BUNDLE_RESOURCE, labels: { [ApplySetLabels.isParentType]: 'true' } },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: {
        kind: BUNDLE_KIND,
        listKind: `${BUNDLE_KIND}List`,
        plural: BUNDLE_PLURAL,
        singular: 'bundle',
        shortNames: ['bdl'],
        categories: ['smith', 'all-bundles'],
      },
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          // What a person reads first by default; the rest with -o wide (priority 1).
          additionalPrinterColumns: [
            { name: 'Ready', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].status" },
            {
              name: 'Status',
              type: 'string',
              description: 'What blocks the Bundle, what is wrong, what it waits for, or Ready',
              jsonPath: '.status.message',
            },
            { name: 'Resources', type: 'string', description: 'Ready resources out of all', jsonPath: '.status.resourcesReady' },
            {
              name: 'Pending-Deletions',
              type: 'integer',
              description:
                'Objects that left the Bundle and wait for their deletion (a delay, an approval, every resource of the Bundle to be Ready)',
              jsonPath: '.status.pendingDeletionCount',
            },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
            { name: 'Reason', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].reason", priority: 1 },
            { name: 'Reconciling', type: 'string', jsonPath: ".status.conditions[?(@.type=='Reconciling')].status", priority: 1 },
            { name: 'Stalled', type: 'string', jsonPath: ".status.conditions[?(@.type=='Stalled')].status", priority: 1 },
            {
              name: 'Awaiting-Approval',
              type: 'integer',
              description: 'Objects due for deletion that wait for an approval (deletionPolicy Approve)',
              jsonPath: '.status.awaitingApprovalCount',
              priority: 1,
            },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: 'A Bundle lists Kubernetes objects that bundlesmith applies, orders by their references, owns and prunes.',
              properties: {
                apiVersion: { type: 'string', description: 'smith.atlassian.com/v1' },
                kind: { type: 'string', description: 'Bundle' },
                // The apiserver allows nothing but the type here (it documents metadata itself).
                metadata: { type: 'object' },
                spec: schemaOf(BundleSpecSchema),
                status: statusSchema(),
              },
              required: ['spec'],
            },
          },
        },
      ],
    },
  };
}

export const CRD_HEADER = '# Generated from src/api/bundle.ts by `npm run crd:generate`. Do not edit by hand.\n';

export function renderBundleCrdYaml(): string {
  return CRD_HEADER + stringify(buildBundleCrd(), { lineWidth: 0 });
}
