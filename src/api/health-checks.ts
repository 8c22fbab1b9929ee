/**
 * spec.healthChecks of the Bundle API (bundle.ts), as zod schemas: readiness
 * rules in CEL, in Flux's healthCheckExprs shape, and the operator's
 * --health-checks-file that holds the same rules. Separate from bundle.ts:
 * the operator's flag reads them without a Bundle.
 */
import { z } from 'zod';

/** Longest CEL expression accepted (core/bundle/cel.ts holds the same bound). */
export const MAX_HEALTH_CHECK_EXPRESSION = 4096;
export const MAX_HEALTH_CHECKS = 64;

const celExpression = (what: string) => z.string().min(1).max(MAX_HEALTH_CHECK_EXPRESSION).describe(what);

export const HealthCheckSchema = z
  .object({
    apiVersion: z
      .string()
      .min(1)
      .max(316)
      .describe('API version of the objects the rule is for (group/version, or version for the core group), e.g. "cert-manager.io/v1".'),
    kind: z.string().min(1).max(63).describe('Kind of the objects the rule is for.'),
    current: celExpression(
      'CEL over the live object (its top-level fields are the variables: metadata, spec, status...): true when the object is ready. Required.',
    ),
    inProgress: celExpression('CEL: true while the object is still working; checked first.').optional(),
    failed: celExpression(
      'CEL: true when the object has failed for good: a terminal error of the resource; checked after inProgress.',
    ).optional(),
  })
  .describe(
    "A readiness rule for one kind, in Flux's healthCheckExprs shape: the object's status.observedGeneration must match its generation, then inProgress, failed and current are tried in that order; none true is in progress. An extension of Smith's schema.",
  );
export type HealthCheck = z.infer<typeof HealthCheckSchema>;

/**
 * The operator's --health-checks-file: a list of rules, or an object holding
 * it under healthChecks (a Bundle's field) or healthCheckExprs (a Flux
 * Kustomization's), so a block can be pasted from either.
 */
export const HealthChecksFileSchema = z.union([
  z.array(HealthCheckSchema).max(MAX_HEALTH_CHECKS),
  z.object({ healthChecks: z.array(HealthCheckSchema).max(MAX_HEALTH_CHECKS) }).transform((o) => o.healthChecks),
  z.object({ healthCheckExprs: z.array(HealthCheckSchema).max(MAX_HEALTH_CHECKS) }).transform((o) => o.healthCheckExprs),
]);
