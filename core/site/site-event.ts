import { z } from 'zod';
import { InvalidInputError } from '../errors';
import { expandHostlist, HostlistError } from './hostlist';

/** The node events a site relay delivers: Slurm's `strigger --up`, `--down` and `--drained`. */
export const SITE_EVENT_KINDS = ['up', 'down', 'drained'] as const;
export type SiteEventKind = (typeof SITE_EVENT_KINDS)[number];

/** No firing id is longer: the relay's are 64 hex digits of a hash with the event as prefix. */
export const MAX_SITE_EVENT_ID_LENGTH = 128;

/**
 * POST /site-events: one firing of a site trigger, as the relay (`rollout relay`) delivers it. `id` names the
 * firing: a firing delivered twice (a retry after a lost answer) carries the same id and changes nothing.
 */
export const siteEventSchema = z.strictObject({
  id: z
    .string()
    .min(1, 'id must not be empty')
    .max(MAX_SITE_EVENT_ID_LENGTH, `id must be at most ${MAX_SITE_EVENT_ID_LENGTH} characters`)
    .regex(/^[A-Za-z0-9._:-]+$/, 'id must be letters, digits, dots, colons, dashes and underscores')
    .describe(
      "The firing's id, the same on every delivery of it (the relay's: the event, then a hash of the event, nodes and firedAt): a second delivery changes nothing",
    ),
  event: z
    .enum(SITE_EVENT_KINDS)
    .describe('What happened to the nodes: up (registered, after a reboot too), down (set DOWN by the workload manager), drained (drained and idle)'),
  nodes: z
    .union([z.string().min(1, 'nodes must not be empty'), z.array(z.string().min(1, 'a node name must not be empty')).min(1, 'nodes must name a node')])
    .describe('The nodes the event is about: a Slurm hostlist (`c[01-04]`, as strigger gives it) or a list of names'),
  firedAt: z.iso
    .datetime({ offset: true, error: 'firedAt must be an ISO 8601 date and time' })
    .describe("When the trigger fired (the relay's clock), ISO 8601"),
});
export type SiteEventRequest = z.output<typeof siteEventSchema>;

/** A firing as the control plane records it: its nodes expanded, and when it was received. */
export interface SiteEvent {
  id: string;
  event: SiteEventKind;
  nodes: string[];
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
