/**
 * The metrics endpoint's certificate, as controller-runtime's secure metrics
 * serving finds it: tls.crt and tls.key in --metrics-cert-dir (a Secret
 * mounted into the pod, e.g. one cert-manager writes), re-read when the files
 * change (cert-manager renews in place: the kubelet swaps the mounted files);
 * or, without a directory, a self-signed certificate made at start.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { selfSignedCertificate, type KeyAndCertificate } from './self-signed.js';

export interface MetricsTlsOptions {
  certDir?: string;
  certName: string;
  keyName: string;
}

export interface MetricsTls {
  /** Where the certificate comes from, for the start-up log line. */
  source: string;
  current(): KeyAndCertificate;
  /**
   * Reads the files again; returns the new material when it changed and is
   * valid, undefined when unchanged. Throws (keeping the current material)
   * when the files cannot be read or do not form a key and its certificate.
   */
  reload(): KeyAndCertificate | undefined;
}

/** Reads and checks a key and certificate pair: the certificate parses, the key is its key. */
export function readKeyAndCertificate(certFile: string, keyFile: string): KeyAndCertificate {
  const cert = readFileSync(certFile, 'utf8');
  const key = readFileSync(keyFile, 'utf8');
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
  } catch (err) {
    throw new Error(`${certFile} is not a PEM certificate: ${err instanceof Error ? err.message : String(err)}`);
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (err) {
    throw new Error(`${keyFile} is not a PEM private key: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!x509.checkPrivateKey(privateKey)) throw new Error(`${keyFile} is not the key of the certificate in ${certFile}`);
  return { key, cert };
}

export function metricsTls(o: MetricsTlsOptions): MetricsTls {
  if (o.certDir === undefined) {
    const made = selfSignedCertificate({ commonName: 'bundlesmith-metrics', hosts: [hostname(), 'localhost', '127.0.0.1', '::1'] });
    return { source: 'self-signed at start', current: () => made, reload: () => undefined };
  }
  const certFile = join(o.certDir, o.certName);
  const keyFile = join(o.certDir, o.keyName);
  let material: KeyAndCertificate;
  try {
    material = readKeyAndCertificate(certFile, keyFile);
  } catch (err) {
    throw new Error(`--metrics-cert-dir: cannot read the metrics certificate: ${err instanceof Error ? err.message : String(err)}`);
  }
  return {
    source: `${certFile} and ${keyFile}`,
    current: () => material,
    reload: () => {
      const fresh = readKeyAndCertificate(certFile, keyFile);
      if (fresh.cert === material.cert && fresh.key === material.key) return undefined;
      material = fresh;
      return fresh;
    },
  };
}
