import { checkScenario, renderFailure } from '../../bench/scenarios/check';

/**
 * Every scenario that once broke an invariant, by name and seed (bench/scenarios: the seed draws the
 * same scenario on every host). Each must now keep every invariant.
 */
const REGRESSIONS: [string, number][] = [
  ['reserveSlots with a job that never ends: no reservation at now+Infinity, no increment failing for it, no node failed for it', 1157],
  ['window on slurm-reboot whose boot start fails (SSM SendCommand 500): the boot is asked again, never failed time-out-booting unbooted', 40247],
  ['task graph: a node that boots but never registers with Slurm again fails its resume task (timeout), never recorded done while IDLE*', 1333],
  ['task graph killed and resumed: a node that never registers fails its resume; every other node drained, rebooted and resumed once', 1290],
  ['task graph whose batch start is retried after a failing Slurm call (503): a resume already done is not sent again (Slurm: Invalid node state)', 26039],
  ["task graph over a node an admin drained ('hw: fan : replaced'): rebooted once, its drain and reason kept, never drained over nor resumed", 1706],
  ["task graph over a node an admin drained ('rolling-upgrade') whose boot hangs: the admin's reason kept (Slurm's ' : Not responding' after it)", 3231],
  [
    'task graph stopped while its only task in flight then fails (a hung reboot at its timeout): ends STOPPED, the failure recorded on its node, the node never started left as it was',
    26177,
  ],
];

describe('scenarios that once broke an invariant', () => {
  it.each(REGRESSIONS)('%s (seed %i)', async (_name, seed) => {
    const checked = await checkScenario(seed);
    expect(checked.violations.length === 0 ? [] : [renderFailure(checked)]).toEqual([]);
  });
});
