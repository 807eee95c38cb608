import {
  COMMAND_STATUS_CHANGE,
  commandEndEvent,
  healthCheckComment,
  parseHealthCheckComment,
  type SsmInvocationStatusChange,
} from '../../../core/site/command-end-event';
import { siteEventSchema } from '../../../core/site/site-event';
import { invocationStatusChange } from '../../support/ssm-notifications';

const invocation = invocationStatusChange;

describe("a session's command end from SSM's notifications", () => {
  it("the health check's Comment names the session and the node, and reads back; one that would not fit SSM's 100 characters is not sent", () => {
    const comment = healthCheckComment('f2f860b7-9d2a-49d3-a908-83735e3681c3', 'n001');
    expect(comment).toBe('rollout f2f860b7-9d2a-49d3-a908-83735e3681c3 check n001');
    expect(parseHealthCheckComment(comment)).toEqual({ session: 'f2f860b7-9d2a-49d3-a908-83735e3681c3', node: 'n001' });
    expect(healthCheckComment('s', 'x'.repeat(100))).toBeUndefined();
    expect(healthCheckComment('not a session', 'n001')).toBeUndefined();
    for (const other of [undefined, '', 'rollout-task build-1', 'rollout s check', 'rollout s probe n1'])
      expect(parseHealthCheckComment(other)).toBeUndefined();
  });

  it('an ended invocation of a health check is a command event for its session and node, its id the same on every delivery', () => {
    const comment = 'rollout run-1 check n001';
    for (const status of ['Success', 'Failed', 'TimedOut', 'Cancelled']) {
      const event = commandEndEvent(invocation(status), comment, '2026-11-29T01:00:01.000Z');
      expect(event).toEqual({
        id: `command:ceb96b84-16aa-4540-91e3-925a9a278b8c:i-00000000000000001:${status}`,
        event: 'command',
        nodes: ['n001'],
        session: 'run-1',
        firedAt: '2026-11-29T01:00:00.000Z',
        receivedAt: '2026-11-29T01:00:01.000Z',
      });
      // What POST /site-events takes.
      const { receivedAt: _received, ...request } = event!;
      expect(siteEventSchema.safeParse(request).success).toBe(true);
    }
    expect(commandEndEvent(invocation('Success'), comment, 'x')!.id).toBe(commandEndEvent(invocation('Success'), comment, 'y')!.id);
  });

  it('nothing for a command still running, a command status change, or a command that is not a health check', () => {
    expect(commandEndEvent(invocation('InProgress'), 'rollout run-1 check n001', 'x')).toBeUndefined();
    expect(commandEndEvent(invocation('Success'), undefined, 'x')).toBeUndefined();
    expect(commandEndEvent(invocation('Success'), 'rollout-task t1', 'x')).toBeUndefined();
    const command = { ...invocation('Success'), 'detail-type': COMMAND_STATUS_CHANGE } as unknown as SsmInvocationStatusChange;
    expect(commandEndEvent(command, 'rollout run-1 check n001', 'x')).toBeUndefined();
  });
});
