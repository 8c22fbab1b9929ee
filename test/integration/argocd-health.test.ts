/**
 * The Argo CD health check for Bundles (docs/argocd/bundle-health.lua) under
 * Lua 5.1, Argo CD's language version (gopher-lua), against Bundles read
 * from the real API server in each state an operator leaves them in. The
 * harness does what Argo CD does: `obj` is the live object, the script's
 * `hs` is the answer. The object goes in as a Lua table literal, so no JSON
 * library is needed.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../src/api/crd-paths.js';
import { Annotations } from '../../src/api/names.js';
import { ensureLua } from '../../hack/tools.js';
import type { KubeObject } from '../../src/kube/types.js';
import { applyBundle, BUNDLE_RESOURCE_TYPE, configMap, getBundle, waitForBundle, waitForReady } from './bundles.js';
import { conditionOf, createNamespace, waitFor } from './harness.js';
import { operatorFixture } from './operator.js';

const script = join(repoRoot(), 'docs', 'argocd', 'bundle-health.lua');
const f = operatorFixture('argocd');
let lua: string;

beforeAll(async () => {
  lua = await ensureLua();
});

/** A JSON value as a Lua expression (Lua 5.1 strings are bytes: no \u escapes, control bytes as \ddd). */
function luaLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  if (typeof value === 'boolean' || typeof value === 'number') return String(value);
  if (typeof value === 'string')
    return `"${[...Buffer.from(value, 'utf8')].map((b) => (b === 0x22 || b === 0x5c ? `\\${String.fromCharCode(b)}` : b < 0x20 || b === 0x7f ? `\\${b}` : String.fromCharCode(b))).join('')}"`;
  if (Array.isArray(value)) return `{${value.map(luaLiteral).join(', ')}}`;
  return `{${Object.entries(value as Record<string, unknown>)
    .map(([k, v]) => `[${luaLiteral(k)}] = ${luaLiteral(v)}`)
    .join(', ')}}`;
}

/** Runs the health check on `obj` as Argo CD would; returns hs. */
async function health(obj: KubeObject | undefined): Promise<{ status: string; message: string }> {
  if (!obj) throw new Error('no object');
  // Argo CD hands the script the object with JSON's types: the literal is built from the JSON the API server sent.
  const harness = `obj = ${luaLiteral(JSON.parse(JSON.stringify(obj)))}\nlocal hs = assert(loadfile(${luaLiteral(script)}))()\nio.write(hs.status, "\\n", hs.message or "")`;
  return await new Promise((resolve, reject) => {
    const child = execFile(lua, ['-'], (err, stdout, stderr) => {
      if (err) return reject(new Error(`lua5.1 failed: ${stderr}`));
      const [status = '', ...message] = stdout.split('\n');
      resolve({ status, message: message.join('\n') });
    });
    child.stdin?.end(harness);
  });
}

const deployment = (name: string): Record<string, unknown> => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image: 'registry.invalid/app:1' }] } },
  },
});

describe('the Argo CD health check for Bundles, under Lua 5.1', () => {
  it('Progressing: stored, not yet seen by an operator (status defaulted by the CRD)', async () => {
    const unwatched = await createNamespace(f.env, 'argocd-unseen');
    await applyBundle(f.env, unwatched, 'unseen', [{ name: 'c', object: configMap('c') }]);
    expect(await health(await getBundle(f.env, unwatched, 'unseen'))).toEqual({
      status: 'Progressing',
      message: 'Waiting for the operator to reconcile the Bundle',
    });
  });

  it('Healthy: Ready', async () => {
    await applyBundle(f.env, f.ns, 'ready', [{ name: 'c', object: configMap('ready-c') }]);
    expect(await health(await waitForReady(f.env, f.ns, 'ready'))).toEqual({ status: 'Healthy', message: '1/1 resources ready' });
  });

  it('Progressing: waiting for a resource', async () => {
    await applyBundle(f.env, f.ns, 'waiting', [{ name: 'web', object: deployment('waiting-web') }]);
    const waiting = await waitForBundle(f.env, f.ns, 'waiting', 'Reconciling', (b) => conditionOf(b, 'Reconciling')?.status === 'True');
    expect(await health(waiting)).toEqual({ status: 'Progressing', message: 'waiting for web' });
  });

  it('Progressing: a newer generation not yet observed', async () => {
    const ready = await waitForReady(f.env, f.ns, 'ready');
    const ahead = { ...ready, metadata: { ...ready.metadata, generation: (ready.metadata.generation ?? 1) + 1 } };
    expect((await health(ahead)).status).toBe('Progressing');
  });

  it('Degraded: stalled on an invalid spec', async () => {
    await applyBundle(f.env, f.ns, 'stalled', [{ name: 'c', references: [{ resource: 'missing' }], object: configMap('stalled-c') }]);
    const stalled = await waitForBundle(f.env, f.ns, 'stalled', 'Stalled', (b) => conditionOf(b, 'Stalled')?.status === 'True');
    const hs = await health(stalled);
    expect(hs.status).toBe('Degraded');
    expect(hs.message).toBe(conditionOf(stalled, 'Stalled')?.message);
    expect(hs.message).toMatch(/missing/);
  });

  it('Suspended: Ready, with an object whose deletion waits for an approval', async () => {
    const approve = { name: 'ap', object: configMap('susp-ap', {}, { [Annotations.deletionPolicy]: 'Approve' }) };
    const other = { name: 'other', object: configMap('susp-other') };
    await applyBundle(f.env, f.ns, 'approval', [approve, other]);
    await waitForReady(f.env, f.ns, 'approval');
    await applyBundle(f.env, f.ns, 'approval', [other]);
    const waiting = await waitForBundle(
      f.env,
      f.ns,
      'approval',
      'waiting for approval',
      (b) => (b.status as { awaitingApprovalCount?: number }).awaitingApprovalCount === 1,
    );
    expect(conditionOf(waiting, 'Ready')?.status).toBe('True');
    expect(await health(waiting)).toEqual({ status: 'Suspended', message: '1 object(s) wait for their deletion to be approved' });
  });

  it('Progressing: being deleted', async () => {
    // A finalizer of the test's own holds the Bundle in deletion long enough to read it.
    const finalizer = 'test.bundlesmith.dev/hold';
    await applyBundle(f.env, f.ns, 'leaving', [{ name: 'c', object: configMap('leaving-c') }]);
    await waitForReady(f.env, f.ns, 'leaving');
    const live = await f.env.client.get(BUNDLE_RESOURCE_TYPE, f.ns, 'leaving');
    await f.env.client.patch(
      BUNDLE_RESOURCE_TYPE,
      f.ns,
      'leaving',
      { metadata: { finalizers: [...(live.metadata.finalizers ?? []), finalizer] } },
      'merge',
      { fieldManager: 'test-user' },
    );
    await f.env.client.delete(BUNDLE_RESOURCE_TYPE, f.ns, 'leaving', { uid: live.metadata.uid });
    const leaving = await waitFor('the Bundle to be held by the test finalizer alone', async () => {
      const b = await getBundle(f.env, f.ns, 'leaving');
      return b?.metadata.finalizers?.length === 1 ? b : undefined;
    });
    expect(await health(leaving)).toEqual({ status: 'Progressing', message: 'Being deleted' });
    await f.env.client.patch(BUNDLE_RESOURCE_TYPE, f.ns, 'leaving', { metadata: { finalizers: [] } }, 'merge', {
      fieldManager: 'test-user',
    });
  });

  it('is the script docs/operations.md gives for argocd-cm, verbatim', () => {
    const docs = readFileSync(join(repoRoot(), 'docs', 'operations.md'), 'utf8');
    const indented = readFileSync(script, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => (l === '' ? '' : `    ${l}`))
      .join('\n');
    expect(docs).toContain(`resource.customizations.health.smith.atlassian.com_Bundle: |\n${indented}\n`);
  });
});
