#!/usr/bin/env node
/**
 * The entry of the `bundlesmith` command, also installed as `kubectl-bundle`
 * (a kubectl plugin) and `kubectl_complete-bundle` (kubectl's completion for
 * the plugin). It checks the Node version first, and only then imports the
 * program: on an older Node the program's dependencies die with a stack
 * trace at import time, so this module imports nothing else statically.
 */
import { basename } from 'node:path';
import { nodeVersionProblem } from './node-version.js';

/** What the program is called in usage and errors, from how it was started. */
function invokedAs(script: string | undefined): { name: string; completion: boolean } {
  const base = basename(script ?? 'bundlesmith').replace(/\.js$/, '');
  if (base === 'kubectl_complete-bundle') return { name: 'kubectl bundle', completion: true };
  return { name: base === 'kubectl-bundle' ? 'kubectl bundle' : 'bundlesmith', completion: false };
}

const invocation = invokedAs(process.argv[1]);
const problem = nodeVersionProblem(process.versions.node, invocation.name);
if (problem !== undefined) {
  process.stderr.write(`${problem}\n`);
  process.exitCode = 1;
} else {
  const { runCli } = await import('./program.js');
  const { processIo } = await import('./io.js');
  const args = process.argv.slice(2);
  const argv = invocation.completion ? ['__complete', ...args] : args;
  process.exitCode = await runCli(argv, processIo, { name: invocation.name });
  // A shell waits for a completion: one whose cluster did not answer in time must not linger on its open connection.
  if (argv[0] === '__complete') process.exit();
}
