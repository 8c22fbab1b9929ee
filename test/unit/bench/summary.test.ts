/**
 * Issue 13.8: the benchmark summary (at the top of docs/benchmarks.md since
 * issue 25 moved it out of the README) is rendered from bench/results.json
 * alone, the same bytes every time, and only between its markers; the
 * hand-written notes under it survive a full run's rewrite of the page.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  figure,
  notesOf,
  NOTES_END,
  NOTES_START,
  pageWithSummary,
  parseResults,
  renderSummary,
  replaceSummary,
  serializeResults,
  SUMMARY_END,
  SUMMARY_START,
} from '../../../bench/results.js';
import { repoRoot } from '../../../src/api/crd-paths.js';

const fixture = () => parseResults(readFileSync(join(repoRoot(), 'test', 'unit', 'bench', 'fixtures', 'results.json'), 'utf8'));

describe('benchmark summary', () => {
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
    const page = [
      '# Benchmarks',
      '',
      '## Summary',
      '',
      SUMMARY_START,
      'old table',
      SUMMARY_END,
      '',
      'What bounds the missed targets.',
      '',
    ].join('\n');
    const summary = renderSummary(fixture());
    const once = replaceSummary(page, summary);
    expect(once).toBe(
      ['# Benchmarks', '', '## Summary', '', SUMMARY_START, summary, SUMMARY_END, '', 'What bounds the missed targets.', ''].join('\n'),
    );
    expect(replaceSummary(once, summary)).toBe(once);
  });

  it('refuses a page without the markers instead of rewriting it blindly', () => {
    expect(() => replaceSummary('# no markers\n', 'x')).toThrow(/no summary markers/);
  });

  it('refuses a results file that does not match the schema', () => {
    expect(() => parseResults(JSON.stringify({ ...fixture(), figures: [{ id: 'x' }] }))).toThrow(
      /does not match the schema: figures\.0\.name/,
    );
  });

  it('computes the ratio as value / reference and judges the target from it; an unmeasured value meets nothing', () => {
    const target = { text: '>= 2x', met: ({ ratio }: { ratio: number | null }) => ratio !== null && ratio >= 2 };
    expect(
      figure({ id: 'a', name: 'a', value: 120, unit: 'deletes/s', better: 'higher', reference: { name: 'kcm', value: 50 }, target }),
    ).toMatchObject({ ratio: 2.4, met: true, reference: { unit: 'deletes/s' }, detail: null });
    expect(figure({ id: 'b', name: 'b', value: 120, unit: 'deletes/s', better: 'higher', target })).toMatchObject({
      reference: null,
      ratio: null,
      met: false,
    });
    expect(figure({ id: 'c', name: 'c', value: NaN, unit: 'ms', better: 'lower', target })).toMatchObject({ ratio: null, met: null });
  });

  it('puts the summary and the notes under the title of a generated page, and a full run keeps the notes of the page it replaces', () => {
    const generated = ['# Benchmarks', '', 'Generated by `npm run bench`.', '', '## GC cascade', ''].join('\n');
    const summary = renderSummary(fixture());
    const first = pageWithSummary(generated, summary, 'Why a target was missed.\n\nA second paragraph.');
    expect(first).toBe(
      [
        '# Benchmarks',
        '',
        '## Summary',
        '',
        SUMMARY_START,
        summary,
        SUMMARY_END,
        '',
        NOTES_START,
        'Why a target was missed.',
        '',
        'A second paragraph.',
        NOTES_END,
        '',
        'Generated by `npm run bench`.',
        '',
        '## GC cascade',
        '',
      ].join('\n'),
    );
    expect(notesOf(first)).toBe('Why a target was missed.\n\nA second paragraph.');
    expect(pageWithSummary(generated, summary, notesOf(first))).toBe(first);
    expect(notesOf(pageWithSummary(generated, summary, null))).toBe('');
    expect(notesOf('# no notes\n')).toBeNull();
  });

  it('docs/benchmarks.md carries the markers, with the table rendered from the committed bench/results.json, and the README carries no figures', () => {
    const root = repoRoot();
    const page = readFileSync(join(root, 'docs', 'benchmarks.md'), 'utf8');
    const results = parseResults(readFileSync(join(root, 'bench', 'results.json'), 'utf8'));
    expect(replaceSummary(page, renderSummary(results))).toBe(page);
    expect(notesOf(page)).toContain('what bounds them');
    expect(readFileSync(join(root, 'README.md'), 'utf8')).not.toContain(SUMMARY_START);
  });
});
