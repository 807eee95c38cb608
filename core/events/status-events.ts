import { createHash } from 'node:crypto';
import { z } from 'zod';

/**
 * The status events the workflows publish (to an EventBridge bus on AWS; to a JSON-lines file or
 * memory on the embedded control plane), so users wire SNS, chat or ticketing with rules. Each
 * detail-type has a JSON Schema in schemas/events/, generated from these zod schemas and kept
 * equal to them by a test. `eventId` is derived from the session and where it is (stage, step,
 * group, batch; for failed nodes also which nodes): a retried handler publishes the same id again,
 * and consumers dedupe on it, while two different failures never share one.
 * No event is per node, except node failures, which come in batches.
 */
export const EVENT_SOURCE = 'baremetal-rollout';

export const DETAIL_TYPES = {
  sessionStarted: 'Rollout Session Started',
  sessionFinished: 'Rollout Session Finished',
  stepStarted: 'Rollout Step Started',
  stepFinished: 'Rollout Step Finished',
  batchStarted: 'Rollout Batch Started',
  batchFinished: 'Rollout Batch Finished',
  batchAwaitingApproval: 'Rollout Batch Awaiting Approval',
  groupStarted: 'Rollout Group Started',
  groupFinished: 'Rollout Group Finished',
  nodesFailed: 'Rollout Nodes Failed',
} as const;

export type DetailType = (typeof DETAIL_TYPES)[keyof typeof DETAIL_TYPES];

/** Node names per Nodes Failed event: 500 names with reasons stay far below EventBridge's 256 KB entry. */
export const FAILED_NODES_PER_EVENT = 500;

const common = {
  eventId: z.string().min(1).describe('Stable across retries of the publishing handler: dedupe on it'),
  kind: z.enum(['upgrade', 'deployment']).describe('Which workflow sent it: a rolling upgrade or a group deployment'),
  sessionId: z.string().min(1).describe('The upgrade or deployment id (`rollout session get ID`)'),
  at: z.iso.datetime().describe('When it happened, on the control plane clock'),
  timeBase: z
    .literal('simulated')
    .optional()
    .describe("Set when `at` is on a simulated site's clock: not a date (`rollout events` shows it from its run's start, `+1h 36m (simulated)`)"),
};

const sessionStarted = z.strictObject({ ...common, summary: z.string().describe('What runs: the label and step size, or the node and group counts') });
const sessionFinished = z.strictObject({
  ...common,
  outcome: z.enum(['COMPLETED', 'FAILED', 'CANCELLED', 'STOPPED']).describe('How the run ended'),
  state: z
    .string()
    .describe(
      'The stored end state: READY, DELETED, HALTED, STOPPED (upgrades); SUCCEEDED, FAILED, CANCELLED, STOPPED (deployments). STOPPED: a resume carries it on',
    ),
  detail: z.string().optional().describe('Why it ended so, when it did not complete'),
});
/** Lock-step steps are counted from 1 in events, as in messages, the plan and the progress line (`step 1 of 8`). */
const step = z.int().min(1).describe('Lock-step: the step, counted from 1 (`step 1 of 8`), as the messages and the plan count them');
const stepStarted = z.strictObject({
  ...common,
  kind: z.literal('upgrade').describe('Always upgrade'),
  step,
  stepCount: z.int().min(0).describe("The session's number of steps"),
  nodeCount: z.int().min(0).describe('Nodes drained in this step'),
});
const stepFinished = z.strictObject({
  ...common,
  kind: z.literal('upgrade').describe('Always upgrade'),
  step,
  stepCount: z.int().min(0).describe("The session's number of steps"),
  upgraded: z.int().min(0).optional().describe("The step's nodes upgraded"),
  failed: z.int().min(0).optional().describe("The step's nodes failed"),
});
const batch = z.int().min(1).describe('Mode window: the batch (wave), counted from 1 as `rollout session approve` and the messages count them');
const batchStarted = z.strictObject({ ...common, kind: z.literal('upgrade').describe('Always upgrade'), batch });
const batchFinished = z.strictObject({
  ...common,
  kind: z.literal('upgrade').describe('Always upgrade'),
  batch,
  upgraded: z.int().min(0).describe("The batch's nodes upgraded"),
  failed: z.int().min(0).describe("The batch's nodes failed"),
});
const batchAwaitingApproval = z.strictObject({
  ...common,
  kind: z.literal('upgrade').describe('Always upgrade'),
  batch: batch.describe('The batch waiting: `rollout session approve ID` lets it start'),
});
const groupStarted = z.strictObject({
  ...common,
  kind: z.literal('deployment').describe('Always deployment'),
  group: z.string().min(1).describe("The group's name"),
});
const groupFinished = z.strictObject({
  ...common,
  kind: z.literal('deployment').describe('Always deployment'),
  group: z.string().min(1).describe("The group's name"),
  stage: z.string().describe('DEPLOYED or FAILED; NOT_STARTED or PREPARED when a cancel stopped the group'),
});
const nodesFailed = z.strictObject({
  ...common,
  nodes: z.array(z.string()).min(1).max(FAILED_NODES_PER_EVENT).describe('The nodes that failed (at most 500 per event: more go in several)'),
  reason: z.string().describe('Their failure reason (`upgrading-boot-session-failed`, ...)'),
  step: step.optional(),
  group: z.string().optional().describe('A deployment: the group they failed in'),
  phase: z.string().optional().describe('A deployment: the phase they failed in (PREPARE or DEPLOY)'),
});

/** The detail schema of each detail-type. */
export const STATUS_EVENT_SCHEMAS = {
  [DETAIL_TYPES.sessionStarted]: sessionStarted,
  [DETAIL_TYPES.sessionFinished]: sessionFinished,
  [DETAIL_TYPES.stepStarted]: stepStarted,
  [DETAIL_TYPES.stepFinished]: stepFinished,
  [DETAIL_TYPES.batchStarted]: batchStarted,
  [DETAIL_TYPES.batchFinished]: batchFinished,
  [DETAIL_TYPES.batchAwaitingApproval]: batchAwaitingApproval,
  [DETAIL_TYPES.groupStarted]: groupStarted,
  [DETAIL_TYPES.groupFinished]: groupFinished,
  [DETAIL_TYPES.nodesFailed]: nodesFailed,
} as const satisfies Record<DetailType, z.ZodType>;

export type StatusEventDetail<T extends DetailType> = z.output<(typeof STATUS_EVENT_SCHEMAS)[T]>;

/** One event: its detail-type and detail, as PutEvents sends them. */
export type StatusEvent = { [T in DetailType]: { detailType: T; detail: StatusEventDetail<T> } }[DetailType];

/** The file name of a detail-type's JSON Schema in schemas/events/ ('Rollout Step Started' → rollout-step-started.schema.json). */
export const schemaFileOf = (detailType: DetailType): string => `${detailType.toLowerCase().replace(/ /g, '-')}.schema.json`;

/** The JSON Schema of a detail-type's detail (draft 2020-12). */
export function statusEventJsonSchema(detailType: DetailType): Record<string, unknown> {
  return {
    $id: `https://baremetal-rollout/schemas/events/${schemaFileOf(detailType)}`,
    title: detailType,
    ...z.toJSONSchema(STATUS_EVENT_SCHEMAS[detailType]),
  };
}

/** Builds an event whose id is derived from the session and `where` (stable across retries). */
export function statusEvent<T extends DetailType>(detailType: T, detail: Omit<StatusEventDetail<T>, 'eventId'>, where: string): StatusEvent {
  const eventId = `${detail.sessionId}:${where}:${detailType
    .replace(/^Rollout /, '')
    .toLowerCase()
    .replace(/ /g, '-')}`;
  return { detailType, detail: { eventId, ...detail } } as unknown as StatusEvent;
}

/**
 * Splits failed nodes into events of at most FAILED_NODES_PER_EVENT names. Each id names its nodes by
 * a digest: the same failure published again (a retry) keeps its id; another failure at the same
 * place (mode window fails nodes at many increments of one stage) gets its own.
 */
export function nodesFailedEvents(
  detail: Omit<StatusEventDetail<typeof DETAIL_TYPES.nodesFailed>, 'eventId' | 'nodes'>,
  nodes: readonly string[],
  where: string,
): StatusEvent[] {
  const events: StatusEvent[] = [];
  for (let start = 0; start < nodes.length; start += FAILED_NODES_PER_EVENT) {
    const chunk = nodes.slice(start, start + FAILED_NODES_PER_EVENT);
    const digest = createHash('sha256')
      .update(JSON.stringify([detail.reason, [...chunk].sort()]))
      .digest('hex')
      .slice(0, 16);
    events.push(statusEvent(DETAIL_TYPES.nodesFailed, { ...detail, nodes: chunk }, `${where}:${digest}`));
  }
  return events;
}
