/**
 * Command-line parsing for the `bundlesmith` CLI: a command, its positional
 * arguments and a few flags. Pure: argv in, a parsed command or usage errors out.
 */
import { parseGoDuration } from '../core/duration.js';
import { groupOf } from '../core/bundle/objects.js';

export const EXIT_OK = 0;
/** Problems found (invalid manifests, refusals) or an operation that failed. */
export const EXIT_PROBLEMS = 1;
/** The command line itself is wrong. */
export const EXIT_USAGE = 2;

export type Command = 'validate' | 'diff' | 'pending' | 'cancel' | 'approve' | 'delete-now' | 'tree' | 'status' | 'gc-graph' | 'help';

export interface CommonFlags {
  kubeconfig?: string;
  namespace?: string;
  /** `-o json`: machine-readable output on stdout; `dot` (gc-graph): Graphviz. */
  output: 'text' | 'json' | 'dot';
  /** gc-graph: the owner whose dependents to show. */
  owner?: ObjectRef;
  /** gc-graph: the operator's debug endpoint (its --debug-addr, e.g. through kubectl port-forward). */
  debugUrl?: string;
  /** tree, status: redraw until interrupted. */
  watch?: boolean;
  /** status: every namespace's Bundles. */
  all?: boolean;
  /** status: wait until Ready (or the timeout). */
  wait?: boolean;
  /** status --wait: give up after this many milliseconds (default 5 minutes). */
  timeoutMs?: number;
  /** tree: no colour even on a terminal. */
  noColor?: boolean;
}

export interface ParsedCommand {
  command: Command;
  positionals: string[];
  flags: CommonFlags;
}

export const USAGE = `usage:
  bundlesmith validate FILE...            check Bundle manifests offline (schema and semantics)
  bundlesmith diff FILE [-n NS]           what the operator will do once the Bundle(s) in FILE are applied
  bundlesmith pending [-n NS]             objects counting down to deletion and when they go (all namespaces without -n)
  bundlesmith cancel KIND/NAME -n NS      stop a pending deletion and keep the object
  bundlesmith approve KIND/NAME -n NS     approve a pending deletion (deletionPolicy Approve)
  bundlesmith delete-now KIND/NAME -n NS  delete a pending object now
  bundlesmith tree BUNDLE [-n NS]         the Bundle's resources by references, their state, what they own, pending deletions
  bundlesmith status [BUNDLE|--all]       one line per Bundle, or one Bundle's conditions in words; exit 1 unless Ready
  bundlesmith gc-graph --owner KIND/NAME [-n NS] [--debug-url URL]
                                          the dependents the operator's garbage collector holds under an owner
flags:
  -n, --namespace NS    namespace (diff: for Bundles without one; default: the kubeconfig context's)
  --kubeconfig PATH     kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)
  -o, --output FORMAT   text (default) or json; gc-graph also dot
  -w, --watch           tree, status: redraw every 2 s until interrupted
  -A, --all             status: Bundles of every namespace
  --wait                status BUNDLE: wait until it is Ready (exit 1 at the timeout)
  --timeout DURATION    status --wait: how long (Go duration, default 5m)
  --no-color            tree: plain text on a terminal too
  --owner KIND/NAME     gc-graph: the owner
  --debug-url URL       gc-graph: the operator's --debug-addr (default http://127.0.0.1:8082)
also a kubectl plugin: kubectl bundle tree BUNDLE, kubectl bundle status --all
exit codes: 0 ok, 1 problems found or operation failed, 2 usage error`;

const COMMANDS: readonly Command[] = ['validate', 'diff', 'pending', 'cancel', 'approve', 'delete-now', 'tree', 'status', 'gc-graph', 'help'];

/** How many positionals each command takes: [min, max]. */
const ARITY: Record<Command, [number, number]> = {
  validate: [1, Infinity],
  diff: [1, 1],
  pending: [0, 0],
  cancel: [1, 1],
  approve: [1, 1],
  'delete-now': [1, 1],
  tree: [1, 1],
  status: [0, 1],
  'gc-graph': [0, 0],
  help: [0, 0],
};

export function parseCommandLine(argv: readonly string[]): { ok: true; parsed: ParsedCommand } | { ok: false; errors: string[] } {
  const errors: string[] = [];
  const positionals: string[] = [];
  const flags: CommonFlags = { output: 'text' };
  let command: Command | undefined;

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg === '-h' || arg === '--help') {
      command = 'help';
      continue;
    }
    if (arg.startsWith('-') && arg !== '-') {
      const eq = arg.indexOf('=');
      const name = eq < 0 ? arg : arg.slice(0, eq);
      const takeValue = (): string | undefined => {
        const value = eq < 0 ? argv[++i] : arg.slice(eq + 1);
        if (value === undefined || value === '') errors.push(`flag ${name} needs a value`);
        return value;
      };
      switch (name) {
        case '-n':
        case '--namespace': {
          const value = takeValue();
          if (value !== undefined && value !== '') flags.namespace = value;
          break;
        }
        case '--kubeconfig': {
          const value = takeValue();
          if (value !== undefined && value !== '') flags.kubeconfig = value;
          break;
        }
        case '-o':
        case '--output': {
          const value = takeValue();
          if (value === 'json' || value === 'text' || value === 'dot') flags.output = value;
          else if (value !== undefined && value !== '') errors.push(`--output must be text, json or dot, not "${value}"`);
          break;
        }
        case '-w':
        case '--watch':
          flags.watch = true;
          break;
        case '-A':
        case '--all':
          flags.all = true;
          break;
        case '--wait':
          flags.wait = true;
          break;
        case '--no-color':
          flags.noColor = true;
          break;
        case '--owner': {
          const value = takeValue();
          if (value === undefined || value === '') break;
          const ref = parseObjectRef(value);
          if (ref) flags.owner = ref;
          else errors.push(`--owner must be KIND/NAME, not "${value}"`);
          break;
        }
        case '--debug-url': {
          const value = takeValue();
          if (value !== undefined && value !== '') flags.debugUrl = value;
          break;
        }
        case '--timeout': {
          const value = takeValue();
          if (value === undefined || value === '') break;
          const parsed = parseGoDuration(value);
          if (parsed.ok && parsed.ms > 0) flags.timeoutMs = parsed.ms;
          else errors.push(`--timeout must be a positive Go duration (e.g. 2m), not "${value}"`);
          break;
        }
        default:
          errors.push(`unknown flag ${name}`);
      }
      continue;
    }
    if (command === undefined) {
      if ((COMMANDS as readonly string[]).includes(arg)) command = arg as Command;
      else errors.push(`unknown command "${arg}"`);
    } else {
      positionals.push(arg);
    }
  }

  if (command === undefined) {
    if (errors.length === 0) errors.push('no command given');
    return { ok: false, errors };
  }
  if (command === 'help') return { ok: true, parsed: { command, positionals: [], flags } };
  const [min, max] = ARITY[command];
  if (positionals.length < min) errors.push(`${command} needs ${min === 1 && max === 1 ? 'one argument' : `at least ${min} argument${min === 1 ? '' : 's'}`}`);
  if (positionals.length > max) errors.push(`${command} takes ${max === 0 ? 'no arguments' : `${max} argument${max === 1 ? '' : 's'}`}, got ${positionals.length}`);
  if (command === 'gc-graph' && flags.owner === undefined) errors.push('gc-graph needs --owner KIND/NAME');
  if (flags.output === 'dot' && command !== 'gc-graph') errors.push('--output dot is for gc-graph only');
  if (command === 'status' && flags.all === true && positionals.length > 0) errors.push('status takes a Bundle name or --all, not both');
  if (flags.wait === true && (command !== 'status' || positionals.length === 0)) errors.push('--wait needs status BUNDLE');
  if (flags.watch === true && flags.wait === true) errors.push('--watch and --wait do not go together');
  if ((command === 'cancel' || command === 'approve' || command === 'delete-now') && positionals[0] !== undefined && parseObjectRef(positionals[0]) === undefined) {
    errors.push(`"${positionals[0]}" is not KIND/NAME (e.g. ConfigMap/settings or deployment.apps/web)`);
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, parsed: { command, positionals, flags } };
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
