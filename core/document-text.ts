import { parseDocument } from 'yaml';
import { describeError, type FieldProblem } from './errors';

export type ParsedDocument = { value: unknown } | { problems: FieldProblem[] };

/** The value of a YAML or JSON document, or problems that say where it is broken (line and column). */
export function parseDocumentText(text: string, format: 'json' | 'yaml'): ParsedDocument {
  return format === 'json' ? parseJson(text) : parseYaml(text);
}

function parseYaml(text: string): ParsedDocument {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) {
    // The first line of yaml's message already says where ("... at line 3, column 1:"); the rest is a code excerpt.
    return { problems: doc.errors.map((e) => ({ field: '', message: `invalid YAML: ${e.message.split('\n')[0]!.replace(/:$/, '')}` })) };
  }
  return { value: doc.toJS() };
}

function parseJson(text: string): ParsedDocument {
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    const message = describeError(err);
    // V8 reports an offset ("at position 42"); operators want a line.
    const offset = /position (\d+)/.exec(message)?.[1];
    if (offset === undefined) return { problems: [{ field: '', message: `invalid JSON: ${message}` }] };
    const before = text.slice(0, Number(offset)).split('\n');
    const line = before.length;
    const col = (before.at(-1)?.length ?? 0) + 1;
    return { problems: [{ field: '', message: `invalid JSON at line ${line}, column ${col}: ${message}` }] };
  }
}
