import { rolloutClient } from '../../control-plane/aws-client/rollout-client';
import type { ControlPlane } from '../../control-plane/control-plane';
import type { SessionKind, StartedRun } from '../../control-plane/runtime';
import type { WorkflowName } from '../../contracts';
import type { EmbeddedRuntime } from '../../local/embedded-runtime';
import { startServedControlPlane } from '../../local/serve';
import type { SiteDefinition } from '../../simulator';
import type { VirtualClock } from '../../time/virtual-clock';
import { deploymentSite, groupOf, namedNodes, namesOf, QUICK_POLL } from '../support/deployment-sites';
import { buildSite, upgradeRequest } from '../support/sites';
import { until } from '../support/until';
import { drainRebootResumeGraph } from '../support/task-graph-runs';

/**
 * The control plane's contract: the same operations, against the embedded control plane called in
 * process (its executions on the local engine) and against the control plane reached through the SDK
 * (the real @aws-sdk/client-sfn and DynamoDB clients against `rollout serve`'s endpoints), give the
 * same answers. Each side gets its own served runtime on the same site, on virtual time; runs are
 * started under the same execution names, so their ids and ARNs are the same on both sides too.
 */

interface Side {
  controlPlane: ControlPlane;
  /** The runtime behind it, to hold its virtual time and see its parked executions. */
  runtime: EmbeddedRuntime;
  close(): Promise<void>;
}

type Maker = (site: SiteDefinition) => Promise<Side>;

const SIDES: Record<'in process' | 'through the SDK', Maker> = {
  'in process': async (site) => {
    const served = await startServedControlPlane({ site: { kind: 'simulated', definition: site } });
    return { controlPlane: served.runtime, runtime: served.runtime, close: () => served.close() };
  },
  'through the SDK': async (site) => {
    const served = await startServedControlPlane({ site: { kind: 'simulated', definition: site } });
    const client = rolloutClient({ endpoints: served.endpoints, localCredentials: true, pollMs: 5 });
    return {
      controlPlane: client,
      runtime: served.runtime,
      close: async () => {
        await client.close();
        await served.close();
      },
    };
  },
};

/** What a scenario records: each answer (or the error thrown) under a label, as JSON would carry it. */
class Transcript {
  readonly entries: [string, unknown][] = [];

  async record<T>(label: string, answer: Promise<T> | T): Promise<T | undefined> {
    try {
      const value = await answer;
      this.entries.push([label, value === undefined ? '<undefined>' : (JSON.parse(JSON.stringify(value), normalised) as unknown)]);
      return value;
    } catch (err) {
      this.entries.push([label, { threw: (err as Error).name, message: (err as Error).message }]);
      return undefined;
    }
  }

  /** A started run: its workflow and kind, its id and execution ARN when `named` (a resume's name carries the wall clock, and its id derives from it). */
  async started(label: string, run: Promise<StartedRun>, named = true): Promise<StartedRun> {
    const started = await run;
    this.entries.push([label, { workflow: started.workflow, kind: started.kind, ...(named ? { id: started.id, executionArn: started.executionArn } : {}) }]);
    return started;
  }
}

/**
 * What must differ between two control planes, and only that: the wall-clock instant a session was
 * created at (its simulated times are the same on virtual time), and a parked execution's task token.
 */
function normalised(key: string, value: unknown): unknown {
  if (key === 'wallCreatedAt' && typeof value === 'string') return '<wall clock>';
  if (key === 'taskToken' && typeof value === 'string') return '<task token>';
  return value;
}

/** The answers of one scenario on each side. */
async function onBothSides(
  site: SiteDefinition,
  scenario: (side: Side, transcript: Transcript) => Promise<void>,
): Promise<Record<string, [string, unknown][]>> {
  const answers: Record<string, [string, unknown][]> = {};
  for (const [name, make] of Object.entries(SIDES)) {
    const side = await make(site);
    try {
      const transcript = new Transcript();
      await scenario(side, transcript);
      answers[name] = transcript.entries;
    } finally {
      await side.close();
    }
  }
  return answers;
}

/** The operations every run answers whatever its kind, recorded under `label`. */
async function reads(t: Transcript, cp: ControlPlane, kind: SessionKind, id: string, label: string): Promise<void> {
  await t.record(`${label}: status`, cp.status(id));
  await t.record(`${label}: progress`, cp.progress(id));
  await t.record(`${label}: session`, cp.session(id));
  await t.record(`${label}: sessions`, cp.sessions());
  await t.record(`${label}: isRunning`, cp.isRunning(kind, id));
}

/**
 * Time is held: the run does what it can without a Wait elapsing, then sleeps. Its stop or cancel is
 * asked once it sleeps and its progress stays put (a stop written while its first increments still
 * run would land at another point of the run on each side).
 */
async function settled({ controlPlane, runtime }: Side, id: string): Promise<void> {
  let seen = '';
  await until(async () => {
    const now = JSON.stringify(await controlPlane.progress(id));
    const still = (runtime.clock as VirtualClock).sleeping > 0 && now === seen;
    seen = now;
    if (!still) await new Promise((resolve) => setTimeout(resolve, 100));
    return still;
  }, `${id} asleep`);
}

/** Stop, resume, cancel of a run held on its first wait (virtual time held: nothing moves until released). */
async function stopResumeCancel(side: Side, t: Transcript, workflow: WorkflowName, input: unknown, held: string): Promise<void> {
  const cp = side.controlPlane;
  const { clock } = side.runtime;
  let run!: StartedRun;
  await clock.busy(async () => {
    run = await t.started('run', cp.run(workflow, input, `contract-${workflow}`));
    await until(async () => (await cp.status(run.id))?.state === held && (await cp.isRunning(run.kind, run.id)), `${run.kind} ${held}`);
    await settled(side, run.id);
    await t.record('held: status', cp.status(run.id));
    await t.record('held: isRunning', cp.isRunning(run.kind, run.id));
    await t.record('held: resume refused', cp.resume(run.kind, run.id));
    await t.record('stop', cp.stop(run.id));
    await t.record('stop again', cp.stop(run.id));
  });
  await t.record('stopped: outcome', (async () => ({ status: (await run.outcome).status }))());
  await until(async () => (await cp.status(run.id))?.ended === true && !(await cp.isRunning(run.kind, run.id)), `${run.kind} stopped`);
  await reads(t, cp, run.kind, run.id, 'stopped');
  let resumed!: StartedRun;
  await clock.busy(async () => {
    resumed = await t.started('resume', cp.resume(run.kind, run.id), false);
    await until(async () => (await cp.status(run.id))?.state === held && (await cp.isRunning(run.kind, run.id)), `${run.kind} resumed`);
    await settled(side, run.id);
    await t.record('resumed: status', cp.status(run.id));
    await t.record('cancel', cp.cancel(run.id));
  });
  await t.record('cancelled: outcome', (async () => ({ status: (await resumed.outcome).status }))());
  await until(async () => (await cp.status(run.id))?.ended === true && !(await cp.isRunning(run.kind, run.id)), `${run.kind} cancelled`);
  await reads(t, cp, run.kind, run.id, 'cancelled');
  await t.record('cancelled: cancel', cp.cancel(run.id));
  await t.record('cancelled: stop', cp.stop(run.id));
  await t.record('cancelled: gate', cp.gate(run.id, 'pause'));
}

const TASK_GRAPH = drainRebootResumeGraph('img-2');

describe('the control plane contract: in process and through the SDK, the same answers', () => {
  it('an unknown id, and one no run can have', async () => {
    const answers = await onBothSides(buildSite(2), async ({ controlPlane: cp }, t) => {
      for (const id of ['no-such-id', 'x'.repeat(201)]) {
        await t.record(`${id.length}: session`, cp.session(id));
        await t.record(`${id.length}: status`, cp.status(id));
        await t.record(`${id.length}: progress`, cp.progress(id));
        await t.record(`${id.length}: taskRun`, cp.taskRun(id));
        await t.record(`${id.length}: cancel`, cp.cancel(id));
        await t.record(`${id.length}: stop`, cp.stop(id));
        await t.record(`${id.length}: gate`, cp.gate(id, 'approve'));
        await t.record(`${id.length}: resume`, cp.resume('upgrade', id));
      }
      await t.record('sessions', cp.sessions());
    });
    expect(answers['through the SDK']).toEqual(answers['in process']);
    expect(answers['in process']).toContainEqual(['10: cancel', { threw: 'SessionNotFoundError', message: "no session with id 'no-such-id'" }]);
  });

  it('a rolling upgrade in mode window: parked for its approval, paused, unpaused, approved, to its end', async () => {
    const answers = await onBothSides(buildSite(4), async ({ controlPlane: cp, runtime }, t) => {
      const run = await t.started(
        'run',
        cp.run('rollingUpgrade', upgradeRequest({ mode: 'window', maxUnavailable: 1, batches: [1], approval: 'each-batch' }), 'contract-window'),
      );
      const parked = async (what: string, previousToken?: string) => {
        await until(async () => {
          const session = await runtime.store.getSession(run.id);
          const token = session?.operator?.taskToken;
          return session?.progress.window?.awaitingApproval === 1 && runtime.engine.tokens.waiting === 1 && token !== undefined && token !== previousToken;
        }, what);
        return (await runtime.store.getSession(run.id))?.operator?.taskToken;
      };
      const token = await parked('parked for the approval of batch 2');
      await reads(t, cp, 'upgrade', run.id, 'parked');
      await t.record('resume refused', cp.resume('upgrade', run.id));
      await t.record('pause', cp.gate(run.id, 'pause'));
      await t.record('paused: session', cp.session(run.id));
      await t.record('unpause', cp.gate(run.id, 'unpause'));
      await parked('parked again', token);
      await t.record('approve', cp.gate(run.id, 'approve'));
      await t.record('outcome', (async () => ({ status: (await run.outcome).status }))());
      await reads(t, cp, 'upgrade', run.id, 'ended');
      await t.record('ended: approve', cp.gate(run.id, 'approve'));
      await t.record('ended: stop', cp.stop(run.id));
    });
    expect(answers['through the SDK']).toEqual(answers['in process']);
    expect(answers['in process']).toContainEqual(['approve', { id: expect.any(String), action: 'approve', batch: 2, running: true }]);
  });

  it('a rolling upgrade in lock-step: stopped, resumed, cancelled', async () => {
    const answers = await onBothSides(buildSite(4), (side, t) => stopResumeCancel(side, t, 'rollingUpgrade', upgradeRequest(), 'UPDATING'));
    expect(answers['through the SDK']).toEqual(answers['in process']);
    expect(answers['in process']).toContainEqual(['stop', { id: expect.any(String), kind: 'upgrade', state: 'STOPPING', running: true }]);
  });

  it('a group deployment: stopped, resumed, cancelled', async () => {
    const nodes = namedNodes('n', 2);
    const site = deploymentSite(nodes, { prepareSeconds: 600, deploySeconds: 60 });
    const input = { strategy: { groups: [groupOf('ga', namesOf(nodes))] }, ...QUICK_POLL };
    const answers = await onBothSides(site, (side, t) => stopResumeCancel(side, t, 'groupDeployment', input, 'RUNNING'));
    expect(answers['through the SDK']).toEqual(answers['in process']);
    expect(answers['in process']).toContainEqual(['stop', { id: expect.any(String), kind: 'deployment', state: 'STOPPING', running: true }]);
  });

  it('a task graph run: stopped, resumed, cancelled; its task run view', async () => {
    const site = buildSite(2, { node: () => ({ roles: ['compute'] }) });
    const answers = await onBothSides(site, async (side, t) => {
      await stopResumeCancel(side, t, 'taskGraph', { graph: TASK_GRAPH, maxInTransition: 1, pollIntervalSeconds: 10 }, 'RUNNING');
      const [listed] = await side.controlPlane.sessions();
      await t.record('taskRun', side.controlPlane.taskRun(listed!.id));
    });
    expect(answers['through the SDK']).toEqual(answers['in process']);
    expect(answers['in process']).toContainEqual(['stop', { id: expect.any(String), kind: 'tasks', state: 'STOPPING', running: true }]);
  });
});
