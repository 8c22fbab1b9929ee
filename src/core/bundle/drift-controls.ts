/**
 * Reading the drift controls (issue 27): per object, `smith.atlassian.com/apply`
 * (Always, IfNotPresent), `smith.atlassian.com/ignore` (JSON pointers) and
 * `smith.atlassian.com/drift` (Correct, Warn), over the Bundle's
 * spec.driftDefaults, and which pointers may be ignored at all. Pure.
 * Separate from drift.ts (what the controls decide) so that parsing and
 * validating them, which validateBundle also needs, reads on its own.
 */
import { APPLY_MODES, Annotations, DRIFT_MODES, GROUP, type ApplyMode, type DriftMode } from '../../api/names.js';
import { MAX_IGNORED_POINTERS, MAX_POINTER_LENGTH, type DriftDefaults } from '../../api/spec-defaults.js';
import type { BundleSpec } from '../../api/bundle.js';

export interface DriftControls {
  apply: ApplyMode;
  /** Parsed JSON pointers, as segments. */
  ignore: readonly (readonly string[])[];
  drift: DriftMode;
}

export const DEFAULT_DRIFT_CONTROLS: DriftControls = { apply: 'Always', ignore: [], drift: 'Correct' };

export type PointerRead = { ok: true; segments: string[] } | { ok: false; message: string };

/** An RFC 6901 pointer into an object ("" is the whole object, refused: it is never a field). */
export function parseJsonPointer(text: string): PointerRead {
  if (text.length > MAX_POINTER_LENGTH) return { ok: false, message: `is longer than ${MAX_POINTER_LENGTH} characters` };
  if (!text.startsWith('/')) return { ok: false, message: 'is not a JSON pointer: it must start with "/" (e.g. "/spec/replicas")' };
  const segments: string[] = [];
  for (const raw of text.slice(1).split('/')) {
    if (/~[^01]|~$/.test(raw)) return { ok: false, message: 'is not a JSON pointer: "~" must be written "~0", and "/" inside a key "~1"' };
    segments.push(raw.replace(/~1/g, '/').replace(/~0/g, '~'));
  }
  return { ok: true, segments };
}

/**
 * Why a pointer may not be ignored, if it may not: the object's identity and
 * ownership, and the operator's own annotations and labels (the CRD's
 * IGNORABLE_POINTER_RULES say the same of spec.driftDefaults.ignore).
 */
export function unignorable(segments: readonly string[]): string | undefined {
  const [top, field, key] = segments;
  if (top === 'apiVersion' || top === 'kind') return `${top} is the object's identity`;
  if (top !== 'metadata') return undefined;
  if (field === undefined) return "metadata holds the object's identity and ownership";
  if (field === 'name' || field === 'namespace') return `metadata.${field} is the object's identity`;
  if (field === 'ownerReferences') return 'ownerReferences are how the Bundle owns, prunes and soft-deletes the object';
  if ((field === 'annotations' || field === 'labels') && key === undefined)
    return `all of metadata.${field} would take the operator's own ${field} with them`;
  if ((field === 'annotations' || field === 'labels') && key !== undefined && key.startsWith(`${GROUP}/`))
    return `${key} is the operator's own (soft deletes and ownership read it)`;
  return undefined;
}

/** A list of pointers (the annotation's comma-separated text, or spec.driftDefaults.ignore), read and checked. */
export function readIgnoreList(
  pointers: readonly string[],
  where: string,
): { ok: true; ignore: string[][] } | { ok: false; message: string } {
  if (pointers.length > MAX_IGNORED_POINTERS)
    return { ok: false, message: `${where} lists ${pointers.length} pointers: at most ${MAX_IGNORED_POINTERS}` };
  const ignore: string[][] = [];
  for (const text of pointers) {
    const read = parseJsonPointer(text);
    if (!read.ok) return { ok: false, message: `${where}: ${JSON.stringify(text)} ${read.message}` };
    const why = unignorable(read.segments);
    if (why !== undefined) return { ok: false, message: `${where}: ${JSON.stringify(text)} may not be ignored: ${why}` };
    ignore.push(read.segments);
  }
  return { ok: true, ignore };
}

export type DriftControlsRead = { ok: true; controls: DriftControls } | { ok: false; message: string };

/** The object's drift controls: its annotations over the Bundle's spec.driftDefaults. */
export function readDriftControls(
  annotations: Readonly<Record<string, string>> | undefined,
  defaults: DriftDefaults | undefined,
): DriftControlsRead {
  const applyText = annotations?.[Annotations.apply];
  const driftText = annotations?.[Annotations.drift];
  const ignoreText = annotations?.[Annotations.ignore];
  const apply = applyText ?? defaults?.apply ?? 'Always';
  if (!isOneOf(APPLY_MODES, apply))
    return { ok: false, message: `annotation ${Annotations.apply} ${JSON.stringify(apply)} is not one of ${APPLY_MODES.join(', ')}` };
  const drift = driftText ?? defaults?.drift ?? 'Correct';
  if (!isOneOf(DRIFT_MODES, drift))
    return { ok: false, message: `annotation ${Annotations.drift} ${JSON.stringify(drift)} is not one of ${DRIFT_MODES.join(', ')}` };
  const pointers =
    ignoreText !== undefined
      ? ignoreText
          .split(',')
          .map((p) => p.trim())
          .filter((p) => p !== '')
      : (defaults?.ignore ?? []);
  const ignore = readIgnoreList(pointers, ignoreText !== undefined ? `annotation ${Annotations.ignore}` : 'spec.driftDefaults.ignore');
  if (!ignore.ok) return ignore;
  return { ok: true, controls: { apply, ignore: ignore.ignore, drift } };
}

function isOneOf<T extends string>(values: readonly T[], value: string): value is T {
  return (values as readonly string[]).includes(value);
}

/** Every drift control of the spec that cannot be read, for validateBundle: the defaults once, then each object. */
export function driftControlIssues(spec: Pick<BundleSpec, 'resources' | 'driftDefaults'>): { resource?: string; message: string }[] {
  const defaults = spec.driftDefaults;
  const out: { resource?: string; message: string }[] = [];
  const fromDefaults = readDriftControls(undefined, defaults);
  if (!fromDefaults.ok) out.push({ message: fromDefaults.message });
  for (const r of spec.resources) {
    const annotations = r.spec.object?.metadata.annotations;
    if (
      annotations?.[Annotations.apply] === undefined &&
      annotations?.[Annotations.drift] === undefined &&
      annotations?.[Annotations.ignore] === undefined
    )
      continue;
    // Read without the defaults: a bad default is said once, above.
    const read = readDriftControls(annotations, undefined);
    if (!read.ok) out.push({ resource: r.name, message: read.message });
  }
  return out;
}
