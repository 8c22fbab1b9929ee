/**
 * Values a reference substituted into a manifest (a password read from a
 * Secret, say) must not leave the operator through what it writes for
 * others to read: the apiserver echoes a refused value in its message
 * ("metadata.labels: Invalid value: \"hunter2\" ..."), and that message
 * would reach the Bundle's status, an event and the log, readable by anyone
 * who may get Bundles. Every such message is passed through redact() with
 * the values the resource's references substituted.
 *
 * Pure.
 */
import { isRecord } from './objects.js';

export const REDACTED = '[redacted]';

/**
 * Shorter values are not redacted: a one- to three-character string (a
 * digit, "on") would blank out unrelated words of every message, and keeps
 * nothing secret worth the name.
 */
const MIN_REDACTED_LENGTH = 4;

/** The texts to blank out for values substituted by references: each string and number leaf, as written and as quoted in JSON. */
export function redactionsFor(values: Iterable<unknown>): string[] {
  const out = new Set<string>();
  const stack: unknown[] = [...values];
  // Iterative: a substituted value may be an arbitrarily nested object.
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'string' || typeof value === 'number') {
      const text = String(value);
      if (text.length < MIN_REDACTED_LENGTH) continue;
      out.add(text);
      // As a JSON or Go-quoted string shows it ("a\"b", "line\n").
      const quoted = JSON.stringify(text).slice(1, -1);
      if (quoted !== text) out.add(quoted);
    } else if (Array.isArray(value)) {
      stack.push(...(value as unknown[]));
    } else if (isRecord(value)) {
      stack.push(...Object.values(value));
    }
  }
  // Longest first, so a value containing another is blanked whole.
  return [...out].sort((a, b) => b.length - a.length);
}

/** `text` with every occurrence of each redaction replaced by [redacted]. */
export function redact(text: string, redactions: readonly string[]): string {
  let out = text;
  for (const secret of redactions) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  return out;
}
