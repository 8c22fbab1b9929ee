import { BundleGauges } from '../../../src/controllers/bundle/status-writer.js';
import { OperatorMetrics } from '../../../src/observability/metrics.js';
import { WorkQueue } from '../../../src/runtime/workqueue.js';
import { FakeClock } from '../fake-clock.js';

/** One sample's value from the text exposition. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('controller-runtime and client-go metric families beside bundlesmith_*', () => {
  it("counts a reconcile in both, with controller-runtime's results", async () => {
    const m = new OperatorMetrics();
    m.reconciled('bundle', 'success', 0.02);
    m.reconciled('bundle', 'error', 0.5);
    m.reconciled('bundle', 'requeue', 0.1);
    m.reconciled('bundle', 'requeue_after', 0.1);
    const text = await m.registry.metrics();
    expect(sample(text, 'controller_runtime_reconcile_total{controller="bundle",result="success"}')).toBe(1);
    expect(sample(text, 'controller_runtime_reconcile_total{controller="bundle",result="requeue"}')).toBe(1);
    expect(sample(text, 'controller_runtime_reconcile_total{controller="bundle",result="requeue_after"}')).toBe(1);
    expect(sample(text, 'controller_runtime_reconcile_errors_total{controller="bundle"}')).toBe(1);
    expect(sample(text, 'controller_runtime_reconcile_time_seconds_count{controller="bundle"}')).toBe(4);
    // The names this project always had, with their results.
    expect(sample(text, 'bundlesmith_reconcile_total{controller="bundle",result="success"}')).toBe(2);
    expect(sample(text, 'bundlesmith_reconcile_total{controller="bundle",result="retry"}')).toBe(1);
    expect(sample(text, 'bundlesmith_reconcile_total{controller="bundle",result="error"}')).toBe(1);
  });

  it('reports a queue under workqueue_*{controller,name} and bundlesmith_workqueue_*{queue}, with the work in flight', async () => {
    const clock = new FakeClock(1_000_000);
    const m = new OperatorMetrics();
    const q = new WorkQueue<string>({ clock, metrics: m.queue('released', 'released-sweeper') });
    let text = await m.registry.metrics();
    expect(sample(text, 'workqueue_depth{controller="released-sweeper",name="released"}')).toBe(0);
    expect(sample(text, 'workqueue_longest_running_processor_seconds{controller="released-sweeper",name="released"}')).toBe(0);
    q.add('a');
    q.add('b');
    q.add('c');
    text = await m.registry.metrics();
    expect(sample(text, 'workqueue_depth{controller="released-sweeper",name="released"}')).toBe(3);
    expect(sample(text, 'bundlesmith_workqueue_depth{queue="released"}')).toBe(3);
    expect(sample(text, 'workqueue_adds_total{controller="released-sweeper",name="released"}')).toBe(3);
    await q.get();
    clock.advance(4_000);
    await q.get();
    clock.advance(1_000);
    text = await m.registry.metrics();
    expect(sample(text, 'workqueue_longest_running_processor_seconds{controller="released-sweeper",name="released"}')).toBe(5);
    expect(sample(text, 'workqueue_unfinished_work_seconds{controller="released-sweeper",name="released"}')).toBe(6);
    q.done('a');
    q.done('b');
    q.addRateLimited('c');
    text = await m.registry.metrics();
    expect(sample(text, 'workqueue_unfinished_work_seconds{controller="released-sweeper",name="released"}')).toBe(0);
    expect(sample(text, 'workqueue_retries_total{controller="released-sweeper",name="released"}')).toBe(1);
    expect(sample(text, 'workqueue_work_duration_seconds_count{controller="released-sweeper",name="released"}')).toBe(2);
    expect(sample(text, 'workqueue_queue_duration_seconds_count{controller="released-sweeper",name="released"}')).toBe(2);
    q.shutDown();
  });

  it("counts the API client's requests by code, method and host", async () => {
    const m = new OperatorMetrics();
    m.requestDone({ method: 'GET', code: '200', host: '10.0.0.1:443' });
    m.requestDone({ method: 'GET', code: '200', host: '10.0.0.1:443' });
    m.requestDone({ method: 'PATCH', code: '<error>', host: '10.0.0.1:443' });
    const text = await m.registry.metrics();
    expect(sample(text, 'rest_client_requests_total{code="200",method="GET",host="10.0.0.1:443"}')).toBe(2);
    expect(sample(text, 'rest_client_requests_total{code="<error>",method="PATCH",host="10.0.0.1:443"}')).toBe(1);
  });
});

describe('the Bundle ages read at scrape time', () => {
  const T0 = Date.parse('2026-05-01T10:00:00Z');
  const iso = (ms: number) => new Date(ms).toISOString();

  it('tells how long the Bundle not Ready longest has been so, and how overdue pending deletions are (approvals aside)', async () => {
    let now = T0;
    const m = new OperatorMetrics();
    const gauges = new BundleGauges(m, () => now);
    gauges.record('ns/a', { conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: iso(T0 - 600_000) }] });
    gauges.record('ns/b', {
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: iso(T0 - 3_600_000) }],
      pendingDeletions: [
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          name: 'x',
          deletionTimestamp: iso(T0 - 900_000),
          deleteAfter: iso(T0 - 300_000),
          waitingFor: 'BundleReady',
        },
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          name: 'y',
          deletionTimestamp: iso(T0 - 900_000),
          deleteAfter: iso(T0 - 800_000),
          waitingFor: 'Approval',
        },
        { apiVersion: 'v1', kind: 'ConfigMap', name: 'z', deletionTimestamp: iso(T0), deleteAfter: iso(T0 + 60_000), waitingFor: 'Delay' },
      ],
    });
    let text = await m.registry.metrics();
    expect(sample(text, 'bundlesmith_bundles_not_ready_oldest_seconds')).toBe(600);
    expect(sample(text, 'bundlesmith_deletions_overdue')).toBe(1);
    expect(sample(text, 'bundlesmith_deletions_overdue_oldest_seconds')).toBe(300);
    now += 120_000;
    text = await m.registry.metrics();
    expect(sample(text, 'bundlesmith_bundles_not_ready_oldest_seconds')).toBe(720);
    expect(sample(text, 'bundlesmith_deletions_overdue')).toBe(2);
    expect(sample(text, 'bundlesmith_deletions_overdue_oldest_seconds')).toBe(420);
    gauges.record('ns/a', { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: iso(now) }] });
    gauges.forget('ns/b');
    text = await m.registry.metrics();
    expect(sample(text, 'bundlesmith_bundles_not_ready_oldest_seconds')).toBe(0);
    expect(sample(text, 'bundlesmith_deletions_overdue')).toBe(0);
    expect(sample(text, 'bundlesmith_deletions_overdue_oldest_seconds')).toBe(0);
  });
});
