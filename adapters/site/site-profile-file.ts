import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseDocumentBytes } from '../../core/document-text';
import { InvalidInputError, describeError } from '../../core/errors';
import { parseSiteProfile, type SiteProfile } from '../../core/site/site-profile';

/** Reads a site profile (JSON when it ends in `.json`, YAML otherwise); relative paths in it are relative to its directory. */
export async function loadSiteProfileFile(file: string): Promise<{ profile: SiteProfile; baseDir: string }> {
  const subject = `site profile ${file}`;
  let bytes: Uint8Array;
  try {
    bytes = await readFile(file);
  } catch (err) {
    throw new InvalidInputError(subject, [{ field: '', message: `cannot read it: ${describeError(err)}` }]);
  }
  const parsed = parseDocumentBytes(bytes, path.extname(file).toLowerCase() === '.json' ? 'json' : 'yaml');
  if ('problems' in parsed) throw new InvalidInputError(subject, parsed.problems);
  return { profile: parseSiteProfile(parsed.value, subject), baseDir: path.dirname(path.resolve(file)) };
}
