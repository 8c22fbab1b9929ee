/**
 * `bundlesmith validate`: the judgement a Bundle meets on its way in,
 * offline, in the order it meets it. First the API server's: the CRD's
 * schema read strictly, its CEL rules (strict-schema.ts). Then the
 * operator's, with its own readers and words: the spec's checks
 * (core/bundle/validate), each object's deletion rules (readDeletionRules,
 * as the planner reads them), and what the API server refuses of an object
 * whose kind's rules are fixed (object-checks.ts). Each message is the one
 * the Bundle's status or the apply's error would carry.
 *
 * Without a cluster the kinds' scopes are unknown: every kind is taken as
 * namespaced except Kubernetes' built-in cluster-scoped ones, which a
 * namespaced Bundle cannot own.
 */
import { z } from 'zod';
import { BundleSchema, formatIssues, type BundleSpec } from '../api/bundle.js';
import { DNS1123_SUBDOMAIN } from '../api/resource.js';
import { API_VERSION, BUNDLE_KIND, GROUP } from '../api/names.js';
import type { KindInfo, KindTable } from '../core/bundle/kinds.js';
import { groupOf, kindKey } from '../core/bundle/objects.js';
import { findPlaceholders } from '../core/bundle/references.js';
import { formatIssue, validateBundle } from '../core/bundle/validate.js';
import { readDelayText, readDeletionRules, unreadableRulesMessage } from '../core/softdelete/rules.js';
import type { ManifestDocument, ManifestFile } from './manifests.js';
import { builtinObjectProblems } from './object-checks.js';
import { bundleSchema, checkSchema } from './strict-schema.js';

/** Built-in cluster-scoped kinds, as "group/Kind" ("" is the core group). */
export const BUILTIN_CLUSTER_SCOPED: ReadonlySet<string> = new Set([
  '/Namespace',
  '/Node',
  '/PersistentVolume',
  '/ComponentStatus',
  'rbac.authorization.k8s.io/ClusterRole',
  'rbac.authorization.k8s.io/ClusterRoleBinding',
  'apiextensions.k8s.io/CustomResourceDefinition',
  'apiregistration.k8s.io/APIService',
  'admissionregistration.k8s.io/MutatingWebhookConfiguration',
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding',
  'admissionregistration.k8s.io/MutatingAdmissionPolicy',
  'admissionregistration.k8s.io/MutatingAdmissionPolicyBinding',
  'storage.k8s.io/StorageClass',
  'storage.k8s.io/CSIDriver',
  'storage.k8s.io/CSINode',
  'storage.k8s.io/VolumeAttachment',
  'storage.k8s.io/VolumeAttributesClass',
  'scheduling.k8s.io/PriorityClass',
  'node.k8s.io/RuntimeClass',
  'networking.k8s.io/IngressClass',
  'networking.k8s.io/IPAddress',
  'networking.k8s.io/ServiceCIDR',
  'certificates.k8s.io/CertificateSigningRequest',
  'certificates.k8s.io/ClusterTrustBundle',
  'flowcontrol.apiserver.k8s.io/FlowSchema',
  'flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration',
  'resource.k8s.io/DeviceClass',
  'resource.k8s.io/ResourceSlice',
  'internal.apiserver.k8s.io/StorageVersion',
  'storagemigration.k8s.io/StorageVersionMigration',
  'authentication.k8s.io/TokenReview',
  'authentication.k8s.io/SelfSubjectReview',
  'authorization.k8s.io/SubjectAccessReview',
  'authorization.k8s.io/SelfSubjectAccessReview',
  'authorization.k8s.io/SelfSubjectRulesReview',
]);

/** A Bundle as written in a manifest: no uid, and the namespace may come from the command line. */
const BundleManifestSchema = BundleSchema.extend({
  metadata: z
    .object({
      name: z.string().min(1).max(253).regex(DNS1123_SUBDOMAIN, 'must be a DNS-1123 subdomain'),
      namespace: z
        .string()
        .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a namespace name (DNS-1123 label)')
        .max(63)
        .optional(),
    })
    .loose(),
  status: z.unknown().optional(),
});

export interface Problem {
  file: string;
  /** 1-based; 0 when the problem is about the whole file (unreadable). */
  line: number;
  col: number;
  /** "ns/name" of the Bundle concerned, when known. */
  bundle?: string;
  message: string;
}

export interface BundleManifest {
  document: ManifestDocument;
  name: string;
  /** From the manifest, else the namespace given on the command line. */
  namespace: string;
  spec: BundleSpec;
  /** The document as written (for diff and apply). */
  raw: Record<string, unknown>;
}

export interface FileValidation {
  bundles: BundleManifest[];
  /** Bundles the schema accepts but the semantic checks do not: the operator still takes hold of what they list (claims), nothing else. */
  withIssues: BundleManifest[];
  problems: Problem[];
  /** Documents that are not Bundles ("ConfigMap x"), reported but not checked. */
  skipped: string[];
}

/** Whether a document is meant to be a Bundle (and so gets checked). */
function isBundleDocument(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const v = value as { apiVersion?: unknown; kind?: unknown };
  return v.kind === BUNDLE_KIND || (typeof v.apiVersion === 'string' && v.apiVersion.startsWith(`${GROUP}/`));
}

/** Every kind the Bundle lists, with its offline scope. */
export function offlineKindTable(spec: BundleSpec): KindTable {
  const table = new Map<string, KindInfo>();
  for (const resource of spec.resources) {
    const o = resource.spec.object;
    if (o === undefined) continue;
    const namespaced = !BUILTIN_CLUSTER_SCOPED.has(`${groupOf(o.apiVersion)}/${o.kind}`);
    table.set(kindKey(o.apiVersion, o.kind), { namespaced, plural: `${o.kind.toLowerCase()}s` });
  }
  return table;
}

function describe(value: unknown): string {
  const v = (typeof value === 'object' && value !== null ? value : {}) as { kind?: unknown; metadata?: { name?: unknown } };
  return `${typeof v.kind === 'string' ? v.kind : '(no kind)'} ${typeof v.metadata?.name === 'string' ? v.metadata.name : '(no name)'}`;
}

/**
 * Checks every Bundle in one parsed file. `kinds`, when given (diff has a
 * cluster), replaces the offline kind table.
 */
export function validateFile(parsed: ManifestFile, defaultNamespace: string, kinds?: (spec: BundleSpec) => KindTable): FileValidation {
  const problems: Problem[] = parsed.syntaxErrors.map((e) => ({
    file: parsed.file,
    line: e.line,
    col: e.col,
    message: `YAML: ${e.message}`,
  }));
  const bundles: BundleManifest[] = [];
  const withIssues: BundleManifest[] = [];
  const skipped: string[] = [];
  const schema = bundleSchema();
  for (const document of parsed.documents) {
    if (!isBundleDocument(document.value)) {
      skipped.push(describe(document.value));
      continue;
    }
    const raw = document.value;
    const rawName = (raw.metadata as { name?: unknown } | undefined)?.name;
    const label = `${defaultNamespaceOf(raw, defaultNamespace)}/${typeof rawName === 'string' ? rawName : '(no name)'}`;
    const problem = (path: readonly (string | number)[], message: string): Problem => ({
      file: parsed.file,
      ...document.positionOf(path),
      bundle: label,
      message,
    });

    // The API server's door: a Bundle refused here never reaches the operator.
    if (raw.apiVersion !== API_VERSION || raw.kind !== BUNDLE_KIND) {
      problems.push(
        problem(
          ['apiVersion'],
          `no matches for kind ${JSON.stringify(raw.kind)} in version ${JSON.stringify(raw.apiVersion)}: the CRD serves ${API_VERSION}`,
        ),
      );
      continue;
    }
    const refused = checkSchema(raw, schema);
    if (refused.length > 0) {
      // An unknown field is shown at its key: the value under it may be lines below.
      problems.push(
        ...refused.map((p) =>
          p.unknownField === true ? { ...problem(p.path, p.message), ...document.keyPositionOf(p.path) } : problem(p.path, p.message),
        ),
      );
      continue;
    }
    const result = BundleManifestSchema.safeParse(raw);
    if (!result.success) {
      const messages = formatIssues(result.error);
      result.error.issues.forEach((issue, i) =>
        problems.push(
          problem(
            issue.path.filter((p): p is string | number => typeof p !== 'symbol'),
            messages[i] ?? issue.message,
          ),
        ),
      );
      continue;
    }
    const namespace = result.data.metadata.namespace ?? defaultNamespace;
    const spec = result.data.spec;
    const resourcePath = (resource: string | undefined): (string | number)[] => {
      const index = resource === undefined ? -1 : spec.resources.findIndex((r) => r.name === resource);
      return index < 0 ? ['spec', 'resources'] : ['spec', 'resources', index];
    };
    const issues = validateBundle({ name: result.data.metadata.name, namespace }, spec, kinds ? kinds(spec) : offlineKindTable(spec));
    const found = [
      ...issues.map((issue) => problem(resourcePath(issue.resource), formatIssue(issue))),
      ...objectProblems(spec).map((p) => problem(resourcePath(p.resource), `resource "${p.resource}": ${p.message}`)),
    ];
    problems.push(...found);
    (found.length === 0 ? bundles : withIssues).push({ document, name: result.data.metadata.name, namespace, spec, raw });
  }
  return { bundles, withIssues, problems, skipped };
}

/**
 * What the operator would refuse of each listed object beyond the spec's
 * checks: deletion rules it cannot read (the planner's own reader and
 * words), and what the API server refuses of an object whose kind's rules
 * are fixed. An object that still holds a reference placeholder where these
 * look is judged once resolved, as the operator judges it.
 */
function objectProblems(spec: BundleSpec): { resource: string; message: string }[] {
  const out: { resource: string; message: string }[] = [];
  // An unreadable default delay is the spec's own issue (validateBundle says it once): read each object without it.
  const defaultDelay = spec.deletionDefaults?.deletionDelay;
  const defaults =
    defaultDelay !== undefined && !readDelayText(defaultDelay, '').ok
      ? { ...spec.deletionDefaults, deletionDelay: undefined }
      : spec.deletionDefaults;
  for (const resource of spec.resources) {
    const object = resource.spec.object;
    if (object === undefined) continue;
    const annotations = object.metadata.annotations;
    if (findPlaceholders(annotations ?? {}).length === 0) {
      const rules = readDeletionRules(annotations, defaults);
      if (!rules.ok) out.push({ resource: resource.name, message: unreadableRulesMessage(rules.message) });
    }
    for (const message of builtinObjectProblems(object)) out.push({ resource: resource.name, message });
  }
  return out;
}

function defaultNamespaceOf(raw: Record<string, unknown>, fallback: string): string {
  const ns = (raw.metadata as { namespace?: unknown } | undefined)?.namespace;
  return typeof ns === 'string' && ns !== '' ? ns : fallback;
}

export function formatProblem(p: Problem): string {
  const at = p.line > 0 ? `${p.file}:${p.line}:${p.col}` : p.file;
  return `${at}: ${p.bundle ? `Bundle ${p.bundle}: ` : ''}${p.message}`;
}
