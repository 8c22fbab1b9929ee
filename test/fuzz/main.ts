/**
 * `npm run fuzz -- [--seeds N] [--seed S] [--suite gc|softdelete]`: runs
 * seeds S .. S+N-1 of both randomized safety suites (or one) against a real
 * control plane, prints a line per seed and, last,
 * `fuzz: N seeds, D divergences`; exits 1 on any divergence.
 *
 * - gc: differential fuzzing of the garbage collector against
 *   kube-controller-manager's (test/fuzz/gc/).
 * - softdelete: model-based testing of the Bundle controller's deletions
 *   (test/fuzz/softdelete/).
 */
import { stopAllControlPlanes } from '../../bench/cluster.js';
import type { FuzzSuite, SeedResult, SuiteName } from './suite.js';

interface FuzzArgs {
  seeds: number;
  seed: number;
  suites: SuiteName[];
}

const USAGE = 'usage: npm run fuzz -- [--seeds N] [--seed S] [--suite gc|softdelete]';

export function parseFuzzArgs(argv: readonly string[]): FuzzArgs {
  const args: FuzzArgs = { seeds: 10, seed: 1, suites: ['gc', 'softdelete'] };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    const number = () => {
      const n = Number(value);
      if (!Number.isInteger(n) || n < 0) throw new Error(`${flag} takes a whole number (got ${value ?? 'nothing'})\n${USAGE}`);
      i++;
      return n;
    };
    switch (flag) {
      case '--seeds':
        args.seeds = number();
        break;
      case '--seed':
        args.seed = number();
        break;
      case '--suite':
        if (value !== 'gc' && value !== 'softdelete')
          throw new Error(`--suite takes gc or softdelete (got ${value ?? 'nothing'})\n${USAGE}`);
        args.suites = [value];
        i++;
        break;
      default:
        throw new Error(`unknown argument ${flag}\n${USAGE}`);
    }
  }
  return args;
}

async function loadSuite(name: SuiteName): Promise<FuzzSuite> {
  if (name === 'gc') return new (await import('./gc/suite.js')).GcFuzzSuite();
  return new (await import('./softdelete/suite.js')).SoftDeleteFuzzSuite();
}

function log(line: string): void {
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
}

export function formatSeedResult(r: SeedResult): string {
  const head = `${r.suite} seed ${r.seed}: ${r.divergences.length === 0 ? 'ok' : `${r.divergences.length} divergence(s)`} (${r.summary})`;
  if (r.divergences.length === 0) return head;
  const lines = [
    head,
    ...r.divergences.map((d) => `  - ${d}`),
    `  reproduce: npm run fuzz -- --suite ${r.suite} --seed ${r.seed} --seeds 1`,
  ];
  if (r.replay) lines.push('  replay:', ...r.replay.split('\n').map((l) => `    ${l}`));
  return lines.join('\n');
}

async function main(): Promise<number> {
  let args: FuzzArgs;
  try {
    args = parseFuzzArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  }
  let seeds = 0;
  let divergences = 0;
  for (const name of args.suites) {
    const suite = await loadSuite(name);
    log(`${name}: setting up`);
    try {
      await suite.setup({ log });
      for (let seed = args.seed; seed < args.seed + args.seeds; seed++) {
        let result: SeedResult;
        try {
          result = await suite.runSeed(seed);
        } catch (err) {
          // A seed that could not run is not a pass: count it, with its seed.
          result = {
            suite: name,
            seed,
            divergences: [`the seed did not run to the end: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`],
            summary: 'error',
          };
        }
        seeds++;
        if (result.divergences.length > 0) divergences++;
        process.stdout.write(`${formatSeedResult(result)}\n`);
      }
    } finally {
      await suite.teardown();
    }
  }
  process.stdout.write(`fuzz: ${seeds} seeds, ${divergences} divergences\n`);
  return divergences > 0 ? 1 : 0;
}

const stop = (signal: NodeJS.Signals) => () => {
  stopAllControlPlanes();
  process.exit(signal === 'SIGINT' ? 130 : 143);
};
process.on('SIGINT', stop('SIGINT'));
process.on('SIGTERM', stop('SIGTERM'));

main().then(
  (code) => {
    stopAllControlPlanes();
    process.exit(code);
  },
  (err: unknown) => {
    stopAllControlPlanes();
    process.stderr.write(`fuzz: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
