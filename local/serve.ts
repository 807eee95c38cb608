import { createApi } from '../api';
import { listenApi, type ListeningApi } from '../api/node-http';
import { WORKFLOWS } from '../contracts';
import type { EmbeddedRuntime } from './embedded-runtime';
import { DynamoDbScheduleStore } from '../adapters/dynamodb/dynamodb-schedule-store';
import { LOCAL_SCHEDULE_GROUP, LOCAL_SCHEDULER_ROLE_ARN, LocalScheduler } from './local-scheduler';
import { SYSTEM_WALL_CLOCK, type WallClock } from '../time/wall-clock';
import { openRuntime, type OpenRuntimeOptions } from './open-runtime';
import { SchedulerEndpoint } from './scheduler-endpoint';
import { eventsRoute } from './events-endpoint';
import { sessionReportRoute } from './report-endpoint';
import type { ControlPlaneEndpoints } from '../control-plane/endpoints';
import { LOCAL_REGION, StepFunctionsEndpoint } from './sfn-endpoint';

export interface ServedControlPlane {
  endpoints: ControlPlaneEndpoints;
  /** The runtime behind the endpoint: the control plane itself, for an in-process caller (closing it stops serving it). */
  runtime: EmbeddedRuntime;
  /** The local EventBridge Scheduler: schedules in the store, fired on the wall clock. */
  scheduler: LocalScheduler;
  close(): Promise<void>;
}

/**
 * The embedded control plane as a service: the local engine behind a Step Functions-compatible
 * endpoint (with the discovery route), the runtime's DynamoDB endpoint, and the REST API (the
 * routes the stack serves behind API Gateway) over the same runtime, all on loopback.
 * `rollout serve` runs one until a signal; the CLI's own run with a data directory serves one on
 * ephemeral ports for the other processes of that directory (`rollout session approve|cancel|stop`
 * wake its parked workflows there), and calls the runtime in process itself.
 */
export async function startServedControlPlane(
  options: OpenRuntimeOptions & { port?: number; apiPort?: number; scheduleClock?: WallClock },
): Promise<ServedControlPlane> {
  // Whatever site openRuntime takes (a simulated site; a site profile with issue 7's `--site-config`), served alike.
  const runtime = await openRuntime(options);
  // Known once the server listens; the discovery route answers from it.
  const announced: { endpoints?: ControlPlaneEndpoints } = {};
  const scheduled = {
    rollingUpgrade: runtime.stateMachineArns[WORKFLOWS.rollingUpgrade],
    groupDeployment: runtime.stateMachineArns[WORKFLOWS.groupDeployment],
  };
  const stateMachines = { ...scheduled, taskGraph: runtime.stateMachineArns[WORKFLOWS.taskGraph] };
  const scheduler = new LocalScheduler({
    store: new DynamoDbScheduleStore({ tableName: runtime.dynamoDb.tableName, client: runtime.dynamoDb.client }),
    engine: runtime.engine,
    // Schedules name the operator's calendar: the wall clock, never the control plane's virtual or scaled one.
    clock: options.scheduleClock ?? SYSTEM_WALL_CLOCK,
    stateMachines: scheduled,
  });
  const schedulerEndpoint = new SchedulerEndpoint(scheduler, options.scheduleClock ?? SYSTEM_WALL_CLOCK, LOCAL_REGION);
  const endpoint = new StepFunctionsEndpoint(runtime.engine, () => announced.endpoints, [
    (req, res) => schedulerEndpoint.route(req, res),
    eventsRoute(runtime.events),
  ]);
  let listening: Awaited<ReturnType<StepFunctionsEndpoint['listen']>>;
  let api: ListeningApi;
  try {
    listening = await endpoint.listen(options.port ?? 0);
    // `rollout session approve|resume|cancel --data-dir` wake parked workflows through it.
    await runtime.announceStepFunctionsEndpoint(listening.url);
    // Schedules a previous run of this data directory stored fire again.
    await scheduler.start();
  } catch (err) {
    scheduler.close();
    await runtime.close();
    throw err;
  }
  try {
    api = await listenApi(
      createApi({
        controlPlane: runtime,
        environments: runtime.environments,
        environmentUpgrades: runtime.environmentUpgrades,
        runStarts: runtime.runStarts,
        siteEvents: runtime.siteEvents,
        site: runtime.site,
      }),
      options.apiPort ?? 0,
      // Beside the REST routes: the HTML report of a session (`GET /sessions/{id}/report`), reloading while it runs.
      { extraRoutes: [sessionReportRoute(runtime, runtime.site)] },
    );
  } catch (err) {
    scheduler.close();
    await listening.close();
    await runtime.close();
    throw err;
  }
  const endpoints: ControlPlaneEndpoints = {
    stepFunctionsEndpoint: listening.url,
    dynamodbEndpoint: runtime.dynamoDb.endpoint,
    region: LOCAL_REGION,
    tableName: runtime.dynamoDb.tableName,
    stateMachines,
    apiEndpoint: api.url,
    schedulerEndpoint: listening.url,
    scheduleGroup: LOCAL_SCHEDULE_GROUP,
    schedulerRoleArn: LOCAL_SCHEDULER_ROLE_ARN,
  };
  announced.endpoints = endpoints;
  // Closing the runtime (an in-process caller holds it as its control plane) stops serving it first.
  runtime.closeAlso(async () => {
    await api.close();
    scheduler.close();
    await listening.close();
  });
  return { endpoints, runtime, scheduler, close: () => runtime.close() };
}
