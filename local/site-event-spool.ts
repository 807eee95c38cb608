import { watch, type FSWatcher } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
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
 */
export async function startSiteEventSpoolIntake(options: SiteEventSpoolOptions): Promise<SiteEventSpoolIntake> {
  const report = options.report ?? (() => {});
  await mkdir(options.spool, { recursive: true });
  let closed = false;
  let running: Promise<SpoolPass> | undefined;
  let queued: Promise<SpoolPass> | undefined;
  // One pass at a time; calls during one share the single pass queued after it (it reads what they were told of).
  const scan = (): Promise<SpoolPass> => {
    if (!running) {
      running = takeSpool(options, report).finally(() => (running = undefined));
      return running;
    }
    queued ??= running
      .catch(() => undefined)
      .then(() => {
        queued = undefined;
        return scan();
      });
    return queued;
  };
  const quietly = () => void scan().catch((err: unknown) => report(`${options.spool}: ${describeError(err)}`));
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(options.spool, () => {
      if (!closed) quietly();
    });
    watcher.on('error', (err) =>
      report(`${options.spool}: no longer watched (${describeError(err)}): read every ${options.rescanMs ?? DEFAULT_SPOOL_RESCAN_MS} ms`),
    );
  } catch (err) {
    report(`${options.spool}: not watched (${describeError(err)}): read every ${options.rescanMs ?? DEFAULT_SPOOL_RESCAN_MS} ms`);
  }
  const rescan = setInterval(quietly, options.rescanMs ?? DEFAULT_SPOOL_RESCAN_MS);
  rescan.unref();
  // What was spooled while nothing read the spool (the control plane away, a restart).
  quietly();
  return {
    scan,
    close: async () => {
      closed = true;
      clearInterval(rescan);
      watcher?.close();
      await queued?.catch(() => undefined);
      await running?.catch(() => undefined);
    },
  };
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
