/**
 * RFC 3339 timestamps, as Kubernetes writes them (metav1.Time, the
 * countdown and approval annotations): read with an explicit offset only,
 * written in UTC with milliseconds. Pure.
 */
import { DateTime } from 'luxon';

/**
 * The instants an RFC 3339 timestamp can name (years 0000-9999); others would
 * need an extended year that Kubernetes tooling cannot read.
 */
const EARLIEST_RFC3339_MS = -62_167_219_200_000; // 0000-01-01T00:00:00.000Z
export const LATEST_RFC3339_MS = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z

/**
 * RFC 3339 date-time, as Go's time.RFC3339 / RFC3339Nano read it: an explicit
 * offset is required, so the machine's local zone never comes into play.
 */
const RFC3339_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;

/**
 * Reads an RFC 3339 timestamp to epoch milliseconds (sub-millisecond digits
 * are truncated); undefined when it is not one or names no real instant.
 */
export function parseRfc3339(text: string): number | undefined {
  if (!RFC3339_PATTERN.test(text)) return undefined;
  const parsed = DateTime.fromISO(text, { zone: 'utc' });
  return parsed.isValid ? parsed.toMillis() : undefined;
}

/**
 * Epoch milliseconds as RFC 3339 UTC with milliseconds, "2026-11-21T12:00:00.000Z".
 * Throws on instants outside years 0000-9999, which callers rule out first.
 */
export function formatRfc3339(ms: number): string {
  const text = ms >= EARLIEST_RFC3339_MS && ms <= LATEST_RFC3339_MS ? DateTime.fromMillis(ms, { zone: 'utc' }).toISO() : null;
  if (text === null) throw new RangeError(`cannot format ${ms} as an RFC 3339 timestamp`);
  return text;
}
