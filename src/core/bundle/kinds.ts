/**
 * What the decisions need to know about kinds, passed in as data (the
 * controller fills these from discovery and from CRDs).
 */

export interface KindInfo {
  /** False for cluster-scoped kinds, which a namespaced Bundle cannot own. */
  namespaced: boolean;
  plural: string;
}

/** Keyed by `kindKey(apiVersion, kind)`: "apps/v1/Deployment", "v1/ConfigMap". */
export type KindTable = ReadonlyMap<string, KindInfo>;

/** The readiness annotations of a CRD (`smith.atlassian.com/CrReadyWhenFieldPath` / `...Value`). */
export interface CrdReadiness {
  fieldPath: string;
  fieldValue: string;
}

/** Keyed like KindTable, for custom resource kinds whose CRD carries both readiness annotations. */
export type CrdReadinessTable = ReadonlyMap<string, CrdReadiness>;
