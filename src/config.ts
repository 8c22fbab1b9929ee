/** Command-line flags, parsed once with zod; a bad value is a clear error at start. */
import { z } from 'zod';
import { parseLabelSelector } from './core/selector.js';

const hostPort = z
  .string()
  .regex(/^(\[[0-9a-fA-F:]+\]|[^:\s]*):\d{1,5}$|^0$/, 'must be host:port (":8080" for all interfaces) or 0 to disable');

export const ConfigSchema = z.object({
  kubeconfig: z.string().min(1).optional(),
  namespace: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be a namespace name')
    .optional(),
  workers: z.coerce.number().int().min(1).max(256).default(4),
  gc: z.enum(['cluster', 'bundles', 'off']).default('cluster'),
  gcWorkers: z.coerce.number().int().min(1).max(1024).default(32),
  leaderElect: z.boolean().default(false),
  leaderElectionNamespace: z.string().min(1).default('default'),
  leaderElectionId: z.string().min(1).default('bundlesmith-leader'),
  leaseDurationSeconds: z.coerce.number().int().min(2).max(600).default(15),
  metricsAddr: hostPort.default(':8080'),
  healthAddr: hostPort.default(':8081'),
  /** The read-only debug endpoint (the collector's graph); off unless set. */
  debugAddr: hostPort.optional(),
  /** kubernetes: /metrics needs a bearer token that a TokenReview accepts and a SubjectAccessReview allows to get /metrics. */
  metricsAuth: z.enum(['none', 'kubernetes']).default('none'),
  /**
   * Serve /metrics over HTTPS (controller-runtime's --metrics-secure). Default:
   * on with --metrics-auth=kubernetes (a bearer token never crosses the
   * network in clear; turning it off there is refused), off otherwise.
   */
  metricsSecure: z.boolean().optional(),
  /** The directory holding the metrics certificate and key (a mounted Secret); unset: a self-signed certificate made at start. */
  metricsCertDir: z.string().min(1).optional(),
  metricsCertName: z
    .string()
    .min(1)
    .regex(/^[^/]+$/, 'must be a file name in --metrics-cert-dir')
    .default('tls.crt'),
  metricsCertKey: z
    .string()
    .min(1)
    .regex(/^[^/]+$/, 'must be a file name in --metrics-cert-dir')
    .default('tls.key'),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  qps: z.coerce.number().min(0).default(0),
  burst: z.coerce.number().int().min(1).default(100),
  impersonate: z.string().min(1).optional(),
  /**
   * Lockdown for multi-tenant clusters: a Bundle without spec.serviceAccountName
   * acts as this ServiceAccount of its own namespace; the operator then never
   * writes a Bundle's objects with its own rights.
   */
  /**
   * NAMESPACE/NAME of the Secret holding the key releases are signed with;
   * default: the leader-election namespace, bundlesmith-release-key.
   */
  releaseKeySecret: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/, 'must be NAMESPACE/NAME of a Secret')
    .optional(),
  /**
   * Sharding: reconcile only the Bundles whose labels this selector matches
   * (`shard=a`, `!shard`, `shard in (a,b)`); every Bundle is still read, so
   * that claims across shards keep what any live Bundle lists.
   */
  bundleSelector: z
    .string()
    .transform((text, ctx) => {
      const parsed = parseLabelSelector(text);
      if (parsed.ok) return parsed.selector;
      ctx.addIssue({ code: 'custom', message: parsed.error });
      return z.NEVER;
    })
    .optional(),
  /** Run the released-object sweeper (on by default; with several shards, one runs it). */
  sweepReleased: z.boolean().default(true),
  /**
   * A YAML or JSON file of CEL readiness rules ({apiVersion, kind, current,
   * inProgress, failed}, Flux's healthCheckExprs shape) for every Bundle; a
   * Bundle's spec.healthChecks win for the same kind. Read once at start: a
   * rule that does not compile stops the operator there.
   */
  healthChecksFile: z.string().min(1).optional(),
  defaultServiceAccount: z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/, 'must be a ServiceAccount name')
    .max(253)
    .optional(),
});
export type Config = z.infer<typeof ConfigSchema>;

const BOOLEAN_FLAGS = new Set(['leader-elect', 'sweep-released', 'metrics-secure']);

function camel(flag: string): string {
  return flag.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());
}

/** Parses `--flag value`, `--flag=value` and boolean `--flag` / `--flag=false`. */
export function parseArgs(argv: readonly string[]): { ok: true; config: Config } | { ok: false; errors: string[] } {
  const raw: Record<string, unknown> = {};
  const errors: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('--')) {
      errors.push(`unexpected argument "${arg}"`);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
    const key = camel(name);
    if (!(key in ConfigSchema.shape)) {
      errors.push(`unknown flag --${name}`);
      continue;
    }
    if (BOOLEAN_FLAGS.has(name)) {
      raw[key] = eq < 0 ? true : arg.slice(eq + 1) !== 'false';
      continue;
    }
    const value = eq < 0 ? argv[++i] : arg.slice(eq + 1);
    if (value === undefined) errors.push(`flag --${name} needs a value`);
    else raw[key] = value;
  }
  if (errors.length > 0) return { ok: false, errors };
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    return {
      ok: false,
      errors: parsed.error.issues.map((i) => `--${String(i.path[0] ?? '').replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}: ${i.message}`),
    };
  }
  // Impersonation does not nest: an operator that impersonates cannot act as each Bundle's ServiceAccount.
  if (parsed.data.impersonate !== undefined && parsed.data.defaultServiceAccount !== undefined) {
    return {
      ok: false,
      errors: [
        "--impersonate and --default-service-account exclude each other: lockdown impersonates each Bundle's ServiceAccount, and impersonation does not nest (run the operator with its own credentials)",
      ],
    };
  }
  if (parsed.data.metricsAuth === 'kubernetes' && parsed.data.metricsSecure === false) {
    return {
      ok: false,
      errors: [
        "--metrics-secure=false with --metrics-auth=kubernetes: scrapers' bearer tokens would cross the network in clear HTTP (serve /metrics over HTTPS, or run without --metrics-auth on a loopback --metrics-addr)",
      ],
    };
  }
  if (parsed.data.metricsCertDir !== undefined && parsed.data.metricsSecure === false) {
    return { ok: false, errors: ['--metrics-cert-dir needs --metrics-secure: the certificate is only used to serve /metrics over HTTPS'] };
  }
  return { ok: true, config: parsed.data };
}

/** Whether /metrics is served over HTTPS: asked for, implied by a certificate directory, or by --metrics-auth=kubernetes. */
export function metricsSecure(config: Config): boolean {
  return config.metricsSecure ?? (config.metricsAuth === 'kubernetes' || config.metricsCertDir !== undefined);
}
