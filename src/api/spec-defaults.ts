/**
 * spec.deletionDefaults and spec.driftDefaults of the Bundle API (bundle.ts),
 * as zod schemas, with the bounds and rules the CRD holds for them (Go
 * durations, JSON pointers and what no ignore may name). Separate from
 * bundle.ts: the soft-delete and drift rules, read by their own code.
 */
import { z } from 'zod';
import { APPLY_MODES, DELETE_WHEN_GATES, DELETION_POLICIES, DRIFT_MODES } from './names.js';

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
        'BundleReady: an object that leaves the Bundle is deleted only once every resource of the Bundle is Ready again; for every object without its own smith.atlassian.com/deleteWhen annotation.',
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
