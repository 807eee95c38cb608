import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { decodeDocumentBytes, parseDocumentText } from '../core/document-text';
import { InvalidInputError, describeError } from '../core/errors';

/** A document file's text, checked as UTF-8 (never decoded lossily); problems name `subject` ("site file x.yaml"). */
export async function readDocumentFile(path: string, subject: string): Promise<string> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (err) {
    throw new InvalidInputError(subject, [{ field: '', message: `cannot read it: ${describeError(err)}` }]);
  }
  const decoded = decodeDocumentBytes(bytes);
  if ('problems' in decoded) throw new InvalidInputError(subject, decoded.problems);
  return decoded.text;
}

/** The format a document file is read in: JSON when its name ends in `.json`, YAML otherwise. */
export function documentFormat(path: string): 'json' | 'yaml' {
  return extname(path).toLowerCase() === '.json' ? 'json' : 'yaml';
}

/** A document file's value, read by the one strict reader (core/document-text.ts). */
export async function loadDocumentFile(path: string, subject: string): Promise<unknown> {
  const parsed = parseDocumentText(await readDocumentFile(path, subject), documentFormat(path));
  if ('problems' in parsed) throw new InvalidInputError(subject, parsed.problems);
  return parsed.value;
}
