/**
 * The chart's monitoring kit (monitoring.*): rendered with helm, its
 * PrometheusRule is checked by promtool (`check rules`, and `test rules`
 * with alert unit tests), and every metric the rules and the Grafana
 * dashboard query is declared by the operator's real /metrics, running
 * against the test control plane with a Bundle, the garbage collector and
 * leader election on, so that each family has been set up.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { freePort } from '../../hack/ports.js';
import { applyBundle, configMap, waitForReady } from './bundles.js';
import { chart } from './chart.js';
import { connect, createNamespace, run, waitFor, type TestEnv } from './harness.js';
import { startOperatorProcess, type OperatorProcess } from './operator.js';

interface Doc {
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  data?: Record<string, string>;
}

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

const RELEASE = 'r';
const NAMESPACE = 'ops';
const JOB = `${RELEASE}-bundlesmith-metrics`;
const MONITORING = [
  'metrics.auth=kubernetes',
  'monitoring.serviceMonitor.enabled=true',
  'monitoring.prometheusRule.enabled=true',
  'monitoring.dashboard.enabled=true',
];

async function render(set: string[]): Promise<Doc[]> {
  const result = await run('helm', ['template', RELEASE, chart, '-n', NAMESPACE, ...set.flatMap((s) => ['--set', s])]);
  if (result.code !== 0) throw new Error(`helm template failed: ${result.stderr}`);
  return parseAllDocuments(result.stdout)
    .map((d) => d.toJS() as Doc | null)
    .filter((d): d is Doc => d !== null);
}

function promtool(args: string[]): Promise<{ code: number; out: string }> {
  const path = process.env.BUNDLESMITH_PROMTOOL;
  if (!path) throw new Error('promtool path not set by the integration global setup (hack/promtool/build.sh)');
  return new Promise((resolve) => {
    execFile(path, args, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, out: stdout + stderr }),
    );
  });
}

/**
 * The metric names a PromQL expression reads: every identifier followed by
 * a `{` selector (the kit writes each metric with one). Synthesized series
 * (`up`) are Prometheus' own.
 */
function metricNames(expr: string): { name: string; labels: string[] }[] {
  const out: { name: string; labels: string[] }[] = [];
  for (const m of expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}/g)) {
    const name = m[1] ?? '';
    if (name === 'up') continue;
    const labels = [...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!=|!~|=)/g)].map((l) => l[1] ?? '');
    out.push({ name, labels });
  }
  return out;
}

let docs: Doc[];
let rules: Rule[];
let dir: string;

beforeAll(async () => {
  docs = await render(MONITORING);
  const rule = docs.find((d) => d.kind === 'PrometheusRule');
  rules = ((rule?.spec?.groups as { rules: Rule[] }[] | undefined) ?? []).flatMap((g) => g.rules);
  dir = mkdtempSync(join(tmpdir(), 'bundlesmith-rules-'));
  writeFileSync(join(dir, 'rules.yaml'), stringify({ groups: rule?.spec?.groups ?? [] }));
});

describe('the monitoring kit as rendered', () => {
  it('renders nothing of it by default', async () => {
    const kinds = (await render([])).map((d) => d.kind);
    expect(kinds).not.toContain('ServiceMonitor');
    expect(kinds).not.toContain('PrometheusRule');
    expect((await render([])).filter((d) => d.kind === 'ConfigMap' && d.metadata.name.endsWith('-dashboard'))).toEqual([]);
  });

  it('scrapes the metrics Service over HTTPS with a bearer token, per shard', () => {
    const sm = docs.find((d) => d.kind === 'ServiceMonitor');
    expect(sm?.spec).toMatchObject({
      selector: { matchLabels: { 'app.kubernetes.io/instance': RELEASE } },
      podTargetLabels: ['bundlesmith.dev/shard'],
      endpoints: [
        {
          port: 'metrics',
          scheme: 'https',
          bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
          tlsConfig: { insecureSkipVerify: true },
        },
      ],
    });
    const service = docs.find((d) => d.kind === 'Service' && d.metadata.name === JOB);
    expect(service?.spec).toMatchObject({ ports: [{ name: 'metrics', appProtocol: 'https' }] });
  });

  it('verifies against the CA of a cert-manager Certificate when one is rendered', async () => {
    const withCm = await render([
      ...MONITORING,
      'metrics.tls.certManager.enabled=true',
      'metrics.tls.certManager.issuerRef.name=ca-issuer',
    ]);
    const cert = withCm.find((d) => d.kind === 'Certificate');
    expect(cert?.spec).toMatchObject({
      secretName: `${RELEASE}-bundlesmith-metrics-tls`,
      dnsNames: [`${JOB}.${NAMESPACE}.svc`, `${JOB}.${NAMESPACE}.svc.cluster.local`],
      issuerRef: { name: 'ca-issuer', kind: 'Issuer' },
    });
    expect(withCm.find((d) => d.kind === 'ServiceMonitor')?.spec).toMatchObject({
      endpoints: [
        {
          tlsConfig: {
            serverName: `${JOB}.${NAMESPACE}.svc`,
            ca: { secret: { name: `${RELEASE}-bundlesmith-metrics-tls`, key: 'ca.crt' } },
          },
        },
      ],
    });
  });

  it('ships the dashboard in a ConfigMap with the Grafana sidecar label', () => {
    const cm = docs.find((d) => d.kind === 'ConfigMap' && d.metadata.name === `${RELEASE}-bundlesmith-dashboard`);
    expect(cm?.metadata.labels).toMatchObject({ grafana_dashboard: '1' });
    const dashboard = JSON.parse(cm?.data?.['bundlesmith.json'] ?? '{}') as { uid?: string; panels?: unknown[] };
    expect(dashboard.uid).toBe('bundlesmith');
    expect(dashboard.panels?.length).toBeGreaterThan(10);
  });

  it('has the alerts a platform team wants', () => {
    expect(rules.map((r) => r.alert).sort()).toEqual([
      'BundlesmithBundleNotReady',
      'BundlesmithBundleStalled',
      'BundlesmithCollectorQueueGrowing',
      'BundlesmithDeletionOverdue',
      'BundlesmithDown',
      'BundlesmithNoLeader',
      'BundlesmithReconcileErrors',
    ]);
  });

  it.each([
    ['monitoring.serviceMonitor without a reachable /metrics', ['monitoring.serviceMonitor.enabled=true'], /needs \/metrics reachable/],
    ['a threshold that is no duration', ['monitoring.prometheusRule.bundleNotReadyFor=soon'], /bundleNotReadyFor/],
    ['an unknown monitoring key', ['monitoring.grafana.enabled=true'], /additional properties 'grafana' not allowed/],
    ['cert-manager without an issuer', ['metrics.auth=kubernetes', 'metrics.tls.certManager.enabled=true'], /issuerRef\.name/],
    ['a metrics certificate without metrics.auth=kubernetes', ['metrics.tls.secretName=metrics-cert'], /metrics\.auth=kubernetes/],
  ])('refuses %s', async (_name, set, message) => {
    await expect(render(set)).rejects.toThrow(message);
  });
});

describe('promtool', () => {
  it('check rules: the PrometheusRule is valid', async () => {
    const result = await promtool(['check', 'rules', join(dir, 'rules.yaml')]);
    expect(result).toMatchObject({ code: 0 });
    expect(result.out).toMatch(/SUCCESS: 7 rules found/);
  });

  it('test rules: the alerts fire when they should, and only then', async () => {
    const sel = `job="${JOB}",namespace="${NAMESPACE}"`;
    const tests = {
      rule_files: ['rules.yaml'],
      evaluation_interval: '1m',
      tests: [
        {
          interval: '1m',
          input_series: [
            // Shard s1: both replicas standing by; shard main: one leads.
            { series: `bundlesmith_leader{${sel},pod="s1-a",bundlesmith_dev_shard="s1"}`, values: '0x15' },
            { series: `bundlesmith_leader{${sel},pod="s1-b",bundlesmith_dev_shard="s1"}`, values: '0x15' },
            { series: `bundlesmith_leader{${sel},pod="main-a",bundlesmith_dev_shard="main"}`, values: '1x15' },
            { series: `bundlesmith_leader{${sel},pod="main-b",bundlesmith_dev_shard="main"}`, values: '0x15' },
            { series: `up{${sel},pod="main-a"}`, values: '1x15' },
            // The Bundle not Ready longest: 25 min at the start, one more each minute.
            { series: `bundlesmith_bundles_not_ready_oldest_seconds{${sel},pod="main-a"}`, values: '1500+60x15' },
            { series: `bundlesmith_bundles{${sel},pod="main-a",condition="Stalled",status="True"}`, values: '0 0 2x13' },
          ],
          alert_rule_test: [
            { eval_time: '4m', alertname: 'BundlesmithNoLeader', exp_alerts: [] },
            {
              eval_time: '6m',
              alertname: 'BundlesmithNoLeader',
              exp_alerts: [
                {
                  exp_labels: { severity: 'critical', namespace: NAMESPACE, job: JOB, bundlesmith_dev_shard: 's1' },
                  exp_annotations: {
                    summary: 'No bundlesmith replica leads',
                    description:
                      "Replicas are scraped but none runs the controllers of shard s1: Bundles are not reconciled. The Lease cannot be taken (RBAC, API server unreachable); see the pods' logs.",
                  },
                },
              ],
            },
            // Over 30 min from minute 6 on; firing 5 min later.
            { eval_time: '10m', alertname: 'BundlesmithBundleNotReady', exp_alerts: [] },
            {
              eval_time: '12m',
              alertname: 'BundlesmithBundleNotReady',
              exp_alerts: [
                {
                  exp_labels: { severity: 'warning', namespace: NAMESPACE, job: JOB },
                  exp_annotations: {
                    summary: 'A Bundle has not been Ready for more than 30m',
                    description:
                      'The Bundle not Ready longest has been so for 37m 0s. kubectl get bundles -A shows which, and its Status says what it waits for.',
                  },
                },
              ],
            },
            { eval_time: '15m', alertname: 'BundlesmithBundleStalled', exp_alerts: [] },
            { eval_time: '15m', alertname: 'BundlesmithDown', exp_alerts: [] },
          ],
        },
        {
          // Nothing scraped at all.
          interval: '1m',
          input_series: [{ series: `up{${sel},pod="a"}`, values: '0x10' }],
          alert_rule_test: [
            {
              eval_time: '6m',
              alertname: 'BundlesmithDown',
              exp_alerts: [
                {
                  exp_labels: { severity: 'critical', job: JOB, namespace: NAMESPACE },
                  exp_annotations: {
                    summary: 'No bundlesmith replica can be scraped',
                    description: `Prometheus reaches no replica of ${RELEASE}-bundlesmith in ${NAMESPACE}: the operator is down, or the scrape is refused (its ServiceAccount needs the metrics-reader ClusterRole).`,
                  },
                },
              ],
            },
          ],
        },
      ],
    };
    writeFileSync(join(dir, 'rules.test.yaml'), stringify(tests));
    const result = await promtool(['test', 'rules', join(dir, 'rules.test.yaml')]);
    expect(result.out).toMatch(/SUCCESS/);
    expect(result.code).toBe(0);
  });
});

describe("every metric the rules and the dashboard query, in the operator's real /metrics", () => {
  let env: TestEnv;
  let operator: OperatorProcess | undefined;
  let exposition = '';

  beforeAll(async () => {
    env = await connect();
    const ns = await createNamespace(env, 'monitoring');
    const metricsPort = await freePort();
    operator = startOperatorProcess([
      '--namespace',
      ns,
      '--gc=bundles',
      '--leader-elect',
      '--leader-election-namespace',
      ns,
      '--leader-election-id',
      'monitoring-test',
      '--metrics-addr',
      `127.0.0.1:${metricsPort}`,
    ]);
    await applyBundle(env, ns, 'watched', [{ name: 'cm', object: configMap('watched-cm') }]);
    await waitForReady(env, ns, 'watched');
    exposition = await waitFor("the collector's and the Bundle controller's metrics", async () => {
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text().catch(() => '');
      return /^workqueue_depth\{controller="gc"/m.test(text) &&
        /^bundlesmith_bundles\{/m.test(text) &&
        /^rest_client_requests_total\{/m.test(text)
        ? text
        : undefined;
    });
  });
  afterAll(async () => {
    expect(await operator?.terminate()).toBe(0);
    env.close();
  });

  /** Families declared by # TYPE, and the label names seen on each one's samples. */
  function families(): Map<string, { type: string; labels: Set<string> }> {
    const out = new Map<string, { type: string; labels: Set<string> }>();
    for (const m of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) out.set(m[1] ?? '', { type: m[2] ?? '', labels: new Set() });
    for (const m of exposition.matchAll(/^([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}/gm)) {
      const name = (m[1] ?? '').replace(/_(bucket|sum|count)$/, (suffix, _s, offset: number, whole: string) =>
        out.has(whole.slice(0, offset)) ? '' : suffix,
      );
      for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)) out.get(name)?.labels.add(l[1] ?? '');
    }
    return out;
  }

  function queried(): { where: string; name: string; labels: string[] }[] {
    const fromRules = rules.flatMap((r) => metricNames(r.expr).map((m) => ({ where: `alert ${r.alert}`, ...m })));
    const cm = docs.find((d) => d.kind === 'ConfigMap' && d.metadata.name.endsWith('-dashboard'));
    const dashboard = cm?.data?.['bundlesmith.json'] ?? '';
    const exprs = [...dashboard.matchAll(/"(?:expr|query|definition)": "((?:[^"\\]|\\.)*)"/g)].map(
      (m) => JSON.parse(`"${m[1] ?? ''}"`) as string,
    );
    const fromDashboard = exprs.flatMap((e) => metricNames(e).map((m) => ({ where: 'dashboard', ...m })));
    return [...fromRules, ...fromDashboard];
  }

  it('finds them all (histograms by their _bucket series)', () => {
    const known = families();
    const wanted = queried();
    expect(wanted.length).toBeGreaterThan(30);
    const missing = wanted
      .filter((q) => !known.has(q.name.replace(/_(bucket|sum|count)$/, '')) && !known.has(q.name))
      .map((q) => `${q.where}: ${q.name}`);
    expect(missing).toEqual([]);
  });

  it('finds the labels they select on, on every family that has samples (target labels aside)', () => {
    const known = families();
    const targetLabels = new Set(['job', 'namespace', 'pod', 'bundlesmith_dev_shard']);
    const missing: string[] = [];
    for (const q of queried()) {
      const family = known.get(q.name.replace(/_(bucket|sum|count)$/, '')) ?? known.get(q.name);
      if (!family || family.labels.size === 0) continue;
      for (const l of q.labels) if (!targetLabels.has(l) && !family.labels.has(l)) missing.push(`${q.where}: ${q.name}{${l}}`);
    }
    expect(missing).toEqual([]);
  });

  it("exports controller-runtime's and client-go's families with their labels", () => {
    for (const line of [
      /^controller_runtime_reconcile_total\{controller="bundle",result="success"\} [1-9]/m,
      /^controller_runtime_reconcile_time_seconds_bucket\{le="[^"]+",controller="bundle"\}/m,
      /^workqueue_depth\{controller="bundle",name="bundle"\} /m,
      /^workqueue_adds_total\{controller="bundle",name="bundle"\} [1-9]/m,
      /^workqueue_unfinished_work_seconds\{controller="bundle",name="bundle"\} /m,
      /^workqueue_longest_running_processor_seconds\{controller="gc",name="gc-attemptToDelete"\} /m,
      /^workqueue_queue_duration_seconds_bucket\{le="[^"]+",controller="bundle",name="bundle"\}/m,
      /^rest_client_requests_total\{code="200",method="GET",host="127\.0\.0\.1:\d+"\} [1-9]/m,
      /^rest_client_requests_total\{code="201",method="POST",host="[^"]+"\} [1-9]/m,
      /^leader_election_master_status\{name="monitoring-test"\} 1$/m,
      /^bundlesmith_leader 1$/m,
      // The names this project always had.
      /^bundlesmith_reconcile_total\{controller="bundle",result="success"\} [1-9]/m,
      /^bundlesmith_workqueue_depth\{queue="bundle"\} /m,
    ]) {
      expect(exposition).toMatch(line);
    }
  });
});
