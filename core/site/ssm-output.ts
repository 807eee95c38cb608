/**
 * What SSM Run Command keeps of a command's output. The agent cuts each stream to a prefix with
 * `pluginutil.StringPrefix` (aws/amazon-ssm-agent agent/plugins/pluginutil/pluginutil.go), called by
 * agent/framework/runpluginutil/runpluginutil.go with iohandler.DefaultOutputConfig
 * (agent/framework/processor/executer/iohandler/iohandler.go: MaxStdoutLength 24000,
 * MaxStderrLength 8000, OutputTruncatedSuffix `--output truncated--`). StringPrefix counts bytes
 * (Go's len of a string): output of 24,000 bytes or more becomes its first 23,980 bytes followed by
 * the marker, exactly 24,000 bytes, cut wherever that falls, inside a multi-byte character too
 * (which then reaches the client as U+FFFD). runpluginutil.go passes MaxStdoutLength for stderr as
 * well; GetCommandInvocation's StandardErrorContent then holds at most 8,000 (API reference).
 */

export const SSM_STDOUT_BYTES = 24_000;
export const SSM_STDERR_BYTES = 8_000;
export const SSM_TRUNCATED_MARKER = '--output truncated--';

const decoder = new TextDecoder('utf-8', { fatal: false });

/** pluginutil.StringPrefix: unchanged below `maxBytes`, else the first bytes and the marker, `maxBytes` in all. */
export function ssmStringPrefix(text: string, maxBytes: number, marker = SSM_TRUNCATED_MARKER): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length < maxBytes) return text;
  const markerBytes = Buffer.byteLength(marker, 'utf8');
  if (maxBytes <= markerBytes) return marker.slice(0, maxBytes);
  // A character cut in two decodes to U+FFFD, as Go's JSON encoder writes an invalid byte sequence.
  return decoder.decode(bytes.subarray(0, maxBytes - markerBytes)) + marker;
}

/** Stdout and stderr as GetCommandInvocation answers them. */
export function ssmCommandOutput(stdout: string, stderr: string): { stdout: string; stderr: string } {
  const err = ssmStringPrefix(stderr, SSM_STDOUT_BYTES);
  const errBytes = Buffer.from(err, 'utf8');
  return {
    stdout: ssmStringPrefix(stdout, SSM_STDOUT_BYTES),
    stderr: errBytes.length > SSM_STDERR_BYTES ? decoder.decode(errBytes.subarray(0, SSM_STDERR_BYTES)) : err,
  };
}

/**
 * Whether the agent cut this stdout short, and what is left without the marker. Cut output ends
 * with the marker at 24,000 bytes (a cut multi-byte character turned into U+FFFD may add or take
 * up to two bytes); output that merely ends with the marker's text is shorter. An endpoint that cut
 * at the limit without a marker counts as cut too.
 */
export function readSsmStdout(stdout: string): { stdout: string; truncated: boolean } {
  const bytes = Buffer.byteLength(stdout, 'utf8');
  if (stdout.endsWith(SSM_TRUNCATED_MARKER) && bytes >= SSM_STDOUT_BYTES - 2) return { stdout: stdout.slice(0, -SSM_TRUNCATED_MARKER.length), truncated: true };
  return { stdout, truncated: bytes >= SSM_STDOUT_BYTES };
}
