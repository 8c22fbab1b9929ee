/** Markdown tables (the benchmark pages and summary) and small statistics. */

export type Row = readonly string[];

export function markdownTable(header: Row, rows: readonly Row[]): string {
  const escape = (cell: string) => cell.replace(/\|/g, '\\|');
  const lines = [`| ${header.map(escape).join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`];
  for (const row of rows) lines.push(`| ${row.map(escape).join(' | ')} |`);
  return lines.join('\n');
}

/** Median (the lower middle for an even count, i.e. the better of two times). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? NaN;
}

export function met(ok: boolean | undefined): string {
  if (ok === undefined) return 'not measured';
  return ok ? '**met**' : '**missed**';
}
