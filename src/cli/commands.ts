/**
 * Every command of the CLI, declared once: its arguments, its flags, its
 * help with examples, and what it runs. The help, `help COMMAND`, the
 * suggestions for a mistyped command or flag, shell completion and
 * docs/cli.md all come from these declarations (commander builds them).
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { parseGoDuration } from '../core/duration.js';
import {
  diffCommand,
  gcGraphCommand,
  objectCommand,
  pendingCommand,
  statusCommand,
  treeCommand,
  validateCommand,
  approveDeletion,
  cancelPending,
  deletePendingNow,
} from './actions.js';
import { parseObjectRef, type CommonFlags, type ObjectRef, type OutputFormat, type ParsedCommand } from './args.js';
import { DEFAULT_DEBUG_URL } from './gc-graph.js';
import type { CliIo } from './io.js';

export interface Example {
  /** What the example does, one line. */
  what: string;
  /** The command line after the program's name. */
  args: string;
  /**
   * An offline example whose output docs/cli.md shows, run when the docs are
   * generated (in docs/cli-notes/, where its files are): the output is the
   * command's own, never written by hand.
   */
  runInDocs?: boolean;
}

export interface CommandDeclaration {
  name: string;
  /** commander's argument syntax: "<file...>", "[bundle]". */
  arguments?: string;
  summary: string;
  description: string;
  examples: Example[];
  /** The command's own flags (the global ones are added to every command). */
  options: () => Option[];
  /** Why this command line is wrong, beyond what the arguments and flags declare (a usage error). */
  check?: (command: ParsedCommand) => string | undefined;
  run: (command: ParsedCommand, io: CliIo) => Promise<number> | number;
}

function objectRefArgument(text: string): ObjectRef {
  const ref = parseObjectRef(text);
  if (ref === undefined) throw new InvalidArgumentError(`"${text}" is not KIND/NAME (e.g. ConfigMap/settings or deployment.apps/web)`);
  return ref;
}

function timeoutArgument(text: string): number {
  const parsed = parseGoDuration(text);
  if (!parsed.ok || parsed.ms <= 0) throw new InvalidArgumentError(`must be a positive Go duration (e.g. 2m), not "${text}"`);
  return parsed.ms;
}

const output = (formats: readonly OutputFormat[]): Option =>
  new Option('-o, --output <format>', 'output format (default: text)').choices(formats);
const namespace = (meaning: string): Option => new Option('-n, --namespace <namespace>', meaning);
const allNamespaces = (): Option => new Option('-A, --all-namespaces', 'every namespace');
const watch = (): Option => new Option('-w, --watch', 'redraw every 2 s until interrupted');

/** The flags every command takes (kubectl's global flags). */
export function globalOptions(): Option[] {
  return [
    new Option('--kubeconfig <path>', 'kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)'),
    new Option('--context <name>', 'the kubeconfig context to use (default: its current context)'),
    // As in kubectl, -n may come before the command too ("bundlesmith -n team status"); each command documents its own.
    new Option('-n, --namespace <namespace>', 'namespace').hideHelp(),
  ];
}

const objectCommandDeclaration = (
  name: string,
  summary: string,
  description: string,
  action: typeof cancelPending,
  examples: Example[],
): CommandDeclaration => ({
  name,
  arguments: '<KIND/NAME>',
  summary,
  description,
  examples,
  options: () => [namespace("namespace of the object (default: the context's)")],
  check: (cmd) =>
    parseObjectRef(cmd.positionals[0] ?? '') === undefined
      ? `"${cmd.positionals[0] ?? ''}" is not KIND/NAME (e.g. ConfigMap/settings or deployment.apps/web)`
      : undefined,
  run: (cmd, io) => objectCommand(cmd, io, action),
});

export const COMMANDS: readonly CommandDeclaration[] = [
  {
    name: 'validate',
    arguments: '<file...>',
    summary: 'check Bundle manifests offline, as the API server and the operator would',
    description:
      'Checks every Bundle in the files ("-" is stdin) without a cluster, with the operator\'s own judgement: the CRD\'s schema strictly (an unknown field is an error, with a "did you mean"), its validation rules, then the operator\'s checks of references, placeholders, deletion rules and objects, with the messages the operator would put in the Bundle\'s status. Only what needs the cluster is left to diff: whether a kind is installed, and what the API server says of each object.',
    examples: [
      { what: 'Check two files', args: 'validate app.yaml db.yaml' },
      { what: 'Check what a template renders', args: 'validate -' },
      { what: "Check Bundles and the operator's CEL readiness rules", args: 'validate app.yaml --health-checks-file rules.yaml' },
      { what: 'A misspelt field and a delay that is not a Go duration', args: 'validate bad.yaml', runInDocs: true },
    ],
    options: () => [
      namespace('namespace of Bundles that name none (default: default)'),
      new Option(
        '--health-checks-file <path>',
        "also check the operator's --health-checks-file (CEL readiness rules), as the operator reads it at start",
      ),
      output(['text', 'json', 'yaml']),
    ],
    run: validateCommand,
  },
  {
    name: 'diff',
    arguments: '<file>',
    summary: 'what the operator will do once the Bundles in a file are applied; exit 0 no changes, 1 changes, 2 error',
    description:
      "Reads what the operator's next pass would see and runs the same plan, with a server-side dry run of each apply: one line per object (create, change, adopt, delete, soft-delete, refuse, ...), and under a change each field as old → new (Secret values masked). Exit codes as kubectl diff: 0 no changes, 1 changes, 2 or more an error (an invalid Bundle, an object the operator would refuse, no cluster).",
    examples: [
      { what: 'What applying app.yaml would change', args: 'diff app.yaml -n team-a' },
      { what: 'Gate a CI step on it', args: 'diff app.yaml -o json > plan.json; test $? -lt 2' },
    ],
    options: () => [namespace("namespace of Bundles that name none (default: the context's)"), output(['text', 'json', 'yaml'])],
    run: diffCommand,
  },
  {
    name: 'pending',
    summary: 'objects counting down to deletion and when they go',
    description:
      'Lists the objects that left a Bundle (or whose Bundle was deleted) and wait for their deletion: a delay, an approval, every resource of the Bundle to be Ready; and the stamped objects the operator keeps, with the reason. Every namespace unless -n names one.',
    examples: [
      { what: 'Everything pending in one namespace', args: 'pending -n demo' },
      { what: 'As YAML, every namespace', args: 'pending -A -o yaml' },
    ],
    options: () => [namespace('only this namespace'), allNamespaces(), output(['text', 'json', 'yaml'])],
    check: (cmd) => (cmd.flags.all === true && cmd.flags.namespace !== undefined ? '-n and -A do not go together' : undefined),
    run: pendingCommand,
  },
  objectCommandDeclaration(
    'cancel',
    "stop a pending deletion; the object stays, no Bundle's",
    "Removes the countdown from the object and every reference the operator wrote (the user's stay): it is no longer any Bundle's, and nothing deletes it. A Bundle that lists it again adopts it.",
    cancelPending,
    [{ what: 'Stop the deletion of a ConfigMap that left its Bundle', args: 'cancel ConfigMap/settings -n demo' }],
  ),
  objectCommandDeclaration(
    'approve',
    'approve a pending deletion (deletionPolicy Approve)',
    'Approves the countdown the object is in now (a later countdown needs a new approval): it is deleted once its delay has passed.',
    approveDeletion,
    [{ what: 'Approve the deletion of a Deployment', args: 'approve deployment.apps/web -n demo' }],
  ),
  objectCommandDeclaration(
    'delete-now',
    'delete a pending object now',
    'Deletes an object that is pending deletion without waiting for its delay, approval or gate; refuses an object that is not pending.',
    deletePendingNow,
    [{ what: 'Delete a released ConfigMap now', args: 'delete-now ConfigMap/rel-x -n demo' }],
  ),
  {
    name: 'tree',
    arguments: '<bundle>',
    summary: "a Bundle's resources by references, their state, what they own, pending deletions",
    description:
      "Draws the Bundle's resources as a tree of their references, each with its state (Ready, InProgress, Blocked, Error), the objects each owns, and the objects counting down to deletion.",
    examples: [
      { what: 'The tree of Bundle web', args: 'tree web -n demo' },
      { what: 'Redrawn every 2 s', args: 'tree web -n demo --watch' },
    ],
    options: () => [
      namespace("namespace of the Bundle (default: the context's)"),
      output(['text', 'json', 'yaml']),
      watch(),
      new Option('--no-color', 'plain text on a terminal too'),
    ],
    run: treeCommand,
  },
  {
    name: 'status',
    arguments: '[bundle]',
    summary: "one line per Bundle, or one Bundle's conditions in words; exit 1 unless Ready",
    description:
      "Without a name, one line per Bundle of the namespace (-A: every namespace). With a name, that Bundle's conditions in words. Exit 1 unless every Bundle shown is Ready; --wait polls until it is.",
    examples: [
      { what: 'Every Bundle of every namespace', args: 'status -A' },
      { what: 'Wait up to two minutes for Bundle web to be Ready', args: 'status web -n demo --wait --timeout 2m' },
    ],
    options: () => [
      namespace("namespace of the Bundles (default: the context's)"),
      allNamespaces(),
      new Option('--all', 'the same as -A').hideHelp(),
      output(['text', 'json', 'yaml']),
      watch(),
      new Option('--wait', 'with a Bundle name: wait until it is Ready (exit 1 at the timeout)'),
      new Option('--timeout <duration>', '--wait: how long, as a Go duration (default: 5m)').argParser(timeoutArgument),
    ],
    check: (cmd) => {
      if (cmd.flags.all === true && cmd.positionals.length > 0) return 'status takes a Bundle name or -A, not both';
      if (cmd.flags.wait === true && cmd.positionals.length === 0) return '--wait needs a Bundle name';
      if (cmd.flags.watch === true && cmd.flags.wait === true) return '--watch and --wait do not go together';
      return undefined;
    },
    run: statusCommand,
  },
  {
    name: 'gc-graph',
    summary: "the dependents the operator's garbage collector holds under an owner",
    description:
      "Asks the operator's debug endpoint (its --debug-addr, e.g. through kubectl port-forward) for the dependents its garbage collector holds under an owner.",
    examples: [{ what: 'The dependents of a Deployment, as Graphviz', args: 'gc-graph --owner deployment.apps/web -n demo -o dot' }],
    options: () => [
      new Option('--owner <KIND/NAME>', 'the owner whose dependents to show').argParser(objectRefArgument).makeOptionMandatory(),
      namespace('namespace of the owner'),
      new Option('--debug-url <url>', "the operator's debug endpoint").default(DEFAULT_DEBUG_URL),
      output(['text', 'json', 'yaml', 'dot']),
    ],
    run: gcGraphCommand,
  },
];

/** commander's option values, as the actions take them. */
export function flagsOf(command: Command): CommonFlags {
  const o = command.optsWithGlobals<Record<string, unknown>>();
  const str = (key: string): string | undefined => (typeof o[key] === 'string' ? o[key] : undefined);
  const flags: CommonFlags = { output: (str('output') ?? 'text') as OutputFormat };
  const set = <K extends keyof CommonFlags>(key: K, value: CommonFlags[K] | undefined): void => {
    if (value !== undefined) flags[key] = value;
  };
  set('kubeconfig', str('kubeconfig'));
  set('context', str('context'));
  set('namespace', str('namespace'));
  set('debugUrl', str('debugUrl'));
  set('healthChecksFile', str('healthChecksFile'));
  set('owner', o.owner as ObjectRef | undefined);
  set('timeoutMs', typeof o.timeout === 'number' ? o.timeout : undefined);
  if (o.allNamespaces === true || o.all === true) flags.all = true;
  if (o.watch === true) flags.watch = true;
  if (o.wait === true) flags.wait = true;
  if (o.color === false) flags.noColor = true;
  return flags;
}

/** Examples as the help prints them, with the program's name as it was run. */
export function formatExamples(declaration: CommandDeclaration, program: string): string {
  return ['Examples:', ...declaration.examples.flatMap((e) => [`  # ${e.what}`, `  ${program} ${e.args}`, ''])].join('\n').trimEnd();
}
