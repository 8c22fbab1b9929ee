/**
 * --metrics-auth=kubernetes against the real API server: the chart is
 * installed with metrics.auth=kubernetes, the operator runs as a process
 * impersonating the chart's ServiceAccount (so the chart's TokenReview and
 * SubjectAccessReview grants are what it has), and /metrics is asked with
 * ServiceAccount tokens from the TokenRequest API: one bound to the chart's
 * metrics-reader ClusterRole, one not.
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { parseAllDocuments } from 'yaml';
import { join } from 'node:path';
import { freePort } from '../../hack/ports.js';
import { repoRoot } from '../../src/api/crd-paths.js';
import { connect, createNamespace, resourceType, run, uniqueName, waitFor, type TestEnv } from './harness.js';
import { startOperatorProcess, type OperatorProcess } from './operator.js';

const chart = join(repoRoot(), 'charts', 'bundlesmith');

let env: TestEnv;

async function get(port: number, path: string, authorization?: string): Promise<{ status: number; body: string; wwwAuthenticate?: string }> {
  return await new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET', headers: authorization ? { Authorization: authorization } : {} }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const header = res.headers['www-authenticate'];
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), ...(header ? { wwwAuthenticate: header } : {}) });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** A token for a ServiceAccount from the TokenRequest API (short-lived, not stored in any Secret). */
async function serviceAccountToken(namespace: string, name: string): Promise<string> {
  const body = (await env.client.raw('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 600 },
  })) as { status?: { token?: string } };
  const token = body.status?.token;
  if (!token) throw new Error(`no token for ServiceAccount ${namespace}/${name}`);
  return token;
}

beforeAll(async () => {
  env = await connect();
});
afterAll(() => env.close());

describe('/metrics with --metrics-auth=kubernetes (chart: metrics.auth=kubernetes)', () => {
  let ns: string;
  let metricsPort: number;
  let healthPort: number;
  let operator: OperatorProcess;
  let readerToken: string;
  let strangerToken: string;

  beforeAll(async () => {
    ns = await createNamespace(env, 'metrics-auth');
    const release = uniqueName('bs');
    const fullname = `${release}-bundlesmith`;
    const install = await run('helm', ['install', release, chart, '-n', ns, '--set', 'crds.install=false', '--set', 'metrics.auth=kubernetes', '--set', `watchNamespace=${ns}`, '--set', 'gc.mode=off', '--set', 'replicaCount=1', '--set', 'leaderElection.enabled=false']);
    if (install.code !== 0) throw new Error(`helm install failed: ${install.stderr}`);
    const manifest = await run('helm', ['get', 'manifest', release, '-n', ns]);
    const deployment = parseAllDocuments(manifest.stdout)
      .map((d) => d.toJS() as { kind?: string; spec?: { template: { spec: { serviceAccountName: string; containers: { args: string[] }[] } } } } | null)
      .find((d) => d?.kind === 'Deployment');
    const pod = deployment?.spec?.template.spec;
    if (!pod) throw new Error('the chart rendered no Deployment');
    const args = pod.containers[0]?.args ?? [];
    expect(args).toContain('--metrics-auth=kubernetes');

    const serviceAccounts = await resourceType(env, 'v1', 'ServiceAccount');
    for (const name of ['scraper', 'stranger']) await env.client.create(serviceAccounts, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: ns } });
    await env.client.create(await resourceType(env, 'rbac.authorization.k8s.io/v1', 'ClusterRoleBinding'), {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: `${fullname}-scraper` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${fullname}-metrics-reader` },
      subjects: [{ kind: 'ServiceAccount', name: 'scraper', namespace: ns }],
    });
    readerToken = await serviceAccountToken(ns, 'scraper');
    strangerToken = await serviceAccountToken(ns, 'stranger');

    metricsPort = await freePort();
    healthPort = await freePort();
    const flags = args.filter((a) => !a.startsWith('--metrics-addr') && !a.startsWith('--health-addr'));
    // The chart's own flags, on loopback ports of this machine, as the chart's ServiceAccount.
    operator = startOperatorProcess([...flags, '--metrics-addr', `127.0.0.1:${metricsPort}`, '--health-addr', `127.0.0.1:${healthPort}`, '--impersonate', `system:serviceaccount:${ns}:${pod.serviceAccountName}`]);
    await waitFor('the operator to be ready', async () => (await get(healthPort, '/readyz').catch(() => ({ status: 0 }))).status === 200);
  });
  afterAll(async () => {
    expect(await operator.terminate()).toBe(0);
  });

  it('serves the metrics to a ServiceAccount bound to the metrics-reader ClusterRole', async () => {
    const answer = await get(metricsPort, '/metrics', `Bearer ${readerToken}`);
    expect(answer.status).toBe(200);
    expect(answer.body).toContain('bundlesmith_leader 1');
    // Again: from the decision cache, same answer.
    expect((await get(metricsPort, '/metrics', `Bearer ${readerToken}`)).status).toBe(200);
  });

  it('answers 403 to an authenticated ServiceAccount without the binding', async () => {
    const answer = await get(metricsPort, '/metrics', `Bearer ${strangerToken}`);
    expect(answer.status).toBe(403);
    expect(answer.body).toContain(`system:serviceaccount:${ns}:stranger`);
    expect(answer.body).not.toContain('bundlesmith_');
  });

  it.each([
    ['no Authorization header', undefined],
    ['a token the API server does not accept', 'Bearer not-a-token'],
    ['a reader token presented as Basic credentials', `Basic ${Buffer.from(`u:x`).toString('base64')}`],
    ['an empty bearer token', 'Bearer '],
  ])('answers 401 to %s', async (_case, authorization) => {
    const answer = await get(metricsPort, '/metrics', authorization);
    expect(answer).toMatchObject({ status: 401, wwwAuthenticate: 'Bearer' });
    expect(answer.body).not.toContain('bundlesmith_');
  });

  it('keeps the health endpoints unauthenticated', async () => {
    expect((await get(healthPort, '/healthz')).status).toBe(200);
    expect((await get(healthPort, '/readyz')).status).toBe(200);
  });

  it('was never forbidden a review', () => {
    expect(readFileSync(operator.logFile, 'utf8').split('\n').filter((l) => /forbidden|cannot review/i.test(l))).toEqual([]);
  });
});
