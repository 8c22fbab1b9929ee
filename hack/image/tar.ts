/**
 * A small tar writer and reader, enough for the image's layers and its OCI
 * archive. Writing the format here (not with the tar binary) puts every
 * byte under the build's control: entries in the order given, numeric
 * owners, one fixed mtime, no user or group names, no access or change
 * times, no dependence on the installed tar's version or defaults. POSIX
 * ustar headers; a pax extended header carries a path or link target that
 * does not fit. The reader also takes GNU long names (as in Debian's .deb
 * data archives).
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { createHash, type Hash } from 'node:crypto';

export type TarEntry =
  | { path: string; type: 'dir'; mode: number; uid: number; gid: number }
  | { path: string; type: 'file'; mode: number; uid: number; gid: number; data: () => Buffer }
  | { path: string; type: 'symlink'; mode: number; uid: number; gid: number; target: string };

const BLOCK = 512;

function octal(value: number, width: number): string {
  const digits = value.toString(8);
  if (digits.length > width - 1) throw new Error(`tar: ${value} does not fit a ${width}-byte field`);
  return digits.padStart(width - 1, '0') + '\0';
}

function fits(value: string, bytes: number): boolean {
  return Buffer.byteLength(value) <= bytes && /^[\x20-\x7e]*$/.test(value);
}

/** One pax record: "<length> <key>=<value>\n", the length counting itself. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body) + 1;
  while (String(length).length + Buffer.byteLength(body) !== length) length++;
  return `${length}${body}`;
}

function header(
  name: string,
  mode: number,
  uid: number,
  gid: number,
  size: number,
  mtime: number,
  typeflag: string,
  linkname: string,
): Buffer {
  const h = Buffer.alloc(BLOCK);
  h.write(name, 0, 100, 'utf8');
  h.write(octal(mode & 0o7777, 8), 100, 'ascii');
  h.write(octal(uid, 8), 108, 'ascii');
  h.write(octal(gid, 8), 116, 'ascii');
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(mtime, 12), 136, 'ascii');
  h.write('        ', 148, 'ascii');
  h.write(typeflag, 156, 'ascii');
  h.write(linkname, 157, 100, 'utf8');
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  h.write(octal(0, 8), 329, 'ascii');
  h.write(octal(0, 8), 337, 'ascii');
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(octal(sum, 7) + ' ', 148, 'ascii');
  return h;
}

/** A tar archive being written to a file; sha256 and size of what was written. */
export class TarWriter {
  private readonly fd: number;
  private readonly hash: Hash = createHash('sha256');
  private written = 0;

  constructor(
    path: string,
    private readonly mtime: number,
  ) {
    this.fd = openSync(path, 'w');
  }

  private out(buf: Buffer): void {
    writeSync(this.fd, buf);
    this.hash.update(buf);
    this.written += buf.length;
  }

  private pad(size: number): void {
    const rest = size % BLOCK;
    if (rest !== 0) this.out(Buffer.alloc(BLOCK - rest));
  }

  add(entry: TarEntry): void {
    const name = entry.type === 'dir' ? `${entry.path}/` : entry.path;
    const linkname = entry.type === 'symlink' ? entry.target : '';
    let pax = '';
    if (!fits(name, 100)) pax += paxRecord('path', name);
    if (!fits(linkname, 100)) pax += paxRecord('linkpath', linkname);
    if (pax !== '') {
      const body = Buffer.from(pax, 'utf8');
      const base = name.replace(/\/$/, '').split('/').pop() ?? 'entry';
      this.out(
        header(
          `PaxHeaders/${Buffer.from(base)
            .subarray(0, 80)
            .toString('latin1')
            .replace(/[^\x20-\x7e]/g, '_')}`,
          0o644,
          0,
          0,
          body.length,
          this.mtime,
          'x',
          '',
        ),
      );
      this.out(body);
      this.pad(body.length);
    }
    const shortName = fits(name, 100)
      ? name
      : Buffer.from(name)
          .subarray(0, 99)
          .toString('latin1')
          .replace(/[^\x20-\x7e]/g, '_');
    const shortLink = fits(linkname, 100) ? linkname : '';
    if (entry.type === 'file') {
      const data = entry.data();
      this.out(header(shortName, entry.mode, entry.uid, entry.gid, data.length, this.mtime, '0', ''));
      this.out(data);
      this.pad(data.length);
    } else {
      this.out(header(shortName, entry.mode, entry.uid, entry.gid, 0, this.mtime, entry.type === 'dir' ? '5' : '2', shortLink));
    }
  }

  /** The end-of-archive marker (two zero blocks); returns the archive's sha256 (hex) and size. */
  finish(): { sha256: string; size: number } {
    this.out(Buffer.alloc(2 * BLOCK));
    closeSync(this.fd);
    return { sha256: this.hash.digest('hex'), size: this.written };
  }
}

export interface ReadEntry {
  path: string;
  type: 'file' | 'dir' | 'symlink' | 'hardlink' | 'other';
  mode: number;
  uid: number;
  gid: number;
  mtime: number;
  /** Link target for symlinks and hard links. */
  target: string;
  data: Buffer;
}

function cstring(buf: Buffer, start: number, length: number): string {
  const field = buf.subarray(start, start + length);
  const end = field.indexOf(0);
  return field.subarray(0, end === -1 ? length : end).toString('utf8');
}

function readOctal(buf: Buffer, start: number, length: number): number {
  const text = cstring(buf, start, length).trim();
  return text === '' ? 0 : parseInt(text, 8);
}

function parsePax(body: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let at = 0;
  while (at < body.length) {
    const space = body.indexOf(0x20, at);
    if (space === -1) break;
    const length = parseInt(body.subarray(at, space).toString('ascii'), 10);
    if (!(length > 0)) break;
    const record = body.subarray(space + 1, at + length - 1).toString('utf8');
    const eq = record.indexOf('=');
    if (eq > 0) out[record.slice(0, eq)] = record.slice(eq + 1);
    at += length;
  }
  return out;
}

/**
 * The entries of an uncompressed tar archive, in order; paths without a
 * leading "./" or a trailing "/". Checks every header's checksum.
 */
export function readTar(archive: Buffer): ReadEntry[] {
  const entries: ReadEntry[] = [];
  let at = 0;
  let pax: Record<string, string> = {};
  let longName: string | undefined;
  let longLink: string | undefined;
  while (at + BLOCK <= archive.length) {
    const h = archive.subarray(at, at + BLOCK);
    if (h.every((b) => b === 0)) break;
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (h[i] ?? 0);
    if (sum !== readOctal(h, 148, 8)) throw new Error(`tar: bad header checksum at offset ${at}`);
    const typeflag = String.fromCharCode(h[156] ?? 0);
    const size = readOctal(h, 124, 12);
    const data = archive.subarray(at + BLOCK, at + BLOCK + size);
    at += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    if (typeflag === 'x') {
      pax = { ...pax, ...parsePax(data) };
      continue;
    }
    if (typeflag === 'g') continue;
    if (typeflag === 'L') {
      longName = cstring(data, 0, data.length);
      continue;
    }
    if (typeflag === 'K') {
      longLink = cstring(data, 0, data.length);
      continue;
    }
    const magic = cstring(h, 257, 6);
    const prefix = magic.startsWith('ustar') ? cstring(h, 345, 155) : '';
    let path = pax.path ?? longName ?? (prefix !== '' ? `${prefix}/${cstring(h, 0, 100)}` : cstring(h, 0, 100));
    path = path.replace(/^\.\//, '').replace(/\/+$/, '');
    const target = pax.linkpath ?? longLink ?? cstring(h, 157, 100);
    const type =
      typeflag === '0' || typeflag === '\0' || typeflag === '7'
        ? 'file'
        : typeflag === '5'
          ? 'dir'
          : typeflag === '2'
            ? 'symlink'
            : typeflag === '1'
              ? 'hardlink'
              : 'other';
    entries.push({
      path,
      type,
      mode: readOctal(h, 100, 8),
      uid: readOctal(h, 108, 8),
      gid: readOctal(h, 116, 8),
      mtime: readOctal(h, 136, 12),
      target,
      data: Buffer.from(data),
    });
    pax = {};
    longName = undefined;
    longLink = undefined;
  }
  return entries;
}
