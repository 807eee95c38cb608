import { executionErrorLine, innermostExecutionError } from '../../core/execution-error';

describe('Step Functions errors read back', () => {
  const lambda = { Error: 'SiteServiceError', Cause: JSON.stringify({ errorType: 'SiteServiceError', errorMessage: 'provisioner: POST /x answered 503' }) };
  const child = (inner: object) => ({ Error: 'States.TaskFailed', Cause: JSON.stringify({ ExecutionArn: 'arn:child', Status: 'FAILED', ...inner }) });

  it.each<[string, { Error?: unknown; Cause?: unknown } | undefined, string]>([
    ['a Lambda error', lambda, 'SiteServiceError: provisioner: POST /x answered 503'],
    ['a child execution that failed on it', child(lambda), 'SiteServiceError: provisioner: POST /x answered 503'],
    ['two levels of child executions', child(child(lambda)), 'SiteServiceError: provisioner: POST /x answered 503'],
    ['a Fail state with a plain cause', { Error: 'CriticalGroupFailed', Cause: 'Critical groups failed: a' }, 'CriticalGroupFailed: Critical groups failed: a'],
    ['a message that already starts with its name', { Error: 'States.Timeout', Cause: 'States.Timeout after 60 s' }, 'States.Timeout after 60 s'],
    ['an error without a cause', { Error: 'States.Runtime' }, 'States.Runtime'],
    ['nothing', undefined, 'unknown error'],
  ])('%s', (_case, error, line) => {
    expect(executionErrorLine(error)).toBe(line);
  });

  it('keeps the message apart from the name (what the CLI prints after the error)', () => {
    expect(innermostExecutionError(child(lambda))).toEqual({ name: 'SiteServiceError', message: 'provisioner: POST /x answered 503' });
  });
});
