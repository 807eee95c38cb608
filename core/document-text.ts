/**
 * The one strict reader of documents every surface takes (site files, site profiles, strategies,
 * HTTP bodies): UTF-8 only, no duplicate keys, YAML aliases bounded, and integers written as
 * decimal integers (`0x10`, `0o17` and `1e3` are refused: a typo or a trick, never what an
 * operator means by sixteen or a thousand). Every refusal is a FieldProblem naming where.
 */
import { createScanner, visit as visitJson } from 'jsonc-parser';
import { CST, Lexer, isPair, isScalar, isSeq, parseAllDocuments, visit as visitYaml, type Document } from 'yaml';
import { describeError, type FieldProblem } from './errors';
import { formatPath } from './validation';

export type ParsedDocument = { value: unknown } | { problems: FieldProblem[] };
export type ParsedDocuments = { values: unknown[] } | { problems: FieldProblem[] };

/** Alias nodes one YAML document may expand (yaml's `maxAliasCount`): enough for any real file, far too few for a "billion laughs". */
export const MAX_YAML_ALIASES = 100;

/**
 * How deep collections may nest in any document (a site file, a profile, a strategy, a graph, an HTTP
 * body): real ones nest fewer than 15 levels. Checked before the document is parsed, because the
 * parsers and the code that walks a value recurse: a small body nested 5,000 deep overflowed the stack,
 * and a YAML one ran the process out of memory.
 */
export const MAX_DOCUMENT_DEPTH = 64;

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The text of a file's bytes, or a problem when they are not UTF-8 (a leading BOM is dropped). */
export function decodeDocumentBytes(bytes: Uint8Array): { text: string } | { problems: FieldProblem[] } {
  try {
    return { text: utf8.decode(bytes) };
  } catch {
    return { problems: [{ field: '', message: 'is not UTF-8 text' }] };
  }
}

/** A file's bytes read as a YAML or JSON document: decodeDocumentBytes, then parseDocumentText. */
export function parseDocumentBytes(bytes: Uint8Array, format: 'json' | 'yaml'): ParsedDocument {
  const decoded = decodeDocumentBytes(bytes);
  return 'problems' in decoded ? decoded : parseDocumentText(decoded.text, format);
}

/** The value of a YAML or JSON document, or problems that say where it is broken (field path, or line and column). */
export function parseDocumentText(text: string, format: 'json' | 'yaml'): ParsedDocument {
  if (format === 'json') return parseJson(text);
  const parsed = parseYamlDocuments(text);
  if ('problems' in parsed) return parsed;
  if (parsed.values.length > 1) return { problems: [{ field: '', message: `invalid YAML: the text holds ${parsed.values.length} documents; expected one` }] };
  return { value: parsed.values[0] ?? null };
}

/** Every document of a YAML stream (a site design bundle holds several), each checked as parseDocumentText checks one. */
export function parseYamlDocuments(text: string): ParsedDocuments {
  const tooDeep = yamlNestingProblem(text);
  if (tooDeep) return { problems: [tooDeep] };
  const documents = parseAllDocuments(text, { uniqueKeys: true });
  const list = Array.isArray(documents) ? documents : [];
  const errors = list.flatMap((document) => document.errors);
  if (errors.length > 0) {
    // The first line of yaml's message already says where ("... at line 3, column 1:"); the rest is a code excerpt.
    return { problems: errors.map((e) => ({ field: '', message: `invalid YAML: ${e.message.split('\n')[0]!.replace(/:$/, '')}` })) };
  }
  const problems = list.flatMap(nonDecimalIntegers);
  if (problems.length > 0) return { problems };
  try {
    return { values: list.map((document): unknown => document.toJS({ maxAliasCount: MAX_YAML_ALIASES })) };
  } catch (err) {
    if (err instanceof ReferenceError) {
      return { problems: [{ field: '', message: `invalid YAML: its aliases expand too far (at most ${MAX_YAML_ALIASES} alias expansions): ${err.message}` }] };
    }
    return { problems: [{ field: '', message: `invalid YAML: ${describeError(err)}` }] };
  }
}

const NON_DECIMAL = new Set(['HEX', 'OCT', 'BIN']);

function notDecimal(source: string): string {
  return `${JSON.stringify(source)} is not a decimal integer: write whole numbers in decimal digits`;
}

/** Numbers written `0x10`, `0o17`, or `1e3` (a whole number in exponent form). */
function nonDecimalIntegers(document: Document.Parsed): FieldProblem[] {
  const problems: FieldProblem[] = [];
  visitYaml(document, {
    Scalar(key, node, ancestors) {
      if (key === 'key' || typeof node.value !== 'number') return;
      const written = node.source ?? String(node.value);
      if (NON_DECIMAL.has(node.format ?? '') || (node.format === 'EXP' && Number.isInteger(node.value))) {
        problems.push({ field: yamlPath([...ancestors, node]), message: notDecimal(written) });
      }
    },
  });
  return problems;
}

function yamlPath(chain: readonly unknown[]): string {
  const parts: PropertyKey[] = [];
  chain.forEach((node, i) => {
    if (isPair(node)) parts.push(isScalar(node.key) ? String(node.key.value) : String(node.key));
    else if (isSeq(node) && i + 1 < chain.length) parts.push(node.items.indexOf(chain[i + 1] as never));
  });
  return formatPath(parts);
}

function parseJson(text: string): ParsedDocument {
  const tooDeep = jsonNestingProblem(text);
  if (tooDeep) return { problems: [tooDeep] };
  let value: unknown;
  try {
    value = JSON.parse(text);
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
  const problems = jsonSourceProblems(text);
  return problems.length > 0 ? { problems } : { value };
}

/** What JSON.parse lets through: a key given twice (the last one silently wins), and `1e3` for a whole number. */
function jsonSourceProblems(text: string): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const keysOfOpenObjects: Set<string>[] = [];
  visitJson(
    text,
    {
      onObjectBegin: () => void keysOfOpenObjects.push(new Set()),
      onObjectEnd: () => void keysOfOpenObjects.pop(),
      onObjectProperty: (property, _offset, _length, line, column, pathSupplier) => {
        const keys = keysOfOpenObjects.at(-1);
        if (keys?.has(property)) {
          problems.push({
            field: formatPath([...pathSupplier(), property]),
            message: `duplicate key ${JSON.stringify(property)} (again at line ${line + 1}, column ${column + 1})`,
          });
        }
        keys?.add(property);
      },
      onLiteralValue: (value, offset, length, _line, _column, pathSupplier) => {
        const written = text.slice(offset, offset + length);
        if (typeof value === 'number' && Number.isInteger(value) && /[eE]/.test(written)) {
          problems.push({ field: formatPath(pathSupplier()), message: notDecimal(written) });
        }
      },
    },
    { disallowComments: true, allowTrailingComma: false },
  );
  return problems;
}

function tooDeep(format: 'JSON' | 'YAML', line: number, column: number): FieldProblem {
  return {
    field: '',
    message: `invalid ${format}: nested more than ${MAX_DOCUMENT_DEPTH} levels deep at line ${line}, column ${column} (no document of this tool nests that deep)`,
  };
}

/**
 * A JSON text whose objects and arrays nest deeper than MAX_DOCUMENT_DEPTH, found by jsonc-parser's
 * scanner (one pass, no recursion, stops at the first level too deep); undefined when it does not.
 */
export function jsonNestingProblem(text: string): FieldProblem | undefined {
  // jsonc-parser's SyntaxKind is a const enum, which isolated modules cannot import: its values.
  const [OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET, CLOSE_BRACKET, EOF] = [1, 2, 3, 4, 17];
  const scanner = createScanner(text, true);
  let depth = 0;
  for (let token = scanner.scan(); token !== EOF; token = scanner.scan()) {
    if (token === OPEN_BRACE || token === OPEN_BRACKET) {
      if (++depth > MAX_DOCUMENT_DEPTH) return tooDeep('JSON', scanner.getTokenStartLine() + 1, scanner.getTokenStartCharacter() + 1);
    } else if (token === CLOSE_BRACE || token === CLOSE_BRACKET) depth = Math.max(0, depth - 1);
  }
  return undefined;
}

/**
 * The same for YAML, from yaml's lexer (a generator: it stops at the first level too deep). Flow
 * collections count by their brackets; block ones by the columns of the nodes open at a line (a node
 * at a column closes every open node at that column or right of it). A scalar is the last open node,
 * so the depth is one less than the nodes open.
 */
function yamlNestingProblem(text: string): FieldProblem | undefined {
  const open: number[] = [];
  let flow = 0;
  let line = 1;
  let column = 0;
  let scalarNext = false;
  for (const token of new Lexer().lex(text)) {
    const start = column;
    const newlines = token.split('\n').length - 1;
    if (newlines > 0) {
      line += newlines;
      column = token.length - token.lastIndexOf('\n') - 1;
    } else if (token !== CST.SCALAR && token !== CST.DOCUMENT && token !== CST.FLOW_END && token !== CST.BOM) column += token.length;

    if (token === CST.DOCUMENT) {
      open.length = 0;
      flow = 0;
      continue;
    }
    if (token === CST.SCALAR) {
      scalarNext = true;
      continue;
    }
    const isScalar = scalarNext;
    scalarNext = false;
    const opensFlow = token === '{' || token === '[';
    if (flow === 0 && (isScalar || opensFlow || token === '-' || token === '?')) {
      while (open.length > 0 && open.at(-1)! >= start) open.pop();
      open.push(start);
    }
    if (opensFlow) flow++;
    else if (token === '}' || token === ']') flow = Math.max(0, flow - 1);
    if (open.length + flow - 1 > MAX_DOCUMENT_DEPTH) return tooDeep('YAML', line - newlines, start + 1);
  }
  return undefined;
}
