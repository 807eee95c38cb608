import { z } from 'zod';
import type { ApiFaults } from '../api-faults';
import { ssmCommandOutput } from '../../core/site/ssm-output';
import { HEAD_NODE_INSTANCE_ID, type Invocation, type InvocationStatus } from '../models/head-node';
import type { LocalSsmAgent } from '../models/ssm-agent';
import type { SiteSimulator } from '../site-simulator';
import type { SimResponse } from './route';

const CONTENT_TYPE = 'application/x-amz-json-1.1';

export interface SsmApi {
  /** One AWS JSON 1.1 call: `operation` from `X-Amz-Target: AmazonSSM.<operation>`. */
  /** Undefined: an injected hang, left unanswered. */
  serve(operation: string, text: string, faults: ApiFaults): SimResponse | undefined;
}

const sendCommand = z.object({
  DocumentName: z.string(),
  InstanceIds: z.array(z.string()).min(1).max(50),
  Parameters: z.object({ commands: z.array(z.string()).min(1), executionTimeout: z.array(z.string()).optional() }),
  Comment: z.string().max(100).optional(),
});
const getInvocation = z.object({ CommandId: z.string(), InstanceId: z.string() });
const listInvocations = z.object({
  CommandId: z.string().optional(),
  InstanceId: z.string().optional(),
  Details: z.boolean().optional(),
  Filters: z.array(z.object({ key: z.enum(['InvokedAfter', 'InvokedBefore', 'Status', 'ExecutionStage', 'DocumentName']), value: z.string() })).optional(),
  MaxResults: z.number().int().min(1).max(50).optional(),
  NextToken: z.string().optional(),
});

/** AWS's error body for JSON 1.1 protocols. */
const awsError = (status: number, type: string, message: string): SimResponse => ({ status, body: { __type: type, message }, contentType: CONTENT_TYPE });
const answer = (body: unknown): SimResponse => ({ status: 200, body, contentType: CONTENT_TYPE });

/** Injected `apiFaults` statuses as the SSM errors a client meets. */
const FAULT_TYPES: Record<number, string> = { 400: 'ThrottlingException', 429: 'ThrottlingException', 500: 'InternalServerError', 503: 'InternalServerError' };

/**
 * SSM Run Command as far as the command transport uses it (SendCommand with AWS-RunShellScript,
 * GetCommandInvocation, ListCommandInvocations), driving the simulated head node, or, for the
 * instance ids of `agent`, running the commands on this machine.
 */
export function ssmApi(sim: SiteSimulator, agent?: LocalSsmAgent): SsmApi {
  const heads = commandHeads(sim, agent);
  return {
    serve(operation, text, faults) {
      const injected = faults.check('ssm', 'POST', operation);
      if (injected === 'hang') return undefined;
      if (injected) return awsError(injected, FAULT_TYPES[injected] ?? 'InternalServerError', `injected fault: ${operation}`);
      let input: unknown;
      try {
        input = text.trim() === '' ? {} : JSON.parse(text);
      } catch {
        return awsError(400, 'SerializationException', 'the body is not valid JSON');
      }
      if (operation === 'SendCommand') return parsed(operation, sendCommand, input, (request) => commandSent(heads, request));
      if (operation === 'GetCommandInvocation') return parsed(operation, getInvocation, input, (request) => invocationFound(heads, request));
      if (operation === 'ListCommandInvocations') return parsed(operation, listInvocations, input, (request) => invocationsListed(heads, request));
      return awsError(400, 'UnknownOperationException', `operation ${operation} is not simulated`);
    },
  };
}

/** Who takes a command: the simulated head node, or, for the instance ids of `agent`, this machine. */
function commandHeads(sim: SiteSimulator, agent: LocalSsmAgent | undefined) {
  const simulated = sim.headNode;
  const headFor = (instanceId: string) => (agent?.owns(instanceId) ? agent : simulated);
  const known = (instanceId: string) => instanceId === HEAD_NODE_INSTANCE_ID || agent?.owns(instanceId) === true;
  return { simulated, agent, headFor, known };
}
type CommandHeads = ReturnType<typeof commandHeads>;

/** The operation's input read by its schema, then answered; a ValidationException naming each field otherwise. */
function parsed<S extends z.ZodType>(operation: string, schema: S, input: unknown, then: (request: z.output<S>) => SimResponse): SimResponse {
  const result = schema.safeParse(input);
  return result.success
    ? then(result.data)
    : awsError(400, 'ValidationException', `${operation}: ${result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
}

function commandSent({ headFor, known }: CommandHeads, request: z.output<typeof sendCommand>): SimResponse {
  if (request.DocumentName !== 'AWS-RunShellScript') return awsError(400, 'InvalidDocument', `document ${request.DocumentName} is not simulated`);
  const unknown = request.InstanceIds.find((id) => !known(id));
  if (unknown) return awsError(400, 'InvalidInstanceId', `Instances [[${unknown}]] not in a valid state for account`);
  if (new Set(request.InstanceIds.map(headFor)).size > 1)
    return awsError(400, 'InvalidInstanceId', "the simulated head node and the machine's SSM agent take separate commands");
  const timeout = Number(request.Parameters.executionTimeout?.[0] ?? 3600);
  const instanceId = request.InstanceIds[0]!;
  const invocation = headFor(instanceId).send(
    instanceId,
    request.Parameters.commands,
    Number.isFinite(timeout) && timeout > 0 ? timeout : 3600,
    request.Comment,
  );
  return answer({
    Command: {
      CommandId: invocation.commandId,
      DocumentName: request.DocumentName,
      Comment: request.Comment ?? '',
      InstanceIds: [instanceId],
      Status: 'Pending',
      RequestedDateTime: invocation.requestedAt / 1000,
    },
  });
}

function invocationFound({ headFor }: CommandHeads, request: z.output<typeof getInvocation>): SimResponse {
  const found = headFor(request.InstanceId).get(request.CommandId, request.InstanceId);
  if (!found) return awsError(400, 'InvocationDoesNotExist', `no invocation ${request.CommandId} on ${request.InstanceId}`);
  return answer(invocationBody(found.invocation, found.status));
}

function invocationsListed({ simulated, agent, headFor }: CommandHeads, request: z.output<typeof listInvocations>): SimResponse {
  const filter = (key: string) => request.Filters?.find((f) => f.key === key)?.value;
  const after = filter('InvokedAfter');
  const before = filter('InvokedBefore');
  const head = request.InstanceId !== undefined ? headFor(request.InstanceId) : undefined;
  const invocations = (
    head
      ? head.list(request.CommandId)
      : [...simulated.list(request.CommandId), ...(agent?.list(request.CommandId) ?? [])].sort((a, b) => a.requestedAt - b.requestedAt)
  )
    .filter((i) => request.InstanceId === undefined || i.instanceId === request.InstanceId)
    .filter((i) => (after === undefined || i.requestedAt >= Date.parse(after)) && (before === undefined || i.requestedAt <= Date.parse(before)))
    // As AWS lists them: newest first, a page at a time.
    .reverse();
  const from = Number(request.NextToken ?? 0);
  const pageSize = request.MaxResults ?? 50;
  const page = invocations.slice(from, from + pageSize);
  return answer({
    CommandInvocations: page.map((i) => {
      const status = headFor(i.instanceId).peek(i);
      return {
        CommandId: i.commandId,
        InstanceId: i.instanceId,
        Comment: i.comment ?? '',
        DocumentName: 'AWS-RunShellScript',
        Status: status,
        StatusDetails: status,
        RequestedDateTime: i.requestedAt / 1000,
      };
    }),
    ...(from + pageSize < invocations.length ? { NextToken: String(from + pageSize) } : {}),
  });
}

function invocationBody(invocation: Invocation, status: InvocationStatus) {
  const finished = status !== 'InProgress';
  const stdout = finished && status !== 'TimedOut' ? invocation.stdout : '';
  const stderr = finished && status !== 'TimedOut' ? invocation.stderr : status === 'TimedOut' ? 'command timed out' : '';
  return {
    CommandId: invocation.commandId,
    InstanceId: invocation.instanceId,
    DocumentName: 'AWS-RunShellScript',
    Status: status,
    StatusDetails: status === 'TimedOut' ? 'ExecutionTimedOut' : status,
    ResponseCode: status === 'Success' || status === 'Failed' ? invocation.exitCode : -1,
    // The agent's byte-counted prefixes and marker (core/site/ssm-output.ts names the agent's files).
    StandardOutputContent: ssmCommandOutput(stdout, stderr).stdout,
    StandardErrorContent: ssmCommandOutput(stdout, stderr).stderr,
  };
}
