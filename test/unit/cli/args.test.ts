import { EXIT_PROBLEMS, EXIT_USAGE, formatObjectRef, parseCommandLine, parseObjectRef } from '../../../src/cli/args.js';

describe('parseCommandLine', () => {
  it.each([
    [['validate', 'a.yaml', 'b.yaml'], { command: 'validate', positionals: ['a.yaml', 'b.yaml'], flags: { output: 'text' } }],
    [['diff', 'x.yaml', '-n', 'team'], { command: 'diff', positionals: ['x.yaml'], flags: { output: 'text', namespace: 'team' } }],
    [['pending', '--namespace=team', '-o', 'json'], { command: 'pending', positionals: [], flags: { output: 'json', namespace: 'team' } }],
    [['cancel', 'deployment.apps/web', '--kubeconfig', '/k'], { command: 'cancel', positionals: ['deployment.apps/web'], flags: { output: 'text', kubeconfig: '/k' } }],
    [['--help'], { command: 'help', positionals: [], flags: { output: 'text' } }],
    [['validate', '--', '-odd-file.yaml'], { command: 'validate', positionals: ['-odd-file.yaml'], flags: { output: 'text' } }],
    [['tree', 'web', '-n', 'team', '--watch', '--no-color'], { command: 'tree', positionals: ['web'], flags: { output: 'text', namespace: 'team', watch: true, noColor: true } }],
    [['status', '-A'], { command: 'status', positionals: [], flags: { output: 'text', all: true } }],
    [['gc-graph', '--owner', 'deployment.apps/web', '-n', 'team', '-o', 'dot', '--debug-url', 'http://x:1'], { command: 'gc-graph', positionals: [], flags: { output: 'dot', owner: { kind: 'deployment', group: 'apps', name: 'web' }, namespace: 'team', debugUrl: 'http://x:1' } }],
    [['status', 'web', '--wait', '--timeout', '2m'], { command: 'status', positionals: ['web'], flags: { output: 'text', wait: true, timeoutMs: 120_000 } }],
  ])('%j', (argv, want) => {
    expect(parseCommandLine(argv)).toEqual({ ok: true, parsed: want });
  });

  it.each([
    [[], 'no command given'],
    [['frob'], 'unknown command "frob"'],
    [['validate'], 'validate needs at least 1 argument'],
    [['diff', 'a', 'b'], 'diff takes 1 argument, got 2'],
    [['pending', 'x'], 'pending takes no arguments, got 1'],
    [['pending', '-n'], 'flag -n needs a value'],
    [['pending', '-o', 'yaml'], '--output must be text, json or dot, not "yaml"'],
    [['pending', '-o', 'dot'], '--output dot is for gc-graph only'],
    [['gc-graph'], 'gc-graph needs --owner KIND/NAME'],
    [['gc-graph', '--owner', 'web'], '--owner must be KIND/NAME, not "web"'],
    [['pending', '--frob'], 'unknown flag --frob'],
    [['tree'], 'tree needs one argument'],
    [['status', 'web', '--all'], 'status takes a Bundle name or --all, not both'],
    [['status', '--wait'], '--wait needs status BUNDLE'],
    [['status', 'web', '--wait', '--timeout', 'soon'], '--timeout must be a positive Go duration (e.g. 2m), not "soon"'],
    [['status', 'web', '--wait', '-w'], '--watch and --wait do not go together'],
    [['delete-now', 'web'], '"web" is not KIND/NAME (e.g. ConfigMap/settings or deployment.apps/web)'],
  ])('%j is a usage error', (argv, message) => {
    const result = parseCommandLine(argv);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors).toContain(message);
  });

  it('has distinct exit codes for problems and usage', () => {
    expect([EXIT_PROBLEMS, EXIT_USAGE]).toEqual([1, 2]);
  });
});

describe('object references', () => {
  it.each([
    ['ConfigMap/settings', { kind: 'ConfigMap', name: 'settings' }],
    ['configmaps/settings', { kind: 'configmaps', name: 'settings' }],
    ['deployment.apps/web', { kind: 'deployment', group: 'apps', name: 'web' }],
    ['Widget.example.com/w-1.a', { kind: 'Widget', group: 'example.com', name: 'w-1.a' }],
    ['ConfigMap/Bad_Name', undefined],
    ['ConfigMap', undefined],
    ['/x', undefined],
  ])('parses %s', (text, want) => {
    expect(parseObjectRef(text)).toEqual(want);
  });

  it('formats so that the output parses back', () => {
    for (const [apiVersion, kind] of [['v1', 'ConfigMap'], ['apps/v1', 'Deployment'], ['example.com/v1alpha1', 'Widget']] as const) {
      const text = formatObjectRef(apiVersion, kind, 'x');
      expect(parseObjectRef(text)).toMatchObject({ kind, name: 'x' });
    }
  });
});
