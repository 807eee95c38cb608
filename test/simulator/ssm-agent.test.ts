import { CommandTransportError } from '../../ports/command-transport';
import { SsmTransport } from '../../adapters/site/commands/ssm-transport';
import { parseSiteDefinition } from '../../simulator';
import { startSiteSimulator, type RunningSiteSimulator } from '../../simulator/http-server';
import { HEAD_NODE_INSTANCE_ID } from '../../simulator/models/head-node';
import { SimClock } from '../../time/sim-clock';

/** The simulator's SSM endpoint with its agent stand-in: the instance ids given run commands on this machine. */
describe('SSM agent stand-in (commands of the given instance ids run on this machine)', () => {
  const HERE = 'mi-0123456789abcdef0';
  let sim: RunningSiteSimulator;
  const transport = (instanceIds: string[]) =>
    new SsmTransport({
      instanceIds,
      region: 'us-east-1',
      endpoint: sim.url,
      credentials: { accessKeyId: 'sim', secretAccessKey: 'sim' },
      pollIntervalMs: 20,
      maxPollIntervalMs: 100,
    });

  beforeAll(async () => {
    sim = await startSiteSimulator({
      site: parseSiteDefinition({ nodes: [{ name: 'n1', nid: 1 }] }),
      clock: new SimClock({ timeScale: 1 }),
      ssmAgent: { instanceIds: [HERE], env: { ...process.env, ROLLOUT_AGENT_TEST: 'from-the-agent' } },
    });
  });
  afterAll(() => sim.close());

  it('runs the script with sh in its own folder and answers its exit code, stdout and stderr through the real SSM client', async () => {
    const result = await transport([HERE]).run('echo "$ROLLOUT_AGENT_TEST"\nbasename "$PWD"\necho oops >&2\nexit 3');
    const invocation = sim.ssmAgent!.commandLog.at(-1)!;
    expect(result).toMatchObject({ exitCode: 3, stdout: `from-the-agent\n${invocation.commandId}\n`, stderr: 'oops\n' });
    expect(invocation).toMatchObject({ instanceId: HERE, exitCode: 3 });
    expect(invocation.polls).toBeGreaterThan(0);
  });

  it('stops a command past its executionTimeout, its children too, and reports it TimedOut', async () => {
    const started = Date.now();
    const error = await transport([HERE])
      .run('sleep 30 & wait', { timeoutSeconds: 1 })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(CommandTransportError);
    expect((error as Error).message).toMatch(/ended TimedOut/);
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('leaves the simulated head node its own instance id, and refuses ids it knows neither by', async () => {
    const simulated = await transport([HEAD_NODE_INSTANCE_ID]).run('scontrol --version');
    expect(simulated.exitCode).toBe(0);
    expect(sim.simulator.headNode.commandLog.at(-1)).toBe('scontrol --version');
    expect(sim.ssmAgent!.commandLog.some((i) => i.commandLine === 'scontrol --version')).toBe(false);
    await expect(transport(['i-0fffffffffffffff0']).run('true')).rejects.toThrow(/InvalidInstanceId/);
  });
});
