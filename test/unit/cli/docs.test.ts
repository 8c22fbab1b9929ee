import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../../src/api/crd-paths.js';
import { CLI_DOC_PATH, renderCliDoc } from '../../../src/cli/docs.js';
import { COMMANDS } from '../../../src/cli/commands.js';

describe('docs/cli.md', () => {
  it("is what `npm run docs:cli` generates from the commands' help (run it after changing a command)", async () => {
    expect(readFileSync(join(repoRoot(), CLI_DOC_PATH), 'utf8')).toBe(await renderCliDoc());
  });

  it('documents every command with its help and examples', async () => {
    const doc = await renderCliDoc();
    for (const c of COMMANDS) {
      expect(doc).toContain(`## \`${c.name}\``);
      expect(doc).toContain(`Usage: bundlesmith ${c.name} [options]`);
      for (const e of c.examples) expect(doc).toContain(`bundlesmith ${e.args}`);
    }
  });
});
