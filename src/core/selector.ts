/**
 * Kubernetes label selectors in their string form (`kubectl -l`,
 * `--bundle-selector`): equality (`k=v`, `k==v`, `k!=v`), sets
 * (`k in (a,b)`, `k notin (a,b)`) and existence (`k`, `!k`), joined by
 * commas, all of which must hold. Pure: parsed once at start, matched
 * against an object's labels.
 */

export type Requirement =
  | { key: string; op: 'in'; values: readonly string[] }
  | { key: string; op: 'notin'; values: readonly string[] }
  | { key: string; op: 'exists' }
  | { key: string; op: 'absent' };

export interface LabelSelector {
  /** The selector as written, for logs and messages. */
  text: string;
  requirements: readonly Requirement[];
}

export type SelectorParse = { ok: true; selector: LabelSelector } | { ok: false; error: string };

// A label key: an optional DNS-subdomain prefix and a name; a value: up to 63 name characters, or empty.
const KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/** Splits on commas outside parentheses. */
function splitTerms(text: string): string[] | undefined {
  const terms: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    if (depth < 0 || depth > 1) return undefined;
    if (c === ',' && depth === 0) {
      terms.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  if (depth !== 0) return undefined;
  terms.push(text.slice(start).trim());
  return terms;
}

function parseTerm(term: string): Requirement | string {
  const set = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(term);
  if (set) {
    const [, key = '', op, list = ''] = set;
    const values = list.split(',').map((v) => v.trim());
    if (!KEY.test(key)) return `"${key}" is not a label key`;
    const bad = values.find((v) => !VALUE.test(v));
    if (bad !== undefined) return `"${bad}" is not a label value`;
    return op === 'in' ? { key, op: 'in', values } : { key, op: 'notin', values };
  }
  const eq = /^([^!=\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(term);
  if (eq) {
    const [, key = '', op, value = ''] = eq;
    if (!KEY.test(key)) return `"${key}" is not a label key`;
    if (!VALUE.test(value)) return `"${value}" is not a label value`;
    return op === '!=' ? { key, op: 'notin', values: [value] } : { key, op: 'in', values: [value] };
  }
  const absent = /^!\s*(\S+)$/.exec(term);
  if (absent) {
    const key = absent[1] ?? '';
    return KEY.test(key) ? { key, op: 'absent' } : `"${key}" is not a label key`;
  }
  return KEY.test(term) ? { key: term, op: 'exists' } : `"${term}" is neither a label key nor a requirement`;
}

export function parseLabelSelector(text: string): SelectorParse {
  const terms = splitTerms(text.trim());
  if (terms === undefined) return { ok: false, error: `unbalanced parentheses in "${text}"` };
  if (terms.length === 1 && terms[0] === '') return { ok: false, error: 'the selector is empty' };
  const requirements: Requirement[] = [];
  for (const term of terms) {
    if (term === '') return { ok: false, error: `an empty requirement in "${text}"` };
    const parsed = parseTerm(term);
    if (typeof parsed === 'string') return { ok: false, error: `${parsed} in "${text}"` };
    requirements.push(parsed);
  }
  return { ok: true, selector: { text: text.trim(), requirements } };
}

/** Whether labels satisfy every requirement (`notin` and `!=` hold for a missing key, as in Kubernetes). */
export function matchesSelector(selector: LabelSelector, labels: Readonly<Record<string, string>> | undefined): boolean {
  const own = labels ?? {};
  return selector.requirements.every((r) => {
    const value = Object.prototype.hasOwnProperty.call(own, r.key) ? own[r.key] : undefined;
    switch (r.op) {
      case 'in':
        return value !== undefined && r.values.includes(value);
      case 'notin':
        return value === undefined || !r.values.includes(value);
      case 'exists':
        return value !== undefined;
      case 'absent':
        return value === undefined;
    }
  });
}
