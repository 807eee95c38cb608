import middy, { type MiddlewareObj } from '@middy/core';
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { RolloutError } from '../../core/errors';

/**
 * The one middleware shape of every activity handler, both workflows: structured JSON logs
 * (Powertools) carrying the session or deployment id, and error normalisation.
 */

export const LOGGER_SERVICE_NAME = 'baremetal-rollout';

/**
 * The log level when none is configured: WARN in a Lambda function; SILENT anywhere else, so the
 * embedded default (the CLI, the bench, the tests) prints no JSON log lines among its output.
 * POWERTOOLS_LOG_LEVEL (or LOG_LEVEL) overrides both.
 */
export function defaultLogLevel(env: NodeJS.ProcessEnv = process.env): string {
  return env.POWERTOOLS_LOG_LEVEL || env.LOG_LEVEL || (env.AWS_LAMBDA_FUNCTION_NAME ? 'WARN' : 'SILENT');
}

export function createActivityLogger(logLevel = defaultLogLevel()): Logger {
  return new Logger({ serviceName: LOGGER_SERVICE_NAME, logLevel: logLevel.toUpperCase() as 'WARN' });
}

/**
 * The REST API function's logger: one line per request at INFO (its access log), so INFO is its level
 * in a Lambda function; SILENT elsewhere, and POWERTOOLS_LOG_LEVEL (or LOG_LEVEL) overrides both.
 */
export function createRequestLogger(env: NodeJS.ProcessEnv = process.env): Logger {
  const level = env.POWERTOOLS_LOG_LEVEL || env.LOG_LEVEL || (env.AWS_LAMBDA_FUNCTION_NAME ? 'INFO' : 'SILENT');
  return new Logger({ serviceName: LOGGER_SERVICE_NAME, logLevel: level.toUpperCase() as 'INFO' });
}

export interface ActivityMiddlewareOptions {
  logger: Logger;
  /** The function's name (`StartStep`, `PlanPhase`, ...), a key on every log line. */
  activity: string;
  /** Log key of the id the event carries: `upgradeId` or `deploymentId`. */
  idKey: string;
  /** The id from the event (undefined when it carries none). */
  idOf: (event: unknown) => string | undefined;
}

/** A thrown value that is not an Error becomes one, so Step Functions reports a name and a message. */
export function normalizeError(err: unknown): Error {
  return err instanceof Error ? err : new Error(`non-error thrown: ${String(err)}`);
}

/**
 * middy middleware: before, the id and the activity become keys of every log line of the
 * invocation; after, the outcome is logged at DEBUG; on error, our typed errors (RolloutError:
 * expected, matched by name in the workflows' Retry/Catch) are logged at WARN (the deployed level:
 * an operator sees a site answering 503 or a missing group while the workflow retries) and pass unchanged,
 * anything else (a bug) is logged at ERROR with its stack and made an Error if it was not one.
 */
export function activityMiddleware({ logger, activity, idKey, idOf }: ActivityMiddlewareOptions): MiddlewareObj {
  return {
    before: (request) => {
      const id = idOf(request.event);
      logger.appendKeys({ activity, ...(id !== undefined ? { [idKey]: id } : {}) });
      logger.debug('activity started');
    },
    after: (request) => {
      logger.debug('activity finished', { response: request.response as object });
    },
    onError: (request) => {
      const err = request.error;
      if (err instanceof RolloutError) {
        logger.warn('activity failed', { error: err });
        return;
      }
      logger.error('activity failed unexpectedly', { error: normalizeError(err) });
      request.error = normalizeError(err);
    },
  };
}

/** A handler with the activity middleware: Lambda context on the log lines, keys reset after each invocation. */
export function withActivityMiddleware<E, R>(handler: (event: E) => Promise<R>, options: ActivityMiddlewareOptions) {
  return middy(handler)
    .use(injectLambdaContext(options.logger, { resetKeys: true }))
    .use(activityMiddleware(options));
}

/** The id a workflow event names under `key`, if it is a string. */
export function stringField(event: unknown, key: string): string | undefined {
  if (typeof event !== 'object' || event === null) return undefined;
  const value = (event as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}

/** A Lambda handler as the embedded engine and the AWS runtime both call it. */
export type ActivityHandler = (event: never, context: unknown) => Promise<unknown>;

/** What one function of a workflow runs: an activity, given its event and the workflow's injected dependencies. */
export type WorkflowActivity<Deps> = (event: never, deps: Deps) => Promise<unknown>;

/** The handlers of a table of activities: each takes the activity's event and resolves to what the activity does. */
export type ActivityHandlers<Activities extends Record<string, WorkflowActivity<never>>> = {
  [Name in keyof Activities]: (event: Parameters<Activities[Name]>[0], context: unknown) => ReturnType<Activities[Name]>;
};

/**
 * One handler per activity of a workflow (every workflow builds its handlers here), each an activity
 * (event, dependencies) under the activity middleware, its logs keyed by the id `idOf` finds in the
 * event under `idKey`.
 */
export function createActivityHandlers<Deps extends { logger?: Logger }, Activities extends Record<string, WorkflowActivity<Deps>>>(
  activities: Activities,
  deps: Deps,
  ids: Pick<ActivityMiddlewareOptions, 'idKey' | 'idOf'>,
): ActivityHandlers<Activities> {
  const logger = deps.logger ?? createActivityLogger();
  const entries = (Object.entries(activities) as [string, WorkflowActivity<Deps>][]).map(([name, activity]) => [
    name,
    withActivityMiddleware(async (event: never) => activity(event, deps), { logger, activity: name, ...ids }),
  ]);
  return Object.fromEntries(entries) as ActivityHandlers<Activities>;
}
