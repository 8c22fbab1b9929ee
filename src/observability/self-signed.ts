/**
 * A self-signed X.509 certificate for the metrics endpoint when no
 * certificate is given (as controller-runtime's secure metrics serving makes
 * one at start), with node:crypto only: an ECDSA P-256 key, and the
 * certificate's DER written here (RFC 5280: version 3, a random serial, one
 * common name as issuer and subject, valid from an hour ago for a year,
 * basicConstraints CA, keyUsage digitalSignature and keyCertSign,
 * extKeyUsage serverAuth, subjectAltName DNS names and IP addresses), signed
 * with ecdsa-with-SHA256. A scraper either skips verification or pins the
 * certificate it is shown; a certificate it can verify comes from a Secret.
 */
import { X509Certificate, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
}

const sequence = (...items: Buffer[]): Buffer => tlv(0x30, ...items);
const set = (...items: Buffer[]): Buffer => tlv(0x31, ...items);
const explicit = (n: number, item: Buffer): Buffer => tlv(0xa0 | n, item);
const bitString = (bytes: Buffer, unusedBits = 0): Buffer => tlv(0x03, Buffer.from([unusedBits]), bytes);
const octetString = (bytes: Buffer): Buffer => tlv(0x04, bytes);
const utf8 = (text: string): Buffer => tlv(0x0c, Buffer.from(text, 'utf8'));
const boolean = (value: boolean): Buffer => tlv(0x01, Buffer.from([value ? 0xff : 0]));

/** A non-negative INTEGER from big-endian bytes (a leading zero when the top bit is set). */
function integer(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0 && ((bytes[start + 1] ?? 0) & 0x80) === 0) start++;
  const trimmed = bytes.subarray(start);
  return tlv(0x02, (trimmed[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed);
}

function oid(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split('.').map(Number);
  const out = [40 * first + second];
  for (const arc of rest) {
    const groups: number[] = [];
    let v = arc;
    do {
      groups.unshift(v & 0x7f);
      v = Math.floor(v / 128);
    } while (v > 0);
    for (let i = 0; i < groups.length - 1; i++) groups[i] = (groups[i] ?? 0) | 0x80;
    out.push(...groups);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime through 2049, GeneralizedTime after (RFC 5280 4.1.2.5). */
function time(date: Date): Buffer {
  const iso = date
    .toISOString()
    .replace(/[-:T]/g, '')
    .replace(/\.\d{3}/, ''); // YYYYMMDDHHMMSSZ
  return date.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(iso.slice(2), 'ascii')) : tlv(0x18, Buffer.from(iso, 'ascii'));
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return sequence(oid(id), ...(critical ? [boolean(true)] : []), octetString(value));
}

/** An IP address's bytes for subjectAltName (4 or 16). */
function ipBytes(ip: string): Buffer {
  if (isIPv4(ip)) return Buffer.from(ip.split('.').map(Number));
  const [head = '', tail = ''] = ip.includes('::') ? ip.split('::') : [ip, ''];
  const words = (s: string): number[] => (s === '' ? [] : s.split(':').map((w) => parseInt(w, 16)));
  const h = words(head);
  const t = words(tail);
  const all = [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
  const out = Buffer.alloc(16);
  all.forEach((w, i) => out.writeUInt16BE(w, 2 * i));
  return out;
}

export interface SelfSignedOptions {
  commonName: string;
  /** DNS names and IP addresses the certificate is valid for. */
  hosts: readonly string[];
  now?: Date;
  validDays?: number;
}

export interface KeyAndCertificate {
  /** PEM, PKCS#8. */
  key: string;
  /** PEM. */
  cert: string;
}

export function selfSignedCertificate(o: SelfSignedOptions): KeyAndCertificate {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const now = o.now ?? new Date();
  const notBefore = new Date(now.getTime() - 3600_000);
  const notAfter = new Date(now.getTime() + (o.validDays ?? 365) * 86400_000);
  const serial = randomBytes(16);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  const name = sequence(set(sequence(oid('2.5.4.3'), utf8(o.commonName))));
  const ecdsaWithSha256 = sequence(oid('1.2.840.10045.4.3.2'));
  const altNames = o.hosts.map((h) => (isIPv4(h) || isIPv6(h) ? tlv(0x87, ipBytes(h)) : tlv(0x82, Buffer.from(h, 'ascii'))));
  const extensions = sequence(
    extension('2.5.29.19', true, sequence(boolean(true))), // basicConstraints: CA (its own trust anchor)
    extension('2.5.29.15', true, bitString(Buffer.from([0x84]), 2)), // keyUsage: digitalSignature, keyCertSign
    extension('2.5.29.37', false, sequence(oid('1.3.6.1.5.5.7.3.1'))), // extKeyUsage: serverAuth
    ...(altNames.length > 0 ? [extension('2.5.29.17', false, sequence(...altNames))] : []),
  );
  const tbs = sequence(
    explicit(0, integer(Buffer.from([2]))),
    integer(serial),
    ecdsaWithSha256,
    name,
    sequence(time(notBefore), time(notAfter)),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, extensions),
  );
  const signature = sign('sha256', tbs, privateKey);
  const der = sequence(tbs, ecdsaWithSha256, bitString(signature));
  const cert = `-----BEGIN CERTIFICATE-----\n${(der.toString('base64').match(/.{1,64}/g) ?? []).join('\n')}\n-----END CERTIFICATE-----\n`;
  // Parsed back before use: a malformed encoding fails here, not in a scraper's handshake.
  const parsed = new X509Certificate(cert);
  if (!parsed.verify(publicKey) || !parsed.checkPrivateKey(privateKey)) throw new Error('the self-signed certificate does not verify');
  return { key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), cert };
}
