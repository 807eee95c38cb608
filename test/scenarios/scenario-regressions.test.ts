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
  [
    "task graph over a node an admin drained ('hw: fan : replaced') whose boot fails: the admin's reason kept (Slurm's ' : Not responding' after it, ping_nodes.c)",
    56,
  ],
  ["task graph over a node an admin drained ('ticket #4521 – ünïcode') whose boot fails: the admin's reason kept, Slurm's ' : Not responding' after it", 215],
  [
    'task graph stopped then resumed, maxInTransition 1, an admin drains a node while another is in transition: the cap counts what the run took out, not the admin’s drain',
    269,
  ],
  [
    'task graph whose drain batch start is retried after a failing Slurm call (500): a drain already sent is not sent again (a busy node drained twice while its first drain ran)',
    430,
  ],
  [
    "site triggers armed: a session cancelled while nodes are in flight keeps waiting on the site's events (parked while DELETING), never looping without a wait",
    26031,
  ],
  ['site triggers armed: a session stopped while parked for the site lets its nodes in flight finish, parked, and ends STOPPED', 100110],
  ["site triggers armed, window with health checks: a node whose check runs is not failed for a check 'with no result' while its check passes", 26154],
  ['site triggers armed over SSM: a strigger --set failing after others were set leaves none of the session in strigger --get after its end', 100094],
  [
    "site triggers armed: a stop whose put-back meets Slurm's 500s puts its drained nodes back once the calls pass (a retried cancel renews its locks, never taking them again and reading them lost)",
    201039,
  ],
  [
    "a stop taken while the plan's last step is in flight: that step finishes and the session completes READY (the plan's end is no stop), no node drained after the stop",
    400069,
  ],
];

describe('scenarios that once broke an invariant', () => {
  it.each(REGRESSIONS)('%s (seed %i)', async (_name, seed) => {
    const checked = await checkScenario(seed);
    expect(checked.violations.length === 0 ? [] : [renderFailure(checked)]).toEqual([]);
  });
});
