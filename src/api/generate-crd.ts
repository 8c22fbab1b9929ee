/** Writes the generated Bundle CRD to crds/ and to the Helm chart's files/ (see CRD_PATHS). */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { renderBundleCrdYaml } from './crd.js';
import { CRD_PATHS, repoRoot } from './crd-paths.js';

const yaml = renderBundleCrdYaml();
for (const rel of CRD_PATHS) {
  const file = join(repoRoot(), rel);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, yaml);
  console.log(`wrote ${rel}`);
}
