/**
 * The one guarded write (src/kube/guarded-write.ts): its classification of
 * every answer and its read-fresh-decide-again retry, against the Bundle
 * controller's in-memory API double (preconditions answer 409, a failed JSON
 * patch test 422 with the apiserver's unapplicable-patch cause).
 */
import { describe, expect, it } from '@jest/globals';
import { KubeApiError, SendRefused } from '../../../src/kube/errors.js';
import { classifyWriteError, guardedDelete, guardedPatch, type Redecide } from '../../../src/kube/guarded-write.js';
import type { DeleteOptions } from '../../../src/kube/requests.js';
import type { KubeObject } from '../../../src/kube/types.js';
import { CONFIGMAPS, FakeBundleApi } from '../bundle/fake-bundle-api.js';

const at = { rt: CONFIGMAPS, namespace: 'ns1', name: 'a' };

function setup(): { api: FakeBundleApi; obj: KubeObject } {
  const api = new FakeBundleApi();
  const obj = api.put({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'a', namespace: 'ns1', uid: 'uid-a', resourceVersion: '5' },
  });
  return { api, obj };
}

/** Re-decision of a delete: the fresh object's uid and resourceVersion, or nothing when it is gone or another incarnation. */
const freshDelete = (api: FakeBundleApi, retries: number, extra: Partial<Redecide<DeleteOptions>> = {}): Redecide<DeleteOptions> => ({
  retries,
  read: () => api.tryGet(CONFIGMAPS, 'ns1', 'a'),
  decide: (fresh) =>
    fresh && fresh.metadata.uid === 'uid-a' ? { uid: 'uid-a', resourceVersion: fresh.metadata.resourceVersion } : undefined,
  ...extra,
});

const err = (code: number, causes: { field?: string; reason?: string; message?: string }[] = []) =>
  new KubeApiError(code, `HTTP${code}`, `answer ${code}`, 'DELETE', '/x', causes);
const failedTest = () => err(422, [{ reason: 'UnexpectedServerResponse', message: 'testing value /metadata/resourceVersion failed' }]);
const fieldInvalid = () => err(422, [{ field: 'metadata.labels', reason: 'FieldValueInvalid', message: 'too long' }]);

describe('classifyWriteError', () => {
  it.each([
    ['a send guard refusal', new SendRefused('the Bundle changed', 'DELETE', '/x'), 'conflict', 'refused'],
    ['404', err(404), 'conflict', 'gone'],
    ['409', err(409), 'conflict', 'stale'],
    ['409 (patch rule)', err(409), 'conflict-or-failed-test', 'stale'],
    ['a failed JSON patch test (422, no field cause), patch rule', failedTest(), 'conflict-or-failed-test', 'stale'],
    ['a bare 422 (v1.36: no causes at all), patch rule', err(422), 'conflict-or-failed-test', 'stale'],
    ['a 422 with no field cause, on the precise DELETE rule: neither stale nor invalid', failedTest(), 'conflict', 'failed'],
    ['a 422 naming a field', fieldInvalid(), 'conflict-or-failed-test', 'invalid'],
    ['a 422 naming a field (DELETE rule)', fieldInvalid(), 'conflict', 'invalid'],
    ['403', err(403), 'conflict', 'forbidden'],
    ['400', err(400), 'conflict-or-failed-test', 'failed'],
    ['500', err(500), 'conflict', 'failed'],
    ['a network error', new Error('ECONNRESET'), 'conflict', 'failed'],
  ] as const)('%s', (_name, error, rule, kind) => {
    const outcome = classifyWriteError(error, rule);
    expect(outcome.kind).toBe(kind);
    expect(outcome.error).toBe(error);
  });
});

describe('guardedDelete', () => {
  it('sends the options as given and answers written', async () => {
    const { api } = setup();
    const outcome = await guardedDelete(api, at, { opts: { uid: 'uid-a', resourceVersion: '5', propagationPolicy: 'Background' } });
    expect(outcome).toEqual({ kind: 'written', result: 'deleted', sends: 1 });
    expect(api.callsOf('delete')).toEqual([{ verb: 'delete', what: 'ConfigMap ns1/a', detail: { uid: 'uid-a', resourceVersion: '5' } }]);
  });

  it('never sends a DELETE without a UID precondition: failed, nothing deleted', async () => {
    const { api } = setup();
    const outcome = await guardedDelete(api, at, { opts: { uid: '' } });
    expect(outcome.kind).toBe('failed');
    expect(api.callsOf('delete')).toEqual([]);
    expect(await api.tryGet(CONFIGMAPS, 'ns1', 'a')).toBeDefined();
  });

  it("a DELETE answered 'not-found' is gone, without an error", async () => {
    const api = new FakeBundleApi();
    expect(await guardedDelete(api, at, { opts: { uid: 'uid-a' } })).toEqual({ kind: 'gone', sends: 1 });
  });

  it('a 409 without a re-decision is stale after one send', async () => {
    const { api } = setup();
    const outcome = await guardedDelete(api, at, { opts: { uid: 'uid-a', resourceVersion: '4' } });
    expect(outcome.kind).toBe('stale');
    expect(outcome.sends).toBe(1);
    expect(api.log()).toEqual(['delete ConfigMap ns1/a']);
  });

  it('a 409 reads fresh, decides again and sends the new preconditions', async () => {
    const { api } = setup();
    const outcome = await guardedDelete(api, at, { opts: { uid: 'uid-a', resourceVersion: '4' }, redecide: freshDelete(api, 1) });
    expect(outcome).toEqual({ kind: 'written', result: 'deleted', sends: 2 });
    expect(api.log()).toEqual(['delete ConfigMap ns1/a', 'get ConfigMap ns1/a', 'delete ConfigMap ns1/a']);
    expect(api.callsOf('delete').map((c) => c.detail)).toEqual([
      { uid: 'uid-a', resourceVersion: '4' },
      { uid: 'uid-a', resourceVersion: '5' },
    ]);
  });

  it('retries at most `retries` times, then is stale', async () => {
    const { api } = setup();
    for (let i = 0; i < 5; i++) api.failNext('delete', err(409));
    const outcome = await guardedDelete(api, at, { opts: { uid: 'uid-a', resourceVersion: '5' }, redecide: freshDelete(api, 3) });
    expect(outcome.kind).toBe('stale');
    expect(outcome.sends).toBe(4);
    expect(api.callsOf('delete')).toHaveLength(4);
    expect(api.callsOf('get')).toHaveLength(3);
  });

  it('a re-decision that says no ends declined: nothing more is sent', async () => {
    const { api } = setup();
    const outcome = await guardedDelete(api, at, {
      opts: { uid: 'uid-a', resourceVersion: '4' },
      redecide: freshDelete(api, 1, { decide: () => undefined }),
    });
    expect(outcome).toEqual({ kind: 'declined', sends: 1 });
    expect(api.log()).toEqual(['delete ConfigMap ns1/a', 'get ConfigMap ns1/a']);
  });

  it('readFirst decides on a fresh read before the first send; n counts the reads', async () => {
    const { api } = setup();
    const reads: number[] = [];
    const redecide = freshDelete(api, 1, { readFirst: true, read: (n) => (reads.push(n), api.tryGet(CONFIGMAPS, 'ns1', 'a')) });
    api.failNext('delete', err(409));
    const outcome = await guardedDelete(api, at, { redecide });
    expect(outcome).toEqual({ kind: 'written', result: 'deleted', sends: 2 });
    expect(reads).toEqual([0, 1]);
    expect(api.log()).toEqual(['get ConfigMap ns1/a', 'delete ConfigMap ns1/a', 'get ConfigMap ns1/a', 'delete ConfigMap ns1/a']);
  });

  it('readFirst on an object gone or replaced: declined with nothing sent', async () => {
    const api = new FakeBundleApi();
    expect(await guardedDelete(api, at, { redecide: freshDelete(api, 1, { readFirst: true }) })).toEqual({ kind: 'declined', sends: 0 });
    expect(api.callsOf('delete')).toHaveLength(0);
  });

  it.each([
    ['forbidden', err(403)],
    ['invalid', fieldInvalid()],
    ['refused', new SendRefused('lease lost', 'DELETE', '/x')],
    ['failed', err(500)],
  ] as const)('%s is never retried, whatever retries are left', async (kind, error) => {
    const { api } = setup();
    api.failNext('delete', error);
    const outcome = await guardedDelete(api, at, { opts: { uid: 'uid-a' }, redecide: freshDelete(api, 3) });
    expect(outcome).toEqual({ kind, error, sends: 1 });
    expect(api.log()).toEqual(['delete ConfigMap ns1/a']);
  });

  it("a 422 with no field cause is stale only on the caller's say ('conflict-or-failed-test')", async () => {
    const { api } = setup();
    api.failNext('delete', failedTest());
    expect((await guardedDelete(api, at, { opts: { uid: 'uid-a' }, redecide: freshDelete(api, 1) })).kind).toBe('failed');
    api.failNext('delete', failedTest());
    expect(
      await guardedDelete(api, at, { opts: { uid: 'uid-a' }, stale: 'conflict-or-failed-test', redecide: freshDelete(api, 1) }),
    ).toEqual({ kind: 'written', result: 'deleted', sends: 2 });
  });

  it('an error of the fresh read is thrown as it is', async () => {
    const { api } = setup();
    const boom = err(403);
    api.failNext('get', boom);
    await expect(guardedDelete(api, at, { opts: { uid: 'uid-a', resourceVersion: '4' }, redecide: freshDelete(api, 1) })).rejects.toBe(
      boom,
    );
  });

  it('a gone object after a 409: the re-decision sees undefined', async () => {
    const { api } = setup();
    api.failNext('delete', err(409));
    const seen: (KubeObject | undefined)[] = [];
    const outcome = await guardedDelete(api, at, {
      opts: { uid: 'uid-a' },
      redecide: {
        retries: 1,
        read: () => (api.objects.clear(), api.tryGet(CONFIGMAPS, 'ns1', 'a')),
        decide: (fresh) => (seen.push(fresh), undefined),
      },
    });
    expect(outcome).toEqual({ kind: 'declined', sends: 1 });
    expect(seen).toEqual([undefined]);
  });
});

describe('guardedPatch', () => {
  const testRv = (rv: string) => [
    { op: 'test', path: '/metadata/resourceVersion', value: rv },
    { op: 'add', path: '/metadata/labels', value: { x: 'y' } },
  ];

  it('a failed JSON patch test is stale; with a re-decision the recomputed patch goes', async () => {
    const { api } = setup();
    const outcome = await guardedPatch(api, at, {
      patch: testRv('4'),
      type: 'json',
      redecide: {
        retries: 1,
        read: () => api.tryGet(CONFIGMAPS, 'ns1', 'a'),
        decide: (fresh) => (fresh ? testRv(fresh.metadata.resourceVersion) : undefined),
      },
    });
    expect(outcome.kind).toBe('written');
    expect(outcome.sends).toBe(2);
    expect(api.find('ConfigMap', 'a')?.metadata.labels).toEqual({ x: 'y' });
  });

  it('without a re-decision a failed test is stale after one send', async () => {
    const { api } = setup();
    const outcome = await guardedPatch(api, at, { patch: testRv('4'), type: 'json' });
    expect(outcome.kind).toBe('stale');
    expect(api.callsOf('patch')).toHaveLength(1);
  });

  it('a 404 is gone, with its error', async () => {
    const api = new FakeBundleApi();
    const outcome = await guardedPatch(api, at, { patch: testRv('4'), type: 'json' });
    expect(outcome.kind).toBe('gone');
    expect(outcome.kind === 'gone' && outcome.error?.code).toBe(404);
  });

  it("on the 'conflict' rule a failed test is not stale (a merge patch pinned by resourceVersion)", async () => {
    const { api } = setup();
    const outcome = await guardedPatch(api, at, { patch: testRv('4'), type: 'json', stale: 'conflict' });
    expect(outcome.kind).toBe('failed');
  });

  it('passes PatchOptions only when given: the request is the caller’s, argument for argument', async () => {
    const seen: unknown[][] = [];
    const api = {
      patch: (...args: unknown[]) => {
        seen.push(args);
        return Promise.resolve({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'a', uid: 'u', resourceVersion: '1' },
        } as KubeObject);
      },
    };
    await guardedPatch(api, at, { patch: [], type: 'json' });
    await guardedPatch(api, at, { patch: [], type: 'json', opts: { fieldManager: 'fm' } });
    expect(seen.map((a) => a.length)).toEqual([5, 6]);
    expect(seen[1]?.[5]).toEqual({ fieldManager: 'fm' });
  });

  it('an undefined first patch is declined, nothing sent', async () => {
    const { api } = setup();
    expect(await guardedPatch(api, at, { patch: undefined, type: 'json' })).toEqual({ kind: 'declined', sends: 0 });
    expect(api.calls).toHaveLength(0);
  });
});
