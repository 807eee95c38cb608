import middy from '@middy/core';
import { Logger } from '@aws-lambda-powertools/logger';
import { SiteServiceError } from '../../../core/errors';
import { activityMiddleware, createActivityLogger, defaultLogLevel, stringField, withActivityMiddleware } from '../../../lambdas/activities/middleware';
import { rollingUpgradeIdOf } from '../../../lambdas/activities/rolling-upgrade/handlers';
import { deploymentIdOf } from '../../../lambdas/activities/group-deployment/handlers';
import { upgradeIdFor } from '../../../lambdas/activities/rolling-upgrade/open-session';

/** The JSON lines the logger printed while `run` ran. */
async function logLines(run: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const written: string[] = [];
  const capture = (chunk: unknown) => {
    written.push(String(chunk));
    return true;
  };
  const out = jest.spyOn(process.stdout, 'write').mockImplementation(capture);
  const err = jest.spyOn(process.stderr, 'write').mockImplementation(capture);
  try {
    await run().catch(() => undefined);
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
  return written
    .join('')
    .split('\n')
    .filter((line) => line.trim().startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const options = (logger: Logger) => ({ logger, activity: 'StartStep', idKey: 'upgradeId', idOf: (e: unknown) => stringField(e, 'upgradeId') });

describe('the activity middleware', () => {
  it('puts the session id and the activity on every log line of the invocation', async () => {
    const logger = new Logger({ serviceName: 'test', logLevel: 'INFO' });
    const handler = middy(async (event: { upgradeId: string }) => {
      logger.info('working');
      return event.upgradeId;
    }).use(activityMiddleware(options(logger)));

    const lines = await logLines(() => handler({ upgradeId: 'u-1' }, {} as never));
    expect(lines).toEqual([expect.objectContaining({ message: 'working', upgradeId: 'u-1', activity: 'StartStep', level: 'INFO' })]);
  });

  it('resets the keys between invocations when used with injectLambdaContext', async () => {
    const logger = new Logger({ serviceName: 'test', logLevel: 'INFO' });
    const handler = withActivityMiddleware(async (_event: unknown) => logger.info('working'), options(logger));
    const lines = await logLines(async () => {
      await handler({ upgradeId: 'u-1' }, {} as never);
      await handler({}, {} as never);
    });
    expect(lines.map((l) => l.upgradeId)).toEqual(['u-1', undefined]);
  });

  it('passes our typed errors through unchanged (Step Functions matches on their name) and logs them at WARN, the level a deployed function logs at, with the session id', async () => {
    const logger = new Logger({ serviceName: 'test', logLevel: defaultLogLevel({ AWS_LAMBDA_FUNCTION_NAME: 'StartStep' }) as 'WARN' });
    const thrown = new SiteServiceError('boot-service', 'HTTP 503');
    const handler = withActivityMiddleware(async (_event: unknown) => {
      throw thrown;
    }, options(logger));
    let caught: unknown;
    const lines = await logLines(() => handler({ upgradeId: 'u-2' }, {} as never).catch((e: unknown) => (caught = e)));
    expect(caught).toBe(thrown);
    expect((caught as Error).name).toBe('SiteServiceError');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'WARN',
      message: 'activity failed',
      upgradeId: 'u-2',
      error: { name: 'SiteServiceError', message: 'boot-service: HTTP 503' },
    });
  });

  it('logs any other error at ERROR with its stack, and makes a thrown non-error an Error', async () => {
    const logger = new Logger({ serviceName: 'test', logLevel: 'WARN' });
    const bug = middy(async (_event: unknown) => {
      throw new TypeError('undefined is not a function');
    }).use(activityMiddleware(options(logger)));
    let caught: unknown;
    const lines = await logLines(() => bug({ upgradeId: 'u-3' }, {} as never).catch((e: unknown) => (caught = e)));
    expect(caught).toBeInstanceOf(TypeError);
    expect(lines[0]).toMatchObject({ level: 'ERROR', message: 'activity failed unexpectedly', upgradeId: 'u-3', error: { name: 'TypeError' } });
    expect(String((lines[0]!.error as { stack: string }).stack)).toContain('TypeError: undefined is not a function');

    const odd = middy(async (_event: unknown) => {
      throw 'a string';
    }).use(activityMiddleware(options(logger)));
    await logLines(() => odd({}, {} as never).catch((e: unknown) => (caught = e)));
    expect(caught).toMatchObject({ name: 'Error', message: 'non-error thrown: a string' });
  });

  it('is silent by default outside Lambda, WARN inside, and POWERTOOLS_LOG_LEVEL overrides both', async () => {
    expect(defaultLogLevel({})).toBe('SILENT');
    expect(defaultLogLevel({ AWS_LAMBDA_FUNCTION_NAME: 'StartStep' })).toBe('WARN');
    expect(defaultLogLevel({ AWS_LAMBDA_FUNCTION_NAME: 'StartStep', POWERTOOLS_LOG_LEVEL: 'DEBUG' })).toBe('DEBUG');

    const logger = createActivityLogger('SILENT');
    const handler = withActivityMiddleware(async (_event: unknown) => {
      throw new TypeError('a bug');
    }, options(logger));
    expect(await logLines(() => handler({ upgradeId: 'u-4' }, {} as never))).toEqual([]);
  });

  it('finds the id in every workflow event, including the first task of an execution', () => {
    expect(rollingUpgradeIdOf({ upgradeId: 'u-5', stage: 'STARTING' })).toBe('u-5');
    expect(rollingUpgradeIdOf({ input: { resumeUpgradeId: 'u-6' }, executionId: 'arn:x' })).toBe('u-6');
    expect(rollingUpgradeIdOf({ input: {}, executionId: 'arn:x' })).toBe(upgradeIdFor('arn:x'));
    expect(deploymentIdOf({ deploymentId: 'd-1', group: 'g' })).toBe('d-1');
    expect(deploymentIdOf({ input: {}, executionId: 'arn:y' })).toBe(upgradeIdFor('arn:y'));
    expect(deploymentIdOf('not an event')).toBeUndefined();
  });
});
