import type { SSMClient } from '@aws-sdk/client-ssm';
import type { SiteEvent } from '../../../core/site/site-event';
import { commandEndsHandler, commentBySsm } from '../../../lambdas/entrypoints/command-ends';
import { invocationStatusChange } from '../../support/ssm-notifications';

const notification = invocationStatusChange;

/** A target over an in-memory store, an SSM answering `comment` and a control plane that records its wakes. */
function target(comment: string | undefined) {
  const events = new Map<string, SiteEvent>();
  const reads: unknown[] = [];
  const woken: string[] = [];
  const ssm = {
    send: async (command: { input: unknown }) => {
      reads.push(command.input);
      return { Comment: comment };
    },
  } as unknown as Pick<SSMClient, 'send'>;
  const handle = commandEndsHandler({
    commentOf: commentBySsm(ssm),
    siteEvents: {
      record: async (event) => !events.has(event.id) && Boolean(events.set(event.id, event)),
      list: async () => [...events.values()],
    },
    controlPlane: {
      wakeForSiteEvent: async (session) => {
        woken.push(session);
        return { woke: true };
      },
    },
    now: () => Date.parse('2026-11-29T01:00:02.000Z'),
  });
  return { handle, events, reads, woken };
}

describe("the stack's target for SSM's invocation status-change notifications", () => {
  it("reads the ended invocation's Comment once, records a command event for its session and wakes it; a second delivery changes nothing", async () => {
    const { handle, events, reads, woken } = target('rollout run-1 check n001');
    expect(await handle(notification('Success'))).toEqual({
      taken: true,
      id: 'command:ceb96b84-16aa-4540-91e3-925a9a278b8c:i-00000000000000001:Success',
      recorded: true,
      woke: true,
    });
    expect(reads).toEqual([{ CommandId: 'ceb96b84-16aa-4540-91e3-925a9a278b8c', InstanceId: 'i-00000000000000001' }]);
    expect([...events.values()]).toEqual([
      expect.objectContaining({ event: 'command', nodes: ['n001'], session: 'run-1', receivedAt: '2026-11-29T01:00:02.000Z' }),
    ]);
    expect(await handle(notification('Success'))).toMatchObject({ taken: true, recorded: false, woke: false });
    expect(woken).toEqual(['run-1']);
  });

  it('an invocation still running reads nothing; a command that is not a health check is left', async () => {
    const running = target('rollout run-1 check n001');
    expect(await running.handle(notification('InProgress'))).toEqual({ taken: false });
    expect(running.reads).toEqual([]);
    const other = target('rollout-task t-1');
    expect(await other.handle(notification('Failed'))).toEqual({ taken: false });
    expect(other.events.size).toBe(0);
  });
});
