/**
 * What the API server checks of a listed object by itself, for the kinds
 * whose rules are fixed (labels on any object; ConfigMap and Secret names,
 * keys, base64 and size), so `validate` refuses offline what an apply would
 * be refused for. The operator puts the API server's refusal in the Bundle's
 * status; the messages here are the API server's words. Values that hold a
 * reference placeholder are judged only once resolved (by the operator, or
 * diff's dry run).
 */
import { isRecord } from '../core/bundle/objects.js';
import { placeholderName } from '../core/bundle/references.js';

/** A value the operator replaces by a reference's value: judged once resolved. */
const hasPlaceholder = (value: string): boolean => placeholderName(value) !== undefined;

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const LABEL_VALUE_HELP =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const SUBDOMAIN_HELP =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const CONFIG_KEY_HELP =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
const BASE64_CHAR = /[A-Za-z0-9+/]/;
/** ConfigMaps and Secrets hold at most 1 MiB of data. */
export const MAX_DATA_BYTES = 1024 * 1024;

/** Where Go's base64 decoder stops on `text`, or undefined when it decodes. */
export function base64Error(text: string): string | undefined {
  const padded = text.replace(/=+$/, '');
  for (let i = 0; i < padded.length; i++) if (!BASE64_CHAR.test(padded[i] ?? '')) return `illegal base64 data at input byte ${i}`;
  const padding = text.length - padded.length;
  if (text.length % 4 !== 0 || padding > 2) return `illegal base64 data at input byte ${Math.floor(text.length / 4) * 4}`;
  return undefined;
}

function configKeyProblem(field: string, key: string): string | undefined {
  if (key.length > 253) return `${field}[${key}]: Invalid value: ${JSON.stringify(key)}: must be no more than 253 characters`;
  if (!CONFIG_KEY.test(key)) return `${field}[${key}]: Invalid value: ${JSON.stringify(key)}: ${CONFIG_KEY_HELP}`;
  if (key === '.' || key === '..' || key.startsWith('..'))
    return `${field}[${key}]: Invalid value: ${JSON.stringify(key)}: must not be '.' or '..' or start with '..'`;
  return undefined;
}

function labelProblems(labels: unknown): string[] {
  if (!isRecord(labels)) return [];
  return Object.values(labels).flatMap((value) => {
    if (typeof value !== 'string' || hasPlaceholder(value)) return [];
    if (value.length > 63) return [`metadata.labels: Invalid value: ${JSON.stringify(value)}: must be no more than 63 characters`];
    return LABEL_VALUE.test(value) ? [] : [`metadata.labels: Invalid value: ${JSON.stringify(value)}: ${LABEL_VALUE_HELP}`];
  });
}

function dataProblems(kind: 'ConfigMap' | 'Secret', object: Record<string, unknown>): string[] {
  const fields = kind === 'ConfigMap' ? ['data', 'binaryData'] : ['data', 'stringData'];
  const out: string[] = [];
  let bytes = 0;
  for (const field of fields) {
    const map = object[field];
    if (!isRecord(map)) continue;
    for (const [key, value] of Object.entries(map)) {
      const keyProblem = configKeyProblem(field, key);
      if (keyProblem !== undefined) out.push(keyProblem);
      if (typeof value !== 'string') continue;
      bytes += key.length + Buffer.byteLength(value);
      const base64 = (kind === 'Secret' && field === 'data') || field === 'binaryData';
      if (base64 && !hasPlaceholder(value)) {
        const error = base64Error(value);
        // The API server's own words for a Secret's value: never the value itself.
        if (error !== undefined) out.push(`${field}[${key}]: Invalid value: "<value omitted>": ${error}`);
      }
    }
  }
  if (bytes > MAX_DATA_BYTES) out.push(`${kind === 'Secret' ? 'data' : '[]'}: Too long: must have at most ${MAX_DATA_BYTES} bytes`);
  return out;
}

/** The top-level fields of the fixed kinds: server-side apply refuses any other. */
const DECLARED_FIELDS: Record<'ConfigMap' | 'Secret', readonly string[]> = {
  ConfigMap: ['apiVersion', 'kind', 'metadata', 'data', 'binaryData', 'immutable'],
  Secret: ['apiVersion', 'kind', 'metadata', 'data', 'stringData', 'type', 'immutable'],
};

/** The API server's refusals of one object, each as "<Kind> "<name>" is invalid: <field>: <why>". */
export function builtinObjectProblems(
  object: { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> } } & Record<string, unknown>,
): string[] {
  const problems = labelProblems(object.metadata.labels);
  const name = object.metadata.name;
  const fixedKind = object.apiVersion === 'v1' && (object.kind === 'ConfigMap' || object.kind === 'Secret') ? object.kind : undefined;
  if (fixedKind !== undefined) {
    const undeclared = Object.keys(object).filter((field) => !DECLARED_FIELDS[fixedKind].includes(field));
    // Server-side apply's words: the object is not typed at all, so nothing else is said.
    if (undeclared.length > 0)
      return undeclared.map(
        (field) => `failed to create typed patch object (/v1, Kind=${fixedKind}): .${field}: field not declared in schema`,
      );
    if (!hasPlaceholder(name) && !SUBDOMAIN.test(name))
      problems.push(`metadata.name: Invalid value: ${JSON.stringify(name)}: ${SUBDOMAIN_HELP}`);
    problems.push(...dataProblems(fixedKind, object));
  }
  return problems.map((p) => `${object.kind} ${JSON.stringify(name)} is invalid: ${p}`);
}
