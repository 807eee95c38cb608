/**
 * The claim a run leaves at the site, so that the site itself says who works on a node: the Slurm
 * reason of every drain and failure we set names the run (an upgrade, a task run) by its id, and so
 * do boot session and provisioner action names. The one place that writes and reads the format.
 *
 * Format: a fixed prefix first, then the run id, then any detail: `rolling-upgrade <id>`,
 * `rollout-task <id> <reason> task=<task>`, `upgrading-boot-session-failed <id>`. The prefix stays
 * readable where sinfo cuts reasons short (`sinfo -R` shows 20 characters); the full id (a UUID) lets
 * a run tell its own store's runs (whose locks decide) from another control plane's. Slurm appends
 * its own words after ours (` : Not responding`, ` : reboot issued`), so everything is read from the
 * front.
 */

/** What kind of run drained the node: its Slurm reason starts with this. */
export const DRAIN_PREFIX = { upgrade: 'rolling-upgrade', tasks: 'rollout-task' } as const;
export type DrainKind = keyof typeof DRAIN_PREFIX;

/** The reason a run's node is left alone for: another control plane's run claims it at the site. */
export const HELD_BY_ANOTHER_CONTROL_PLANE = 'held-by-another-control-plane';

/** `n01, n02 (locked by run X)`-style text of who holds what, for a wait's message. */
export function holdersText(heldByOthers: ReadonlyMap<string, string>): string {
  const byHolder = new Map<string, string[]>();
  for (const [node, holder] of heldByOthers) byHolder.set(holder, [...(byHolder.get(holder) ?? []), node]);
  return [...byHolder]
    .map(([holder, held]) => `${held.slice(0, 10).join(', ')}${held.length > 10 ? ` and ${held.length - 10} more` : ''} (locked by run ${holder})`)
    .join('; ');
}

/** Slurm takes reasons of at most this many characters from us (core/site/names.ts validReason). */
const MAX_REASON_LENGTH = 200;

const RUN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const WORD = /^[a-z][a-z-]*$/;

/** Whether `id` has the shape of our run ids (UUIDs derived from execution ids): only such ids are written into reasons. */
export function isRunId(id: string): boolean {
  return RUN_ID.test(id);
}

/** The Slurm reason of a drain by run `runId`: `<prefix> <id>[ <detail>]`, cut to what Slurm takes. */
export function drainClaim(kind: DrainKind, runId: string, detail?: string): string {
  return withDetail(`${DRAIN_PREFIX[kind]} ${runId}`, detail);
}

/**
 * The Slurm reason of a node failed by run `runId`: CRUS's reason first, as operators and tools
 * know it (`upgrading-boot-session-failed`), then the run.
 */
export function failureMark(reason: string, runId: string): string {
  return `${reason} ${runId}`;
}

/** What a Slurm reason says about the run that set it: the first word, the run, the rest. Undefined for a reason of no run of ours. */
export interface SiteMark {
  /** `rolling-upgrade`, `rollout-task`, or a failure reason (`upgrading-boot-session-failed`). */
  word: string;
  runId: string;
  /** A drain by a run still at work on the node: the claim other runs must respect. A failure mark is not one (its run is done with the node). */
  claim: boolean;
  /** What follows the run id (a task's reason, Slurm's own suffix), if anything. */
  detail?: string;
}

export function parseSiteMark(reason: string | undefined): SiteMark | undefined {
  if (reason === undefined) return undefined;
  const [word, runId, ...rest] = reason.trim().split(/\s+/);
  if (word === undefined || runId === undefined || !WORD.test(word) || !isRunId(runId)) return undefined;
  const detail = rest.join(' ');
  return { word, runId, claim: (Object.values(DRAIN_PREFIX) as string[]).includes(word), ...(detail ? { detail } : {}) };
}

/** The run a node's Slurm reason says is at work on it (a drain claim), if any. */
export function claimantOf(reason: string | undefined): string | undefined {
  const mark = parseSiteMark(reason);
  return mark?.claim ? mark.runId : undefined;
}

/**
 * Whether a Slurm reason is a rolling upgrade's drain (ours, of any session: a takeover lifts a dead
 * session's drain): its prefix followed by a run id that parses. A reason that only begins with the
 * word (`rolling-upgrade maintenance`, CRUS's bare `rolling-upgrade`) names no run: an admin's, kept.
 */
export function isUpgradeDrainReason(reason: string | undefined): boolean {
  return parseSiteMark(reason)?.word === DRAIN_PREFIX.upgrade;
}

/**
 * Whether a node is held by an admin's drain: drained with a reason that names no run (no claim or mark
 * of ours, above; a blank one is no reason). Kept as it is, its reason byte for byte.
 */
export function isAdminDrain(node: { flags: readonly string[]; reason?: string | undefined }): boolean {
  return node.flags.includes('DRAIN') && node.reason !== undefined && node.reason.trim() !== '' && parseSiteMark(node.reason) === undefined;
}

/** What a run writes to blank a reason: Slurm takes no empty one (core/site/names.ts validReason refuses it elsewhere). */
export const BLANK_REASON = ' ';

/** Whether a Slurm reason is run `runId`'s own drain claim (of any kind), whatever Slurm appended. */
export function isClaimOf(reason: string | undefined, runId: string): boolean {
  const mark = parseSiteMark(reason);
  return mark !== undefined && mark.claim && mark.runId === runId;
}

/** Whether a Slurm reason marks the node failed with `reason` (CRUS's), by this run or, from before run marks, by none named. */
export function isFailureReason(siteReason: string | undefined, reason: string): boolean {
  if (siteReason === undefined) return false;
  return siteReason === reason || parseSiteMark(siteReason)?.word === reason;
}

const RUN_ID_IN_NAME = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
/** A task run's reboot session: `t-<the run id's first 8 hex>-...` (adapters/site/tasks/site-tasks.ts). */
const TASK_BOOT_SESSION = /^t-([0-9a-f]{8})-/;

/**
 * The run a boot session or provisioner action name names: the full run id where the name has it
 * (`rollout-<id>-step-2`, `deploy-<id>-grp-prepare-0`, `r-<id>-<digest>`), else the first 8 hex of it
 * (a task run's reboot `t-<8 hex>-...`). Undefined for a name of no run of ours.
 */
export function runIdInName(name: string): string | undefined {
  return RUN_ID_IN_NAME.exec(name)?.[0] ?? TASK_BOOT_SESSION.exec(name)?.[1];
}

/**
 * A name cut to `max` characters that still names its run: `r-<run id>-<digest of the whole name>`
 * (the digest keeps two names of one run apart), or undefined when the name carries no full run id.
 */
export function shortNameWithRun(name: string, max: number, digest: (text: string) => string): string | undefined {
  const runId = RUN_ID_IN_NAME.exec(name)?.[0];
  if (runId === undefined) return undefined;
  const head = `r-${runId}-`;
  return max - head.length >= 6 ? head + digest(name).slice(0, max - head.length) : undefined;
}

function withDetail(head: string, detail: string | undefined): string {
  const text = detail?.trim();
  if (!text) return head;
  const room = MAX_REASON_LENGTH - head.length - 1;
  return room > 0 ? `${head} ${text.length > room ? text.slice(text.length - room) : text}` : head;
}
