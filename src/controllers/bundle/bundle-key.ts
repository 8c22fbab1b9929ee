/** A Bundle's work-queue key, shared by the object cache and the index it routes events with (bundle-index.ts). */
export type BundleKey = string; // "namespace/name"
