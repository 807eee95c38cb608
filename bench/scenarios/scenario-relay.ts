import { createSiteFromProfile, type SiteClients } from '../../adapters/site';
import { takeSiteEvent, type SiteEventIntake } from '../../control-plane/site-event-intake';
import { describeError } from '../../core/errors';
import { parseRelayProgram, type SiteEvent } from '../../core/site/site-event';
import { parseSiteProfile, type SiteProfileInput } from '../../core/site/site-profile';
import { simulatedSiteConnectors, type EmbeddedRuntime } from '../../local/embedded-runtime';
import { simulatedSiteTriggers } from '../../local/simulated-site-triggers';
import { SIMULATED_RELAY } from '../../local/simulated-trigger-relay';
import { relaySimulatedTriggers } from '../../local/simulated-trigger-relay';
import type { ConnectorState } from '../../ports/connector-state';
import { siteProfileFor, type RunningSiteSimulator } from '../../simulator';
import type { SlurmTrigger } from '../../simulator/models/trigger-manager';
import { randomStream } from '../../simulator/seeded-random';
import type { Scenario } from './scenario';

/**
 * The site relay of a scenario whose site's triggers are armed (issue 29): the simulated slurmctld's firings
 * delivered in process (relaySimulatedTriggers, as `rollout relay deliver` would), killed and brought back at the
 * scenario's moments, and some firings delivered a second time through the same intake (takeSiteEvent), each
 * second delivery's answer kept for the checker.
 */
export interface ScenarioRelay {
  /** The relay dies: nothing more is delivered (a second delivery already under way still comes). */
  kill(): void;
  /** The relay is back: firings from then on are delivered. */
  restart(): void;
  /** What each second delivery came to: it must change nothing. */
  readonly secondDeliveries: { id: string; intake?: SiteEventIntake; error?: string }[];
}

/** What the site and the intake record of a session's triggers and firings at the end of its run. */
export interface SiteEventsRecord {
  /** The simulated slurmctld's pending triggers whose program names the session (`strigger --get`). */
  triggersLeft: SlurmTrigger[];
  /** The distinct firings for the session the control plane recorded (each id once). */
  delivered: number;
  /** The session's siteEventCount: what it counted. */
  counted: number;
  /** What each firing delivered a second time came to. */
  secondDeliveries: ScenarioRelay['secondDeliveries'];
}

export async function siteEventsRecord(runtime: EmbeddedRuntime, upgradeId: string, relay: ScenarioRelay): Promise<SiteEventsRecord> {
  const firings = (await runtime.siteEvents.list()).filter((e) => e.session === upgradeId);
  return {
    triggersLeft: runtime.simulator.simulator.workloadManager.triggers.list().filter((t) => parseRelayProgram(t.program)?.session === upgradeId),
    delivered: firings.length,
    counted: (await runtime.store.getSession(upgradeId))?.siteEventCount ?? 0,
    secondDeliveries: relay.secondDeliveries,
  };
}

type Connect = (simulator: RunningSiteSimulator, deps: { connectorState: ConnectorState }) => Promise<SiteClients>;

/**
 * The connectors of a scenario (`runtime()` is the runtime once started: the relay delivers to it): over SSM the
 * profile of `rollout simulate --transport ssm`, with siteEvents when armed (strigger on the head node sets the
 * triggers); over HTTP the simulated site's clients, with the triggers set straight on its slurmctld when armed.
 * The relay is undefined when the triggers are not armed.
 */
export function scenarioConnectors(scenario: Scenario, runtime: () => EmbeddedRuntime): { connectors?: Connect; relay?: ScenarioRelay } {
  const armed = scenario.siteEvents;
  if (!armed) return scenario.connectors === 'ssm' ? { connectors: profileConnect((urls) => siteProfileFor(urls, 'ssm', 1)) } : {};
  const relay = new InProcessRelay(scenario, runtime);
  if (scenario.connectors === 'ssm') {
    const profileOf = (urls: RunningSiteSimulator['urls']): SiteProfileInput => {
      const profile = siteProfileFor(urls, 'ssm', 1);
      const siteEvents = { relay: SIMULATED_RELAY, ...(armed.backstopSeconds !== undefined ? { backstopSeconds: armed.backstopSeconds } : {}) };
      return { ...profile, workloadManager: { type: 'scontrol', siteEvents } };
    };
    const connect = profileConnect(profileOf);
    return {
      relay,
      connectors: async (simulator, deps) => {
        relay.attach(simulator);
        return connect(simulator, deps);
      },
    };
  }
  return {
    relay,
    connectors: async (simulator) => {
      relay.attach(simulator);
      const clients = simulatedSiteConnectors(simulator, { now: () => simulator.simulator.clock.now() });
      const triggers = simulatedSiteTriggers(simulator.simulator.workloadManager.triggers, armed.backstopSeconds);
      return { ...clients, workloadManager: Object.assign(clients.workloadManager, { triggers }) };
    },
  };
}

/** The site a profile describes, built as the CLI and the Lambdas build it, on the simulator's clock. */
function profileConnect(profileOf: (urls: RunningSiteSimulator['urls']) => SiteProfileInput): Connect {
  return async (simulator, { connectorState }) => {
    const built = await createSiteFromProfile(parseSiteProfile(profileOf(simulator.urls)), {
      connectorState,
      clock: { now: () => simulator.simulator.clock.now() },
    });
    return { ...built.site, ...(built.taskCommands ? { taskCommands: built.taskCommands } : {}) };
  };
}

class InProcessRelay implements ScenarioRelay {
  readonly secondDeliveries: ScenarioRelay['secondDeliveries'] = [];
  private simulator: RunningSiteSimulator | undefined;
  private stop: (() => void) | undefined;
  /** Which firings are delivered twice: drawn in the order they are taken (virtual time orders them alike on every host). */
  private readonly twice: () => number;

  constructor(
    private readonly scenario: Scenario,
    private readonly runtime: () => EmbeddedRuntime,
  ) {
    this.twice = randomStream(scenario.seed, 'second-deliveries');
  }

  attach(simulator: RunningSiteSimulator): void {
    this.simulator = simulator;
    this.restart();
  }

  kill(): void {
    this.stop?.();
    this.stop = undefined;
  }

  restart(): void {
    if (this.stop || !this.simulator) return;
    const runtime = this.runtime;
    this.stop = relaySimulatedTriggers(this.simulator.simulator.workloadManager.triggers, {
      clock: { now: () => runtime().clock.now(), sleep: (s, signal) => runtime().clock.sleep(s, signal), busy: (work) => runtime().clock.busy(work) },
      siteEvents: { record: (event) => runtime().siteEvents.record(event), list: () => runtime().siteEvents.list() },
      controlPlane: { wakeForSiteEvent: (session) => runtime().wakeForSiteEvent(session) },
      onTaken: (event, intake) => {
        const twice = this.scenario.siteEvents?.deliveredTwice;
        if (intake.recorded && twice && this.twice() < twice.share) this.deliverAgain(event, twice.afterSeconds);
      },
    });
  }

  /** The same firing taken again, `afterSeconds` later (a relay retrying a delivery whose answer it lost). */
  private deliverAgain(event: SiteEvent, afterSeconds: number): void {
    const runtime = this.runtime();
    const record = { id: event.id } as ScenarioRelay['secondDeliveries'][number];
    this.secondDeliveries.push(record);
    // Slept outside the clock's busy work (virtual time moves only while nothing is busy), taken inside it.
    void runtime.clock
      .sleep(afterSeconds)
      .then(() => runtime.clock.busy(() => takeSiteEvent(event, { siteEvents: runtime.siteEvents, controlPlane: runtime })))
      .then(
        (intake) => {
          record.intake = intake;
        },
        (err: unknown) => {
          record.error = describeError(err);
        },
      );
  }
}
