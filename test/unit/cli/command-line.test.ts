/** The command lines commands.ts declares, parsed by commander in process: flags, arguments and usage errors. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../../src/api/crd-paths.js';
import { EXIT_PROBLEMS, EXIT_USAGE, type ParsedCommand } from '../../../src/cli/args.js';
import type { CliIo } from '../../../src/cli/io.js';
import { MINIMUM_NODE, nodeVersionProblem } from '../../../src/cli/node-version.js';
import { buildProgram, runCli } from '../../../src/cli/program.js';

function capture(): { io: CliIo; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l) => void out.push(l), err: (l) => void err.push(l) }, out, err };
}

async function parse(argv: string[]): Promise<ParsedCommand> {
  let got: ParsedCommand | undefined;
  const program = buildProgram('bundlesmith', capture().io, (_declaration, parsed) => {
    got = parsed;
    return Promise.resolve();
  });
  await program.parseAsync(argv, { from: 'user' });
  if (got === undefined) throw new Error('no command ran');
  return got;
}

describe('command lines', () => {
  it.each([
    [['validate', 'a.yaml', 'b.yaml'], { command: 'validate', positionals: ['a.yaml', 'b.yaml'], flags: { output: 'text' } }],
    [['diff', 'x.yaml', '-n', 'team'], { command: 'diff', positionals: ['x.yaml'], flags: { output: 'text', namespace: 'team' } }],
    [['pending', '--namespace=team', '-o', 'yaml'], { command: 'pending', positionals: [], flags: { output: 'yaml', namespace: 'team' } }],
    [['pending', '-A', '-o', 'json'], { command: 'pending', positionals: [], flags: { output: 'json', all: true } }],
    [
      ['cancel', 'deployment.apps/web', '--kubeconfig', '/k', '--context', 'kind'],
      { command: 'cancel', positionals: ['deployment.apps/web'], flags: { output: 'text', kubeconfig: '/k', context: 'kind' } },
    ],
    [
      ['--context', 'kind', 'status', '--all-namespaces'],
      { command: 'status', positionals: [], flags: { output: 'text', context: 'kind', all: true } },
    ],
    [['validate', '--', '-odd-file.yaml'], { command: 'validate', positionals: ['-odd-file.yaml'], flags: { output: 'text' } }],
    [
      ['tree', 'web', '-n', 'team', '--watch', '--no-color'],
      { command: 'tree', positionals: ['web'], flags: { output: 'text', namespace: 'team', watch: true, noColor: true } },
    ],
    [['status', '--all'], { command: 'status', positionals: [], flags: { output: 'text', all: true } }],
    [['-n', 'team', 'status'], { command: 'status', positionals: [], flags: { output: 'text', namespace: 'team' } }],
    [
      ['-n', 'outer', 'tree', 'web', '-n', 'inner'],
      { command: 'tree', positionals: ['web'], flags: { output: 'text', namespace: 'inner' } },
    ],
    [
      ['gc-graph', '--owner', 'deployment.apps/web', '-n', 'team', '-o', 'dot', '--debug-url', 'http://x:1'],
      {
        command: 'gc-graph',
        positionals: [],
        flags: { output: 'dot', owner: { kind: 'deployment', group: 'apps', name: 'web' }, namespace: 'team', debugUrl: 'http://x:1' },
      },
    ],
    [
      ['status', 'web', '--wait', '--timeout', '2m'],
      { command: 'status', positionals: ['web'], flags: { output: 'text', wait: true, timeoutMs: 120_000 } },
    ],
  ])('%j', async (argv, want) => {
    const parsed = await parse(argv);
    // gc-graph's --debug-url has a default; the others carry none.
    expect(parsed).toEqual(argv[0] === 'gc-graph' ? want : { ...want, flags: { ...want.flags } });
  });

  it.each([
    [[], /Usage: bundlesmith/],
    [['frob'], /unknown command 'frob'/],
    [['statsu'], /Did you mean status\?/],
    [['pending', '--namspace', 'x'], /Did you mean --namespace\?/],
    [['validate'], /missing required argument 'file'/],
    [['diff', 'a', 'b'], /too many arguments/],
    [['pending', 'x'], /too many arguments/],
    [['pending', '-n'], /argument missing/],
    [['pending', '-o', 'xml'], /Allowed choices are text, json, yaml/],
    [['pending', '-o', 'dot'], /Allowed choices/],
    [['pending', '-n', 'a', '-A'], /-n and -A do not go together/],
    [['gc-graph'], /required option '--owner <KIND\/NAME>' not specified/],
    [['gc-graph', '--owner', 'web'], /"web" is not KIND\/NAME/],
    [['tree'], /missing required argument 'bundle'/],
    [['status', 'web', '-A'], /status takes a Bundle name or -A, not both/],
    [['status', '--wait'], /--wait needs a Bundle name/],
    [['status', 'web', '--wait', '--timeout', 'soon'], /must be a positive Go duration \(e\.g\. 2m\), not "soon"/],
    [['status', 'web', '--wait', '-w'], /--watch and --wait do not go together/],
    [['delete-now', 'web'], /"web" is not KIND\/NAME \(e\.g\. ConfigMap\/settings or deployment\.apps\/web\)/],
    [['completion', 'tcsh'], /Allowed choices are bash, zsh, fish/],
  ])('%j is a usage error (exit 2)', async (argv, message) => {
    const c = capture();
    expect(await runCli(argv, c.io)).toBe(EXIT_USAGE);
    expect(c.err.join('\n')).toMatch(message);
  });

  it('names itself as it was run, and prints the version', async () => {
    const c = capture();
    expect(await runCli(['help', 'tree'], c.io, { name: 'kubectl bundle' })).toBe(0);
    expect(c.out.join('\n')).toMatch(/^Usage: kubectl bundle tree \[options\] <bundle>/);
    expect(c.out.join('\n')).toContain('kubectl bundle tree web -n demo');
    const v = capture();
    expect(await runCli(['--version'], v.io)).toBe(0);
    expect(v.out).toEqual([(JSON.parse(readFileSync(join(repoRoot(), 'package.json'), 'utf8')) as { version: string }).version]);
  });

  it('has distinct exit codes for problems and usage', () => {
    expect([EXIT_PROBLEMS, EXIT_USAGE]).toEqual([1, 2]);
  });
});

describe('the Node version check', () => {
  it("needs what package.json's engines says", () => {
    const engines = (JSON.parse(readFileSync(join(repoRoot(), 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    expect(engines).toBe(`>=${MINIMUM_NODE}`);
  });

  it.each([
    ['20.20.2', true],
    ['22.18.9', true],
    ['22.19.0', false],
    ['24.1.0', false],
    ['100.0.0', false],
  ])('%s: refused %s', (version, refused) => {
    const problem = nodeVersionProblem(version, 'bundlesmith');
    expect(problem !== undefined).toBe(refused);
    if (refused) expect(problem).toBe(`bundlesmith: needs Node.js ${MINIMUM_NODE} or later; this is Node.js ${version}`);
  });
});
