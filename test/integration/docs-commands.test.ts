/**
 * Issue 25: the commands of the docs pages run, as written, in the order
 * written, as readme.test.ts runs the README's (the machinery is
 * doc-blocks.ts, shared with it). Every ```sh block of docs/*.md is run line
 * by line with bash from the repository's root against the test API server,
 * with kubectl, helm and the built `bundlesmith` bin on PATH; a line that
 * ends in `&` runs in the background, as in a terminal, until its page is
 * done. A block may opt out only with an HTML comment right above it that
 * says which test runs it instead or why it cannot run here, and this file
 * lists the blocks it expects to be skipped. Every other fenced block (of
 * the pages and of docs/cli-notes/, which docs/cli.md is generated from) is
 * output, a manifest or a diagram, and says so by its fence: ```console for
 * a terminal session, ```text, ```yaml, ```json or ```mermaid.
 *
 * What the test environment adds, and only where a page's own commands
 * cannot set it up:
 *
 * - The suite's Bundle CRD was created outside Helm (by the global setup), so
 *   before each `helm install` of operations.md the CRD is labelled and
 *   annotated for the release, as that page tells a reader to do for such a
 *   CRD; its labels and annotations are put back afterwards (the CRD is
 *   every file's). No nodes run pods here, so the installed Deployment never
 *   starts: the checks read what Helm created.
 * - What the pages' commands leave behind is removed afterwards: the release
 *   (operations.md installs it twice and uninstalls it once) and the
 *   namespace its `--create-namespace` created (readme.test.ts creates the
 *   same one), the operator started in the background (development.md).
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../src/api/crd-paths.js';
import type { ResourceType } from '../../src/kube/types.js';
import { blocks, commandBin, commands, isBackground, sh, shBackground, skipReason, type BackgroundJob, type Block } from './doc-blocks.js';
import { connect, resourceType, run, waitFor, type RunResult, type TestEnv } from './harness.js';

const THIS_FILE = 'test/integration/docs-commands.test.ts';
const root = repoRoot();
const docs = join(root, 'docs');

/** Every docs page, and the notes docs/cli.md is generated from. */
const PAGES = readdirSync(docs)
  .filter((f) => f.endsWith('.md'))
  .sort();
const NOTES = readdirSync(join(docs, 'cli-notes'))
  .filter((f) => f.endsWith('.md'))
  .sort()
  .map((f) => `cli-notes/${f}`);
const pageBlocks = (page: string): Block[] => blocks(readFileSync(join(docs, page), 'utf8'));

/** The fences a block may have: commands (sh), and what is not run. */
const FENCES = ['sh', 'console', 'text', 'yaml', 'json', 'mermaid'];

/** The blocks that are not run here, by page and first command; each says why above it. */
const SKIPPED = [
  'benchmarks.md: npm run bench                         # full run: this file, bench/results.json and the summary table above',
  'development.md: npm install',
  'operations.md: npm run image     # dist/image/bundlesmith-0.1.0.oci.tar, an OCI image layout archive',
  'operations.md: skopeo copy --preserve-digests oci-archive:dist/image/bundlesmith-0.1.0.oci.tar docker://registry.example.com/platform/bundlesmith:0.1.0',
];

const RELEASE = 'bundlesmith';
const RELEASE_NAMESPACE = 'bundlesmith';
const CRD = 'bundles.smith.atlassian.com';
const INSTALL =
  'helm install bundlesmith charts/bundlesmith -n bundlesmith --create-namespace --set image.repository=registry.example.com/platform/bundlesmith,image.tag=0.1.0';
const IMAGE = 'registry.example.com/platform/bundlesmith:0.1.0';

let env: TestEnv;
let deployments: ResourceType;
let configMaps: ResourceType;
let crds: ResourceType;
let bin: string;
/** The CRD's labels and annotations before any page ran. */
let crdMetadata: { labels: Record<string, string>; annotations: Record<string, string> } | undefined;
/** Whether the release's namespace was there before any page ran (readme.test.ts creates it with `kubectl create namespace`). */
let releaseNamespaceExisted = false;
let namespaces: ResourceType;

async function crd(): Promise<{ labels: Record<string, string>; annotations: Record<string, string> } | undefined> {
  const obj = await env.client.tryGet(crds, undefined, CRD);
  return obj ? { labels: obj.metadata.labels ?? {}, annotations: obj.metadata.annotations ?? {} } : undefined;
}

/** The operator's container in the release's Deployment, if there is one. */
async function releaseContainer(): Promise<{ image: string; args: string[] } | undefined> {
  const deployment = await env.client.tryGet(deployments, RELEASE_NAMESPACE, RELEASE);
  return (deployment as { spec?: { template: { spec: { containers: { image: string; args: string[] }[] } } } } | undefined)?.spec?.template
    .spec.containers[0];
}

async function kubectlOk(args: string[]): Promise<void> {
  const r = await run('kubectl', args);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
}

/** What the pages say to do with a CRD created outside Helm before installing the release that is to own it. */
async function handCrdToRelease(): Promise<void> {
  await kubectlOk(['label', '--overwrite', 'crd', CRD, 'app.kubernetes.io/managed-by=Helm']);
  await kubectlOk([
    'annotate',
    '--overwrite',
    'crd',
    CRD,
    `meta.helm.sh/release-name=${RELEASE}`,
    `meta.helm.sh/release-namespace=${RELEASE_NAMESPACE}`,
  ]);
}

/**
 * The namespace `helm install --create-namespace` created, gone again, so that
 * the README's `kubectl create namespace bundlesmith` still runs as written
 * after this file. The release is uninstalled by then; no namespace
 * controller runs here, so the test finalizes the namespace itself.
 */
async function removeReleaseNamespace(): Promise<void> {
  if ((await env.client.tryGet(namespaces, undefined, RELEASE_NAMESPACE)) === undefined) return;
  await kubectlOk(['delete', 'namespace', RELEASE_NAMESPACE, '--wait=false']);
  const finalized = await run('kubectl', ['replace', '--raw', `/api/v1/namespaces/${RELEASE_NAMESPACE}/finalize`, '-f', '-'], {
    input: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: RELEASE_NAMESPACE }, spec: { finalizers: [] } }),
  });
  if (finalized.code !== 0) throw new Error(`finalizing namespace ${RELEASE_NAMESPACE}: ${finalized.stderr}`);
  await waitFor(
    `namespace ${RELEASE_NAMESPACE} to be gone`,
    async () => (await env.client.tryGet(namespaces, undefined, RELEASE_NAMESPACE)) === undefined,
  );
}

/** What runs right before a command, by page and command, then by its occurrence on the page. */
const BEFORE: Record<string, (() => Promise<void>)[]> = {
  [`operations.md: ${INSTALL}`]: [handCrdToRelease, handCrdToRelease],
};

const installed = async (r: RunResult): Promise<void> => {
  expect(r.stdout).toMatch(/STATUS: deployed/);
  expect((await releaseContainer())?.image).toBe(IMAGE);
};

/** What each command must print or do, by page and command, then by its occurrence on the page. */
const CHECKS: Record<string, ((r: RunResult) => Promise<void> | void)[]> = {
  // The committed summary is the one bench/results.json gives.
  'benchmarks.md: npm run bench:summary                 # the summary table above again from bench/results.json': [
    (r) => expect(r.stderr).toMatch(/unchanged: the summary in docs\/benchmarks\.md/),
  ],
  'development.md: kubectl apply --server-side -f crds/': [
    (r) => expect(r.stdout).toMatch(/customresourcedefinition\.apiextensions\.k8s\.io\/bundles\.smith\.atlassian\.com serverside-applied/),
  ],
  'development.md: kubectl apply -n my-team -f examples/configmap-secret-deployment.yaml': [
    (r) => expect(r.stdout).toMatch(/bundle\.smith\.atlassian\.com\/web (created|configured)/),
  ],
  'development.md: kubectl get bundles -n my-team            # READY, STATUS (what blocks it, or what it waits for), RESOURCES, PENDING-DELETIONS, AGE; -o wide for more':
    [
      async (r) => {
        expect(r.stdout).toMatch(/^NAME\s+READY\s+STATUS\s+RESOURCES\s+PENDING-DELETIONS\s+AGE\nweb\s/);
        // The operator started from source reconciles the example: it applies the Bundle's ConfigMap.
        await waitFor(
          'the operator started by npm start to apply web-config',
          () => env.client.tryGet(configMaps, 'my-team', 'web-config'),
          { timeoutMs: 90_000 },
        );
      },
    ],
  'operations.md: kubectl label crd bundles.smith.atlassian.com app.kubernetes.io/managed-by=Helm': [
    async () => expect((await crd())?.labels['app.kubernetes.io/managed-by']).toBe('Helm'),
  ],
  'operations.md: kubectl annotate crd bundles.smith.atlassian.com meta.helm.sh/release-name=RELEASE meta.helm.sh/release-namespace=NAMESPACE':
    [
      async () =>
        expect((await crd())?.annotations).toMatchObject({
          'meta.helm.sh/release-name': 'RELEASE',
          'meta.helm.sh/release-namespace': 'NAMESPACE',
        }),
    ],
  [`operations.md: ${INSTALL}`]: [installed, installed],
  'operations.md: helm upgrade bundlesmith charts/bundlesmith -n bundlesmith --reuse-values --set tenancy.defaultServiceAccount=bundles': [
    async (r) => {
      expect(r.stdout).toMatch(/has been upgraded/);
      const container = await releaseContainer();
      expect(container?.image).toBe(IMAGE);
      expect(container?.args).toContain('--default-service-account=bundles');
    },
  ],
  'operations.md: helm uninstall bundlesmith -n bundlesmith   # the CRD and every Bundle stay': [
    async (r) => {
      expect(r.stdout).toMatch(/release "bundlesmith" uninstalled/);
      expect(await releaseContainer()).toBeUndefined();
      expect(await crd()).toBeDefined();
    },
  ],
};

beforeAll(async () => {
  env = await connect();
  deployments = await resourceType(env, 'apps/v1', 'Deployment');
  configMaps = await resourceType(env, 'v1', 'ConfigMap');
  crds = await resourceType(env, 'apiextensions.k8s.io/v1', 'CustomResourceDefinition');
  namespaces = await resourceType(env, 'v1', 'Namespace');
  crdMetadata = await crd();
  releaseNamespaceExisted = (await env.client.tryGet(namespaces, undefined, RELEASE_NAMESPACE)) !== undefined;
  bin = commandBin('bundlesmith-docs');
});

afterAll(async () => {
  // operations.md installs the release twice and uninstalls it once; readme.test.ts uses the same release name and namespace.
  await run('helm', ['uninstall', RELEASE, '-n', RELEASE_NAMESPACE, '--ignore-not-found']);
  if (crdMetadata) {
    // The CRD's labels and annotations as they were: keys the pages added removed, the others set back.
    const now = (await crd()) ?? { labels: {}, annotations: {} };
    const back = (was: Record<string, string>, is: Record<string, string>): Record<string, string | null> => ({
      ...Object.fromEntries(Object.keys(is).map((k) => [k, null])),
      ...was,
    });
    const patch = {
      metadata: { labels: back(crdMetadata.labels, now.labels), annotations: back(crdMetadata.annotations, now.annotations) },
    };
    await kubectlOk(['patch', 'crd', CRD, '--type', 'merge', '-p', JSON.stringify(patch)]);
  }
  if (!releaseNamespaceExisted) await removeReleaseNamespace();
  rmSync(bin, { recursive: true, force: true });
  env.close();
});

it('fences every block as what it is: ```sh for commands, ```console for a session shown, ```text, ```yaml, ```json or ```mermaid', () => {
  const unfenced = [...PAGES, ...NOTES].flatMap((page) =>
    pageBlocks(page)
      .filter((b) => !FENCES.includes(b.lang))
      .map((b) => `${page}:${b.line} \`\`\`${b.lang}`),
  );
  expect(unfenced).toEqual([]);
});

it('skips only the blocks listed here, each saying which test runs it or why it cannot run here', () => {
  const skipped = PAGES.flatMap((page) =>
    pageBlocks(page)
      .filter((b) => b.lang === 'sh' && skipReason(b, THIS_FILE) !== undefined)
      .map((b) => ({ page, block: b })),
  );
  expect(skipped.map(({ page, block }) => `${page}: ${commands(block)[0] ?? ''}`)).toEqual(SKIPPED);
  for (const { block } of skipped) expect((skipReason(block, THIS_FILE) ?? '').length).toBeGreaterThan(20);
  // A note that names another file, or no file, is no opt-out: such a block runs, and says nothing.
  const otherNotes = PAGES.flatMap((page) =>
    pageBlocks(page)
      .filter((b) => b.lang === 'sh' && b.note !== undefined && skipReason(b, THIS_FILE) === undefined)
      .map((b) => `${page}:${b.line} ${b.note ?? ''}`),
  );
  expect(otherNotes).toEqual([]);
});

const runnable = PAGES.map((page) => ({
  page,
  lines: pageBlocks(page)
    .filter((b) => b.lang === 'sh' && skipReason(b, THIS_FILE) === undefined)
    .flatMap(commands),
})).filter((p) => p.lines.length > 0);

it('runs the commands of at least the pages that have some', () => {
  expect(runnable.map((p) => p.page)).toEqual(expect.arrayContaining(['benchmarks.md', 'development.md', 'operations.md']));
});

for (const { page, lines } of runnable) {
  it(`runs every command of docs/${page} in order`, async () => {
    const seen = new Map<string, number>();
    const jobs: BackgroundJob[] = [];
    try {
      for (const command of lines) {
        const key = `${page}: ${command}`;
        const n = seen.get(key) ?? 0;
        seen.set(key, n + 1);
        await BEFORE[key]?.[n]?.();
        if (isBackground(command)) {
          jobs.push(shBackground(command, bin));
          continue;
        }
        const result = await sh(command, bin);
        const failed = result.code !== 0;
        expect({
          page,
          command,
          code: result.code,
          stderr: failed ? result.stderr : '',
          background: failed ? jobs.map((j) => `${j.command}\n${j.output()}`) : [],
        }).toEqual({ page, command, code: 0, stderr: '', background: [] });
        try {
          await CHECKS[key]?.[n]?.(result);
        } catch (err) {
          throw new Error(
            `${key}: ${err instanceof Error ? err.message : String(err)}\n${jobs.map((j) => `background: ${j.command} (${j.running() ? 'running' : 'exited'})\n${j.output()}`).join('\n')}\nstdout:\n${result.stdout}`,
          );
        }
      }
      // What runs in the background is still running when the page is done with it.
      for (const job of jobs)
        expect({ command: job.command, running: job.running(), output: job.running() ? '' : job.output() }).toEqual({
          command: job.command,
          running: true,
          output: '',
        });
    } finally {
      for (const job of jobs) await job.stop();
    }
    // Every check and preparation ran: the page still has each command they are about, as often.
    for (const [key, list] of [...Object.entries(CHECKS), ...Object.entries(BEFORE)].filter(([k]) => k.startsWith(`${page}: `)))
      expect({ key, runs: seen.get(key) ?? 0 }).toEqual({ key, runs: list.length });
  }, 300_000);
}
