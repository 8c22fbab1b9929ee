/**
 * `bundlesmith validate`: the schema (the same zod schemas the CRD is
 * generated from) and the semantic checks the controller runs
 * (core/bundle/validate), offline. Without a cluster the kinds' scopes are
 * unknown: every kind is taken as namespaced except Kubernetes' built-in
 * cluster-scoped ones, which a namespaced Bundle cannot own.
 */
import { z } from 'zod';
import { BundleSchema, DNS1123_SUBDOMAIN, formatIssues, type BundleSpec } from '../api/bundle.js';
import { BUNDLE_KIND, GROUP } from '../api/names.js';
import type { KindInfo, KindTable } from '../core/bundle/kinds.js';
import { groupOf, kindKey } from '../core/bundle/objects.js';
import { validateBundle } from '../core/bundle/validate.js';
import type { ManifestDocument, ManifestFile } from './manifests.js';

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
      namespace: z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a namespace name (DNS-1123 label)').max(63).optional(),
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
  const problems: Problem[] = parsed.syntaxErrors.map((e) => ({ file: parsed.file, line: e.line, col: e.col, message: `YAML: ${e.message}` }));
  const bundles: BundleManifest[] = [];
  const withIssues: BundleManifest[] = [];
  const skipped: string[] = [];
  for (const document of parsed.documents) {
    if (!isBundleDocument(document.value)) {
      skipped.push(describe(document.value));
      continue;
    }
    const raw = document.value;
    const result = BundleManifestSchema.safeParse(raw);
    const rawName = (raw.metadata as { name?: unknown } | undefined)?.name;
    const label = `${defaultNamespaceOf(raw, defaultNamespace)}/${typeof rawName === 'string' ? rawName : '(no name)'}`;
    if (!result.success) {
      const messages = formatIssues(result.error);
      result.error.issues.forEach((issue, i) => {
        const at = document.positionOf(issue.path.filter((p): p is string | number => typeof p !== 'symbol'));
        problems.push({ file: parsed.file, ...at, bundle: label, message: messages[i] ?? issue.message });
      });
      continue;
    }
    const namespace = result.data.metadata.namespace ?? defaultNamespace;
    const spec = result.data.spec;
    const issues = validateBundle({ name: result.data.metadata.name, namespace }, spec, kinds ? kinds(spec) : offlineKindTable(spec));
    for (const issue of issues) {
      const index = issue.resource === undefined ? -1 : spec.resources.findIndex((r) => r.name === issue.resource);
      const path = index < 0 ? ['spec', 'resources'] : ['spec', 'resources', index];
      const where = index < 0 ? '' : `spec.resources[${index}]`;
      const at = document.positionOf(path);
      problems.push({ file: parsed.file, ...at, bundle: label, message: `${where ? `${where} ` : ''}${issue.resource === undefined ? '' : `(${issue.resource}) `}${issue.message}` });
    }
    (issues.length === 0 ? bundles : withIssues).push({ document, name: result.data.metadata.name, namespace, spec, raw });
  }
  return { bundles, withIssues, problems, skipped };
}

function defaultNamespaceOf(raw: Record<string, unknown>, fallback: string): string {
  const ns = (raw.metadata as { namespace?: unknown } | undefined)?.namespace;
  return typeof ns === 'string' && ns !== '' ? ns : fallback;
}

export function formatProblem(p: Problem): string {
  const at = p.line > 0 ? `${p.file}:${p.line}:${p.col}` : p.file;
  return `${at}: ${p.bundle ? `Bundle ${p.bundle}: ` : ''}${p.message}`;
}
