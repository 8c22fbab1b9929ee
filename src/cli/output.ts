/** Structured output: one document on stdout, as JSON or YAML (kubectl's -o json|yaml). */
import { stringify } from 'yaml';
import type { OutputFormat } from './args.js';
import type { CliIo } from './io.js';

export function isStructured(format: OutputFormat): format is 'json' | 'yaml' {
  return format === 'json' || format === 'yaml';
}

export function emit(io: CliIo, format: 'json' | 'yaml', value: unknown): void {
  io.out(format === 'json' ? JSON.stringify(value, null, 2) : stringify(value, { lineWidth: 0 }).trimEnd());
}
