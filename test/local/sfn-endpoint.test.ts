import {
  DescribeExecutionCommand,
  DescribeStateMachineCommand,
  DescribeStateMachineForExecutionCommand,
  ListStateMachinesCommand,
  GetExecutionHistoryCommand,
  ListExecutionsCommand,
  SendTaskSuccessCommand,
  SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import { startServedControlPlane, type ServedControlPlane } from '../../local/serve';
import { DISCOVERY_PATH } from '../../control-plane/endpoints';
import { buildSite, upgradeRequest } from '../support/sites';

/** The real SDK client, as a user configures it for a local endpoint. */
function sfnClient(served: ServedControlPlane): SFNClient {
  return new SFNClient({
    endpoint: served.endpoints.stepFunctionsEndpoint,
    region: served.endpoints.region,
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
  });
}

async function until(sfn: SFNClient, executionArn: string, done: (status: string | undefined) => boolean) {
  for (;;) {
    const described = await sfn.send(new DescribeExecutionCommand({ executionArn }));
    if (done(described.status)) return described;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the Step Functions-compatible endpoint, through @aws-sdk/client-sfn', () => {
  let served: ServedControlPlane;
  let sfn: SFNClient;
  beforeAll(async () => {
    served = await startServedControlPlane({ site: { kind: 'simulated', definition: buildSite(4) } });
    sfn = sfnClient(served);
  });
  afterAll(async () => {
    sfn.destroy();
    await served.close();
  });

  it('starts an execution, describes it to its end, lists it and reports its history', async () => {
    const stateMachineArn = served.endpoints.stateMachines.rollingUpgrade;
    const input = JSON.stringify(upgradeRequest({ upgradeStepSize: 4 }));
    const started = await sfn.send(new StartExecutionCommand({ stateMachineArn, name: 'first-upgrade', input }));
    expect(started.executionArn).toBe(stateMachineArn.replace(':stateMachine:', ':execution:') + ':first-upgrade');
    expect(started.startDate).toBeInstanceOf(Date);

    const described = await until(sfn, started.executionArn!, (status) => status !== 'RUNNING');
    expect(described).toMatchObject({ status: 'SUCCEEDED', name: 'first-upgrade', stateMachineArn, input });
    expect(described.stopDate!.getTime()).toBeGreaterThanOrEqual(described.startDate!.getTime());
    expect(JSON.parse(described.output!)).toMatchObject({ upgradeId: expect.any(String) });

    const listed = await sfn.send(new ListExecutionsCommand({ stateMachineArn, statusFilter: 'SUCCEEDED' }));
    expect(listed.executions?.map((e) => e.executionArn)).toContain(started.executionArn);
    const running = await sfn.send(new ListExecutionsCommand({ stateMachineArn, statusFilter: 'RUNNING' }));
    expect(running.executions).toEqual([]);

    const history = await sfn.send(new GetExecutionHistoryCommand({ executionArn: started.executionArn!, maxResults: 1000 }));
    const events = history.events!;
    expect(events[0]).toMatchObject({ id: 1, type: 'ExecutionStarted', executionStartedEventDetails: { input } });
    expect(history.nextToken).toBeUndefined();
    expect(events.at(-1)).toMatchObject({ type: 'ExecutionSucceeded' });
    expect(events.find((e) => e.type === 'TaskStateEntered')?.stateEnteredEventDetails?.name).toEqual(expect.any(String));
    expect(events.some((e) => e.type === 'TaskStateExited')).toBe(true);

    const page = await sfn.send(new GetExecutionHistoryCommand({ executionArn: started.executionArn!, maxResults: 2, reverseOrder: true }));
    expect(page.events!.map((e) => e.type)[0]).toBe('ExecutionSucceeded');
    const next = await sfn.send(
      new GetExecutionHistoryCommand({ executionArn: started.executionArn!, maxResults: 2, reverseOrder: true, nextToken: page.nextToken }),
    );
    expect(next.events!.map((e) => e.id)).toEqual([events.length - 2, events.length - 3]);
  });

  it('reports a failed execution with its error and cause', async () => {
    const started = await sfn.send(
      new StartExecutionCommand({
        stateMachineArn: served.endpoints.stateMachines.rollingUpgrade,
        input: JSON.stringify(upgradeRequest({ upgradeStepSize: 0 })),
      }),
    );
    const described = await until(sfn, started.executionArn!, (status) => status !== 'RUNNING');
    expect(described).toMatchObject({ status: 'FAILED', error: 'InvalidInputError', cause: expect.stringContaining('upgradeStepSize') });
    const history = await sfn.send(new GetExecutionHistoryCommand({ executionArn: started.executionArn!, reverseOrder: true }));
    expect(history.events![0]).toMatchObject({ type: 'ExecutionFailed', executionFailedEventDetails: { error: 'InvalidInputError' } });
  });

  it('answers with the AWS error shapes', async () => {
    const unknownArn = served.endpoints.stateMachines.rollingUpgrade.replace(':stateMachine:', ':execution:') + ':nope';
    await expect(sfn.send(new DescribeExecutionCommand({ executionArn: unknownArn }))).rejects.toMatchObject({
      name: 'ExecutionDoesNotExist',
      $metadata: { httpStatusCode: 400 },
    });
    await expect(sfn.send(new StopExecutionCommand({ executionArn: unknownArn }))).rejects.toMatchObject({ name: 'ExecutionDoesNotExist' });
    await expect(sfn.send(new GetExecutionHistoryCommand({ executionArn: unknownArn }))).rejects.toMatchObject({ name: 'ExecutionDoesNotExist' });
    await expect(sfn.send(new StartExecutionCommand({ stateMachineArn: 'arn:aws:states:local:000000000000:stateMachine:Nope' }))).rejects.toMatchObject({
      name: 'StateMachineDoesNotExist',
    });
    await expect(
      sfn.send(new StartExecutionCommand({ stateMachineArn: served.endpoints.stateMachines.rollingUpgrade, input: '{not json' })),
    ).rejects.toMatchObject({
      name: 'InvalidExecutionInput',
    });
    await expect(sfn.send(new SendTaskSuccessCommand({ taskToken: 'token', output: '{}' }))).rejects.toMatchObject({ name: 'TaskDoesNotExist' });

    const stateMachineArn = served.endpoints.stateMachines.groupDeployment;
    const input = JSON.stringify({ nodes: ['n000'], pollIntervalSeconds: 10 });
    const started = await sfn.send(new StartExecutionCommand({ stateMachineArn, name: 'taken', input }));
    await until(sfn, started.executionArn!, (status) => status !== 'RUNNING');
    await expect(sfn.send(new StartExecutionCommand({ stateMachineArn, name: 'taken', input }))).rejects.toMatchObject({ name: 'ExecutionAlreadyExists' });
  });

  it('lists and describes the state machines it runs: every workflow, with the definition as deployed', async () => {
    const listed = await sfn.send(new ListStateMachinesCommand({}));
    const names = ['RollingUpgrade', 'GroupDeployment', 'DeployGroup', 'RunNodeBatches', 'TaskGraph', 'EnvironmentUpgrade'];
    expect(listed.stateMachines?.map((machine) => machine.name).sort()).toEqual([...names].sort());
    expect(listed.stateMachines?.find((machine) => machine.name === 'RollingUpgrade')).toEqual({
      stateMachineArn: served.endpoints.stateMachines.rollingUpgrade,
      name: 'RollingUpgrade',
      type: 'STANDARD',
      creationDate: expect.any(Date),
    });
    // Paged as AWS pages it.
    const first = await sfn.send(new ListStateMachinesCommand({ maxResults: 4 }));
    const rest = await sfn.send(new ListStateMachinesCommand({ maxResults: 4, nextToken: first.nextToken! }));
    expect([...first.stateMachines!, ...rest.stateMachines!].map((machine) => machine.name)).toEqual(listed.stateMachines!.map((machine) => machine.name));
    expect(rest.nextToken).toBeUndefined();

    const stateMachineArn = served.endpoints.stateMachines.groupDeployment;
    const described = await sfn.send(new DescribeStateMachineCommand({ stateMachineArn }));
    expect(described).toMatchObject({
      stateMachineArn,
      name: 'GroupDeployment',
      status: 'ACTIVE',
      type: 'STANDARD',
      roleArn: expect.stringMatching(/^arn:aws:iam::000000000000:role\//),
    });
    const definition = JSON.parse(described.definition!) as {
      StartAt: string;
      States: Record<string, { Resource?: string; Parameters?: Record<string, unknown> }>;
    };
    expect(definition.States[definition.StartAt]).toBeDefined();
    // Substituted as CloudFormation deploys it: no `${...}` left, local ARNs instead.
    expect(described.definition).not.toContain('${');
    expect(described.definition).toContain(served.endpoints.stateMachines.groupDeployment.replace(':GroupDeployment', ':DeployGroup'));
    await expect(sfn.send(new DescribeStateMachineCommand({ stateMachineArn: `${stateMachineArn}x` }))).rejects.toMatchObject({
      name: 'StateMachineDoesNotExist',
    });

    const started = await sfn.send(
      new StartExecutionCommand({
        stateMachineArn: served.endpoints.stateMachines.rollingUpgrade,
        input: JSON.stringify(upgradeRequest({ upgradeStepSize: 4 })),
      }),
    );
    const forExecution = await sfn.send(new DescribeStateMachineForExecutionCommand({ executionArn: started.executionArn! }));
    expect(forExecution).toMatchObject({
      stateMachineArn: served.endpoints.stateMachines.rollingUpgrade,
      name: 'RollingUpgrade',
      updateDate: expect.any(Date),
    });
    expect(JSON.parse(forExecution.definition!)).toEqual(
      JSON.parse((await sfn.send(new DescribeStateMachineCommand({ stateMachineArn: forExecution.stateMachineArn! }))).definition!),
    );
    await expect(sfn.send(new DescribeStateMachineForExecutionCommand({ executionArn: `${started.executionArn!}x` }))).rejects.toMatchObject({
      name: 'ExecutionDoesNotExist',
    });
    await until(sfn, started.executionArn!, (status) => status !== 'RUNNING');
  });

  it('serves its endpoints on the discovery route', async () => {
    const response = await fetch(new URL(DISCOVERY_PATH, served.endpoints.stepFunctionsEndpoint));
    expect(await response.json()).toEqual(served.endpoints);
  });
});

describe('StopExecution on the endpoint', () => {
  let served: ServedControlPlane;
  let sfn: SFNClient;
  beforeAll(async () => {
    // On the wall clock (one simulated second per second): the execution sits in a Wait until stopped.
    served = await startServedControlPlane({ site: { kind: 'simulated', definition: buildSite(2) }, timeScale: 1 });
    sfn = sfnClient(served);
  });
  afterAll(async () => {
    sfn.destroy();
    await served.close();
  });

  it('aborts a running execution as AWS does: ABORTED, with the error and cause given, no cleanup', async () => {
    const started = await sfn.send(
      new StartExecutionCommand({
        stateMachineArn: served.endpoints.stateMachines.rollingUpgrade,
        input: JSON.stringify(upgradeRequest({ pollIntervalSeconds: 3600 })),
      }),
    );
    const running = await sfn.send(new DescribeExecutionCommand({ executionArn: started.executionArn! }));
    expect(running.status).toBe('RUNNING');
    await sfn.send(new StopExecutionCommand({ executionArn: started.executionArn!, error: 'Operator', cause: 'stopped from the console' }));
    const described = await sfn.send(new DescribeExecutionCommand({ executionArn: started.executionArn! }));
    expect(described).toMatchObject({ status: 'ABORTED', error: 'Operator', cause: 'stopped from the console' });
    const listed = await sfn.send(new ListExecutionsCommand({ stateMachineArn: served.endpoints.stateMachines.rollingUpgrade, statusFilter: 'ABORTED' }));
    expect(listed.executions!.map((e) => e.executionArn)).toEqual([started.executionArn]);
  });
});
