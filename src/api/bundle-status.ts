/**
 * The Bundle's status (part of the Bundle API of bundle.ts), as zod
 * schemas: conditions, resource statuses, pending deletions and the kind
 * inventory. Separate from bundle.ts: what the operator writes, apart from
 * what the user writes.
 */
import { z } from 'zod';

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
        'What the deletion waits for now: the delay to pass, an approval (deletionPolicy Approve), or every resource of the Bundle to be Ready (deleteWhen BundleReady).',
      ),
  })
  .describe('An object that left the spec and waits for its deletionDelay; putting it back cancels the deletion.');
export type PendingDeletion = z.infer<typeof PendingDeletionSchema>;

export const ClaimEntrySchema = z
  .object({
    apiVersion: z.string().describe('API version the object was claimed at (its group and kind are what count).'),
    kind: z.string().describe('Kind of the object.'),
    name: z.string().describe("Name of the object, in the Bundle's namespace."),
    uid: z.string().describe('UID of the object: an entry names this object only, never one re-created under its name.'),
    pending: z
      .boolean()
      .optional()
      .describe(
        'Recorded ahead of a claim not yet seen on the object: it lets the claimReferences annotation count, and counts on its own only once confirmed.',
      ),
  })
  .describe('An object this Bundle holds a claim on.');
export type ClaimEntry = z.infer<typeof ClaimEntrySchema>;

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
    // Written ahead of the finalizer's first orphan write (controllers/bundle/finalize.ts), read by every later pass.
    deletionPropagation: z
      .string()
      .optional()
      .describe(
        "Orphan once the finalizer read an orphan deletion of this Bundle (the orphan finalizer, or what the garbage collector left on its objects): recorded before the finalizer's first orphan write, and read so by every later pass, whatever is left on the objects.",
      ),
    // The second record of the claims (core/bundle/claim-record.ts), beside each object's claimReferences annotation.
    claims: z
      .array(ClaimEntrySchema)
      .optional()
      .describe(
        "The objects this Bundle holds a claim on (it lists them, another Bundle controls them), by UID: recorded (pending) before each claim is written, confirmed once the claim is seen on the object with its smith.atlassian.com/claimReferences annotation. A confirmed entry makes the Bundle's reference on the object its claim; the annotation does only while an entry names the object. Withdrawn when the Bundle stops listing the object.",
      ),
  })
  .describe('What the operator observed and did.');
export type BundleStatus = z.infer<typeof BundleStatusSchema>;
