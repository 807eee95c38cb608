import path from 'node:path';
import { loadDocumentFile } from '../document-file';
import { parseSiteProfile, type SiteProfile } from '../../core/site/site-profile';

/** Reads a site profile (JSON when it ends in `.json`, YAML otherwise); relative paths in it are relative to its directory. */
export async function loadSiteProfileFile(file: string): Promise<{ profile: SiteProfile; baseDir: string }> {
  const subject = `site profile ${file}`;
  return { profile: parseSiteProfile(await loadDocumentFile(file, subject), subject), baseDir: path.dirname(path.resolve(file)) };
}
