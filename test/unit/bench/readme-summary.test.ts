/**
 * Issue 13.8: the README's benchmark summary is rendered from
 * bench/results.json alone, the same bytes every time, and only between its
 * markers.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { figure, parseResults, renderSummary, replaceSummary, serializeResults, SUMMARY_END, SUMMARY_START } from '../../../bench/results.js';
import { repoRoot } from '../../../src/api/crd-paths.js';

const fixture = () => parseResults(readFileSync(join(repoRoot(), 'test', 'unit', 'bench', 'fixtures', 'results.json'), 'utf8'));

describe('README benchmark summary', () => {
  it('renders the fixture to a stable table: value with detail, reference, ratio with its direction, target with met / missed / not measured', () => {
    expect(renderSummary(fixture())).toBe(
      [
        'From bench/results.json: `npm run bench` on 2026-11-25 at commit abc1234, 2 CPUs (AMD EPYC), 23.5 GiB; Node v24.21.0, Kubernetes v1.36.3, etcd v3.6.8.',
        '',
        '| measure | bundlesmith | reference | ratio | target |',
        '| --- | --- | --- | --- | --- |',
        '| GC cascade (background), 1000 dependents, equal request budget (100 requests/s) | 116 deletes/s (DELETE configmaps 1.00, POST events 0.00) | kube-controller-manager at --kube-api-qps=50 (DELETE configmaps 1.00, GET configmaps 1.00): 54.0 deletes/s | 2.14x (higher is better) | >= 2x kube-controller-manager: **met** |',
        "| GC cascade (foreground), 1 -> 50 -> 50x20 (1050 dependents), equal request budget (100 requests/s): time to the owner's removal | 11.2 s | kube-controller-manager at --kube-api-qps=50: 22.9 s | 0.49x (lower is better) |  |",
        '| GC heap per tracked object, 100000 synthetic objects (informer stores + graph) | 547 bytes/object |  |  | <= 300 bytes/object: **missed** |',
        '| Bundle controller heap \\| beside unrelated objects | 0.71 MiB (2 objects cached) |  |  | flat: not measured |',
        '',
        'Failed in that run (no figures): sharding: the Bundle watch ended.',
      ].join('\n'),
    );
  });

  it('puts a note on where the figures came from under the first line', () => {
    const lines = renderSummary({ ...fixture(), note: 'Transcribed by hand.' }).split('\n');
    expect(lines.slice(1, 4)).toEqual(['', 'Transcribed by hand.', '']);
    expect(lines[4]).toBe('| measure | bundlesmith | reference | ratio | target |');
  });

  it('gives the same bytes for the same results, and JSON that reads back to the same results', () => {
    const results = fixture();
    expect(renderSummary(parseResults(serializeResults(results)))).toBe(renderSummary(results));
    expect(serializeResults(parseResults(serializeResults(results)))).toBe(serializeResults(results));
  });

  it('replaces only what lies between the markers, and a second pass changes nothing', () => {
    const readme = ['# bundlesmith', '', '## Benchmarks', '', 'Intro.', '', SUMMARY_START, 'old table', SUMMARY_END, '', 'What bounds the missed targets.', ''].join('\n');
    const summary = renderSummary(fixture());
    const once = replaceSummary(readme, summary);
    expect(once).toBe(['# bundlesmith', '', '## Benchmarks', '', 'Intro.', '', SUMMARY_START, summary, SUMMARY_END, '', 'What bounds the missed targets.', ''].join('\n'));
    expect(replaceSummary(once, summary)).toBe(once);
  });

  it('refuses a README without the markers instead of rewriting it blindly', () => {
    expect(() => replaceSummary('# no markers\n', 'x')).toThrow(/no summary markers/);
  });

  it('refuses a results file that does not match the schema', () => {
    expect(() => parseResults(JSON.stringify({ ...fixture(), figures: [{ id: 'x' }] }))).toThrow(/does not match the schema: figures\.0\.name/);
  });

  it('computes the ratio as value / reference and judges the target from it; an unmeasured value meets nothing', () => {
    const target = { text: '>= 2x', met: ({ ratio }: { ratio: number | null }) => ratio !== null && ratio >= 2 };
    expect(figure({ id: 'a', name: 'a', value: 120, unit: 'deletes/s', better: 'higher', reference: { name: 'kcm', value: 50 }, target })).toMatchObject({ ratio: 2.4, met: true, reference: { unit: 'deletes/s' }, detail: null });
    expect(figure({ id: 'b', name: 'b', value: 120, unit: 'deletes/s', better: 'higher', target })).toMatchObject({ reference: null, ratio: null, met: false });
    expect(figure({ id: 'c', name: 'c', value: NaN, unit: 'ms', better: 'lower', target })).toMatchObject({ ratio: null, met: null });
  });

  it('the committed README carries the markers, with the table rendered from the committed bench/results.json', () => {
    const root = repoRoot();
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const results = parseResults(readFileSync(join(root, 'bench', 'results.json'), 'utf8'));
    expect(replaceSummary(readme, renderSummary(results))).toBe(readme);
  });
});
