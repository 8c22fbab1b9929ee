/**
 * Reads YAML files of manifests (several documents per file) and keeps where
 * each node came from, so problems can be reported as FILE:LINE:COLUMN.
 */
import { LineCounter, parseAllDocuments, isCollection, type Document } from 'yaml';

export interface ManifestDocument {
  file: string;
  /** 1-based position of the document in its file. */
  index: number;
  /** The document as plain data (undefined for an empty document). */
  value: unknown;
  /** Line and column (1-based) of the node at `path`, or of the deepest existing node above it. */
  positionOf(path: readonly (string | number)[]): { line: number; col: number };
  /** Line and column of the key that names the field at `path` (an unknown field is reported there), else positionOf. */
  keyPositionOf(path: readonly (string | number)[]): { line: number; col: number };
}

export interface ManifestFile {
  file: string;
  documents: ManifestDocument[];
  /** YAML syntax errors, already positioned. */
  syntaxErrors: { line: number; col: number; message: string }[];
}

/**
 * The YAML parser recurses once per level of nesting, so a document nested a
 * few thousand levels deep overflows the stack (where exactly depends on the
 * machine). Such a document written as JSON (which is YAML) is still read, by
 * JSON.parse, which does not recurse on the stack, so the check that refuses
 * deep objects judges it in the operator's words, not the parser's crash.
 */
function jsonTooDeepForYaml(doc: Document.Parsed, text: string): unknown {
  const overflowed = doc.errors.some((e) => /call stack|stack overflow/i.test(e.message));
  if (!overflowed) return undefined;
  const source = text.slice(doc.range[0], doc.range[2]).replace(/^\s*---/, '');
  try {
    const value: unknown = JSON.parse(source);
    return value ?? undefined;
  } catch {
    return undefined;
  }
}

export function parseManifests(file: string, text: string): ManifestFile {
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter, prettyErrors: false });
  const syntaxErrors: ManifestFile['syntaxErrors'] = [];
  const documents: ManifestDocument[] = [];
  const list = Array.isArray(docs) ? docs : [];
  list.forEach((doc: Document.Parsed, i) => {
    const deep = doc.errors.length > 0 ? jsonTooDeepForYaml(doc, text) : undefined;
    if (deep !== undefined) {
      // The position of every node is the document's start: the parser that
      // knows positions could not read it.
      const at = lineCounter.linePos(doc.range[0]);
      documents.push({ file, index: i + 1, value: deep, positionOf: () => at, keyPositionOf: () => at });
      return;
    }
    for (const error of doc.errors) {
      const at = lineCounter.linePos(error.pos[0]);
      const message = /call stack|stack overflow/i.test(error.message)
        ? 'document nests too deeply to read as YAML (an object nesting deeper than 100 levels is refused anyway)'
        : (error.message.split('\n')[0] ?? error.message);
      syntaxErrors.push({ line: at.line, col: at.col, message });
    }
    if (doc.errors.length > 0) return;
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) return;
    documents.push({
      file,
      index: i + 1,
      value,
      positionOf(path) {
        const start = doc.contents?.range[0] ?? 0;
        let offset = start;
        for (let depth = path.length; depth >= 0; depth--) {
          const node: unknown = doc.getIn(path.slice(0, depth), true);
          const range = (node as { range?: [number, number, number] } | undefined)?.range;
          if (range) {
            offset = range[0];
            break;
          }
          // A key whose value is null has no node of its own; its pair does.
          if (depth > 0) {
            const parent: unknown = doc.getIn(path.slice(0, depth - 1), true);
            if (isCollection(parent)) {
              const key = path[depth - 1];
              const pair = parent.items.find((item) => (item as { key?: { value?: unknown } }).key?.value === key) as
                { key?: { range?: [number, number, number] } } | undefined;
              if (pair?.key?.range) {
                offset = pair.key.range[0];
                break;
              }
            }
          }
        }
        const at = lineCounter.linePos(offset);
        return { line: at.line, col: at.col };
      },
      keyPositionOf(path) {
        const parent: unknown = doc.getIn(path.slice(0, -1), true);
        const key = path[path.length - 1];
        if (isCollection(parent)) {
          const pair = parent.items.find((item) => (item as { key?: { value?: unknown } }).key?.value === key) as
            { key?: { range?: [number, number, number] } } | undefined;
          if (pair?.key?.range) {
            const at = lineCounter.linePos(pair.key.range[0]);
            return { line: at.line, col: at.col };
          }
        }
        return this.positionOf(path);
      },
    });
  });
  return { file, documents, syntaxErrors };
}
