import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import { freePort } from '../../../hack/ports.js';
import { startHttpEndpoints } from '../../../src/observability/http.js';
import { silentLogger } from '../../../src/observability/logger.js';
import { OperatorMetrics } from '../../../src/observability/metrics.js';
import { metricsTls, readKeyAndCertificate } from '../../../src/observability/metrics-tls.js';
import { selfSignedCertificate } from '../../../src/observability/self-signed.js';

describe('selfSignedCertificate (node:crypto only)', () => {
  it('is a certificate for the hosts given, signed by its own key, valid for a year', () => {
    const now = new Date('2026-03-01T12:00:00Z');
    const made = selfSignedCertificate({
      commonName: 'bundlesmith-metrics',
      hosts: ['localhost', 'pod-0', '127.0.0.1', '::1', '2001:db8::5'],
      now,
    });
    const x509 = new X509Certificate(made.cert);
    expect(x509.subject).toBe('CN=bundlesmith-metrics');
    expect(x509.issuer).toBe(x509.subject);
    expect(x509.verify(x509.publicKey)).toBe(true);
    expect(x509.ca).toBe(true);
    expect(x509.subjectAltName).toBe(
      'DNS:localhost, DNS:pod-0, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, IP Address:2001:DB8:0:0:0:0:0:5',
    );
    expect(x509.checkHost('pod-0')).toBe('pod-0');
    expect(x509.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(x509.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(new Date(x509.validFrom).toISOString()).toBe('2026-03-01T11:00:00.000Z');
    expect(new Date(x509.validTo).toISOString()).toBe('2027-03-01T12:00:00.000Z');
  });

  it('writes dates from 2050 on as GeneralizedTime, and each certificate gets its own key and serial', () => {
    const a = new X509Certificate(selfSignedCertificate({ commonName: 'x', hosts: [], now: new Date('2049-12-01T00:00:00Z') }).cert);
    const b = new X509Certificate(selfSignedCertificate({ commonName: 'x', hosts: [] }).cert);
    expect(new Date(a.validTo).toISOString()).toBe('2050-12-01T00:00:00.000Z');
    expect(a.serialNumber).not.toBe(b.serialNumber);
    expect(a.publicKey.export({ type: 'spki', format: 'der' }).equals(b.publicKey.export({ type: 'spki', format: 'der' }))).toBe(false);
  });
});

describe('the metrics certificate from --metrics-cert-dir', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'metrics-tls-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const write = (m: { key: string; cert: string }, certName = 'tls.crt', keyName = 'tls.key') => {
    writeFileSync(join(dir, certName), m.cert);
    writeFileSync(join(dir, keyName), m.key);
  };

  it('refuses a start without the files, naming the flag', () => {
    expect(() => metricsTls({ certDir: dir, certName: 'tls.crt', keyName: 'tls.key' })).toThrow(
      /^--metrics-cert-dir: cannot read the metrics certificate: .*tls\.crt/,
    );
  });

  it("refuses a key that is not the certificate's, and a file that is no certificate", () => {
    const a = selfSignedCertificate({ commonName: 'a', hosts: [] });
    const b = selfSignedCertificate({ commonName: 'b', hosts: [] });
    write({ cert: a.cert, key: b.key });
    expect(() => readKeyAndCertificate(join(dir, 'tls.crt'), join(dir, 'tls.key'))).toThrow(/is not the key of the certificate/);
    write({ cert: 'garbage', key: a.key });
    expect(() => readKeyAndCertificate(join(dir, 'tls.crt'), join(dir, 'tls.key'))).toThrow(/is not a PEM certificate/);
  });

  it('reloads only a changed, valid pair, under the names given', () => {
    const a = selfSignedCertificate({ commonName: 'a', hosts: [] });
    write(a, 'cert.pem', 'key.pem');
    const tls = metricsTls({ certDir: dir, certName: 'cert.pem', keyName: 'key.pem' });
    expect(tls.current().cert).toBe(a.cert);
    expect(tls.reload()).toBeUndefined();
    const b = selfSignedCertificate({ commonName: 'b', hosts: [] });
    write(b, 'cert.pem', 'key.pem');
    expect(tls.reload()?.cert).toBe(b.cert);
    writeFileSync(join(dir, 'key.pem'), a.key);
    expect(() => tls.reload()).toThrow(/is not the key/);
    expect(tls.current().cert).toBe(b.cert);
  });
});

interface Answer {
  status: number;
  body: string;
  fingerprint?: string;
}

function httpsGet(port: number, ca: string, path = '/metrics'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, path, ca, servername: 'localhost', agent: false }, (res) => {
      const fingerprint = (res.socket as TLSSocket).getPeerCertificate().fingerprint256;
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, fingerprint }));
    });
    req.on('error', reject);
    req.end();
  });
}

function httpGet(port: number, path = '/metrics'): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, agent: false, headers: { Authorization: 'Bearer secret' } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('/metrics over HTTPS', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'metrics-https-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('answers HTTPS with the certificate, refuses plain HTTP, and serves a renewed certificate without a restart', async () => {
    const first = selfSignedCertificate({ commonName: 'first', hosts: ['localhost'] });
    writeFileSync(join(dir, 'tls.crt'), first.cert);
    writeFileSync(join(dir, 'tls.key'), first.key);
    const metricsPort = await freePort();
    const healthPort = await freePort();
    const metrics = new OperatorMetrics();
    metrics.pendingDeletions.set(3);
    const http = await startHttpEndpoints({
      metricsAddr: `127.0.0.1:${metricsPort}`,
      healthAddr: `127.0.0.1:${healthPort}`,
      metrics,
      readiness: () => ({ ready: true, detail: 'ok' }),
      logger: silentLogger(),
      metricsTls: metricsTls({ certDir: dir, certName: 'tls.crt', keyName: 'tls.key' }),
      tlsReloadMs: 50,
    });
    try {
      const answer = await httpsGet(metricsPort, first.cert);
      expect(answer.status).toBe(200);
      expect(answer.body).toContain('bundlesmith_pending_deletions 3');
      expect(answer.fingerprint).toBe(new X509Certificate(first.cert).fingerprint256);
      // Plain HTTP gets no HTTP answer at all: the bearer token was never read.
      await expect(httpGet(metricsPort)).rejects.toThrow();
      // Another CA: refused by the client.
      await expect(httpsGet(metricsPort, selfSignedCertificate({ commonName: 'other', hosts: ['localhost'] }).cert)).rejects.toThrow();
      // The health endpoints stay plain HTTP (kubelet probes).
      expect((await httpGet(healthPort, '/healthz')).status).toBe(200);

      const second = selfSignedCertificate({ commonName: 'second', hosts: ['localhost'] });
      writeFileSync(join(dir, 'tls.crt'), second.cert);
      writeFileSync(join(dir, 'tls.key'), second.key);
      const deadline = Date.now() + 5_000;
      let renewed: Answer | undefined;
      while (Date.now() < deadline) {
        renewed = await httpsGet(metricsPort, second.cert).catch(() => undefined);
        if (renewed) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(renewed?.fingerprint).toBe(new X509Certificate(second.cert).fingerprint256);
    } finally {
      await http.close();
    }
  });
});
