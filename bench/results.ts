/**
 * bench/results.json: every headline figure of one full `npm run bench`,
 * with the machine and versions, in one generic row shape that every
 * scenario's rows fit (name, value, unit, reference, ratio, target, met).
 * The summary table at the top of docs/benchmarks.md is rendered from this
 * file alone, so the summary never shows a figure the JSON does not hold.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { markdownTable } from './table.js';

/** One measured figure. `reference` and `ratio` are null when the figure has nothing to be compared with. */
export interface Figure {
  /** Stable across sizes and runs (`--quick` uses the same ids): what tests and tooling key on. */
  id: string;
  /** What was measured, with the sizes used. */
  name: string;
  value: number;
  unit: string;
  /** Which way is better: rates higher, times and bytes lower. */
  better: 'higher' | 'lower';
  /** A short qualifier shown beside the value (requests per object, runs). */
  detail: string | null;
  reference: { name: string; value: number; unit: string } | null;
  /** value / reference.value (same unit), whichever way is better. */
  ratio: number | null;
  /** The target in words, e.g. ">= 2x kube-controller-manager"; null when the issue sets none. */
  target: string | null;
  /** Whether the target was met; null without a target or when it could not be measured. */
  met: boolean | null;
}

export interface BenchResults {
  generatedAt: string;
  tookSeconds: number;
  quick: boolean;
  machine: { cpus: number; cpuModel: string; memoryGiB: number };
  versions: { node: string; kubernetes: string; etcd: string; commit: string };
  /** The sizes the run used (BENCH_* after defaults), as bench/config.ts read them. */
  config: unknown;
  figures: Figure[];
  /** Scenarios that failed: their figures are missing. */
  failures: string[];
  /** Where the figures came from when not from this one run (e.g. assembled from partial runs by hand); null for a run's own file. */
  note: string | null;
}

const FigureSchema = z.object({
  id: z.string().min(1),
  name: z.string().min(1),
  value: z.number(),
  unit: z.string(),
  better: z.enum(['higher', 'lower']),
  detail: z.string().nullable(),
  reference: z.object({ name: z.string(), value: z.number(), unit: z.string() }).nullable(),
  ratio: z.number().nullable(),
  target: z.string().nullable(),
  met: z.boolean().nullable(),
});

export const BenchResultsSchema = z.object({
  generatedAt: z.string(),
  tookSeconds: z.number(),
  quick: z.boolean(),
  machine: z.object({ cpus: z.number().int(), cpuModel: z.string(), memoryGiB: z.number() }),
  versions: z.object({ node: z.string(), kubernetes: z.string(), etcd: z.string(), commit: z.string() }),
  config: z.unknown(),
  figures: z.array(FigureSchema),
  failures: z.array(z.string()),
  note: z.string().nullable(),
});

/** Reads results.json text (a committed file, or one a run left in a temp dir); throws with the schema's complaint. */
export function parseResults(text: string): BenchResults {
  const parsed = BenchResultsSchema.safeParse(JSON.parse(text));
  if (!parsed.success)
    throw new Error(
      `results.json does not match the schema: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return parsed.data;
}

/** Stable JSON (two-space indent, trailing newline): a re-run of the same figures gives the same bytes. */
export function serializeResults(results: BenchResults): string {
  return `${JSON.stringify(results, (_key, value: unknown) => (typeof value === 'number' && !Number.isFinite(value) ? null : value), 2)}\n`;
}

/** A figure built from a value and an optional reference: the ratio is computed here, once. */
export function figure(f: {
  id: string;
  name: string;
  value: number;
  unit: string;
  better: 'higher' | 'lower';
  detail?: string;
  reference?: { name: string; value: number; unit?: string };
  target?: { text: string; met: (f: { value: number; ratio: number | null }) => boolean };
}): Figure {
  const reference = f.reference ? { name: f.reference.name, value: f.reference.value, unit: f.reference.unit ?? f.unit } : null;
  const ratio =
    reference && reference.value !== 0 && Number.isFinite(reference.value) && Number.isFinite(f.value) ? f.value / reference.value : null;
  const measured = Number.isFinite(f.value);
  return {
    id: f.id,
    name: f.name,
    value: f.value,
    unit: f.unit,
    better: f.better,
    detail: f.detail ?? null,
    reference,
    ratio,
    target: f.target?.text ?? null,
    met: f.target && measured ? f.target.met({ value: f.value, ratio }) : null,
  };
}

/** Rounds for display: three significant digits, whole numbers from 100 up. */
export function formatNumber(v: number): string {
  if (!Number.isFinite(v)) return '-';
  const abs = Math.abs(v);
  if (abs >= 100) return Math.round(v).toLocaleString('en-US');
  if (abs >= 10) return v.toFixed(1);
  return v.toFixed(2);
}

function valueCell(f: Figure): string {
  const value = `${formatNumber(f.value)} ${f.unit}`;
  return f.detail ? `${value} (${f.detail})` : value;
}

function referenceCell(f: Figure): string {
  return f.reference ? `${f.reference.name}: ${formatNumber(f.reference.value)} ${f.reference.unit}` : '';
}

function ratioCell(f: Figure): string {
  if (f.ratio === null) return '';
  return `${f.ratio.toFixed(2)}x (${f.better} is better)`;
}

function targetCell(f: Figure): string {
  if (f.target === null) return '';
  return `${f.target}: ${f.met === null ? 'not measured' : f.met ? '**met**' : '**missed**'}`;
}

export const SUMMARY_START =
  '<!-- bench-summary:start (generated from bench/results.json by `npm run bench:summary`; edits here are overwritten) -->';
export const SUMMARY_END = '<!-- bench-summary:end -->';
export const NOTES_START =
  '<!-- bench-notes:start (written by hand: what bounds the missed targets; `npm run bench` keeps what lies between these markers) -->';
export const NOTES_END = '<!-- bench-notes:end -->';

/** The summary: one line on where the figures come from, then one table row per figure, in the order the run produced them. */
export function renderSummary(results: BenchResults): string {
  const { machine, versions } = results;
  const when = results.generatedAt.slice(0, 10);
  const lines = [
    `From bench/results.json: \`npm run bench${results.quick ? ' -- --quick' : ''}\` on ${when} at commit ${versions.commit}, ${machine.cpus} CPUs (${machine.cpuModel}), ${machine.memoryGiB.toFixed(1)} GiB; Node ${versions.node}, Kubernetes ${versions.kubernetes}, etcd ${versions.etcd}.`,
    '',
    markdownTable(
      ['measure', 'bundlesmith', 'reference', 'ratio', 'target'],
      results.figures.map((f) => [f.name, valueCell(f), referenceCell(f), ratioCell(f), targetCell(f)]),
    ),
  ];
  if (results.note !== null) lines.splice(1, 0, '', results.note);
  if (results.failures.length > 0) lines.push('', `Failed in that run (no figures): ${results.failures.join('; ')}.`);
  return lines.join('\n');
}

/** Replaces what lies between the markers (markers kept); throws when they are missing, so a page without them is never rewritten blindly. */
export function replaceSummary(page: string, summary: string): string {
  const start = page.indexOf(SUMMARY_START);
  const end = page.indexOf(SUMMARY_END);
  if (start < 0 || end < 0 || end < start)
    throw new Error(`docs/benchmarks.md has no summary markers (${SUMMARY_START} ... ${SUMMARY_END})`);
  return `${page.slice(0, start + SUMMARY_START.length)}\n${summary}\n${page.slice(end)}`;
}

/** The hand-written notes between their markers, without the markers; null when the page has none. */
export function notesOf(page: string): string | null {
  const start = page.indexOf(NOTES_START);
  const end = page.indexOf(NOTES_END);
  if (start < 0 || end < 0 || end < start) return null;
  return page
    .slice(start + NOTES_START.length, end)
    .replace(/^\n/, '')
    .replace(/\n$/, '');
}

/**
 * A full page: the generated Markdown with, under its title, the summary
 * between its markers and the hand-written notes (carried from the page this
 * one replaces) between theirs.
 */
export function pageWithSummary(markdown: string, summary: string, notes: string | null): string {
  const [title = '# Benchmarks', ...rest] = markdown.split('\n');
  const notesBlock = notes ? [NOTES_START, notes, NOTES_END] : [NOTES_START, NOTES_END];
  return [title, '', '## Summary', '', SUMMARY_START, summary, SUMMARY_END, '', ...notesBlock, ...rest].join('\n');
}

/** Rewrites the summary of a page (docs/benchmarks.md) from a results file; false when nothing changed. */
export function regenerateSummary(resultsPath: string, pagePath: string): boolean {
  const results = parseResults(readFileSync(resultsPath, 'utf8'));
  const before = readFileSync(pagePath, 'utf8');
  const after = replaceSummary(before, renderSummary(results));
  if (after === before) return false;
  writeFileSync(pagePath, after);
  return true;
}
