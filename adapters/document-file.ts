import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import { parseDocumentBytes } from '../core/document-text';
import { InvalidInputError, describeError } from '../core/errors';

/**
 * Reads a YAML or JSON document file (JSON when it ends in `.json`): its parsed value, or an
 * InvalidInputError about `subject` (unreadable, not UTF-8, not YAML/JSON) for the caller's exit 2.
 */
export async function readDocumentFile(path: string, subject: string): Promise<unknown> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (err) {
    throw new InvalidInputError(subject, [{ field: '', message: `cannot read it: ${describeError(err)}` }]);
  }
  const parsed = parseDocumentBytes(bytes, extname(path).toLowerCase() === '.json' ? 'json' : 'yaml');
  if ('problems' in parsed) throw new InvalidInputError(subject, parsed.problems);
  return parsed.value;
}
