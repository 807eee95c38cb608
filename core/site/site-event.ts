import { z } from 'zod';
import { InvalidInputError } from '../errors';
import { expandHostlist, HostlistError } from './hostlist';

/** The node events a site relay delivers: Slurm's `strigger --up`, `--down` and `--drained`. */
export const NODE_EVENT_KINDS = ['up', 'down', 'drained'] as const;
export type NodeEventKind = (typeof NODE_EVENT_KINDS)[number];

/**
 * Every event the control plane takes: a node event, or `command`: a command a session sent on the site's command
 * transport ended (SSM Run Command's invocation status-change notification; core/site/command-end-event.ts).
 */
export const SITE_EVENT_KINDS = [...NODE_EVENT_KINDS, 'command'] as const;
export type SiteEventKind = (typeof SITE_EVENT_KINDS)[number];

/** The events a session sets a trigger for: a node drained (its jobs ended), back (registered after its reboot), down. */
export const SITE_TRIGGER_EVENTS: readonly NodeEventKind[] = ['drained', 'up', 'down'];
/** The backstop poll of a wait resumed by site events, in polls: 10 times the session's poll unless the site says otherwise. */
export const BACKSTOP_POLLS = 10;

/** A session id as a trigger's program carries it: one word, nothing a shell or slurmctld's split would change. */
export const SITE_EVENT_SESSION = /^[A-Za-z0-9._:-]+$/;

/** No firing id is longer: the relay's are 64 hex digits of a hash with the event as prefix. */
export const MAX_SITE_EVENT_ID_LENGTH = 128;

/**
 * POST /site-events: one firing of a site trigger, as the relay (`rollout relay`) delivers it, or the end of a
 * session's command on the site's command transport. `id` names the event: one delivered twice (a retry after a
 * lost answer) carries the same id and changes nothing.
 */
export const siteEventSchema = z.strictObject({
  id: z
    .string()
    .min(1, 'id must not be empty')
    .max(MAX_SITE_EVENT_ID_LENGTH, `id must be at most ${MAX_SITE_EVENT_ID_LENGTH} characters`)
    .regex(/^[A-Za-z0-9._:-]+$/, 'id must be letters, digits, dots, colons, dashes and underscores')
    .describe(
      "The firing's id, the same on every delivery of it (the relay's: the event, then a hash of the event, nodes, firedAt and session): a second delivery changes nothing",
    ),
  event: z
    .enum(SITE_EVENT_KINDS)
    .describe(
      "What happened to the nodes: up (registered, after a reboot too), down (set DOWN by the workload manager), drained (drained and idle); command: a session's command on the site's command transport ended (a node's health check: SSM Run Command's invocation status-change notification), whose result the session then reads once",
    ),
  nodes: z
    .union([z.string().min(1, 'nodes must not be empty'), z.array(z.string().min(1, 'a node name must not be empty')).min(1, 'nodes must name a node')])
    .describe(
      'The nodes the event is about: a Slurm hostlist (`c[01-04]`, as strigger gives it) or a list of names; for command, the node the command checked',
    ),
  session: z
    .string()
    .regex(SITE_EVENT_SESSION, 'session must be a session id: letters, digits, dots, colons, dashes and underscores')
    .max(MAX_SITE_EVENT_ID_LENGTH, `session must be at most ${MAX_SITE_EVENT_ID_LENGTH} characters`)
    .optional()
    .describe(
      "The session whose trigger fired (the relay's --session, which the session set), or that sent the command: that session's wait is resumed; without it the event is only recorded",
    ),
  firedAt: z.iso
    .datetime({ offset: true, error: 'firedAt must be an ISO 8601 date and time' })
    .describe("When the trigger fired (the relay's clock), or the command ended (the notification's time), ISO 8601"),
});
export type SiteEventRequest = z.output<typeof siteEventSchema>;

/** A firing as the control plane records it: its nodes expanded, and when it was received. */
export interface SiteEvent {
  id: string;
  event: SiteEventKind;
  nodes: string[];
  /** The session whose trigger fired, when the relay was told (its --session). */
  session?: string;
  firedAt: string;
  /** ISO time the control plane recorded it (its first delivery). */
  receivedAt: string;
}

/** The nodes of a request, expanded from a hostlist when given as one. */
export function siteEventNodes(nodes: SiteEventRequest['nodes']): string[] {
  if (typeof nodes !== 'string') return [...nodes];
  try {
    return expandHostlist(nodes);
  } catch (err) {
    if (!(err instanceof HostlistError)) throw err;
    throw new InvalidInputError(
      'site event',
      err.problems.map((p) => ({ ...p, field: 'nodes' })),
    );
  }
}

/**
 * The program of a session's trigger: the site's relay command, then the event and the session
 * (`<relay> --event up --session <id>`); slurmctld appends the hostlist. One word each: slurmctld splits on spaces.
 */
export function relayProgram(relay: string, event: NodeEventKind, session: string): string {
  if (!SITE_EVENT_SESSION.test(session))
    throw new InvalidInputError('site event', [{ field: 'session', message: `'${session}' is not a session id a trigger can carry` }]);
  return `${relay} --event ${event} --session ${session}`;
}

/** The event and session a trigger's program names (relayProgram's), or undefined for a program that is not a session's relay. */
export function parseRelayProgram(program: string): { event: NodeEventKind; session: string } | undefined {
  const words = program.split(' ');
  const after = (flag: string) => {
    const at = words.lastIndexOf(flag);
    return at >= 0 ? words[at + 1] : undefined;
  };
  const event = after('--event');
  const session = after('--session');
  if (!event || !session || !(NODE_EVENT_KINDS as readonly string[]).includes(event) || !SITE_EVENT_SESSION.test(session)) return undefined;
  return { event: event as NodeEventKind, session };
}
