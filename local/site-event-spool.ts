import { constants, watch, type FSWatcher } from 'node:fs';
import { access, rm, stat } from 'node:fs/promises';
import { takeSiteEvent } from '../control-plane/site-event-intake';
import type { ControlPlane } from '../control-plane/control-plane';
import { describeError } from '../core/errors';
import { siteEventNodes, siteEventSchema, type SiteEvent } from '../core/site/site-event';
import { parseOrThrow } from '../core/validation';
import type { SiteEventStore } from '../ports/site-event-store';
import { moveToRejected, removeStaleTemporaries, spooledFirings, type SpooledFiring } from './site-relay';

/** How often the spool is read again whatever fs.watch said: a change it missed (a network file system, a full queue) waits this long at most. */
export const DEFAULT_SPOOL_RESCAN_MS = 5000;

export interface SiteEventSpoolOptions {
  /** The relay's spool directory on this host (siteEvents.spool); created if missing. */
  spool: string;
  siteEvents: SiteEventStore;
  controlPlane: Pick<ControlPlane, 'wakeForSiteEvent'>;
  rescanMs?: number;
  /** The firing's receivedAt; the wall clock without it (as POST /site-events). */
  now?: () => Date;
  /** Told of each firing moved to rejected/ and each failed pass. */
  report?: (line: string) => void;
}

/** What one pass over the spool did. */
export interface SpoolPass {
  /** Firings taken (their files removed), duplicates included. */
  taken: number;
  /** Of them, firings recorded before (a second spooling of one): nothing changed. */
  duplicates: number;
  woke: number;
  /** Files moved to rejected/: not a firing, or a firing the control plane would refuse. */
  rejected: number;
  /** Why the pass stopped before the end (the store away): the firings stay for the next one. */
  failed?: string;
}

export interface SiteEventSpoolIntake {
  /** One pass now, after any under way (the rescans and fs.watch call it too). */
  scan(): Promise<SpoolPass>;
  /** Stops watching and waits for the pass under way. */
  close(): Promise<void>;
}

/**
 * The relay's spool read by the control plane on the same host (a site profile's siteEvents.spool): no endpoint,
 * no `relay drain`. fs.watch brings a firing in at once; a rescan every few seconds catches what it missed. Each
 * firing goes through takeSiteEvent, its file removed once taken; a file that is not a firing the control plane
 * takes is moved to rejected/ as `relay drain` moves a refused one. Only whole files are read: the relay writes a
 * temporary name and renames it (spooledFirings skips those, and a writer's left behind goes once stale).
 * The spool is not created here: the relay creates it, as slurmctld's user, at its first firing (one made by the
 * control plane's user could refuse it); until then the rescans look for it. One that exists but cannot be read
 * and written is refused at once.
 */
export async function startSiteEventSpoolIntake(options: SiteEventSpoolOptions): Promise<SiteEventSpoolIntake> {
  const info = await stat(options.spool).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? undefined : Promise.reject(err)));
  if (info && !info.isDirectory()) throw new Error(`${options.spool} is not a directory`);
  if (info) await access(options.spool, constants.R_OK | constants.W_OK | constants.X_OK);
  const intake = new SpoolIntake(options);
  intake.start();
  return intake;
}

class SpoolIntake implements SiteEventSpoolIntake {
  private closed = false;
  private running: Promise<SpoolPass> | undefined;
  private queued: Promise<SpoolPass> | undefined;
  private watcher: FSWatcher | undefined;
  private rescan: NodeJS.Timeout | undefined;
  private readonly report: (line: string) => void;
  private readonly rescanMs: number;

  constructor(private readonly options: SiteEventSpoolOptions) {
    this.report = options.report ?? (() => {});
    this.rescanMs = options.rescanMs ?? DEFAULT_SPOOL_RESCAN_MS;
  }

  start(): void {
    this.watchSpool();
    this.rescan = setInterval(() => {
      this.watchSpool();
      this.scanQuietly();
    }, this.rescanMs);
    this.rescan.unref();
    // What was spooled while nothing read the spool (the control plane away, a restart).
    this.scanQuietly();
  }

  /** One pass at a time; calls during one share the single pass queued after it (it reads what they were told of). */
  scan(): Promise<SpoolPass> {
    if (!this.running) {
      this.running = takeSpool(this.options, this.report).finally(() => (this.running = undefined));
      return this.running;
    }
    this.queued ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.closed ? { taken: 0, duplicates: 0, woke: 0, rejected: 0 } : this.scan();
      });
    return this.queued;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.rescan);
    this.watcher?.close();
    await this.queued?.catch(() => undefined);
    await this.running?.catch(() => undefined);
  }

  private scanQuietly(): void {
    if (!this.closed) this.scan().catch((err: unknown) => this.report(`${this.options.spool}: ${describeError(err)}`));
  }

  /** Watches the spool once it exists (the rescans try again until then, and after the watch failed). */
  private watchSpool(): void {
    if (this.watcher || this.closed) return;
    try {
      this.watcher = watch(this.options.spool, () => this.scanQuietly());
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        this.report(`${this.options.spool}: not watched (${describeError(err)}): read every ${this.rescanMs} ms`);
      return;
    }
    // Never what keeps a process alive: the runtime that started it closes it.
    this.watcher.unref();
    this.watcher.on('error', (err) => {
      this.report(`${this.options.spool}: no longer watched (${describeError(err)}): read every ${this.rescanMs} ms`);
      this.watcher?.close();
      this.watcher = undefined;
    });
  }
}

/** One pass: the firings oldest first, each taken and removed, or moved to rejected/; stops at the first the store fails to take. */
async function takeSpool(options: SiteEventSpoolOptions, report: (line: string) => void): Promise<SpoolPass> {
  const pass: SpoolPass = { taken: 0, duplicates: 0, woke: 0, rejected: 0 };
  for (const file of await removeStaleTemporaries(options.spool, Date.now())) report(`${file}: removed, a write cut short (never renamed into place)`);
  const unreadable: { file: string; why: string }[] = [];
  const firings = await spooledFirings(options.spool, (file, why) => unreadable.push({ file, why }));
  for (const { file, why } of unreadable) await reject(file, why, pass, report);
  for (const firing of firings) {
    let event: SiteEvent;
    try {
      event = siteEventOf(firing, (options.now ?? (() => new Date()))());
    } catch (err) {
      await reject(firing.file, describeError(err), pass, report);
      continue;
    }
    try {
      const intake = await takeSiteEvent(event, options);
      pass.taken++;
      if (!intake.recorded) pass.duplicates++;
      if (intake.woke) pass.woke++;
      if (intake.wakeError) report(`${event.id}: recorded, its session not woken (the backstop poll will): ${intake.wakeError}`);
    } catch (err) {
      pass.failed = `${event.id}: not taken, left in the spool: ${describeError(err)}`;
      report(pass.failed);
      return pass;
    }
    await rm(firing.file, { force: true });
  }
  return pass;
}

/** The spooled body as POST /site-events would take it (the same checks), its nodes expanded. */
function siteEventOf(firing: SpooledFiring, receivedAt: Date): SiteEvent {
  const body = parseOrThrow(siteEventSchema, firing.body, 'site event');
  return {
    id: body.id,
    event: body.event,
    nodes: siteEventNodes(body.nodes),
    ...(body.session ? { session: body.session } : {}),
    firedAt: body.firedAt,
    receivedAt: receivedAt.toISOString(),
  };
}

async function reject(file: string, why: string, pass: SpoolPass, report: (line: string) => void): Promise<void> {
  const moved = await moveToRejected(file).catch(() => undefined);
  if (moved === undefined) return; // Gone already: another reader of the spool took it.
  pass.rejected++;
  report(`${file}: not a firing the control plane takes, moved to ${moved}: ${why}`);
}
