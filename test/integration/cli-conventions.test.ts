/**
 * Issue 25: kubectl's conventions on every command of the built CLI, run as a
 * script would run it (a child process), as `bundlesmith` and as the kubectl
 * plugin `kubectl bundle` (a kubectl-bundle symlink on PATH, the real
 * kubectl), against the real API server with an operator running.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { parse as parseYaml, stringify } from 'yaml';
import { repoRoot } from '../../src/api/crd-paths.js';
import { MINIMUM_NODE, nodeVersionProblem } from '../../src/cli/node-version.js';
import {
  conditionOf,
  connect,
  createNamespace,
  kubeconfigPath,
  resourceType,
  tool,
  waitFor,
  type RunResult,
  type TestEnv,
} from './harness.js';
import { startOperator, type InProcessOperator } from './operator.js';

const MAIN = join(repoRoot(), 'dist', 'src', 'cli', 'main.js');
let env: TestEnv;
let ns: string;
let operator: InProcessOperator;
/** A directory on PATH with the package's three bins as npm links them, and this Node first. */
let binDir: string;

function exec(file: string, args: string[], extraEnv: Record<string, string> = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      {
        env: {
          ...process.env,
          KUBECONFIG: kubeconfigPath(),
          PATH: [binDir, dirname(process.execPath), process.env.PATH ?? ''].join(delimiter),
          ...extraEnv,
        },
      },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

const cli = (args: string[]): Promise<RunResult> => exec(join(binDir, 'bundlesmith'), args);
const kubectl = (args: string[]): Promise<RunResult> => exec(tool('kubectl'), args);

beforeAll(async () => {
  env = await connect();
  ns = await createNamespace(env, 'conventions');
  operator = await startOperator({ namespace: ns });
  binDir = mkdtempSync(join(tmpdir(), 'bundlesmith-bin-'));
  for (const name of ['bundlesmith', 'kubectl-bundle', 'kubectl_complete-bundle']) symlinkSync(MAIN, join(binDir, name));
  const bundles = await resourceType(env, 'smith.atlassian.com/v1', 'Bundle');
  const manifest = {
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name: 'conv', namespace: ns },
    spec: {
      resources: [{ name: 'a', spec: { object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'conv-a' }, data: { v: '1' } } } }],
    },
  };
  await env.client.apply(bundles, manifest, { fieldManager: 'test-user', force: true });
  await waitFor('Bundle conv Ready', async () => conditionOf(await env.client.get(bundles, ns, 'conv'), 'Ready')?.status === 'True');
});

afterAll(async () => {
  await operator.stop();
  env.close();
  rmSync(binDir, { recursive: true, force: true });
});

it('--version prints the package version', async () => {
  const version = (JSON.parse(readFileSync(join(repoRoot(), 'package.json'), 'utf8')) as { version: string }).version;
  expect(await cli(['--version'])).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
});

it("help COMMAND and COMMAND --help print the command's usage, flags and examples", async () => {
  const help = await cli(['help', 'diff']);
  const flag = await cli(['diff', '--help']);
  expect(help.code).toBe(0);
  expect(flag).toEqual(help);
  expect(help.stdout).toMatch(/^Usage: bundlesmith diff \[options\] <file>$/m);
  for (const text of [
    '-o, --output <format>',
    '--kubeconfig <path>',
    '--context <name>',
    'Examples:',
    'bundlesmith diff app.yaml -n team-a',
  ])
    expect(help.stdout).toContain(text);
  const all = await cli(['--help']);
  for (const command of [
    'validate',
    'diff',
    'pending',
    'cancel',
    'approve',
    'delete-now',
    'tree',
    'status',
    'gc-graph',
    'completion',
    'help',
  ])
    expect(all.stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
});

it('suggests the command or flag meant (exit 2)', async () => {
  const command = await cli(['stauts']);
  expect(command.code).toBe(2);
  expect(command.stderr).toContain("error: unknown command 'stauts'\n(Did you mean status?)");
  const flag = await cli(['pending', '--namspace', ns]);
  expect(flag.code).toBe(2);
  expect(flag.stderr).toContain("error: unknown option '--namspace'\n(Did you mean --namespace?)");
  expect(flag.stderr).toContain("See 'bundlesmith pending --help' for usage.");
});

it('--kubeconfig and --context choose the cluster, on every command that talks to one', async () => {
  const kubeconfig = parseYaml(readFileSync(kubeconfigPath(), 'utf8')) as {
    clusters: { name: string; cluster: Record<string, unknown> }[];
    contexts: { name: string; context: Record<string, unknown> }[];
    'current-context': string;
  };
  const good = kubeconfig['current-context'];
  const goodContext = kubeconfig.contexts.find((c) => c.name === good);
  // The current context points at nothing; --context picks the real one.
  const broken = {
    ...kubeconfig,
    clusters: [...kubeconfig.clusters, { name: 'nowhere', cluster: { server: 'https://127.0.0.1:1' } }],
    contexts: [...kubeconfig.contexts, { name: 'nowhere', context: { ...goodContext?.context, cluster: 'nowhere' } }],
    'current-context': 'nowhere',
  };
  const file = join(binDir, 'kubeconfig');
  writeFileSync(file, stringify(broken));
  const failing = await cli(['status', 'conv', '-n', ns, '--kubeconfig', file]);
  expect(failing.code).toBe(1);
  expect(failing.stderr).toContain('cannot reach the API server');
  for (const args of [
    ['status', 'conv', '-n', ns],
    ['tree', 'conv', '-n', ns],
    ['pending', '-n', ns],
    ['--context', good, 'status', '-A'],
  ]) {
    const result = await cli([...args, '--kubeconfig', file, '--context', good]);
    // status -A exits 1 when any Bundle of the cluster is not Ready (other suites' Bundles are here too): it reached the cluster.
    const reached = args.includes('-A') ? result.code <= 1 && result.stdout.includes(ns) : result.code === 0;
    expect({ args, reached }).toEqual({ args, reached: true });
  }
  const unknown = await cli(['status', '-A', '--kubeconfig', file, '--context', 'nope']);
  expect(unknown.code).toBe(1);
  expect(unknown.stderr).toContain('context "nope" does not exist in the kubeconfig');
  expect(unknown.stderr).toContain('nowhere');
});

it('-A lists every namespace, and -o json|yaml give the same document', async () => {
  for (const command of ['status', 'pending']) {
    const json = await cli([command, '-A', '-o', 'json']);
    const yaml = await cli([command, '-A', '-o', 'yaml']);
    // status: 1 when some Bundle of the cluster is not Ready (the shared control plane has other suites' Bundles); never an error.
    expect({ command, json: json.code <= 1, yaml: yaml.code <= 1, same: json.code === yaml.code }).toEqual({
      command,
      json: true,
      yaml: true,
      same: true,
    });
    // Two runs a moment apart: what counts down (remainingMs) moves between them; the rest is the same document.
    expect(withoutCountdowns(parseYaml(yaml.stdout))).toEqual(withoutCountdowns(JSON.parse(json.stdout)));
  }
  const status = JSON.parse((await cli(['status', '--all-namespaces', '-o', 'json'])).stdout) as {
    items: { namespace: string; name: string }[];
  };
  expect(status.items).toContainEqual(expect.objectContaining({ namespace: ns, name: 'conv' }));
  const tree = await cli(['tree', 'conv', '-n', ns, '-o', 'yaml']);
  expect(tree.code).toBe(0);
  expect(parseYaml(tree.stdout)).toMatchObject({ name: 'conv', namespace: ns, state: 'Ready' });
  const refused = await cli(['status', '-o', 'xml']);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain('Allowed choices are text, json, yaml');
});

it('completion: bash completes commands and flags; zsh and fish scripts are printed', async () => {
  const bash = await cli(['completion', 'bash']);
  expect(bash.code).toBe(0);
  const script = join(binDir, 'completion.bash');
  writeFileSync(script, bash.stdout);
  const complete = async (words: string[]): Promise<string[]> => {
    const result = await exec('bash', [
      '-c',
      `source ${script}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _bundlesmith_complete; printf '%s\\n' "\${COMPREPLY[@]}"`,
    ]);
    expect(result.stderr).toBe('');
    return result.stdout.split('\n').filter((l) => l !== '');
  };
  expect(await complete(['bundlesmith', 'st'])).toEqual(['status']);
  expect(await complete(['bundlesmith', 'status', '--all-n'])).toEqual(['--all-namespaces']);
  expect(await complete(['bundlesmith', 'pending', '-o', ''])).toEqual(['text', 'json', 'yaml']);
  expect(await complete(['bundlesmith', 'completion', 'z'])).toEqual(['zsh']);
  const zsh = await cli(['completion', 'zsh']);
  expect(zsh.stdout).toMatch(/^#compdef bundlesmith$/m);
  expect(zsh.stdout).toContain('compdef _bundlesmith_complete bundlesmith');
  const fish = await cli(['completion', 'fish']);
  expect(fish.stdout).toContain("complete -c bundlesmith -f -a '(_bundlesmith_complete)'");
});

describe('as the kubectl plugin', () => {
  it('kubectl bundle runs it, and its usage and errors name kubectl bundle', async () => {
    const help = await kubectl(['bundle', 'help', 'status']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: kubectl bundle status \[options\] \[bundle\]$/m);
    expect(help.stdout).toContain('kubectl bundle status -A');
    const status = await kubectl(['bundle', 'status', 'conv', '-n', ns]);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain(`Bundle ${ns}/conv: Ready`);
    const wrong = await kubectl(['bundle', 'stauts']);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain("See 'kubectl bundle --help' for usage.");
  });

  it('kubectl completes kubectl bundle through kubectl_complete-bundle', async () => {
    const commands = await kubectl(['__complete', 'bundle', 'st']);
    expect(commands.code).toBe(0);
    expect(commands.stdout.split('\n')).toContain("status\tone line per Bundle, or one Bundle's conditions in words; exit 1 unless Ready");
    const flags = await kubectl(['__complete', 'bundle', 'pending', '--all']);
    expect(flags.stdout).toContain('--all-namespaces');
    expect(flags.stdout).toMatch(/^:4$/m);
    // Names from the cluster: the Bundles of the namespace given, and namespaces for -n.
    const bundles = await kubectl(['__complete', 'bundle', 'tree', '-n', ns, '']);
    expect(bundles.stdout.split('\n')).toContain('conv');
    const namespaces = await cli(['__complete', 'status', '-n', ns.slice(0, 8)]);
    expect(namespaces.stdout.split('\n')).toContain(ns);
  });

  it('a completion whose cluster does not answer offers nothing', async () => {
    const result = await cli(['__complete', 'tree', '--kubeconfig', join(binDir, 'missing-kubeconfig'), '']);
    expect(result).toMatchObject({ code: 0, stdout: ':4\n' });
  });
});

/** The document with every remainingMs taken out (it moves between two runs of a command). */
function withoutCountdowns(doc: unknown): unknown {
  if (Array.isArray(doc)) return doc.map(withoutCountdowns);
  if (typeof doc !== 'object' || doc === null) return doc;
  return Object.fromEntries(
    Object.entries(doc)
      .filter(([k]) => k !== 'remainingMs')
      .map(([k, v]) => [k, withoutCountdowns(v)]),
  );
}

/**
 * A Node older than the CLI needs: the machine's own (the one npm runs on;
 * this project's machines carry Debian's, older than the pinned LTS).
 */
function olderNode(): { path: string; version: string } | undefined {
  for (const path of ['/usr/bin/node', '/usr/local/bin/node', '/bin/node']) {
    try {
      const version = execFileSync(path, ['--version'], { encoding: 'utf8' }).trim().replace(/^v/, '');
      if (nodeVersionProblem(version, 'bundlesmith') !== undefined) return { path, version };
    } catch {
      // not installed there
    }
  }
  return undefined;
}

it(`on an older Node, one line naming Node ${MINIMUM_NODE}`, async () => {
  const old = olderNode();
  // Never skipped: a machine without an older Node fails here, saying so.
  if (!old)
    throw new Error(
      `no Node older than ${MINIMUM_NODE} at /usr/bin/node, /usr/local/bin/node or /bin/node: install Debian's nodejs to run this test`,
    );
  for (const name of ['bundlesmith', 'kubectl-bundle']) {
    const result = await exec(old.path, [join(binDir, name), 'validate', join(repoRoot(), 'examples', 'soft-delete.yaml')]);
    const program = name === 'bundlesmith' ? 'bundlesmith' : 'kubectl bundle';
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: `${program}: needs Node.js ${MINIMUM_NODE} or later; this is Node.js ${old.version}\n`,
    });
  }
});
