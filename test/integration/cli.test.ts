/**
 * The `bundlesmith` CLI as a script would run it (a child process, exit codes
 * and output), against the real apiserver with an operator running.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '../../src/api/crd-paths.js';
import { Annotations, ApplySetLabels, Labels } from '../../src/api/names.js';
import type { KubeObject, ResourceType } from '../../src/kube/types.js';
import {
  conditionOf,
  bundlesmith,
  connect,
  createNamespace,
  resourceType,
  run,
  uniqueName,
  waitFor,
  waitForGone,
  type TestEnv,
} from './harness.js';
import { startOperator, type InProcessOperator } from './operator.js';

let env: TestEnv;
let ns: string;
let operator: InProcessOperator;
let bundles: ResourceType;
let configMaps: ResourceType;

beforeAll(async () => {
  env = await connect();
  ns = await createNamespace(env, 'cli');
  bundles = await resourceType(env, 'smith.atlassian.com/v1', 'Bundle');
  configMaps = await resourceType(env, 'v1', 'ConfigMap');
  operator = await startOperator({ namespace: ns });
});
afterAll(async () => {
  await operator.stop();
  env.close();
});

interface Res {
  name: string;
  cm: string;
  data?: Record<string, string>;
  delay?: string;
}

function bundleManifest(name: string, resources: Res[]): Record<string, unknown> {
  return {
    apiVersion: 'smith.atlassian.com/v1',
    kind: 'Bundle',
    metadata: { name, namespace: ns },
    spec: {
      resources: resources.map((r) => ({
        name: r.name,
        spec: {
          object: {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: r.cm, ...(r.delay ? { annotations: { [Annotations.deletionDelay]: r.delay } } : {}) },
            data: r.data ?? { v: '1' },
          },
        },
      })),
    },
  };
}

function writeManifest(manifest: Record<string, unknown>): string {
  const file = join(tmpdir(), `${uniqueName('bundle')}.json`);
  writeFileSync(file, JSON.stringify(manifest));
  return file;
}

async function apply(manifest: Record<string, unknown>): Promise<void> {
  const result = await run('kubectl', ['apply', '--server-side', '-f', '-'], { input: JSON.stringify(manifest) });
  if (result.code !== 0) throw new Error(result.stderr);
  const name = (manifest.metadata as { name: string }).name;
  await waitFor(`Bundle ${name} Ready and observed`, async () => {
    const live = await env.client.tryGet(bundles, ns, name);
    const observed = (live?.status as { observedGeneration?: number } | undefined)?.observedGeneration;
    return conditionOf(live, 'Ready')?.status === 'True' && observed === live?.metadata.generation;
  });
}

/** Applies without waiting for Ready: waits until the operator has observed this generation and reports `condition` True. */
async function applyExpecting(manifest: Record<string, unknown>, condition: 'Ready' | 'Error'): Promise<void> {
  const result = await run('kubectl', ['apply', '--server-side', '-f', '-'], { input: JSON.stringify(manifest) });
  if (result.code !== 0) throw new Error(result.stderr);
  const name = (manifest.metadata as { name: string }).name;
  await waitFor(`Bundle ${name} ${condition} and observed`, async () => {
    const live = await env.client.tryGet(bundles, ns, name);
    const observed = (live?.status as { observedGeneration?: number } | undefined)?.observedGeneration;
    return conditionOf(live, condition)?.status === 'True' && observed === live?.metadata.generation;
  });
}

interface DiffEntryJson {
  action: string;
  name: string;
  detail?: string;
  deleteAfter?: string;
  changes?: { path: string; old?: unknown; new?: unknown }[];
}

interface DiffJson {
  bundles: { exists: boolean; entries: DiffEntryJson[] }[];
}

async function diffEntries(manifest: Record<string, unknown>): Promise<{ code: number; byName: Record<string, DiffEntryJson> }> {
  const result = await bundlesmith(['diff', writeManifest(manifest), '-o', 'json']);
  const entries = (JSON.parse(result.stdout) as DiffJson).bundles[0]?.entries ?? [];
  return { code: result.code, byName: Object.fromEntries(entries.map((e) => [e.name, e])) };
}

/** The object is the same one (uid) and nobody is deleting it: no deletionTimestamp, no countdown stamp. */
async function expectKept(name: string, uid: string | undefined): Promise<KubeObject> {
  const now = await env.client.get(configMaps, ns, name);
  expect({
    uid: now.metadata.uid,
    deletionTimestamp: now.metadata.deletionTimestamp,
    stamp: now.metadata.annotations?.[Annotations.deletionTimestamp],
  }).toEqual({ uid, deletionTimestamp: undefined, stamp: undefined });
  return now;
}

async function stamped(name: string): Promise<string | undefined> {
  return (await env.client.tryGet(configMaps, ns, name))?.metadata.annotations?.[Annotations.deletionTimestamp];
}

describe('bundlesmith CLI', () => {
  it('exits 2 on a bad command line, saying what is wrong and where the usage is', async () => {
    for (const args of [['diff'], ['frobnicate'], ['cancel', 'not-a-ref', '-n', ns], ['pending', '--color']]) {
      const result = await bundlesmith(args);
      expect({ args, code: result.code }).toEqual({ args, code: 2 });
      expect(result.stderr).toMatch(/^error: /m);
      expect(result.stderr).toMatch(/^See 'bundlesmith( [a-z-]+)? --help' for usage\.$/m);
    }
  });

  it('validates the examples offline (exit 0) and pinpoints problems (exit 1)', async () => {
    const policies = join(repoRoot(), 'examples', 'deletion-policies');
    const policyFiles = readdirSync(policies)
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => join(policies, f));
    expect(policyFiles.length).toBeGreaterThanOrEqual(4);
    const ok = await bundlesmith([
      'validate',
      join(repoRoot(), 'examples', 'soft-delete.yaml'),
      join(repoRoot(), 'examples', 'configmap-secret-deployment.yaml'),
      ...policyFiles,
    ]);
    expect(ok).toMatchObject({ code: 0, stdout: '' });
    expect(ok.stderr).toContain(`${2 + policyFiles.length} Bundles valid, 0 problems`);
    const bad = writeManifest({
      apiVersion: 'smith.atlassian.com/v1',
      kind: 'Bundle',
      metadata: { name: 'b' },
      spec: {
        resources: [
          {
            name: 'a',
            references: [{ resource: 'nope' }],
            spec: { object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } } },
          },
        ],
      },
    });
    const result = await bundlesmith(['validate', bad]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      new RegExp(
        `^${bad}:1:\\d+: Bundle default/b: resource "a": references\\[0\\] refers to resource "nope", which is not in the Bundle`,
        'm',
      ),
    );
  });

  it('diffs a new Bundle, then changes, adoptions, deletions and soft deletions of a live one', async () => {
    const initial = [
      { name: 'keep', cm: 'diff-keep' },
      { name: 'edit', cm: 'diff-edit' },
      { name: 'drop', cm: 'diff-drop' },
      { name: 'soft', cm: 'diff-soft', delay: '1h' },
    ];
    const fresh = await bundlesmith(['diff', writeManifest(bundleManifest('diffed', initial))]);
    expect(fresh.code).toBe(1);
    expect(fresh.stdout).toContain(`Bundle ${ns}/diffed (would be created)`);
    expect(fresh.stdout).toMatch(/create\s+ConfigMap\/diff-soft/);
    expect(fresh.stderr).toContain('dry-run apply ConfigMap/diff-keep');
    expect(await env.client.tryGet(configMaps, ns, 'diff-keep')).toBeUndefined();

    await apply(bundleManifest('diffed', initial));
    // Applied: the same file changes nothing (exit 0), in text and as JSON.
    const same = await bundlesmith(['diff', writeManifest(bundleManifest('diffed', initial))]);
    expect(same).toMatchObject({ code: 0 });
    expect(same.stdout).toMatch(/unchanged\s+ConfigMap\/diff-keep/);
    expect((await diffEntries(bundleManifest('diffed', initial))).code).toBe(0);
    await env.client.create(configMaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'diff-orphan', namespace: ns },
      data: { v: '1' },
    });
    const next = bundleManifest('diffed', [
      { name: 'keep', cm: 'diff-keep' },
      { name: 'edit', cm: 'diff-edit', data: { v: '2' } },
      { name: 'orphan', cm: 'diff-orphan' },
    ]);
    const result = await bundlesmith(['diff', writeManifest(next), '-o', 'json']);
    expect(result.code).toBe(1);
    const entries = (JSON.parse(result.stdout) as DiffJson).bundles[0]?.entries ?? [];
    const byName = Object.fromEntries(entries.map((e) => [e.name, e]));
    expect(byName['diff-keep']?.action).toBe('unchanged');
    expect(byName['diff-edit']?.action).toBe('change');
    expect(byName['diff-edit']?.detail).toContain('data.v');
    expect(byName['diff-edit']?.changes).toContainEqual({ path: 'data.v', old: '1', new: '2' });
    const text = await bundlesmith(['diff', writeManifest(next)]);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/^\s+data\.v: "1" → "2"$/m);
    expect(byName['diff-orphan']?.action).toBe('adopt');
    expect(byName['diff-drop']?.action).toBe('delete');
    expect(byName['diff-soft']?.action).toBe('soft-delete');
    expect(byName['diff-soft']?.detail).toMatch(/^countdown starts now, deleted after \S+Z$/);
    // A dry run changes nothing.
    expect((await env.client.get(configMaps, ns, 'diff-edit')).data).toEqual({ v: '1' });
  });

  it("diff shows a Secret's changed value masked, never the value", async () => {
    // A ConfigMap that copies the password by a reference (once it does) is shown with the copy redacted.
    const secret = (pw: string, copy: boolean): Record<string, unknown> => ({
      apiVersion: 'smith.atlassian.com/v1',
      kind: 'Bundle',
      metadata: { name: 'masked', namespace: ns },
      spec: {
        resources: [
          {
            name: 's',
            spec: {
              object: {
                apiVersion: 'v1',
                kind: 'Secret',
                metadata: { name: 'masked-s', labels: { pw: 'label' } },
                data: { pw: Buffer.from(pw).toString('base64') },
              },
            },
          },
          {
            name: 'c',
            references: [{ name: 'pw', resource: 's', path: 'data.pw' }],
            spec: {
              object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'masked-c' }, data: copy ? { copy: '!{pw}' } : { v: '1' } },
            },
          },
        ],
      },
    });
    await apply(secret('old-password', false));
    const result = await bundlesmith(['diff', writeManifest(secret('new-password', false))]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^\s+data\.pw: \*\*\* \(before\) → \*\*\* \(after\)$/m);
    const copied = await bundlesmith(['diff', writeManifest(secret('old-password', true))]);
    expect(copied.code).toBe(1);
    expect(copied.stdout).toMatch(/^\s+data\.copy: \(none\) → "\[redacted\]"$/m);
    const json = await bundlesmith(['diff', writeManifest(secret('new-password', false)), '-o', 'json']);
    const copiedJson = await bundlesmith(['diff', writeManifest(secret('old-password', true)), '-o', 'json']);
    for (const text of [
      result.stdout,
      result.stderr,
      json.stdout,
      json.stderr,
      copied.stdout,
      copied.stderr,
      copiedJson.stdout,
      copiedJson.stderr,
    ]) {
      for (const value of ['old-password', 'new-password']) {
        expect(text).not.toContain(value);
        expect(text).not.toContain(Buffer.from(value).toString('base64'));
      }
    }
  });

  it('exits 2 when an object would be refused (another controller owns it)', async () => {
    const owner = await env.client.create(configMaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'someone', namespace: ns },
    });
    await env.client.create(configMaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'taken',
        namespace: ns,
        ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'someone', uid: owner.metadata.uid, controller: true }],
      },
    });
    const result = await bundlesmith(['diff', writeManifest(bundleManifest('refused', [{ name: 't', cm: 'taken' }]))]);
    expect(result.code).toBe(2);
    expect(result.stdout).toMatch(/refuse\s+ConfigMap\/taken: ConfigMap \S+ is controlled by ConfigMap someone/);
  });

  it('diff says hand-over for an object another Bundle dropped, and the operator hands it over (same object)', async () => {
    await apply(
      bundleManifest('giver', [
        { name: 'a', cm: 'ho-a' },
        { name: 'x', cm: 'ho-x', delay: '1h' },
      ]),
    );
    await apply(bundleManifest('giver', [{ name: 'a', cm: 'ho-a' }]));
    await waitFor('the stamp on ho-x', () => stamped('ho-x'));
    const before = await env.client.get(configMaps, ns, 'ho-x');

    const taker = bundleManifest('taker', [
      { name: 'b', cm: 'ho-b' },
      { name: 'x', cm: 'ho-x', delay: '1h' },
    ]);
    const diff = await diffEntries(taker);
    expect(diff.code).toBe(1);
    expect(diff.byName['ho-x']).toMatchObject({ action: 'hand-over' });
    expect(diff.byName['ho-x']?.detail).toContain('handed over from Bundle giver, which no longer lists it');
    expect(diff.byName['ho-x']?.detail).toContain('is cancelled');
    expect(diff.byName['ho-b']?.action).toBe('create');
    // The dry run changed nothing.
    await expect(stamped('ho-x')).resolves.toBeDefined();

    await apply(taker);
    const after = await expectKept('ho-x', before.metadata.uid);
    const taking = await env.client.get(bundles, ns, 'taker');
    expect(after.metadata.ownerReferences?.filter((r) => r.controller === true).map((r) => r.uid)).toEqual([taking.metadata.uid]);
  });

  it('diff says listed-elsewhere for an object a live Bundle lists, and the operator keeps it (same object)', async () => {
    await apply(
      bundleManifest('first', [
        { name: 'c', cm: 'le-c' },
        { name: 'z', cm: 'le-z' },
      ]),
    );
    const z = await env.client.get(configMaps, ns, 'le-z');
    // A newer Bundle lists it too: Conflict while the first still lists it.
    const second = bundleManifest('second', [
      { name: 'd', cm: 'le-d' },
      { name: 'z', cm: 'le-z' },
    ]);
    const refused = await diffEntries(second);
    expect(refused.code).toBe(2);
    expect(refused.byName['le-z']?.action).toBe('refuse');
    await applyExpecting(second, 'Error');

    const dropping = bundleManifest('first', [{ name: 'c', cm: 'le-c' }]);
    const diff = await diffEntries(dropping);
    // The Bundle's own list changes; nothing is written for le-z.
    expect(diff.code).toBe(1);
    expect(diff.byName['le-z']).toMatchObject({ action: 'listed-elsewhere' });
    expect(diff.byName['le-z']?.detail).toContain('Bundle second lists it');

    await apply(dropping);
    const secondUid = (await env.client.get(bundles, ns, 'second')).metadata.uid;
    await waitFor('le-z handed over to Bundle second', async () =>
      (await env.client.get(configMaps, ns, 'le-z')).metadata.ownerReferences?.some((r) => r.controller === true && r.uid === secondUid),
    );
    await expectKept('le-z', z.metadata.uid);
  });

  it('an invalid deletionDelay: diff says keep (exit 1), the operator keeps the object, pending says why a stamp without a delay is kept', async () => {
    // The operator refuses to apply an unreadable delay (a terminal Error on that resource), so the live object gets
    // one by hand, after its Bundle applied it: the annotation is not the operator's, and it stays.
    await apply(
      bundleManifest('baddelay', [
        { name: 'a', cm: 'bd-a' },
        { name: 'b', cm: 'bd-banana' },
        { name: 's', cm: 'bd-stamped', delay: '1h' },
      ]),
    );
    const banana = await env.client.patch(
      configMaps,
      ns,
      'bd-banana',
      { metadata: { annotations: { [Annotations.deletionDelay]: 'banana' } } },
      'merge',
    );
    const dropping = bundleManifest('baddelay', [
      { name: 'a', cm: 'bd-a' },
      { name: 's', cm: 'bd-stamped', delay: '1h' },
    ]);
    const diff = await diffEntries(dropping);
    expect(diff.code).toBe(2);
    expect(diff.byName['bd-banana']).toMatchObject({ action: 'keep' });
    expect(diff.byName['bd-banana']?.detail).toContain('"banana" is not a Go duration');

    await applyExpecting(dropping, 'Error');
    await expectKept('bd-banana', banana.metadata.uid);

    // A countdown whose delay was removed by hand: the operator keeps the object, and pending says so (no time).
    // Still Error: bd-banana's delay stays unreadable.
    await applyExpecting(bundleManifest('baddelay', [{ name: 'a', cm: 'bd-a' }]), 'Error');
    await waitFor('the stamp on bd-stamped', () => stamped('bd-stamped'));
    const stampedObject = await env.client.get(configMaps, ns, 'bd-stamped');
    await env.client.patch(
      configMaps,
      ns,
      'bd-stamped',
      [{ op: 'remove', path: `/metadata/annotations/${Annotations.deletionDelay.replace('/', '~1')}` }],
      'json',
    );
    await waitFor('the Bundle to report the missing delay', async () =>
      conditionOf(await env.client.get(bundles, ns, 'baddelay'), 'Error')?.message?.includes('bd-stamped is kept'),
    );
    const pending = await bundlesmith(['pending', '-n', ns, '-o', 'json']);
    expect(pending.code).toBe(0);
    const items = (
      JSON.parse(pending.stdout) as { items: { name: string; bundle: string; deleteAfter?: string; problem?: string }[] }
    ).items.filter((i) => i.name.startsWith('bd-'));
    expect(items.map((i) => [i.name, i.bundle, i.deleteAfter])).toEqual([['bd-stamped', 'baddelay', undefined]]);
    expect(items[0]?.problem).toContain('is missing');
    const again = await diffEntries(bundleManifest('baddelay', [{ name: 'a', cm: 'bd-a' }]));
    expect(again.byName['bd-stamped']?.action).toBe('keep');
    const kept = await env.client.get(configMaps, ns, 'bd-stamped');
    expect({ uid: kept.metadata.uid, deletionTimestamp: kept.metadata.deletionTimestamp }).toEqual({
      uid: stampedObject.metadata.uid,
      deletionTimestamp: undefined,
    });
  });

  it('lists a pending deletion and cancels it: the object is kept and left alone', async () => {
    await apply(
      bundleManifest('cancelme', [
        { name: 'a', cm: 'cancel-a' },
        { name: 'b', cm: 'cancel-b', delay: '1h' },
      ]),
    );
    await apply(bundleManifest('cancelme', [{ name: 'a', cm: 'cancel-a' }]));
    await waitFor('the stamp on cancel-b', () => stamped('cancel-b'));

    const pending = await bundlesmith(['pending', '-n', ns]);
    expect(pending.code).toBe(0);
    expect(pending.stdout).toMatch(/^NAMESPACE\s+OBJECT\s+BUNDLE\s+STATE\s+WAITING-FOR\s+DELETE-AFTER\s+DUE$/m);
    expect(pending.stdout).toMatch(new RegExp(`${ns}\\s+ConfigMap/cancel-b\\s+cancelme\\s+pending\\s+Delay\\s+\\S+Z\\s+in (59m|1h0m)`));
    expect(pending.stderr).toContain('scanning');

    const cancelled = await bundlesmith(['cancel', 'ConfigMap/cancel-b', '-n', ns]);
    expect(cancelled).toMatchObject({ code: 0 });
    expect(cancelled.stdout).toContain('re-apply the Bundle');
    const kept = await env.client.get(configMaps, ns, 'cancel-b');
    expect(kept.metadata.annotations?.[Annotations.deletionTimestamp]).toBeUndefined();
    expect(kept.metadata.ownerReferences ?? []).toEqual([]);
    // Let go, it is no member of the Bundle's ApplySet any more.
    expect(kept.metadata.labels?.[ApplySetLabels.partOf]).toBeUndefined();
    // The operator does not stamp it again: it is no longer the Bundle's.
    await waitFor('the Bundle to report no pending deletions', async () => {
      const live = await env.client.get(bundles, ns, 'cancelme');
      return ((live.status as { pendingDeletions?: unknown[] }).pendingDeletions ?? []).length === 0;
    });
    expect(await stamped('cancel-b')).toBeUndefined();

    const again = await bundlesmith(['cancel', 'configmap/cancel-b', '-n', ns]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('is not pending deletion');
  });

  it("cancel removes every reference the operator wrote (the Bundle's and the dependency references) and keeps the user's", async () => {
    const owner = await env.client.create(configMaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cancel-deps-owner', namespace: ns },
    });
    const userRef = { apiVersion: 'v1', kind: 'ConfigMap', name: 'cancel-deps-owner', uid: owner.metadata.uid ?? '' };
    const withDeps = (listWeb: boolean): Record<string, unknown> => ({
      apiVersion: 'smith.atlassian.com/v1',
      kind: 'Bundle',
      metadata: { name: 'canceldeps', namespace: ns },
      spec: {
        resources: [
          {
            name: 'cfg',
            spec: { object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cancel-deps-cfg' }, data: { v: '1' } } },
          },
          ...(listWeb
            ? [
                {
                  name: 'web',
                  references: [{ resource: 'cfg' }],
                  spec: {
                    object: {
                      apiVersion: 'v1',
                      kind: 'ConfigMap',
                      metadata: { name: 'cancel-deps-web', annotations: { [Annotations.deletionDelay]: '1h' }, ownerReferences: [userRef] },
                      data: { v: '1' },
                    },
                  },
                },
              ]
            : []),
        ],
      },
    });
    await apply(withDeps(true));
    const cfg = await env.client.get(configMaps, ns, 'cancel-deps-cfg');
    const web = await env.client.get(configMaps, ns, 'cancel-deps-web');
    expect(web.metadata.ownerReferences?.map((r) => r.uid)).toEqual(expect.arrayContaining([cfg.metadata.uid, owner.metadata.uid]));
    await apply(withDeps(false));
    await waitFor('the stamp on cancel-deps-web', () => stamped('cancel-deps-web'));

    const cancelled = await bundlesmith(['cancel', 'ConfigMap/cancel-deps-web', '-n', ns]);
    expect(cancelled).toMatchObject({ code: 0 });
    const kept = await env.client.get(configMaps, ns, 'cancel-deps-web');
    expect(kept.metadata.uid).toBe(web.metadata.uid);
    expect(kept.metadata.deletionTimestamp).toBeUndefined();
    expect(kept.metadata.annotations?.[Annotations.deletionTimestamp]).toBeUndefined();
    expect(kept.metadata.annotations?.[Annotations.dependencyReferences]).toBeUndefined();
    expect(kept.metadata.ownerReferences).toEqual([userRef]);
  });

  it('lists objects released by a deleted Bundle; delete-now deletes one, cancel keeps the other', async () => {
    await apply(
      bundleManifest('released', [
        { name: 'x', cm: 'rel-x', delay: '1h' },
        { name: 'y', cm: 'rel-y', delay: '1h' },
      ]),
    );
    await env.client.delete(bundles, ns, 'released', { uid: (await env.client.get(bundles, ns, 'released')).metadata.uid });
    await waitForGone(env, bundles, ns, 'released');
    await waitFor('released objects to be stamped', async () => (await stamped('rel-x')) && (await stamped('rel-y')));

    const pending = await bundlesmith(['pending', '-n', ns, '-o', 'json']);
    expect(pending.code).toBe(0);
    const items = (JSON.parse(pending.stdout) as { items: { name: string; state: string; bundle: string; deleteAfter?: string }[] }).items;
    expect(items.filter((i) => i.name.startsWith('rel-')).map((i) => [i.name, i.state, i.bundle, /Z$/.test(i.deleteAfter ?? '')])).toEqual([
      ['rel-x', 'released', 'released', true],
      ['rel-y', 'released', 'released', true],
    ]);

    const deleted = await bundlesmith(['delete-now', 'ConfigMap/rel-x', '-n', ns]);
    expect(deleted.code).toBe(0);
    expect(deleted.stdout).toContain('deleted: ConfigMap/rel-x');
    await waitForGone(env, configMaps, ns, 'rel-x');

    const cancelled = await bundlesmith(['cancel', 'ConfigMap/rel-y', '-n', ns]);
    expect(cancelled.code).toBe(0);
    expect(cancelled.stdout).toContain('re-apply a Bundle that lists it to adopt it');
    const kept = await env.client.get(configMaps, ns, 'rel-y');
    expect(kept.metadata.labels?.[Labels.formerBundle]).toBeUndefined();
    expect(kept.metadata.annotations?.[Annotations.deletionTimestamp]).toBeUndefined();

    const gone = await bundlesmith(['delete-now', 'ConfigMap/rel-x', '-n', ns]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('not found');
  });
});
