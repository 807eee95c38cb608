import type { SessionReport, NodeReport } from '../../control-plane/reports/session-report';
import type { SessionProgress } from '../../control-plane/runtime';
import { deploymentLiveState, taskRunLiveState, upgradeLiveState } from '../../cli/live-state';
import type { DeploymentReport } from '../../control-plane/reports/deployment-report';
import { renderLiveView } from '../../cli/live-view';
import type { TaskRunView } from '../../control-plane/reports/task-run-report';

/** The live view as a pure function of (progress, nodes, width, height, now): every size a unit test. */

const START = Date.parse('2026-01-01T00:00:00.000Z');
const at = (seconds: number) => new Date(START + seconds * 1000).toISOString();

/** A lock-step upgrade of `total` nodes in steps of 8, `inFlight` of them booting since +1:30:00, the earlier ones back. */
function lockstep(total: number, inFlight: number, upgraded: number): { progress: Extract<SessionProgress, { kind: 'upgrade' }>; report: SessionReport } {
  const nodes: Record<string, NodeReport> = {};
  for (let i = 0; i < total; i++) {
    const name = `x3000c0s${i + 1}b0n0`;
    nodes[name] =
      i < upgraded
        ? { status: 'UPGRADED', phase: 'back', since: at(600) }
        : i < upgraded + inFlight
          ? { status: 'IN_PROGRESS', phase: i % 2 === 0 ? 'booting' : 'quiet', since: at(5400) }
          : { status: 'NOT_STARTED', phase: 'waiting' };
  }
  const counts = { UPGRADED: upgraded, IN_PROGRESS: inFlight, FAILED: 0, NOT_STARTED: total - upgraded - inFlight };
  const report = {
    upgradeId: 'u-1',
    kind: 'ComputeUpgradeSession',
    state: 'UPDATING',
    completed: false,
    upgradeStepSize: 8,
    createdAt: at(0),
    stepCount: Math.ceil(total / 8),
    controls: { mode: 'lockstep' },
    progress: { step: 1, stage: 'BOOTING' },
    counts,
    phases: {},
    timeBase: 'simulated',
    messages: [],
    messageLog: [
      { at: at(5400), text: `Step 1: boot session s-1 started for ${inFlight} node(s) with template cos-2.4` },
      { at: at(5400), text: 'Step 1: x3000c0s10b0n0 reported DOWN, retrying' },
    ],
    nodes,
  } as unknown as SessionReport;
  const progress = {
    kind: 'upgrade' as const,
    step: 1,
    steps: report.stepCount,
    stage: 'BOOTING' as const,
    total,
    upgraded,
    failed: 0,
    state: 'UPDATING' as const,
    estimate: { endsAt: START + 3 * 3600_000, basis: 'pace' },
    simulatedTime: true,
    message: 'Step 1: boot session s-1 started',
  };
  return { progress, report };
}

const NOW = START + 5760_000; // +1h 36m

describe('renderLiveView', () => {
  const { progress, report } = lockstep(64, 8, 8);
  const state = upgradeLiveState(progress, report);

  it.each([40, 80, 200])('fits %i columns: the header, then every node in flight with its phase and since when', (width) => {
    const lines = renderLiveView(state, width, 40, NOW);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(width);
    const text = lines.join('\n');
    expect(text).toContain('u-1');
    // The header: mode and step (1-based), elapsed on the run's clock, the ETA, the counts, the cap in use.
    if (width >= 80) {
      expect(text).toMatch(/lock-step, step 2 of 8, UPDATING/);
      expect(text).toMatch(/elapsed 1h 36m \(simulated\)/);
      expect(text).toMatch(/ETA in 1h 24m/);
      expect(text).toMatch(/64 nodes: 8 upgraded, 8 in flight, 48 waiting/);
      expect(text).toMatch(/cap 8: 8 in use/);
    }
    // The table: its header and one row per node in flight, none of those back or waiting.
    expect(lines.some((line) => /^NODE\s+PHASE/.test(line))).toBe(true);
    for (let i = 9; i <= 16; i++) expect(lines.some((line) => line.startsWith(`x3000c0s${i}b0n0`))).toBe(true);
    expect(text).not.toContain('x3000c0s1b0n0 ');
    expect(text).not.toContain('x3000c0s17b0n0');
    const row = lines.find((line) => line.startsWith('x3000c0s9b0n0'))!;
    expect(row).toMatch(/booting\s+6m 0s/);
  });

  it('at 200 columns gives each node the newest message that names it', () => {
    const lines = renderLiveView(state, 200, 40, NOW);
    expect(lines.find((line) => line.startsWith('x3000c0s10b0n0'))).toMatch(/quiet\s+6m 0s\s+Step 1: x3000c0s10b0n0 reported DOWN, retrying$/);
    expect(lines.find((line) => line.startsWith('NODE'))).toMatch(/MESSAGE$/);
    expect(lines.join('\n')).toContain('latest: Step 1: boot session s-1 started');
  });

  it('at 40 columns leaves the message column out rather than cutting it to nothing', () => {
    const lines = renderLiveView(state, 40, 40, NOW);
    expect(lines.find((line) => line.startsWith('NODE'))).not.toContain('MESSAGE');
  });

  it('with more nodes in flight than rows: as many rows as fit, then "... and N more", never more lines than the height', () => {
    const many = lockstep(200, 60, 0);
    const wide = upgradeLiveState(many.progress, many.report);
    for (const height of [24, 12, 8]) {
      const lines = renderLiveView(wide, 80, height, NOW);
      expect(lines.length).toBeLessThanOrEqual(height);
      const rows = lines.filter((line) => line.startsWith('x3000c0s'));
      expect(lines.at(-1)).toBe(`... and ${60 - rows.length} more`);
      expect(rows.length).toBeGreaterThan(0);
    }
    // Too short for a table: the header, and how many are in flight.
    const short = renderLiveView(wide, 80, 5, NOW);
    expect(short.length).toBeLessThanOrEqual(5);
    expect(short.at(-1)).toBe('60 node(s) in flight');
    if (process.env.LIVE_VIEW_PRINT)
      process.stdout.write(
        `${renderLiveView(wide, 80, 12, NOW).join('\n')}\n\n${renderLiveView(state, 40, 20, NOW).join('\n')}\n\n${renderLiveView(state, 200, 20, NOW).join('\n')}\n`,
      );
    // Shorter than the header: the header's first lines.
    const tiny = renderLiveView(wide, 80, 2, NOW);
    expect(tiny).toHaveLength(2);
    expect(tiny[0]).toMatch(/^upgrade u-1/);
  });

  it('redraws with the clock: the same state later shows a longer elapsed and since', () => {
    const later = renderLiveView(state, 120, 40, NOW + 3600_000).join('\n');
    expect(later).toMatch(/elapsed 2h 36m/);
    expect(later).toMatch(/booting\s+1h 6m/);
  });

  it('a window shows its wave and its cap against the slots in use, drained-ahead nodes apart', () => {
    const { progress: p, report: r } = lockstep(64, 6, 0);
    const window = upgradeLiveState(
      { ...p, window: { inFlight: 4, cap: 4, ahead: 2, draining: 0, phases: {} } },
      { ...r, controls: { mode: 'window' } as SessionReport['controls'], waves: [{ wave: 2, nodes: 6, upgraded: 0, failed: 0 }] },
    );
    const text = renderLiveView(window, 120, 40, NOW).join('\n');
    expect(text).toContain('window, wave 2, UPDATING');
    expect(text).toContain('cap 4: 4 in use, 2 drained ahead');
  });

  it('a deployment: nodes and groups by stage, each node prepared and not yet deployed with its group', () => {
    const report = {
      deploymentId: 'd-1',
      status: 'RUNNING',
      groups: {
        storage: { stage: 'DEPLOYED', critical: true, nodes: ['s1'], failures: [] },
        compute: { stage: 'PREPARED', critical: false, nodes: ['c1', 'c2', 'c3'], failures: [] },
      },
      nodes: { s1: 'DEPLOYED', c1: 'PREPARED', c2: 'PREPARED', c3: 'NOT_STARTED' },
    } as unknown as DeploymentReport;
    const stages = (deployed: number, prepared: number, failed: number, notStarted: number) => ({
      DEPLOYED: deployed,
      PREPARED: prepared,
      FAILED: failed,
      NOT_STARTED: notStarted,
    });
    const state = deploymentLiveState({ kind: 'deployment', status: 'RUNNING', groups: stages(1, 1, 0, 0), nodes: stages(1, 2, 0, 1) }, report);
    const lines = renderLiveView(state, 80, 20, NOW);
    const text = lines.join('\n');
    expect(text).toContain('deployment d-1 | group deployment, RUNNING');
    expect(text).toContain('4 nodes: 1 deployed, 2 prepared, 1 not started');
    expect(text).toContain('groups: 1 deployed, 1 prepared');
    expect(lines.find((line) => line.startsWith('c1'))).toMatch(/prepared\s+group compute$/);
    expect(text).not.toMatch(/^(s1|c3)\b/m);
  });

  it('a task run: node tasks by state, the cap on tasks running, each node with a task running', () => {
    const view = {
      runId: 't-1',
      status: 'RUNNING',
      nodes: { n1: { drain: 'ACTIVE', upgrade: 'TRANSITION' }, n2: { drain: 'TRANSITION' }, n3: { drain: 'TODO' } },
      errors: { n2: { prepare: 'failed: exit 1' } },
      settings: { maxInTransition: 2 },
      createdAt: at(0),
    } as unknown as TaskRunView;
    const counts = { PROPOSED: 0, TODO: 1, BLOCKED: 0, TRANSITION: 2, ACTIVE: 1, ERROR: 0 };
    const state = { ...taskRunLiveState({ kind: 'tasks', status: 'RUNNING', counts, nodeCount: 3 }, view), startedAt: START };
    const lines = renderLiveView(state, 100, 20, START + 90_000);
    const text = lines.join('\n');
    expect(text).toContain('task run t-1');
    expect(text).toContain('elapsed 1m 30s');
    expect(text).toContain('4 task runs on 3 nodes: 1 done, 2 running, 1 to do');
    expect(text).toContain('cap 2: 2 in use');
    expect(lines.find((line) => line.startsWith('n1'))).toMatch(/running upgrade/);
    expect(lines.find((line) => line.startsWith('n2'))).toMatch(/running drain\s+prepare: failed: exit 1/);
    expect(text).not.toMatch(/^n3/m);
  });
});
