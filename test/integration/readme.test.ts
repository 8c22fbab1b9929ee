/**
 * Issue 25: the README's commands run, as written, in the order written.
 * Every ```sh block of README.md is run line by line with bash (pipes
 * included) from the repository's root, against the test API server, with
 * kubectl, helm and the built `bundlesmith` bin on PATH; a block may opt out
 * only with an HTML comment right above it that says which test runs it
 * instead, and this file lists the blocks it expects to be skipped. The
 * first Bundle's YAML shown in the README must be examples/hello.yaml byte
 * for byte.
 *
 * No nodes run pods here, so the chart's Deployment (applied by the README's
 * `helm template ... | kubectl apply` line) never starts: right after that
 * line, the operator is started out of cluster with the flags of the
 * rendered Deployment, as the chart's ServiceAccount (rbac.test.ts does the
 * same), watching only the README's namespace, since other files' Bundles
 * share this API server. Every object the manifest created is deleted
 * afterwards (docs-commands.test.ts installs the same release in the same
 * namespace with helm) but the CRD, which is every file's. The block
 * machinery is doc-blocks.ts, shared with docs-commands.test.ts.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Annotations } from '../../src/api/names.js';
import { repoRoot } from '../../src/api/crd-paths.js';
import type { ResourceType } from '../../src/kube/types.js';
import { forbiddenLines } from './chart.js';
import { blocks, commandBin, commands, deleteRenderedChart, renderedChart, sh as shIn, skipReason } from './doc-blocks.js';
import { connect, resourceType, type RunResult, type TestEnv } from './harness.js';
import { startOperatorProcess, type OperatorProcess } from './operator.js';

const root = repoRoot();
const readme = readFileSync(join(root, 'README.md'), 'utf8');

const THIS_FILE = 'test/integration/readme.test.ts';
/** The blocks another test runs instead, by their first line. */
const SKIPPED = [
  'helm install bundlesmith charts/bundlesmith -n bundlesmith --create-namespace',
  'npm install && npm run build && npm link',
];

const INSTALL = 'helm template bundlesmith charts/bundlesmith -n bundlesmith | kubectl apply --server-side -f -';
const NAMESPACE = 'demo';
const RELEASE_NAMESPACE = 'bundlesmith';

let env: TestEnv;
let configMaps: ResourceType;
let bin: string;
let operator: OperatorProcess | undefined;
let cacheUid = '';
const transcript: string[] = [];
/** Every output of each command, in order. */
const outputs = new Map<string, string[]>();

/** Output with what changes from run to run (times, durations, column widths) made the same. */
function normalized(text: string): string {
  return text
    .replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, 'TIME')
    .replace(/\b(\d+h)?(\d+m)?\d+s\b/g, 'DURATION')
    .replace(/ +/g, ' ')
    .trim();
}

/** The sample outputs the README shows: ```text blocks of `$ command` lines, each followed by what it printed. */
function shownOutputs(): { command: string; output: string }[] {
  return blocks(readme)
    .filter((b) => b.lang === 'text' && b.body.startsWith('$ '))
    .flatMap((b) => b.body.split(/^\$ /m).filter((part) => part !== ''))
    .map((part) => {
      const [command = '', ...rest] = part.split('\n');
      return { command: command.trim(), output: rest.join('\n') };
    });
}

/** What the chart's pod would run: the rendered Deployment's flags (minus its HTTP addresses), as its ServiceAccount. */
async function startChartOperator(): Promise<OperatorProcess> {
  const deployment = (await renderedChart('bundlesmith', RELEASE_NAMESPACE)).find((d) => d.kind === 'Deployment');
  const pod = (deployment?.spec as { template: { spec: { serviceAccountName: string; containers: { args: string[] }[] } } } | undefined)
    ?.template.spec;
  if (!pod) throw new Error('the chart rendered no Deployment');
  const args = (pod.containers[0]?.args ?? []).filter((a) => !a.startsWith('--metrics-addr') && !a.startsWith('--health-addr'));
  return startOperatorProcess([
    ...args,
    '--namespace',
    NAMESPACE,
    '--impersonate',
    `system:serviceaccount:${RELEASE_NAMESPACE}:${pod.serviceAccountName}`,
  ]);
}

const sh = (command: string): Promise<RunResult> => shIn(command, bin);

async function cacheObject(): Promise<{ uid: string; annotations: Record<string, string>; owners: { kind: string }[] } | undefined> {
  const cm = await env.client.tryGet(configMaps, NAMESPACE, 'hello-cache');
  if (!cm) return undefined;
  return { uid: cm.metadata.uid ?? '', annotations: cm.metadata.annotations ?? {}, owners: cm.metadata.ownerReferences ?? [] };
}

/** What each command must print, by command and then by its occurrence in the README (a command may appear twice). */
const CHECKS: Record<string, ((r: RunResult) => Promise<void> | void)[]> = {
  [INSTALL]: [(r) => expect(r.stdout).toMatch(/deployment\.apps\/bundlesmith serverside-applied/)],
  'bundlesmith tree hello -n demo': [
    async (r) => {
      expect(r.stdout).toMatch(/^Bundle demo\/hello\s+Ready\s+2\/2 ready/);
      expect(r.stdout).toMatch(/ConfigMap\/hello-greeting\s+Ready/);
      expect(r.stdout).toMatch(/ConfigMap\/hello-cache\s+Ready/);
      expect(r.stdout).not.toMatch(/pending deletion/);
      cacheUid = (await cacheObject())?.uid ?? '';
      expect(cacheUid).not.toBe('');
    },
    (r) => {
      expect(r.stdout).toMatch(/1 pending deletion/);
      expect(r.stdout).toMatch(/ConfigMap\/hello-cache\s+deletes in (59m|1h)/);
    },
  ],
  'bundlesmith pending -n demo': [
    async (r) => {
      expect(r.stdout).toMatch(/demo\s+ConfigMap\/hello-cache\s+hello\s+pending\s+Delay\s/);
      const cm = await cacheObject();
      expect(cm?.uid).toBe(cacheUid);
      expect(cm?.annotations[Annotations.deletionTimestamp]).toBeDefined();
    },
    async (r) => {
      // Put back: the countdown is cancelled, the same object is the Bundle's again.
      expect(r.stdout).toBe('');
      const cm = await cacheObject();
      expect(cm?.uid).toBe(cacheUid);
      expect(cm?.annotations[Annotations.deletionTimestamp]).toBeUndefined();
      expect(cm?.owners.some((o) => o.kind === 'Bundle')).toBe(true);
    },
  ],
  'bundlesmith cancel ConfigMap/hello-cache -n demo': [
    async () => {
      const cm = await cacheObject();
      expect(cm?.uid).toBe(cacheUid);
      expect(cm?.annotations[Annotations.deletionTimestamp]).toBeUndefined();
      expect(cm?.owners.some((o) => o.kind === 'Bundle')).toBe(false);
    },
  ],
  'kubectl get configmap hello-cache -n demo': [(r) => expect(r.stdout).toMatch(/^NAME\s+DATA\s+AGE\nhello-cache\s+1\s/)],
};

beforeAll(async () => {
  env = await connect();
  configMaps = await resourceType(env, 'v1', 'ConfigMap');
  bin = commandBin('bundlesmith-readme');
});

afterAll(async () => {
  if (operator) await operator.terminate();
  // Everything the manifest created but the CRD (every file's): docs-commands.test.ts installs the same release in the same namespace with helm.
  await deleteRenderedChart('bundlesmith', RELEASE_NAMESPACE);
  if (process.env.BUNDLESMITH_README_TRANSCRIPT) writeFileSync(process.env.BUNDLESMITH_README_TRANSCRIPT, transcript.join('\n'));
  rmSync(bin, { recursive: true, force: true });
  env.close();
});

it('shows the first Bundle as examples/hello.yaml, byte for byte', () => {
  const yaml = blocks(readme).filter((b) => b.lang === 'yaml');
  expect(yaml.map((b) => b.body)).toContain(readFileSync(join(root, 'examples', 'hello.yaml'), 'utf8'));
});

it('skips only the blocks another test runs, and says which', () => {
  const skipped = blocks(readme).filter((b) => b.lang === 'sh' && skipReason(b, THIS_FILE) !== undefined);
  expect(skipped.map((b) => b.body.split('\n')[0])).toEqual(SKIPPED);
});

it('runs every command of the README in order: install, a first Bundle, a soft delete taken back and cancelled', async () => {
  const seen = new Map<string, number>();
  const lines = blocks(readme)
    .filter((b) => b.lang === 'sh' && skipReason(b, THIS_FILE) === undefined)
    .flatMap(commands);
  expect(lines).toContain(INSTALL);
  for (const command of lines) {
    const result = await sh(command);
    transcript.push(`$ ${command}`, result.stdout.trimEnd(), ...(result.stderr.trim() ? [`(stderr) ${result.stderr.trimEnd()}`] : []), '');
    expect({ command, code: result.code, stderr: result.code === 0 ? '' : result.stderr }).toEqual({ command, code: 0, stderr: '' });
    outputs.set(command, [...(outputs.get(command) ?? []), result.stdout]);
    const n = seen.get(command) ?? 0;
    seen.set(command, n + 1);
    await CHECKS[command]?.[n]?.(result);
    if (command === INSTALL) operator = await startChartOperator();
  }
  // Every check ran: the README still has each command the checks are about, as often.
  for (const [command, checks] of Object.entries(CHECKS))
    expect({ command, runs: seen.get(command) ?? 0 }).toEqual({ command, runs: checks.length });
  expect(operator && forbiddenLines(operator)).toEqual([]);
  // The sample outputs the README shows are what those commands printed (times and durations aside).
  const shown = shownOutputs();
  expect(shown.length).toBeGreaterThanOrEqual(3);
  for (const { command, output } of shown) {
    const printed = (outputs.get(command) ?? []).map(normalized);
    expect({ command, shownIsPrinted: printed.includes(normalized(output)), printed }).toMatchObject({ command, shownIsPrinted: true });
  }
}, 600_000);
