import { InvalidInputError } from '../../../core/errors';
import { compressHostlist } from '../../../core/site/hostlist';
import { validNodeNames } from '../../../core/site/names';
import { parseRelayProgram, relayProgram, SITE_EVENT_SESSION, type NodeEventKind } from '../../../core/site/site-event';
import type { CommandTransport } from '../../../ports/command-transport';
import type { SiteTriggers } from '../../../ports/site';
import { commandFailed } from './command-errors';
import { shellCommand } from './shell-quote';
import { checked, run } from './slurm-node-reader';

export interface StriggerTriggersOptions {
  transport: CommandTransport;
  /** The relay command slurmctld runs for a firing (siteEvents.relay): an absolute program and its words. */
  relay: string;
  /** The backstop poll configured with it (siteEvents.backstopSeconds). */
  backstopSeconds?: number;
  /** Path or name of strigger on the head node; default `strigger`. */
  strigger?: string;
}

/** One row of `strigger --get --noheader`. */
export interface ListedTrigger {
  id: number;
  /** node, job, slurmctld, ... */
  resType: string;
  /** The hostlist as `--node=` was given (`*` for every node). */
  resId: string;
  /** up, down, drained, ... */
  type: string;
  /** PERM, or empty for a one-shot trigger. */
  flags: string;
  /** The program with its own words, as `--program=` was given. */
  program: string;
}

/**
 * strigger.c _get_trigger's row, `%7u %-9s %7s %-35s %6d %-8s %-5s %s` (TRIG_ID RES_TYPE RES_ID TYPE OFFSET USER
 * FLAGS PROGRAM): FLAGS is blank for a one-shot trigger, and the PROGRAM is the rest of the line, spaces included
 * (strigger takes only a program that starts with `/`, which no flag word does).
 */
const TRIGGER_ROW = /^\s*(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(-?\d+)\s+(\S+)\s+(?:([^\s/]\S*)\s+)?(\/.*)$/;

/** The rows of `strigger --get --noheader`; undefined for a line that is not one (the caller names the command). */
export function parseTriggerRow(line: string): ListedTrigger | undefined {
  const match = TRIGGER_ROW.exec(line);
  if (!match) return undefined;
  const [, id, resType, resId, type, , , flags, program] = match;
  return { id: Number(id), resType: resType!, resId: resId!, type: type!, flags: flags ?? '', program: program!.trimEnd() };
}

/** `strigger --clear` of a trigger that is no longer there: trigger_clear's ESRCH. */
const ALREADY_GONE = /No such process/i;
/** `strigger --set` of a trigger slurmctld already holds (_duplicate_trigger): it is set. */
const ALREADY_SET = /Duplicate event trigger/i;

/**
 * A session's Slurm triggers through `strigger` on the head node (SSM or local), for the scontrol connector
 * with siteEvents: one permanent node trigger per event kind, on the session's nodes as one hostlist, whose
 * program is the relay with `--event <kind> --session <id>` (relayProgram). The triggers are found again by
 * their program (parseRelayProgram), so arm and disarm hold nothing between calls and may be repeated.
 * Each strigger command is one slurmctld RPC: arm reads once, sets each missing kind, clears each stale
 * trigger and reads once more only when it set one; disarm reads once and clears each of the session's.
 * slurmctld sets a trigger only for its SlurmUser, or for anyone when SlurmUser is root (trigger_mgr.c trigger_set:
 * `Access/permission denied` otherwise), and clears one only for root or its creator.
 */
export class StriggerTriggers implements SiteTriggers {
  readonly relay: string;
  readonly backstopSeconds?: number;
  private readonly transport: CommandTransport;
  private readonly strigger: string;

  constructor(options: StriggerTriggersOptions) {
    this.transport = options.transport;
    this.relay = options.relay;
    if (options.backstopSeconds !== undefined) this.backstopSeconds = options.backstopSeconds;
    this.strigger = options.strigger ?? 'strigger';
  }

  async arm(session: string, nodes: readonly string[], kinds: readonly NodeEventKind[]): Promise<number[]> {
    // Everything is checked before a command runs: the session and the nodes.
    validSession(session);
    if (nodes.length === 0) throw new InvalidInputError('site triggers', [{ field: 'nodes', message: 'nodes must name a node' }]);
    const hostlist = compressHostlist(validNodeNames(nodes));
    const programs = new Map([...new Set(kinds)].map((kind) => [kind, relayProgram(this.relay, kind, session)]));
    if (programs.size === 0) return [];
    const wanted = (trigger: ListedTrigger, kind: NodeEventKind) =>
      trigger.resType === 'node' && trigger.resId === hostlist && trigger.program === programs.get(kind) && /^perm$/i.test(trigger.flags);

    const kept = new Map<NodeEventKind, number>();
    const stale: number[] = [];
    for (const trigger of await this.list()) {
      const named = parseRelayProgram(trigger.program);
      // Another session's, or a kind not asked for now: left as it is.
      if (named?.session !== session || !programs.has(named.event)) continue;
      if (!kept.has(named.event) && wanted(trigger, named.event)) kept.set(named.event, trigger.id);
      else stale.push(trigger.id);
    }
    const missing = [...programs.keys()].filter((kind) => !kept.has(kind));
    // The new ones first, then the stale ones cleared: no moment without a trigger on nodes that stay.
    for (const kind of missing) await this.set(hostlist, kind, programs.get(kind)!);
    for (const id of stale) await this.clear(id);
    if (missing.length > 0) {
      // strigger --set prints no id: one read finds what was set (a duplicate answer included).
      const listed = await this.list();
      for (const kind of missing) {
        const set = listed.find((trigger) => wanted(trigger, kind));
        if (!set)
          throw commandFailed('workload-manager', this.getCommand(), `the ${kind} trigger of session ${session} on ${hostlist} was set but is not listed`);
        kept.set(kind, set.id);
      }
    }
    return [...programs.keys()].map((kind) => kept.get(kind)!);
  }

  async disarm(session: string): Promise<number> {
    validSession(session);
    let cleared = 0;
    for (const trigger of await this.list()) if (parseRelayProgram(trigger.program)?.session === session && (await this.clear(trigger.id))) cleared++;
    return cleared;
  }

  private getCommand(): string {
    return shellCommand([this.strigger, '--get', '--noheader']);
  }

  /** `strigger --get --noheader`: every pending trigger (a fired one-shot has left it; a permanent one stays). */
  private async list(): Promise<ListedTrigger[]> {
    const script = this.getCommand();
    const result = await checked('workload-manager', this.transport, script);
    if (result.stdoutTruncated) throw commandFailed('workload-manager', script, "the trigger listing exceeds the transport's output limit");
    const triggers: ListedTrigger[] = [];
    for (const line of result.stdout.split('\n')) {
      if (line.trim() === '') continue;
      const row = parseTriggerRow(line);
      if (!row) throw commandFailed('workload-manager', script, `printed a line that is not a trigger: ${JSON.stringify(line.slice(0, 200))}`);
      triggers.push(row);
    }
    return triggers;
  }

  /** `strigger --set --node=<hostlist> --<kind> --flags=PERM --program=<program>`; a duplicate is already set. */
  private async set(hostlist: string, kind: NodeEventKind, program: string): Promise<void> {
    const script = shellCommand([this.strigger, '--set', `--node=${hostlist}`, `--${kind}`, '--flags=PERM', `--program=${program}`]);
    const result = await run('workload-manager', this.transport, script);
    if (result.exitCode !== 0 && !ALREADY_SET.test(result.stderr)) throw exited(script, result);
  }

  /** `strigger --clear --id=<id>`: true when it went, false when it was already gone. */
  private async clear(id: number): Promise<boolean> {
    const script = shellCommand([this.strigger, '--clear', `--id=${id}`]);
    const result = await run('workload-manager', this.transport, script);
    if (result.exitCode === 0) return true;
    if (ALREADY_GONE.test(result.stderr)) return false;
    throw exited(script, result);
  }
}

/** A session id a trigger's program can carry (SITE_EVENT_SESSION), or InvalidInputError naming it. */
function validSession(session: string): void {
  if (!SITE_EVENT_SESSION.test(session))
    throw new InvalidInputError('site triggers', [{ field: 'session', message: `'${session}' is not a session id a trigger can carry` }]);
}

function exited(script: string, result: { exitCode: number; stdout: string; stderr: string }) {
  return commandFailed('workload-manager', script, `exited ${result.exitCode}: ${(result.stderr.trim() || result.stdout.trim()).slice(0, 500) || 'no output'}`);
}
