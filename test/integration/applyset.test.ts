/**
 * Issue 27, part 3: every Bundle is a KEP-3659 ApplySet parent and what it
 * holds are its members, on the real API server with the suite's kubectl
 * (KUBECTL_APPLYSET=true, kubectl's alpha switch). The labels describe;
 * they decide nothing: another set's prune never reaches a Bundle's
 * members, kubectl refuses to prune a Bundle's set (its tooling is
 * bundlesmith), and labels taken off by another tool change nothing the
 * operator deletes.
 */
import { mkdtempSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import {
  Annotations,
  APPLYSET_FIELD_MANAGER,
  APPLYSET_TOOLING,
  ApplySetAnnotations,
  ApplySetLabels,
  BUNDLE_RESOURCE,
} from '../../src/api/names.js';
import { applySetId } from '../../src/core/bundle/applyset.js';
import type { KubeObject } from '../../src/kube/types.js';
import { expectKept, resourceType, run, uidOf, waitFor, type RunResult } from './harness.js';
import {
  applyBundle,
  BUNDLE_RESOURCE_TYPE,
  bundleManifest,
  configMap,
  getBundle,
  waitForBundle,
  waitForReady,
  type ResourceFixture,
} from './bundles.js';
import { operatorFixture, startOperator } from './operator.js';

const f = operatorFixture('applyset');

const PART_OF = ApplySetLabels.partOf;

/** kubectl with its ApplySet alpha switch on. */
async function kubectlApplySet(args: string[], input?: string): Promise<RunResult> {
  return await run('kubectl', args, { env: { KUBECTL_APPLYSET: 'true' }, ...(input !== undefined ? { input } : {}) });
}

/** `kubectl get KINDS -l part-of=ID -o name`, sorted: what a person sees of the set. */
async function membersListed(kinds: string, id: string): Promise<string[]> {
  const r = await run('kubectl', ['get', kinds, '-n', f.ns, '-l', `${PART_OF}=${id}`, '-o', 'name']);
  expect(r.code).toBe(0);
  return r.stdout
    .split('\n')
    .filter((l) => l !== '')
    .sort();
}

const partOf = (o: KubeObject | undefined): string | undefined => o?.metadata.labels?.[PART_OF];
const secret = (name: string): Record<string, unknown> => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name },
  stringData: { a: 'b' },
});

async function waitForPartOf(name: string, what: string, check: (value: string | undefined) => boolean): Promise<KubeObject> {
  return await waitFor(`ConfigMap ${name}: ${what}`, async () => {
    const o = await f.env.client.tryGet(f.t.configMap, f.ns, name);
    return o !== undefined && check(partOf(o)) ? o : undefined;
  });
}

describe('the Bundle as an ApplySet parent', () => {
  it('marks the Bundle CRD an ApplySet parent type', async () => {
    const crd = await f.env.client.get(
      await resourceType(f.env, 'apiextensions.k8s.io/v1', 'CustomResourceDefinition'),
      undefined,
      BUNDLE_RESOURCE,
    );
    expect(crd.metadata.labels?.[ApplySetLabels.isParentType]).toBe('true');
  });

  it('carries the id, tooling and contains-group-kinds, owned by a field manager that owns nothing else; kubectl -l lists exactly its live members', async () => {
    await applyBundle(f.env, f.ns, 'web', [
      { name: 'config', object: configMap('web-config') },
      { name: 'creds', object: secret('web-creds') },
    ]);
    const b = await waitForReady(f.env, f.ns, 'web');
    const id = applySetId('web', f.ns);
    expect(b.metadata.labels?.[ApplySetLabels.id]).toBe(id);
    expect(b.metadata.annotations?.[ApplySetAnnotations.tooling]).toBe(APPLYSET_TOOLING);
    expect(b.metadata.annotations?.[ApplySetAnnotations.containsGroupKinds]).toBe('ConfigMap,Secret');
    const entries = (b.metadata.managedFields ?? []) as {
      manager?: string;
      operation?: string;
      fieldsV1?: { 'f:metadata'?: Record<string, unknown> } & Record<string, unknown>;
    }[];
    const ours = entries.filter((e) => e.manager === APPLYSET_FIELD_MANAGER);
    expect(ours).toHaveLength(1);
    expect(ours[0]?.operation).toBe('Apply');
    expect(Object.keys(ours[0]?.fieldsV1 ?? {})).toEqual(['f:metadata']);
    expect(ours[0]?.fieldsV1?.['f:metadata']).toEqual({
      'f:labels': { [`f:${ApplySetLabels.id}`]: {} },
      'f:annotations': { [`f:${ApplySetAnnotations.tooling}`]: {}, [`f:${ApplySetAnnotations.containsGroupKinds}`]: {} },
    });
    // The user's apply still owns the spec, alone.
    expect(entries.find((e) => e.manager === 'test-user')?.fieldsV1).toHaveProperty('f:spec');

    // A ConfigMap outside the Bundle, beside its members, is not listed.
    await f.env.client.create(f.t.configMap, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web-bystander', namespace: f.ns } });
    expect(await membersListed('configmaps,secrets', id)).toEqual(['configmap/web-config', 'secret/web-creds']);

    // A new kind is in contains-group-kinds (and status.managedKinds) before the first object of it is written.
    await applyBundle(f.env, f.ns, 'web', [
      { name: 'config', object: configMap('web-config') },
      { name: 'creds', object: secret('web-creds') },
      { name: 'svc', object: { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web-svc' }, spec: { ports: [{ port: 80 }] } } },
    ]);
    const grown = await waitForReady(f.env, f.ns, 'web');
    expect(grown.metadata.annotations?.[ApplySetAnnotations.containsGroupKinds]).toBe('ConfigMap,Secret,Service');
    expect(await membersListed('configmaps,secrets,services', id)).toEqual(['configmap/web-config', 'secret/web-creds', 'service/web-svc']);
  });

  it('keeps the label on a member counting down (still the Bundle’s), takes it off an Orphan one at its release, and puts it back when listed again', async () => {
    const delayed = configMap('mv-delayed', { a: 'b' }, { [Annotations.deletionDelay]: '1h' });
    const orphan = configMap('mv-orphan', { a: 'b' }, { [Annotations.deletionPolicy]: 'Orphan' });
    const all: ResourceFixture[] = [
      { name: 'stay', object: configMap('mv-stay') },
      { name: 'delayed', object: delayed },
      { name: 'orphan', object: orphan },
    ];
    await applyBundle(f.env, f.ns, 'moves', all);
    await waitForReady(f.env, f.ns, 'moves');
    const id = applySetId('moves', f.ns);
    const uids = {
      delayed: await uidOf(f.env, f.t.configMap, f.ns, 'mv-delayed'),
      orphan: await uidOf(f.env, f.t.configMap, f.ns, 'mv-orphan'),
    };
    expect(await membersListed('configmaps', id)).toEqual(['configmap/mv-delayed', 'configmap/mv-orphan', 'configmap/mv-stay']);

    await applyBundle(f.env, f.ns, 'moves', [{ name: 'stay', object: configMap('mv-stay') }]);
    await waitForBundle(
      f.env,
      f.ns,
      'moves',
      'one pending deletion',
      (b) => (b.status as { pendingDeletionCount?: number }).pendingDeletionCount === 1,
    );
    const released = await waitFor('the Orphan object to be released', async () => {
      const o = await f.env.client.get(f.t.configMap, f.ns, 'mv-orphan');
      return (o.metadata.ownerReferences ?? []).length === 0 ? o : undefined;
    });
    expectKept(released, uids.orphan);
    expect(partOf(released)).toBeUndefined();
    const counting = await f.env.client.get(f.t.configMap, f.ns, 'mv-delayed');
    expectKept(counting, uids.delayed);
    expect(counting.metadata.annotations?.[Annotations.deletionTimestamp]).toBeDefined();
    expect(partOf(counting)).toBe(id);
    expect(await membersListed('configmaps', id)).toEqual(['configmap/mv-delayed', 'configmap/mv-stay']);

    // Listed again: the countdown is cancelled, the released object adopted, both members again (same UIDs).
    await applyBundle(f.env, f.ns, 'moves', all);
    await waitForReady(f.env, f.ns, 'moves');
    await waitForPartOf('mv-orphan', 'a member again', (v) => v === id);
    expectKept(await f.env.client.get(f.t.configMap, f.ns, 'mv-orphan'), uids.orphan);
    expectKept(await f.env.client.get(f.t.configMap, f.ns, 'mv-delayed'), uids.delayed);
    expect(await membersListed('configmaps', id)).toEqual(['configmap/mv-delayed', 'configmap/mv-orphan', 'configmap/mv-stay']);
  });

  it('moves the label with a member handed to another Bundle; a Bundle deleted releases its Orphan member without it', async () => {
    const delayed = configMap('ho-moving', { a: 'b' }, { [Annotations.deletionDelay]: '1h' });
    const orphan = configMap('ho-kept', { a: 'b' }, { [Annotations.deletionPolicy]: 'Orphan' });
    await applyBundle(f.env, f.ns, 'giver', [
      { name: 'moving', object: delayed },
      { name: 'kept', object: orphan },
    ]);
    await waitForReady(f.env, f.ns, 'giver');
    const uids = { moving: await uidOf(f.env, f.t.configMap, f.ns, 'ho-moving'), kept: await uidOf(f.env, f.t.configMap, f.ns, 'ho-kept') };
    await applyBundle(f.env, f.ns, 'giver', [{ name: 'kept', object: orphan }]);
    await waitForBundle(
      f.env,
      f.ns,
      'giver',
      'one pending deletion',
      (b) => (b.status as { pendingDeletionCount?: number }).pendingDeletionCount === 1,
    );
    await applyBundle(f.env, f.ns, 'taker', [{ name: 'moving', object: delayed }]);
    await waitForReady(f.env, f.ns, 'taker');
    const moved = await waitForPartOf('ho-moving', "the taker's", (v) => v === applySetId('taker', f.ns));
    expectKept(moved, uids.moving);
    expect(await membersListed('configmaps', applySetId('giver', f.ns))).toEqual(['configmap/ho-kept']);
    expect(await membersListed('configmaps', applySetId('taker', f.ns))).toEqual(['configmap/ho-moving']);

    expect((await run('kubectl', ['delete', 'bundle', 'giver', '-n', f.ns, '--wait=false'])).code).toBe(0);
    await waitFor('the giver to be gone', async () => (await getBundle(f.env, f.ns, 'giver')) === undefined, { timeoutMs: 60_000 });
    const kept = await f.env.client.get(f.t.configMap, f.ns, 'ho-kept');
    expectKept(kept, uids.kept);
    expect(partOf(kept)).toBeUndefined();
    expect(await membersListed('configmaps', applySetId('giver', f.ns))).toEqual([]);
  });
});

describe('a Bundle deleted with orphan propagation', () => {
  it('lets its members go without the part-of label (same UID, no owner)', async () => {
    await applyBundle(f.env, f.ns, 'orphaning', [{ name: 'one', object: configMap('orph-one') }]);
    await waitForReady(f.env, f.ns, 'orphaning');
    const uid = await uidOf(f.env, f.t.configMap, f.ns, 'orph-one');
    expect((await run('kubectl', ['delete', 'bundle', 'orphaning', '-n', f.ns, '--cascade=orphan', '--wait=false'])).code).toBe(0);
    const letGo = await waitFor('orph-one to be let go', async () => {
      const o = await f.env.client.get(f.t.configMap, f.ns, 'orph-one');
      return (o.metadata.ownerReferences ?? []).length === 0 ? o : undefined;
    });
    expectKept(letGo, uid);
    expect(partOf(letGo)).toBeUndefined();
  });
});

describe("kubectl's prune and a Bundle's set", () => {
  it('kubectl apply --prune --applyset of another set prunes its own member and never touches a Bundle’s', async () => {
    await applyBundle(f.env, f.ns, 'held', [
      { name: 'a', object: configMap('held-a') },
      { name: 'b', object: configMap('held-b') },
    ]);
    await waitForReady(f.env, f.ns, 'held');
    const held = { a: await uidOf(f.env, f.t.configMap, f.ns, 'held-a'), b: await uidOf(f.env, f.t.configMap, f.ns, 'held-b') };
    const doc = (...names: string[]): string =>
      names.map((n) => stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: n }, data: { k: 'v' } })).join('---\n');

    const first = await kubectlApplySet(['apply', '-n', f.ns, '--prune', '--applyset=kubectl-set', '-f', '-'], doc('kset-1', 'kset-2'));
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const second = await kubectlApplySet(['apply', '-n', f.ns, '--prune', '--applyset=kubectl-set', '-f', '-'], doc('kset-1'));
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('configmap/kset-2 pruned');
    expect(await f.env.client.tryGet(f.t.configMap, f.ns, 'kset-2')).toBeUndefined();

    expectKept(await f.env.client.tryGet(f.t.configMap, f.ns, 'held-a'), held.a);
    expectKept(await f.env.client.tryGet(f.t.configMap, f.ns, 'held-b'), held.b);
    expect(second.stdout).not.toContain('held-');
    // Even a set whose contains-group-kinds names ConfigMap, pruning everything, lists by its own id only.
    const empty = await kubectlApplySet(
      ['apply', '-n', f.ns, '--prune', '--applyset=kubectl-set', '-f', '-'],
      doc('kset-1').replace('kset-1', 'kset-3'),
    );
    expect(empty.code).toBe(0);
    expectKept(await f.env.client.tryGet(f.t.configMap, f.ns, 'held-a'), held.a);
    expectKept(await f.env.client.tryGet(f.t.configMap, f.ns, 'held-b'), held.b);
  });

  it('kubectl apply --prune --applyset=bundles.smith.atlassian.com/NAME is refused (tooling bundlesmith), deleting and writing nothing', async () => {
    const before = await getBundle(f.env, f.ns, 'held');
    const uids = { a: await uidOf(f.env, f.t.configMap, f.ns, 'held-a'), b: await uidOf(f.env, f.t.configMap, f.ns, 'held-b') };
    const doc = stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'held-intruder' }, data: { k: 'v' } });

    const r = await kubectlApplySet(['apply', '-n', f.ns, '--prune', `--applyset=${BUNDLE_RESOURCE}/held`, '-f', '-'], doc);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(
      `ApplySet parent object "${BUNDLE_RESOURCE}/held" already exists and is managed by tooling "bundlesmith" instead of "kubectl"`,
    );
    expect(r.stdout).not.toContain('pruned');

    expectKept(await f.env.client.tryGet(f.t.configMap, f.ns, 'held-a'), uids.a);
    expectKept(await f.env.client.tryGet(f.t.configMap, f.ns, 'held-b'), uids.b);
    expect(await f.env.client.tryGet(f.t.configMap, f.ns, 'held-intruder')).toBeUndefined();
    const after = await getBundle(f.env, f.ns, 'held');
    expect(after?.metadata.labels).toEqual(before?.metadata.labels);
    expect(after?.metadata.annotations).toEqual(before?.metadata.annotations);
  });
});

describe('the labels decide nothing', () => {
  /**
   * One scenario, run on two Bundles: a resource leaves (it is deleted), then
   * the Bundle is deleted (its objects go). On `stripped`, every ApplySet
   * label is taken off the members and the Bundle while the operator is
   * stopped, right before each step, so that the pass deciding it sees none.
   */
  it('a member and a Bundle without their labels are pruned and deleted exactly as with them', async () => {
    const resources = (prefix: string, withGone: boolean): ResourceFixture[] => [
      { name: 'stay', object: configMap(`${prefix}-stay`) },
      { name: 'orphan', object: configMap(`${prefix}-orphan`, { a: 'b' }, { [Annotations.deletionPolicy]: 'Orphan' }) },
      ...(withGone ? [{ name: 'gone', object: configMap(`${prefix}-gone`) }] : []),
    ];
    for (const name of ['intact', 'stripped']) await applyBundle(f.env, f.ns, name, resources(name, true));
    for (const name of ['intact', 'stripped']) await waitForReady(f.env, f.ns, name);
    const uidsOf = async (prefix: string): Promise<{ stay: string; orphan: string }> => ({
      stay: await uidOf(f.env, f.t.configMap, f.ns, `${prefix}-stay`),
      orphan: await uidOf(f.env, f.t.configMap, f.ns, `${prefix}-orphan`),
    });
    const uids = new Map([
      ['intact', await uidsOf('intact')],
      ['stripped', await uidsOf('stripped')],
    ]);
    const uidsFor = (name: string): { stay: string; orphan: string } => uids.get(name) ?? { stay: 'unknown', orphan: 'unknown' };

    const strip = async (): Promise<void> => {
      for (const n of ['stay', 'orphan', 'gone']) {
        if (await f.env.client.tryGet(f.t.configMap, f.ns, `stripped-${n}`))
          expect((await run('kubectl', ['label', 'configmap', `stripped-${n}`, '-n', f.ns, `${PART_OF}-`])).code).toBe(0);
      }
      expect((await run('kubectl', ['label', 'bundle', 'stripped', '-n', f.ns, `${ApplySetLabels.id}-`])).code).toBe(0);
      expect(
        (
          await run('kubectl', [
            'annotate',
            'bundle',
            'stripped',
            '-n',
            f.ns,
            `${ApplySetAnnotations.tooling}-`,
            `${ApplySetAnnotations.containsGroupKinds}-`,
          ])
        ).code,
      ).toBe(0);
    };

    // 1. A resource leaves each Bundle, decided by a pass that sees the stripped labels.
    await f.op.stop();
    await strip();
    const stripped = await getBundle(f.env, f.ns, 'stripped');
    expect(stripped?.metadata.labels?.[ApplySetLabels.id]).toBeUndefined();
    for (const name of ['intact', 'stripped']) await applyBundle(f.env, f.ns, name, resources(name, false));
    f.op = await startOperator({ namespace: f.ns });
    for (const name of ['intact', 'stripped']) {
      await waitFor(
        `${name}-gone to be pruned`,
        async () => (await f.env.client.tryGet(f.t.configMap, f.ns, `${name}-gone`)) === undefined,
      );
      await waitForReady(f.env, f.ns, name);
      expectKept(await f.env.client.tryGet(f.t.configMap, f.ns, `${name}-stay`), uidsFor(name).stay);
      expectKept(await f.env.client.tryGet(f.t.configMap, f.ns, `${name}-orphan`), uidsFor(name).orphan);
    }
    // The operator put its labels back (drift), as it does any field of its apply.
    await waitForPartOf('stripped-stay', 'labelled again', (v) => v === applySetId('stripped', f.ns));
    await waitForBundle(
      f.env,
      f.ns,
      'stripped',
      'the id label back',
      (b) => b.metadata.labels?.[ApplySetLabels.id] === applySetId('stripped', f.ns),
    );

    // 2. Each Bundle is deleted, its finalizer deciding on a Bundle and members without labels.
    await f.op.stop();
    await strip();
    for (const name of ['intact', 'stripped'])
      expect((await run('kubectl', ['delete', 'bundle', name, '-n', f.ns, '--wait=false'])).code).toBe(0);
    f.op = await startOperator({ namespace: f.ns });
    for (const name of ['intact', 'stripped']) {
      await waitFor(`${name} to be gone`, async () => (await getBundle(f.env, f.ns, name)) === undefined, { timeoutMs: 60_000 });
      await waitFor(
        `${name}-stay to be deleted`,
        async () => (await f.env.client.tryGet(f.t.configMap, f.ns, `${name}-stay`)) === undefined,
      );
      const kept = await f.env.client.tryGet(f.t.configMap, f.ns, `${name}-orphan`);
      expectKept(kept, uidsFor(name).orphan);
      expect(kept?.metadata.ownerReferences ?? []).toEqual([]);
      expect(partOf(kept)).toBeUndefined();
    }
  }, 180_000);
});

describe('limits and other writers of the Bundle', () => {
  it('a Bundle named with 253 characters has a 55-character id on itself and its members', async () => {
    const name = `long-${'a'.repeat(120)}.${'b'.repeat(127)}`;
    expect(name).toHaveLength(253);
    await applyBundle(f.env, f.ns, name, [{ name: 'one', object: configMap('long-one') }]);
    const b = await waitForReady(f.env, f.ns, name);
    const id = applySetId(name, f.ns);
    expect(id).toHaveLength(55);
    expect(b.metadata.labels?.[ApplySetLabels.id]).toBe(id);
    expect(await membersListed('configmaps', id)).toEqual(['configmap/long-one']);
  });

  it('a Bundle installed by Helm and upgraded keeps its Helm metadata and its ApplySet metadata, and keeps working', async () => {
    const chart = mkdtempSync(join(tmpdir(), 'applyset-chart-'));
    mkdirSync(join(chart, 'templates'));
    writeFileSync(join(chart, 'Chart.yaml'), stringify({ apiVersion: 'v2', name: 'bundled', version: '0.1.0' }));
    writeFileSync(join(chart, 'values.yaml'), stringify({ extra: false }));
    const manifest = bundleManifest(f.ns, 'helmed', [{ name: 'base', object: configMap('helmed-base') }]) as {
      metadata: Record<string, unknown>;
      spec: { resources: unknown[] };
    };
    const extra = { name: 'extra', spec: { object: configMap('helmed-extra') } };
    const template = `${stringify({ ...manifest, metadata: { name: 'helmed', labels: { team: 'a' } } })}{{- if .Values.extra }}\n${stringify([extra]).replace(/^/gm, '    ')}{{- end }}\n`;
    writeFileSync(join(chart, 'templates', 'bundle.yaml'), template);

    const install = await run('helm', ['install', 'bundled', chart, '-n', f.ns]);
    expect(install.stderr).toBe('');
    expect(install.code).toBe(0);
    const installed = await waitForReady(f.env, f.ns, 'helmed');
    expect(installed.metadata.labels?.[ApplySetLabels.id]).toBe(applySetId('helmed', f.ns));
    expect(installed.metadata.labels?.['app.kubernetes.io/managed-by']).toBe('Helm');

    const upgrade = await run('helm', ['upgrade', 'bundled', chart, '-n', f.ns, '--set', 'extra=true']);
    expect(upgrade.code).toBe(0);
    const upgraded = await waitForBundle(
      f.env,
      f.ns,
      'helmed',
      'Ready with 2 resources',
      (b) => (b.status as { resourcesReady?: string }).resourcesReady === '2/2',
    );
    expect(upgraded.metadata.labels).toEqual(
      expect.objectContaining({ team: 'a', 'app.kubernetes.io/managed-by': 'Helm', [ApplySetLabels.id]: applySetId('helmed', f.ns) }),
    );
    expect(upgraded.metadata.annotations).toEqual(
      expect.objectContaining({
        'meta.helm.sh/release-name': 'bundled',
        [ApplySetAnnotations.tooling]: APPLYSET_TOOLING,
        [ApplySetAnnotations.containsGroupKinds]: 'ConfigMap',
      }),
    );
    expect(await membersListed('configmaps', applySetId('helmed', f.ns))).toEqual(['configmap/helmed-base', 'configmap/helmed-extra']);
    expect((await run('helm', ['uninstall', 'bundled', '-n', f.ns, '--wait'])).code).toBe(0);
    await waitFor(
      'the Helm Bundle to be gone',
      async () => (await f.env.client.tryGet(BUNDLE_RESOURCE_TYPE, f.ns, 'helmed')) === undefined,
      { timeoutMs: 60_000 },
    );
  }, 120_000);
});
