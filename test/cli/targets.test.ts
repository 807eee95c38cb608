import { DescribeStacksCommand, type CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { discoverEndpoints, resolveStack, STACK_OUTPUTS } from '../../cli/targets';

/** A CloudFormation client stub answering DescribeStacks with these outputs (unit test: no AWS here). */
function cloudFormationWith(outputs: Record<string, string> | undefined): { client: Pick<CloudFormationClient, 'send'>; sent: unknown[] } {
  const sent: unknown[] = [];
  const client = {
    send: async (command: unknown) => {
      sent.push(command);
      return { Stacks: outputs ? [{ StackName: 'S', Outputs: Object.entries(outputs).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })) }] : [] };
    },
  } as unknown as Pick<CloudFormationClient, 'send'>;
  return { client, sent };
}

describe('resolving a deployed stack from its CloudFormation outputs', () => {
  it('reads the state machines and the table from the outputs infra/ declares', async () => {
    const { client, sent } = cloudFormationWith({
      [STACK_OUTPUTS.rollingUpgrade]: 'arn:aws:states:eu-west-1:1:stateMachine:RU',
      [STACK_OUTPUTS.groupDeployment]: 'arn:aws:states:eu-west-1:1:stateMachine:GD',
      [STACK_OUTPUTS.tableName]: 'sessions-table',
      Other: 'x',
    });
    expect(await resolveStack(client, 'MyRollout', 'eu-west-1')).toEqual({
      region: 'eu-west-1',
      tableName: 'sessions-table',
      stateMachines: { rollingUpgrade: 'arn:aws:states:eu-west-1:1:stateMachine:RU', groupDeployment: 'arn:aws:states:eu-west-1:1:stateMachine:GD' },
    });
    expect(sent).toHaveLength(1);
    expect(sent[0]).toBeInstanceOf(DescribeStacksCommand);
    expect((sent[0] as DescribeStacksCommand).input).toEqual({ StackName: 'MyRollout' });
  });

  it('names the missing output, and a stack that is not there', async () => {
    await expect(resolveStack(cloudFormationWith({ [STACK_OUTPUTS.tableName]: 't' }).client, 'S', 'r')).rejects.toThrow(
      `stack S has no output ${STACK_OUTPUTS.rollingUpgrade}`,
    );
    await expect(resolveStack(cloudFormationWith(undefined).client, 'Gone', 'r')).rejects.toThrow('stack Gone not found in r');
  });

  it('the infra stack declares those outputs', async () => {
    const { readFile } = await import('node:fs/promises');
    const stack = await readFile(new URL('../../infra/rollout-stack.ts', import.meta.url), 'utf8');
    for (const output of Object.values(STACK_OUTPUTS)) expect(stack).toContain(`'${output}'`);
  });

  it('rejects an endpoint that is not a URL, naming the option', async () => {
    await expect(discoverEndpoints('not a url')).rejects.toMatchObject({ name: 'InvalidInputError', message: expect.stringContaining('--endpoint') });
  });
});
