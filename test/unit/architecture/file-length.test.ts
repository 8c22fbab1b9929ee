/**
 * No file under src/ is over 350 lines (issue 26): a longer file holds more
 * than one concept, and is split along its seams into modules that say
 * what they hold. Lines are counted as `wc -l` counts them: newline
 * characters.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../../src/api/crd-paths.js';

const MAX_LINES = 350;

const root = repoRoot();

function sourceFiles(): string[] {
  return readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((p) => p.endsWith('.ts'))
    .map((p) => `src/${p.split('\\').join('/')}`)
    .sort();
}

function lineCount(path: string): number {
  let count = 0;
  for (const c of readFileSync(join(root, path), 'utf8')) if (c === '\n') count++;
  return count;
}

describe('file length', () => {
  const lengths = new Map(sourceFiles().map((p) => [p, lineCount(p)] as const));

  test('finds the source files', () => {
    expect(lengths.size).toBeGreaterThan(100);
    expect(lengths.has('src/api/bundle.ts')).toBe(true);
  });

  test(`no file under src/ is over ${MAX_LINES} lines`, () => {
    const over = [...lengths].filter(([, n]) => n > MAX_LINES).map(([p, n]) => `${p}: ${n} lines`);
    expect(over).toEqual([]);
  });
});
