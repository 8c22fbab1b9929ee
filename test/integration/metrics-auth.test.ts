/**
 * --metrics-auth=kubernetes against the real API server: the chart is
 * installed with metrics.auth=kubernetes and metrics.tls.secretName (a
 * kubernetes.io/tls Secret signed by a CA of the test's, made with openssl),
 * the operator runs as a process impersonating the chart's ServiceAccount
 * (so the chart's TokenReview and SubjectAccessReview grants are what it
 * has) with the rendered Deployment's flags and the Secret's files where the
 * pod mounts them, and /metrics is asked over HTTPS, verified with the CA,
 * with ServiceAccount tokens from the TokenRequest API: one bound to the
 * chart's metrics-reader ClusterRole, one not. Plain HTTP gets no answer at
 * all: the token is never read. Without a Secret, the operator serves a
 * certificate it made itself.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import type { TLSSocket } from 'node:tls';
import { parseAllDocuments } from 'yaml';
import { join } from 'node:path';
import { freePort } from '../../hack/ports.js';
import { repoRoot } from '../../src/api/crd-paths.js';
import { connect, createNamespace, resourceType, run, uniqueName, waitFor, type TestEnv } from './harness.js';
import { startOperatorProcess, type OperatorProcess } from './operator.js';

const chart = join(repoRoot(), 'charts', 'bundlesmith');

let env: TestEnv;

let ca = '';

interface Answer {
  status: number;
  body: string;
  wwwAuthenticate?: string;
  peerCertificate?: string;
}

/** GET over HTTPS, verifying the server against `trust` (the test's CA by default). */
async function get(port: number, path: string, authorization?: string, trust: string = ca): Promise<Answer> {
  return await new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'GET',
        ca: trust,
        agent: false,
        headers: authorization ? { Authorization: authorization } : {},
      },
      (res) => {
        const peer = (res.socket as TLSSocket).getPeerX509Certificate?.()?.toString();
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const header = res.headers['www-authenticate'];
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            ...(header ? { wwwAuthenticate: header } : {}),
            ...(peer ? { peerCertificate: peer } : {}),
          });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Plain HTTP (the health endpoints; and what a scraper without TLS would try on /metrics). */
async function getPlain(port: number, path: string, authorization?: string): Promise<{ status: number; body: string }> {
  return await new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path, method: 'GET', agent: false, headers: authorization ? { Authorization: authorization } : {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** A CA and a server certificate it signed for 127.0.0.1 and localhost, with openssl (as any PKI would issue them). */
function issueCertificates(dir: string): { ca: string; cert: string; key: string } {
  const at = (f: string) => join(dir, f);
  const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  openssl([
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    at('ca.key'),
    '-out',
    at('ca.crt'),
    '-subj',
    '/CN=bundlesmith-test-ca',
    '-days',
    '1',
  ]);
  openssl([
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-keyout',
    at('tls.key'),
    '-out',
    at('tls.csr'),
    '-subj',
    '/CN=bundlesmith-metrics',
  ]);
  writeFileSync(at('ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  openssl([
    'x509',
    '-req',
    '-in',
    at('tls.csr'),
    '-CA',
    at('ca.crt'),
    '-CAkey',
    at('ca.key'),
    '-CAcreateserial',
    '-out',
    at('tls.crt'),
    '-days',
    '1',
    '-extfile',
    at('ext.cnf'),
  ]);
  return { ca: readFileSync(at('ca.crt'), 'utf8'), cert: readFileSync(at('tls.crt'), 'utf8'), key: readFileSync(at('tls.key'), 'utf8') };
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
  let flags: string[];
  let serviceAccount: string;

  beforeAll(async () => {
    ns = await createNamespace(env, 'metrics-auth');
    const work = mkdtempSync(join(tmpdir(), 'bundlesmith-metrics-tls-'));
    const issued = issueCertificates(work);
    ca = issued.ca;
    // The Secret cert-manager (or any PKI) would write: the chart mounts it.
    await env.client.create(await resourceType(env, 'v1', 'Secret'), {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: { name: 'metrics-cert', namespace: ns },
      data: {
        'tls.crt': Buffer.from(issued.cert).toString('base64'),
        'tls.key': Buffer.from(issued.key).toString('base64'),
        'ca.crt': Buffer.from(issued.ca).toString('base64'),
      },
    });
    const release = uniqueName('bs');
    const fullname = `${release}-bundlesmith`;
    const install = await run('helm', [
      'install',
      release,
      chart,
      '-n',
      ns,
      '--set',
      'crds.install=false',
      '--set',
      'metrics.auth=kubernetes',
      '--set',
      'metrics.tls.secretName=metrics-cert',
      '--set',
      `watchNamespace=${ns}`,
      '--set',
      'gc.mode=off',
      '--set',
      'replicaCount=1',
      '--set',
      'leaderElection.enabled=false',
    ]);
    if (install.code !== 0) throw new Error(`helm install failed: ${install.stderr}`);
    const manifest = await run('helm', ['get', 'manifest', release, '-n', ns]);
    type PodSpec = {
      serviceAccountName: string;
      containers: { args: string[]; volumeMounts: { name: string; mountPath: string }[] }[];
      volumes: { name: string; secret?: { secretName: string } }[];
    };
    const deployment = parseAllDocuments(manifest.stdout)
      .map((d) => d.toJS() as { kind?: string; spec?: { template: { spec: PodSpec } } } | null)
      .find((d) => d?.kind === 'Deployment');
    const pod = deployment?.spec?.template.spec;
    if (!pod) throw new Error('the chart rendered no Deployment');
    const args = pod.containers[0]?.args ?? [];
    expect(args).toEqual(
      expect.arrayContaining(['--metrics-auth=kubernetes', '--metrics-secure', '--metrics-cert-dir=/etc/bundlesmith/metrics-certs']),
    );
    // The Secret is mounted where the flag looks.
    const volume = pod.volumes.find((v) => v.secret?.secretName === 'metrics-cert');
    expect(pod.containers[0]?.volumeMounts).toContainEqual(
      expect.objectContaining({ name: volume?.name, mountPath: '/etc/bundlesmith/metrics-certs' }),
    );
    // The kubelet's part: the Secret's keys as files in the mounted directory, read back from the API server.
    const stored = await env.client.get(await resourceType(env, 'v1', 'Secret'), ns, 'metrics-cert');
    const certDir = join(work, 'mounted');
    mkdirSync(certDir);
    for (const file of ['tls.crt', 'tls.key'])
      writeFileSync(join(certDir, file), Buffer.from((stored.data as Record<string, string>)[file] ?? '', 'base64'));
    serviceAccount = pod.serviceAccountName;

    const serviceAccounts = await resourceType(env, 'v1', 'ServiceAccount');
    for (const name of ['scraper', 'stranger'])
      await env.client.create(serviceAccounts, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: ns } });
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
    flags = args.filter((a) => !a.startsWith('--metrics-addr') && !a.startsWith('--health-addr'));
    // The chart's own flags, on loopback ports of this machine, as the chart's ServiceAccount, the certificate where it is mounted.
    operator = startOperatorProcess([
      ...flags.map((a) => (a.startsWith('--metrics-cert-dir=') ? `--metrics-cert-dir=${certDir}` : a)),
      '--metrics-addr',
      `127.0.0.1:${metricsPort}`,
      '--health-addr',
      `127.0.0.1:${healthPort}`,
      '--impersonate',
      `system:serviceaccount:${ns}:${serviceAccount}`,
    ]);
    await waitFor(
      'the operator to be ready',
      async () => (await getPlain(healthPort, '/readyz').catch(() => ({ status: 0 }))).status === 200,
    );
  });
  afterAll(async () => {
    expect(await operator.terminate()).toBe(0);
  });

  it('serves the metrics over HTTPS, verified with the CA, to a ServiceAccount bound to the metrics-reader ClusterRole', async () => {
    const answer = await get(metricsPort, '/metrics', `Bearer ${readerToken}`);
    expect(answer.status).toBe(200);
    expect(new X509Certificate(answer.peerCertificate ?? '').issuer).toBe('CN=bundlesmith-test-ca');
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

  it('never takes a token over plain HTTP: no HTTP answer at all', async () => {
    await expect(getPlain(metricsPort, '/metrics', `Bearer ${readerToken}`)).rejects.toThrow();
  });

  it('is refused by a client that trusts another CA', async () => {
    const other = issueCertificates(mkdtempSync(join(tmpdir(), 'bundlesmith-other-ca-')));
    await expect(get(metricsPort, '/metrics', `Bearer ${readerToken}`, other.ca)).rejects.toThrow(
      /self[- ]signed|unable to verify|certificate/i,
    );
  });

  it('keeps the health endpoints unauthenticated, on plain HTTP for the kubelet', async () => {
    expect((await getPlain(healthPort, '/healthz')).status).toBe(200);
    expect((await getPlain(healthPort, '/readyz')).status).toBe(200);
  });

  it('refuses to start with the token over plain HTTP (--metrics-secure=false)', async () => {
    const refused = startOperatorProcess([
      ...flags.filter((a) => !a.startsWith('--metrics-cert-dir') && a !== '--metrics-secure'),
      '--metrics-secure=false',
      '--impersonate',
      `system:serviceaccount:${ns}:${serviceAccount}`,
    ]);
    expect(await new Promise((resolve) => refused.child.on('exit', resolve))).toBe(2);
    await waitFor(
      'the refusal in its output',
      () => /bearer tokens would cross the network in clear/.test(readFileSync(refused.logFile, 'utf8')) || undefined,
    );
  });

  it('without a certificate Secret, serves one it made itself at start (a scraper pins it)', async () => {
    const port = await freePort();
    const health = await freePort();
    const selfSigned = startOperatorProcess([
      ...flags.filter((a) => !a.startsWith('--metrics-cert-dir')),
      '--metrics-addr',
      `127.0.0.1:${port}`,
      '--health-addr',
      `127.0.0.1:${health}`,
      '--impersonate',
      `system:serviceaccount:${ns}:${serviceAccount}`,
    ]);
    try {
      await waitFor(
        'the second operator to be ready',
        async () => (await getPlain(health, '/readyz').catch(() => ({ status: 0 }))).status === 200,
      );
      // Not signed by the test's CA: refused by a verifying client.
      await expect(get(port, '/metrics', `Bearer ${readerToken}`)).rejects.toThrow();
      // Pinned: the certificate it shows, trusted as such.
      const shown = await new Promise<string>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/healthz', rejectUnauthorized: false, agent: false }, (res) => {
          resolve((res.socket as TLSSocket).getPeerX509Certificate?.()?.toString() ?? '');
          res.resume();
        });
        req.on('error', reject);
        req.end();
      });
      const x509 = new X509Certificate(shown);
      expect(x509.issuer).toBe(x509.subject);
      expect(x509.checkIP('127.0.0.1')).toBe('127.0.0.1');
      const answer = await get(port, '/metrics', `Bearer ${readerToken}`, shown);
      expect(answer.status).toBe(200);
      expect(answer.body).toContain('bundlesmith_leader 1');
    } finally {
      expect(await selfSigned.terminate()).toBe(0);
    }
  });

  it('was never forbidden a review', () => {
    expect(
      readFileSync(operator.logFile, 'utf8')
        .split('\n')
        .filter((l) => /forbidden|cannot review/i.test(l)),
    ).toEqual([]);
  });
});
