import { drainClaim } from '../../../core/site/node-claims';
import type { WlmNode } from '../../../core/site/site-nodes';
import { foreignClaims } from '../../../lambdas/activities/site-claims';

const SELF = '11111111-1111-4111-a111-111111111111';
const OTHER = '22222222-2222-4222-a222-222222222222';
const KNOWN = '33333333-3333-4333-a333-333333333333';

const node = (name: string, base: WlmNode['base'], flags: string[], reason?: string): WlmNode => ({ name, base, flags, ...(reason ? { reason } : {}) });

describe('foreignClaims: the nodes another control plane claims at the site', () => {
  const locks = { knownRuns: (ids: readonly string[]) => Promise.resolve(new Set(ids.filter((id) => id === KNOWN))) };

  it('counts a drain or a DOWN node naming an unknown run, not our own run, a run this store knows, or a reason left on a node in service', async () => {
    const wlm = new Map(
      [
        node('drained', 'ALLOCATED', ['DRAIN'], drainClaim('upgrade', OTHER)),
        node('down', 'DOWN', ['NOT_RESPONDING'], `${drainClaim('tasks', OTHER, 'reboot task=r')} : Not responding`),
        node('ours', 'IDLE', ['DRAIN'], drainClaim('upgrade', SELF)),
        node('known', 'IDLE', ['DRAIN'], drainClaim('upgrade', KNOWN)),
        // RESUME of a busy node keeps its reason from Slurm 23.02: the words stay, the claim went with the drain.
        node('resumed', 'ALLOCATED', [], drainClaim('upgrade', OTHER)),
        node('admin', 'IDLE', ['DRAIN'], 'bad DIMM'),
      ].map((n) => [n.name, n]),
    );
    expect(await foreignClaims(locks, SELF, wlm)).toEqual(
      new Map([
        ['drained', OTHER],
        ['down', OTHER],
      ]),
    );
  });
});
