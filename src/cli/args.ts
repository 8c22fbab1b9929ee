/**
 * What the CLI's commands share: exit codes, the flags a command line gives
 * a command (commands.ts declares them with commander), and KIND/NAME.
 */
import { groupOf } from '../core/bundle/objects.js';

export const EXIT_OK = 0;
/** Problems found (invalid manifests, refusals) or an operation that failed. diff: changes found. */
export const EXIT_PROBLEMS = 1;
/** The command line itself is wrong. diff: an error (kubectl diff's contract: 2 or more). */
export const EXIT_USAGE = 2;
/** diff: changes found. */
export const EXIT_CHANGES = 1;
/** diff: the Bundle is invalid, an object would be refused, or the cluster cannot answer. */
export const EXIT_DIFF_ERROR = 2;

export type OutputFormat = 'text' | 'json' | 'yaml' | 'dot';

export interface CommonFlags {
  kubeconfig?: string;
  /** The kubeconfig context to use instead of its current one. */
  context?: string;
  namespace?: string;
  /** `-o json|yaml`: machine-readable output on stdout; `dot` (gc-graph): Graphviz. */
  output: OutputFormat;
  /** gc-graph: the owner whose dependents to show. */
  owner?: ObjectRef;
  /** gc-graph: the operator's debug endpoint (its --debug-addr, e.g. through kubectl port-forward). */
  debugUrl?: string;
  /** tree, status: redraw until interrupted. */
  watch?: boolean;
  /** status, pending: every namespace. */
  all?: boolean;
  /** status: wait until Ready (or the timeout). */
  wait?: boolean;
  /** status --wait: give up after this many milliseconds (default 5 minutes). */
  timeoutMs?: number;
  /** tree: no colour even on a terminal. */
  noColor?: boolean;
  /** validate: the operator's --health-checks-file, checked as the operator reads it at start. */
  healthChecksFile?: string;
}

export interface ParsedCommand {
  command: string;
  positionals: string[];
  flags: CommonFlags;
}

export interface ObjectRef {
  /** Kind, plural or singular resource name as typed; matched case-insensitively. */
  kind: string;
  /** Group when given as KIND.GROUP ("deployment.apps"); undefined: any group. */
  group?: string;
  name: string;
}

/** "ConfigMap/x", "configmaps/x", "deployment.apps/web", "Widget.example.com/w". */
export function parseObjectRef(text: string): ObjectRef | undefined {
  const match = /^([A-Za-z][A-Za-z0-9]*)(?:\.([a-z0-9.-]+))?\/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/.exec(text);
  if (!match) return undefined;
  const [, kind = '', group, name = ''] = match;
  return group === undefined ? { kind, name } : { kind, group, name };
}

/** How output names an object so that the name can be passed back to cancel / delete-now. */
export function formatObjectRef(apiVersion: string, kind: string, name: string): string {
  const group = groupOf(apiVersion);
  return group === '' ? `${kind}/${name}` : `${kind}.${group}/${name}`;
}
