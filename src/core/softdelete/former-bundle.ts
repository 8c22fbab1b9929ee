/**
 * Where a released object came from. The Bundle's name goes into the
 * `smith.atlassian.com/former-bundle` annotation, whole; the label of the
 * same name only marks the object released (the sweeper's watch selects on
 * it), with a value that always fits a label: the name itself up to 63
 * characters, else a prefix of it and a hash. A Bundle's name may be 253
 * characters long, a label value only 63: a release that wrote the name as
 * the label value was refused (422) for every longer name, and nothing such a
 * Bundle had was ever let go. Pure.
 */
import { createHash } from 'node:crypto';
import { Annotations, Labels } from '../../api/names.js';

/** A label value's limit (Kubernetes validation: 63 characters). */
export const LABEL_VALUE_MAX = 63;

/** The former-bundle label's value for a Bundle name: the name when it fits, else its first 52 characters, '-' and 10 hex of its SHA-256. */
export function formerBundleLabelValue(bundleName: string): string {
  if (bundleName.length <= LABEL_VALUE_MAX) return bundleName;
  const hash = createHash('sha256').update(bundleName).digest('hex').slice(0, 10);
  // A Bundle name is a DNS subdomain: its prefix is valid label text (letters, digits, '-', '.'), and the hash ends it with a digit or letter.
  return `${bundleName.slice(0, LABEL_VALUE_MAX - hash.length - 1)}-${hash}`;
}

/** The name of the Bundle that released the object: the annotation, else (a release written before it) the label; undefined when neither. */
export function formerBundleOf(meta: {
  labels?: Readonly<Record<string, string>> | undefined;
  annotations?: Readonly<Record<string, string>> | undefined;
}): string | undefined {
  return meta.annotations?.[Annotations.formerBundle] ?? meta.labels?.[Labels.formerBundle];
}
