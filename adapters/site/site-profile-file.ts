import path from 'node:path';
import { parseSiteProfile, type SiteProfile } from '../../core/site/site-profile';
import { readDocumentFile } from '../document-file';

/** Reads a site profile (JSON when it ends in `.json`, YAML otherwise); relative paths in it are relative to its directory. */
export async function loadSiteProfileFile(file: string): Promise<{ profile: SiteProfile; baseDir: string }> {
  const subject = `site profile ${file}`;
  const value = await readDocumentFile(file, subject);
  return { profile: parseSiteProfile(value, subject), baseDir: path.dirname(path.resolve(file)) };
}
