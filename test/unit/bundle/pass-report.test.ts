/**
 * The one exit of a Bundle pass (controllers/bundle/pass-report.ts) over the
 * fake Bundle API: a report's status is written once, over the stored Bundle
 * it names (its resourceVersion), its transitions' events only when that
 * write went through, and its next step is the queue's word for it.
 */
import { describe, expect, it } from '@jest/globals';
import { BundleSchema } from '../../../src/api/bundle.js';
import type { BundleStatus } from '../../../src/api/bundle-status.js';
import { API_VERSION, BUNDLE_KIND, Finalizers } from '../../../src/api/names.js';
import { finishPass, workResultOf, type PassReport } from '../../../src/controllers/bundle/pass-report.js';
import type { KubeObject } from '../../../src/kube/types.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { BUNDLE_UID, NAMESPACE } from './builders.js';
import { FakeBundleApi, RecordingEvents } from './fake-bundle-api.js';

const stored = (status?: BundleStatus): KubeObject =>
  BundleSchema.parse({
    apiVersion: API_VERSION,
    kind: BUNDLE_KIND,
    metadata: {
      name: 'b',
      namespace: NAMESPACE,
      uid: BUNDLE_UID,
      generation: 1,
      resourceVersion: '10',
      finalizers: [Finalizers.deleteResources],
    },
    spec: { resources: [] },
    ...(status ? { status } : {}),
  }) as unknown as KubeObject;

const ready: BundleStatus = {
  observedGeneration: 1,
  conditions: [{ type: 'Ready', status: 'True', reason: 'Ready', lastTransitionTime: '2026-01-01T00:00:00Z' }],
};
const failing: BundleStatus = {
  observedGeneration: 1,
  conditions: [
    { type: 'Ready', status: 'False', reason: 'TerminalError', message: 'broken', lastTransitionTime: '2026-01-01T00:00:00Z' },
    { type: 'Error', status: 'True', reason: 'TerminalError', message: 'broken', lastTransitionTime: '2026-01-01T00:00:00Z' },
  ],
};
const target = { apiVersion: API_VERSION, kind: BUNDLE_KIND, namespace: NAMESPACE, name: 'b', uid: BUNDLE_UID };

function setup(): { api: FakeBundleApi; events: RecordingEvents; finish: (r: PassReport, now?: number) => ReturnType<typeof finishPass> } {
  const api = new FakeBundleApi();
  const events = new RecordingEvents();
  return { api, events, finish: (r, now = 0) => finishPass({ api, events, log: silentLogger(), now: () => now }, r) };
}

describe('workResultOf: one requeue vocabulary onto the queue', () => {
  it.each([
    [{ kind: 'retry' } as const, 0, 'requeue'],
    [{ kind: 'idle' } as const, 0, 'forget'],
    [{ kind: 'after', ms: 500 } as const, 0, { requeueAfterMs: 500 }],
    [{ kind: 'after', ms: 500 } as const, 120, { requeueAfterMs: 380 }],
    [{ kind: 'after', ms: 500 } as const, 900, { requeueAfterMs: 0 }],
  ])('%j, %d ms after it was decided', (next, elapsed, expected) => {
    expect(workResultOf(next, elapsed)).toEqual(expected);
  });
});

describe('finishPass', () => {
  it('writes the status once, over the stored Bundle the report names, then the events its transitions call for', async () => {
    const s = setup();
    s.api.put(stored(ready));
    const over = s.api.find('Bundle', 'b') as KubeObject;

    const result = await s.finish({
      status: { over, status: failing, transitions: { target, before: ready, errorReason: 'TerminalError' } },
      next: { kind: 'retry' },
    });

    expect(result).toBe('requeue');
    expect(s.api.callsOf('status')).toHaveLength(1);
    expect((s.api.find('Bundle', 'b')?.['status'] as BundleStatus | undefined)?.conditions?.find((c) => c.type === 'Error')?.status).toBe(
      'True',
    );
    expect(s.events.events.map((e) => `${e.type}/${e.reason}`)).toContain('Warning/TerminalError');
  });

  it('a status that lost to a newer Bundle (409) writes no events; the queue still gets the next step', async () => {
    const s = setup();
    s.api.put(stored(ready));
    const over = s.api.find('Bundle', 'b') as KubeObject;
    s.api.put({ ...over, metadata: { ...over.metadata, resourceVersion: '99' } });

    const result = await s.finish(
      {
        status: { over, status: failing, transitions: { target, before: ready, errorReason: 'TerminalError' } },
        next: { kind: 'after', ms: 300 },
        decidedAtMs: 1000,
      },
      1100,
    );

    expect(result).toEqual({ requeueAfterMs: 200 });
    expect(s.events.events).toEqual([]);
    expect((s.api.find('Bundle', 'b')?.['status'] as BundleStatus | undefined)?.conditions?.[0]?.status).toBe('True');
  });

  it('a Bundle not being deleted keeps no orphan reading (a restored status); one being deleted keeps it', async () => {
    const s = setup();
    const restored = { ...ready, deletionPropagation: 'Orphan' };
    s.api.put(stored(restored));
    const live = s.api.find('Bundle', 'b') as KubeObject;
    await s.finish({ status: { over: live, status: restored }, next: { kind: 'idle' } });
    expect((s.api.find('Bundle', 'b')?.['status'] as BundleStatus | undefined)?.deletionPropagation).toBeUndefined();

    const deleting = s.api.find('Bundle', 'b') as KubeObject;
    deleting.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    s.api.put(deleting);
    const over = s.api.find('Bundle', 'b') as KubeObject;
    await s.finish({ status: { over, status: { ...failing, deletionPropagation: 'Orphan' } }, next: { kind: 'idle' } });
    expect((s.api.find('Bundle', 'b')?.['status'] as BundleStatus | undefined)?.deletionPropagation).toBe('Orphan');
  });

  it('an unchanged status is not written; a report without a status writes nothing', async () => {
    const s = setup();
    s.api.put(stored(ready));
    const over = s.api.find('Bundle', 'b') as KubeObject;

    expect(await s.finish({ status: { over, status: ready }, next: { kind: 'idle' } })).toBe('forget');
    expect(await s.finish({ next: { kind: 'after', ms: 0 } })).toEqual({ requeueAfterMs: 0 });
    expect(s.api.callsOf('status')).toEqual([]);
  });
});
