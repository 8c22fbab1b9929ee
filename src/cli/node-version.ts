/**
 * The Node.js version the CLI needs, checked by the entry before anything
 * that would crash on an older Node is imported. No imports here: this module
 * must load on any Node that runs ES modules.
 */

/** package.json's engines.node, without the ">=" (a unit test keeps them equal). */
export const MINIMUM_NODE = '22.19.0';

function parts(version: string): number[] {
  return version
    .replace(/^v/, '')
    .split('.')
    .map((p) => Number.parseInt(p, 10) || 0);
}

/** The one-line complaint for `version` (process.versions.node), or undefined when it is new enough. */
export function nodeVersionProblem(version: string, program: string): string | undefined {
  const have = parts(version);
  const need = parts(MINIMUM_NODE);
  for (let i = 0; i < need.length; i++) {
    const a = have[i] ?? 0;
    const b = need[i] ?? 0;
    if (a > b) return undefined;
    if (a < b) return `${program}: needs Node.js ${MINIMUM_NODE} or later; this is Node.js ${version}`;
  }
  return undefined;
}
