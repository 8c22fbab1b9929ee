/**
 * The dependency check (`npm run lint:deps`: dependency-cruiser with
 * .dependency-cruiser.cjs, run by `npm run lint` and so by `npm test`)
 * passes on this repository, and fails on a tree that breaks each of its
 * rules: an import up or across the layers of docs/architecture.md, a
 * type-only import cycle, a client or an I/O module in core/.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { repoRoot } from '../../src/api/crd-paths.js';

const root = repoRoot();
const bin = join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruiser.mjs');
const config = join(root, '.dependency-cruiser.cjs');

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
}

/** Runs the check as `npm run lint:deps` does, in `cwd`: its exit status is the number of violations. */
function lint(cwd: string, paths: readonly string[], ...flags: string[]): { status: number | null; stdout: string } {
  const run = spawnSync(process.execPath, [bin, ...paths, '--config', config, ...flags], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  if (run.error) throw run.error;
  if (!run.stdout) throw new Error(`dependency-cruiser printed nothing (exit ${String(run.status)}): ${run.stderr}`);
  return { status: run.status, stdout: run.stdout };
}

/** The same check's violations, each as "rule: from -> to". */
function violations(cwd: string, paths: readonly string[]): string[] {
  const out = JSON.parse(lint(cwd, paths, '--output-type', 'json').stdout) as { summary: { violations: Violation[] } };
  const named = (to: string): string => (to.includes('node_modules/@kubernetes/client-node/') ? '@kubernetes/client-node' : to);
  return out.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${named(v.to)}`).sort();
}

describe('the dependency check', () => {
  it('passes on this repository: no import against the layers, no cycle', () => {
    const run = lint(root, ['src', 'test', 'bench', 'hack']);
    expect(run.stdout).toContain('no dependency violations found');
    expect(run.status).toBe(0);
  });

  describe('on a tree that breaks every rule', () => {
    let dir: string;
    const files: Record<string, string> = {
      'src/api/a.ts': "import type { K } from '../kube/k.js';\nexport type A = K;\n",
      'src/core/c.ts': "import { r } from '../runtime/r.js';\nexport const c = r;\n",
      'src/core/d.ts': "import { readFileSync } from 'node:fs';\nexport const d = readFileSync;\n",
      'src/core/e.ts': "import { KubeConfig } from '@kubernetes/client-node';\nexport const e = KubeConfig;\n",
      'src/kube/k.ts': "import { r } from '../runtime/r.js';\nexport type K = string;\nexport const k = r;\n",
      'src/kube/m.ts': "import { gone } from './missing.js';\nexport const m = gone;\n",
      'src/runtime/r.ts': "import type { O } from '../observability/o.js';\nexport const r = 1;\nexport type R = O;\n",
      'src/observability/o.ts': "import type { X } from '../controllers/x.js';\nexport type O = X;\n",
      'src/controllers/x.ts':
        "import { y } from '../cli/y.js';\nimport { main } from '../main.js';\nexport type X = string;\nexport const x = [y, main];\n",
      'src/controllers/w.ts': 'export const w = 1;\n',
      'src/controllers/v.ts': "import { KubeConfig } from '@kubernetes/client-node';\nexport const v = KubeConfig;\n",
      'src/controllers/p.ts': "import type { Q } from './q.js';\nexport interface P { q?: Q }\n",
      'src/controllers/q.ts': "import type { P } from './p.js';\nexport interface Q { p?: P }\n",
      'src/cli/y.ts': "import { main } from '../main.js';\nexport const y = main;\n",
      'src/cli/z.ts': "import { w } from '../controllers/w.js';\nexport const z = w;\n",
      'src/main.ts': "import { t } from '../test/t.js';\nexport const main = t;\n",
      'test/t.ts': 'export const t = 1;\n',
      'tsconfig.json': JSON.stringify({
        compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', verbatimModuleSyntax: true, strict: true },
        include: ['src', 'test'],
      }),
      'package.json': JSON.stringify({ name: 'layers-fixture', type: 'module' }),
    };

    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'bundlesmith-layers-'));
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), text);
      }
      symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('fails, and names each broken rule at its import', () => {
      const found = violations(dir, ['src', 'test']);
      expect(found).toEqual(
        [
          'api-imports-only-api: src/api/a.ts -> src/kube/k.ts',
          'core-imports-only-api: src/core/c.ts -> src/runtime/r.ts',
          'core-holds-no-client: src/core/d.ts -> fs',
          'core-holds-no-client-package: src/core/e.ts -> @kubernetes/client-node',
          'only-kube-talks-to-the-api-server: src/core/e.ts -> @kubernetes/client-node',
          'kube-imports-below: src/kube/k.ts -> src/runtime/r.ts',
          'resolvable: src/kube/m.ts -> ./missing.js',
          'runtime-imports-below: src/runtime/r.ts -> src/observability/o.ts',
          'observability-imports-below: src/observability/o.ts -> src/controllers/x.ts',
          'controllers-import-below: src/controllers/x.ts -> src/cli/y.ts',
          'controllers-import-below: src/controllers/x.ts -> src/main.ts',
          'only-kube-talks-to-the-api-server: src/controllers/v.ts -> @kubernetes/client-node',
          // a cycle is reported once, at the import where the cruise first closes it
          'no-circular: src/controllers/p.ts -> src/controllers/q.ts',
          'cli-imports-below: src/cli/y.ts -> src/main.ts',
          'cli-imports-below: src/cli/z.ts -> src/controllers/w.ts',
          'src-imports-no-tests: src/main.ts -> test/t.ts',
        ].sort(),
      );
      expect(lint(dir, ['src', 'test']).status).toBe(found.length);
    });
  });
});
