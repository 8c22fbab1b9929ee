/** Field paths as the API server writes them in its messages. */
export type FieldPath = (string | number)[];

/** "spec.resources[0].name". */
export function formatFieldPath(path: readonly (string | number)[]): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}
