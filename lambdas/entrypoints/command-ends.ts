import { GetCommandInvocationCommand, SSMClient } from '@aws-sdk/client-ssm';
import { DynamoDbSiteEventStore } from '../../adapters/dynamodb/dynamodb-site-event-store';
import { ENVIRONMENT } from '../../contracts';
import { takeCommandEnd, type CommandEndIntakeDeps } from '../../control-plane/command-end-intake';
import type { SsmStatusChange } from '../../core/site/command-end-event';
import { deployedControlPlaneFromEnvironment } from './api';
import { documentClient, required } from './environment';

/** A command's Comment, by GetCommandInvocation (its answer carries the Comment; SSM's notification does not). */
export function commentBySsm(ssm: Pick<SSMClient, 'send'>): CommandEndIntakeDeps['commentOf'] {
  return async (commandId, instanceId) => (await ssm.send(new GetCommandInvocationCommand({ CommandId: commandId, InstanceId: instanceId }))).Comment;
}

/** What one notification came to: taken (recorded, woke) or left (not a session's health check ending). */
export type CommandEndOutcome = { taken: false } | { taken: true; id: string; recorded: boolean; woke: boolean };

/**
 * The target of an EventBridge rule on SSM's "EC2 Command Invocation Status-change Notification" (source aws.ssm):
 * each notification goes through takeCommandEnd, which reads the Comment of an ended invocation only and wakes
 * the session whose health check it was. A failure throws: EventBridge retries the target (at least once
 * delivery), and a second delivery changes nothing (the event's id is the invocation's and its status).
 */
export function commandEndsHandler(deps: Omit<CommandEndIntakeDeps, 'now'> & { now?: () => number }): (event: SsmStatusChange) => Promise<CommandEndOutcome> {
  const now = deps.now ?? Date.now;
  return async (event) => {
    const taken = await takeCommandEnd(event, { ...deps, now });
    return taken ? { taken: true, id: taken.event.id, recorded: taken.intake.recorded, woke: taken.intake.woke } : { taken: false };
  };
}

let built: ((event: SsmStatusChange) => Promise<CommandEndOutcome>) | undefined;
/**
 * The deployed target (handler `index.CommandEnds`, infra/constructs/command-end-notifications.ts): the table and the
 * rolling-upgrade state machine from the stack's environment, SSM in the function's region (the rule's: the stack
 * holds the notifying transports to it).
 */
export const CommandEnds = (event: SsmStatusChange): Promise<CommandEndOutcome> => {
  built ??= commandEndsHandler({
    commentOf: commentBySsm(new SSMClient({})),
    siteEvents: new DynamoDbSiteEventStore({ tableName: required(process.env, ENVIRONMENT.tableName), client: documentClient() }),
    controlPlane: deployedControlPlaneFromEnvironment(process.env),
  });
  return built(event);
};
