import { parseSiteDefinition, type SiteDefinitionInput } from '../../simulator';
import { HEAD_NODE_INSTANCE_ID } from '../../simulator/models/head-node';
import type { SsmStatusChange } from '../../simulator/models/ssm-notifications';
import { SiteSimulator } from '../../simulator/site-simulator';
import { SimClock } from '../../time/sim-clock';

/** A simulator whose clock the test moves by hand (simulated ms since the start). */
function simulate(input: Partial<SiteDefinitionInput> = {}) {
  let elapsed = 0;
  const clock = new SimClock({ timeScale: 1, startAt: 0, realNow: () => elapsed });
  const sim = new SiteSimulator(
    parseSiteDefinition({
      nodes: [
        { name: 'n1', nid: 1 },
        { name: 'n2', nid: 2, faults: { healthCheck: 'hang' } },
      ],
      bootTemplates: ['img'],
      ...input,
    }),
    clock,
  );
  return { sim, at: (seconds: number) => ((elapsed = seconds * 1000), sim) };
}

/** The notifications as `<detail-type's first word> <status> at <s>`, and the times the runtime is told to wake. */
function listen(sim: SiteSimulator) {
  const seen: SsmStatusChange[] = [];
  const scheduled: number[] = [];
  const notifications = sim.headNode.ssmNotifications;
  notifications.onNotification((n) => seen.push(n));
  notifications.onScheduled((at) => scheduled.push(at / 1000));
  const said = () =>
    seen.map((n) => `${n['detail-type'].startsWith('EC2 Command Invocation') ? 'invocation' : 'command'} ${n.detail.status} at ${Date.parse(n.time) / 1000}`);
  return { seen, scheduled, said };
}

describe("the simulated SSM's status-change notifications", () => {
  it("a command's InProgress when sent and its end at its time, as AWS shapes them; read after, its end shows at once", () => {
    const { sim, at } = simulate({ timing: { healthCheckSeconds: 40 } });
    const { seen, scheduled, said } = listen(sim);
    const sent = sim.headNode.send(HEAD_NODE_INSTANCE_ID, ["ssh 'n1' /usr/sbin/nhc"], 300, 'rollout run-1 check n1');
    expect(said()).toEqual(['command InProgress at 0', 'invocation InProgress at 0']);
    // The runtime is told when the end falls due (it runs it then: nothing else reads the site).
    expect(scheduled).toEqual([40]);
    at(40).headNode.ssmNotifications.catchUp();
    expect(said().slice(2)).toEqual(['command Success at 40', 'invocation Success at 40']);
    expect(seen[3]).toMatchObject({
      version: '0',
      source: 'aws.ssm',
      'detail-type': 'EC2 Command Invocation Status-change Notification',
      resources: [`arn:aws:ec2:us-east-1:123456789012:instance/${HEAD_NODE_INSTANCE_ID}`],
      detail: {
        'command-id': sent.commandId,
        'document-name': 'AWS-RunShellScript',
        'instance-id': HEAD_NODE_INSTANCE_ID,
        'requested-date-time': new Date(0).toISOString(),
        status: 'Success',
      },
    });
    expect(seen[2]!.detail).toMatchObject({
      'command-id': sent.commandId,
      'expire-after': new Date(300_000).toISOString(),
      parameters: { commands: ["ssh 'n1' /usr/sbin/nhc"] },
    });
    // Its first read after the notification sees the end (without one, a first read says InProgress).
    expect(sim.headNode.get(sent.commandId, HEAD_NODE_INSTANCE_ID)).toMatchObject({ status: 'Success' });
    // The timeout passing says nothing more: the end is notified once.
    at(300).headNode.ssmNotifications.catchUp();
    expect(seen).toHaveLength(4);
  });

  it('a command that never ends, or ends past its execution timeout: TimedOut at the timeout', () => {
    const { sim, at } = simulate({ timing: { healthCheckSeconds: 200 } });
    const { said, scheduled } = listen(sim);
    sim.headNode.send(HEAD_NODE_INSTANCE_ID, ["ssh 'n2' /usr/sbin/nhc"], 120);
    sim.headNode.send(HEAD_NODE_INSTANCE_ID, ["ssh 'n1' /usr/sbin/nhc"], 120);
    expect(scheduled).toEqual([120, 120]);
    at(119).headNode.ssmNotifications.catchUp();
    expect(said()).toHaveLength(4);
    at(120).headNode.ssmNotifications.catchUp();
    expect(said().slice(4)).toEqual(['command TimedOut at 120', 'invocation TimedOut at 120', 'command TimedOut at 120', 'invocation TimedOut at 120']);
    // Past the time it would have ended, it stays TimedOut (ListCommandInvocations and GetCommandInvocation alike).
    at(300);
    expect(sim.headNode.list().map((i) => sim.headNode.peek(i))).toEqual(['TimedOut', 'TimedOut']);
  });

  it('nobody listening: nothing sent, and a command reads as before (InProgress at its first read)', () => {
    const { sim } = simulate();
    const sent = sim.headNode.send(HEAD_NODE_INSTANCE_ID, ["ssh 'n1' /usr/sbin/nhc"], 300);
    expect(sim.headNode.get(sent.commandId, HEAD_NODE_INSTANCE_ID)).toMatchObject({ status: 'InProgress' });
    expect(sim.headNode.get(sent.commandId, HEAD_NODE_INSTANCE_ID)).toMatchObject({ status: 'Success' });
  });

  it('lost notifications (EventBridge delivers on a best-effort basis): the invocation ones are dropped and counted', () => {
    const { sim } = simulate();
    const { said } = listen(sim);
    sim.headNode.ssmNotifications.faults.loseInvocationNotifications = 2;
    sim.headNode.send(HEAD_NODE_INSTANCE_ID, ["ssh 'n1' /usr/sbin/nhc"], 300);
    sim.headNode.ssmNotifications.catchUp();
    expect(said()).toEqual(['command InProgress at 0', 'command Success at 0']);
    expect(sim.headNode.ssmNotifications.lost).toBe(2);
  });
});
