import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where the generated CRD lives. The chart ships the same file under files/
 * (not crds/, which Helm never upgrades): templates/crds.yaml renders it.
 */
export const CRD_PATHS = ['crds/bundles.smith.atlassian.com.yaml', 'charts/bundlesmith/files/bundles.smith.atlassian.com.yaml'] as const;

/** The repository root, found from this module's location (src/api or dist/src/api). */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('package.json not found above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
  return dir;
}
