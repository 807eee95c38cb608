import { AsyncLocalStorage } from 'node:async_hooks';
import type { LocalFunction } from '../local/local-step-functions';
import type { Site } from '../ports/site';

/**
 * The modelled duration of one site round trip a Lambda invocation waits on, in AWS: an SSM command (SendCommand,
 * then GetCommandInvocation polled from 200 ms backing off to 5 s) for a command that runs in about a second on the
 * head node. The bench's simulated site answers at once, so without it the billed duration leaves the site out.
 */
export const SITE_ROUND_TRIP_MS = 1500;

const PORTS = ['workloadManager', 'bootService', 'inventory', 'commands'] as const;

/**
 * Counts the site round trips each invocation waits on: a call to a site port (workload manager, boot service,
 * inventory, head-node commands) made while no other call of the same invocation is in flight starts one; calls
 * made while one is in flight overlap it (a Promise.all over nodes waits about as long as one command), and a
 * port's own calls to another port (a command-driven connector's to its transport) are part of it.
 */
export class SiteRoundTrips {
  /** Round trips of every invocation so far. */
  total = 0;
  /** Invocations and their round trips per function (the handler's name: one per Task of the workflow), for where the cost goes. */
  readonly byFunction = new Map<string, { invocations: number; roundTrips: number }>();
  private readonly invocation = new AsyncLocalStorage<{ inFlight: number; fn: { invocations: number; roundTrips: number } }>();
  private readonly insidePort = new AsyncLocalStorage<true>();

  /** For EmbeddedRuntime's `wrapFunction`: runs each invocation with its own count. */
  readonly wrapFunction = (name: string, fn: LocalFunction): LocalFunction => {
    return (payload) => {
      let counts = this.byFunction.get(name);
      if (!counts) this.byFunction.set(name, (counts = { invocations: 0, roundTrips: 0 }));
      counts.invocations++;
      return this.invocation.run({ inFlight: 0, fn: counts }, () => fn(payload));
    };
  };

  /** Wraps the site's port methods (the runtime's `site`, as the handlers reach it) to count their calls. */
  watch(site: Site): void {
    for (const portName of PORTS) {
      const port = site[portName] as unknown as Record<string, unknown> | undefined;
      if (!port) continue;
      for (const method of methodsOf(port)) {
        const original = port[method] as (...args: unknown[]) => unknown;
        const { invocation, insidePort } = this;
        const started = (state: { fn: { roundTrips: number } }) => {
          this.total++;
          state.fn.roundTrips++;
        };
        port[method] = function (this: unknown, ...args: unknown[]) {
          const state = invocation.getStore();
          if (!state || insidePort.getStore()) return original.apply(this, args);
          if (state.inFlight++ === 0) started(state);
          const done = () => void state.inFlight--;
          const result = insidePort.run(true, () => {
            try {
              return original.apply(this, args);
            } catch (err) {
              done();
              throw err;
            }
          });
          if (result instanceof Promise) return result.finally(done);
          done();
          return result;
        };
      }
    }
  }
}

function methodsOf(port: Record<string, unknown>): Set<string> {
  const methods = new Set<string>();
  for (let proto: object | null = port; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto) as object | null) {
    for (const name of Object.getOwnPropertyNames(proto)) if (name !== 'constructor' && typeof port[name] === 'function') methods.add(name);
  }
  return methods;
}
