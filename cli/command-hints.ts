import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { shellQuote } from '../core/site/shell-quote';
import type { TargetOptions } from './control-plane-target';

/**
 * The commands the CLI prints as hints (`rollout session resume ID ...`), whole: with the flags that
 * reach the same sessions again (--data-dir, --endpoint, --aws ...) and, for a local resume, the site
 * the run used, so that a hint works when pasted.
 */

/** How a command was invoked: the options that say where its sessions and its site are, as the user gave them. */
export interface InvocationOptions extends TargetOptions {
  dataDir?: string;
  site?: string;
  siteConfig?: string;
}

/**
 * The flags of a local run's site: what `session resume` needs besides --data-dir. (Not its
 * --time-scale: a resume without it runs on virtual time, or on the clock of the profile's site.)
 */
export type SiteFlags = Pick<InvocationOptions, 'site' | 'siteConfig'>;

/** A word as a shell reads it: bare when it is plainly one word, else quoted. */
function word(value: string): string {
  return /^[\w./:@%+=,-]+$/.test(value) ? value : shellQuote(value);
}

function flags(pairs: readonly (readonly [string, string | boolean | undefined])[]): string[] {
  return pairs.flatMap(([flag, value]) => (value === undefined || value === false ? [] : value === true ? [flag] : [flag, word(value)]));
}

/** The options that reach the same control plane again, as the user typed them. */
export function targetFlags(options: InvocationOptions): string {
  if (options.endpoint)
    return flags([
      ['--endpoint', options.endpoint],
      ['--stack', options.stack],
      ['--region', options.region],
    ]).join(' ');
  if (options.aws)
    return flags([
      ['--aws', true],
      ['--stack', options.stack],
      ['--region', options.region],
      ['--profile', options.profile],
    ]).join(' ');
  return flags([['--data-dir', options.dataDir]]).join(' ');
}

/** `rollout WORDS TARGET-FLAGS`: a session command on the same control plane. */
export function rolloutCommand(words: readonly string[], options: InvocationOptions): string {
  return ['rollout', ...words.map(word), targetFlags(options)].filter(Boolean).join(' ');
}

/**
 * `rollout session resume ID ...`: a remote control plane has its own site; a local takeover needs the
 * data directory and the site the run used (given, or recorded in the data directory), else the hint
 * names the flag to add.
 */
export function resumeCommand(id: string, options: InvocationOptions, site: SiteFlags | undefined = options): string {
  const command = rolloutCommand(['session', 'resume', id], options);
  if (options.endpoint || options.aws) return command;
  if (!options.dataDir) return '(nothing can: without --data-dir the run was kept in this process only; give --data-dir DIR to keep its sessions)';
  const siteFlags = flags([
    ['--site', site?.site],
    ['--site-config', site?.siteConfig],
  ]);
  return siteFlags.length > 0 ? `${command} ${siteFlags.join(' ')}` : `${command} --site FILE (or --site-config FILE: the site it ran on)`;
}

/** The file of a data directory that says which site each run in it used (written by the run, read by the hints). */
const RUN_SITES_FILE = 'run-sites.json';

/** Records the site a local run with a data directory uses, as absolute paths (a hint works from any directory). */
export async function recordRunSite(dataDir: string, id: string, site: SiteFlags): Promise<void> {
  const recorded = await readRunSites(dataDir);
  recorded[id] = {
    ...(site.site ? { site: path.resolve(site.site) } : {}),
    ...(site.siteConfig ? { siteConfig: path.resolve(site.siteConfig) } : {}),
  };
  await writeFile(path.join(dataDir, RUN_SITES_FILE), `${JSON.stringify(recorded, null, 2)}\n`);
}

/** The site a run of the data directory used; undefined when none was recorded (a run before this file existed). */
export async function recordedRunSite(dataDir: string | undefined, id: string): Promise<SiteFlags | undefined> {
  return dataDir ? (await readRunSites(dataDir))[id] : undefined;
}

async function readRunSites(dataDir: string): Promise<Record<string, SiteFlags>> {
  try {
    return JSON.parse(await readFile(path.join(dataDir, RUN_SITES_FILE), 'utf8')) as Record<string, SiteFlags>;
  } catch {
    // Missing (no run recorded yet) or unreadable: the hints then name the flag to add.
    return {};
  }
}
