/**
 * What a Step Functions error says, read back. Errors come as `{Error, Cause}`: a Lambda's Cause is
 * its error JSON (`errorType`, `errorMessage`), and a child execution's (startExecution.sync) is the
 * child's description, which carries the child's own `{Error, Cause}`: unwrapped down to the error
 * that broke it (its name, and its message).
 */
export function innermostExecutionError(error: { Error?: unknown; Cause?: unknown } | undefined): { name?: string; message: string } {
  const name = typeof error?.Error === 'string' ? error.Error : undefined;
  const cause = typeof error?.Cause === 'string' ? error.Cause : undefined;
  if (!cause) return { ...(name === undefined ? {} : { name }), message: name ?? 'unknown error' };
  let parsed: { errorMessage?: unknown; errorType?: unknown; Error?: unknown; Cause?: unknown } | null;
  try {
    parsed = JSON.parse(cause) as typeof parsed;
  } catch {
    parsed = null;
  }
  if (typeof parsed?.errorMessage === 'string') {
    const type = typeof parsed.errorType === 'string' ? parsed.errorType : name;
    return { ...(type === undefined ? {} : { name: type }), message: parsed.errorMessage };
  }
  if (parsed && (parsed.Error !== undefined || parsed.Cause !== undefined)) return innermostExecutionError(parsed);
  return { ...(name === undefined ? {} : { name }), message: cause };
}

/** The innermost error as one line: `SiteServiceError: provisioner: POST ... answered 500`. */
export function executionErrorLine(error: { Error?: unknown; Cause?: unknown } | undefined): string {
  const { name, message } = innermostExecutionError(error);
  return name === undefined || message.startsWith(name) ? message : `${name}: ${message}`;
}
