import { chmod, writeFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { MAX_SITE_EVENT_ID_LENGTH, NODE_EVENT_KINDS, SITE_EVENT_SESSION, type SiteEventKind } from '../../core/site/site-event';
import { DEFAULT_DELIVERY_TIMEOUT_MS, drainSpool, relayDeliver, type DeliverySigner } from '../../local/site-relay';
import { RELAY_SCRIPT_FIRED_AT_VARIABLE, RELAY_SCRIPT } from '../../local/site-relay-script';
import { executeApiRegion, signedHeaders, signerFor } from '../api-client';
import { CliError } from '../errors';
import { ExitCode } from '../exit-codes';

/** `--aws`: the delivery goes to the stack's API, signed (SigV4) with the credential chain's (or --profile's) credentials. */
interface AwsOptions {
  aws?: boolean;
  region?: string;
  profile?: string;
}

interface DeliverOptions extends AwsOptions {
  event: SiteEventKind;
  session?: string;
  spool: string;
  endpoint?: string;
  timeout: string;
  json?: boolean;
}

interface DrainOptions extends AwsOptions {
  spool: string;
  endpoint: string;
  maxAttempts: string;
  initialDelay: string;
  maxDelay: string;
  timeout: string;
  json?: boolean;
}

/**
 * `rollout relay`: the site relay slurmctld runs as a strigger program (deliver), and the retry of what it
 * spooled (drain). The logic is local/site-relay.ts.
 */
export function registerRelayCommands(program: Command): void {
  const relay = program
    .command('relay')
    .description(
      "The site relay: turns a Slurm trigger's firing into a delivery to the control plane (POST /site-events of `rollout serve`, or of the deployed stack's API with --aws, signed with SigV4), spooled to disk first so that none is lost and slurmctld never waits.",
    );
  registerDeliver(relay);
  registerDrain(relay);
  registerScriptCommand(relay);
}

/** `rollout relay deliver`: what slurmctld runs for a firing. */
function registerDeliver(relay: Command): void {
  relay
    .command('deliver')
    .description(
      "Run by slurmctld as a strigger program (`strigger --set --node --up --flags=PERM --program='/path/rollout relay deliver --spool DIR --endpoint URL --event up --session ID'`: a session sets its triggers so, and slurmctld adds the hostlist as the last argument). Writes the firing to the spool, tries one delivery within the timeout and exits 0 whether it was delivered or not (a failed one stays spooled for `rollout relay drain`).",
    )
    .addOption(
      new Option('--event <event>', "the trigger's event: the same as strigger's --up, --down or --drained").choices(NODE_EVENT_KINDS).makeOptionMandatory(),
    )
    .option(
      '--session <id>',
      "the session whose trigger this is (the session sets it in the trigger's program): its wait is resumed; part of the firing's id, so two sessions' triggers firing for the same nodes at once are two firings",
    )
    .requiredOption('--spool <dir>', 'the spool directory (created if missing): one file per firing until it is delivered')
    .option(
      '--endpoint <url>',
      "the REST API: `rollout serve`'s (its apiUrl, e.g. http://127.0.0.1:8084), or with --aws the stack's ApiUrl output; without it the firing is only spooled",
    )
    .option(
      '--timeout <ms>',
      'how long the one delivery may take (with --aws, getting the credentials included), in milliseconds',
      String(DEFAULT_DELIVERY_TIMEOUT_MS),
    )
    .option('--json', "print the firing's id, its spool file and the delivery's outcome as one JSON object")
    .option('--aws', AWS_HELP)
    .option('--region <region>', REGION_HELP)
    .option('--profile <name>', PROFILE_HELP)
    .argument('<hostlist>', 'the nodes of the event, as one Slurm hostlist (slurmctld gives it)')
    .action(async (hostlist: string, options: DeliverOptions) => {
      const timeoutMs = wholeNumber('--timeout', options.timeout, 1);
      if (options.session !== undefined) sessionId(options.session);
      const sign = awsSigner(options.endpoint, options);
      const { firing, outcome } = await relayDeliver({
        spool: options.spool,
        event: options.event,
        hostlist,
        ...(options.session === undefined ? {} : { session: options.session }),
        ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
        ...(sign ? { sign } : {}),
        timeoutMs,
      }).catch((err: unknown) => {
        throw new CliError(`could not spool the firing in ${options.spool}: ${err instanceof Error ? err.message : String(err)}`, ExitCode.notCompleted);
      });
      if (options.json) process.stdout.write(`${JSON.stringify({ id: firing.body.id, file: firing.file, outcome: outcome ?? { spooled: true } })}\n`);
      else if (outcome === undefined) process.stdout.write(`${firing.body.id}: spooled in ${firing.file}\n`);
      else if ('delivered' in outcome) process.stdout.write(`${firing.body.id}: delivered${outcome.duplicate ? ' (recorded before)' : ''}\n`);
      else if ('rejected' in outcome) process.stderr.write(`${firing.body.id}: refused by ${options.endpoint}, moved aside: ${outcome.rejected}\n`);
      else process.stderr.write(`${firing.body.id}: not delivered (${outcome.retry}): spooled in ${firing.file} for \`rollout relay drain\`\n`);
    });
}

/** `rollout relay drain`: the retry of the spool, from cron or a timer. */
function registerDrain(relay: Command): void {
  relay
    .command('drain')
    .description(
      "Deliver the firings waiting in the spool, oldest first, retrying with exponential backoff; each is removed once the control plane acknowledged it (one it refuses is moved to the spool's rejected/ folder); the temporary file of a write cut short is removed once 10 minutes old. Exits 0 once the spool is empty, 1 when firings are left after the attempts.",
    )
    .requiredOption('--spool <dir>', 'the spool directory `rollout relay deliver` writes to')
    .requiredOption('--endpoint <url>', "the REST API: `rollout serve`'s (its apiUrl), or with --aws the stack's ApiUrl output")
    .option('--max-attempts <n>', 'passes over the spool at most, the first included', '8')
    .option('--initial-delay <ms>', 'the wait after the first failed pass, in milliseconds; doubled after each', '1000')
    .option('--max-delay <ms>', 'the longest wait between passes, in milliseconds', '60000')
    .option('--timeout <ms>', 'how long each delivery may take, in milliseconds', String(DEFAULT_DELIVERY_TIMEOUT_MS))
    .option('--json', 'print the counts (delivered, duplicates, rejected, remaining, attempts) as one JSON object')
    .option('--aws', AWS_HELP)
    .option('--region <region>', REGION_HELP)
    .option('--profile <name>', PROFILE_HELP)
    .action(async (options: DrainOptions) => {
      const sign = awsSigner(options.endpoint, options);
      const result = await drainSpool({
        spool: options.spool,
        endpoint: options.endpoint,
        ...(sign ? { sign } : {}),
        maxAttempts: wholeNumber('--max-attempts', options.maxAttempts, 1),
        initialDelayMs: wholeNumber('--initial-delay', options.initialDelay, 0),
        maxDelayMs: wholeNumber('--max-delay', options.maxDelay, 0),
        timeoutMs: wholeNumber('--timeout', options.timeout, 1),
        report: (line) => process.stderr.write(`${line}\n`),
      });
      process.stdout.write(
        options.json
          ? `${JSON.stringify(result)}\n`
          : `${result.delivered} delivered (${result.duplicates} recorded before), ${result.rejected} refused, ${result.remaining} left in the spool after ${result.attempts} pass${result.attempts === 1 ? '' : 'es'}\n`,
      );
      if (result.remaining > 0) throw new CliError(`${result.remaining} firing(s) not delivered: they stay in ${options.spool}`, ExitCode.notCompleted);
    });
}

/** `rollout relay script`: prints the POSIX sh relay, or writes it executable to --output. */
function registerScriptCommand(relay: Command): void {
  relay
    .command('script')
    .description(
      `Print the site relay as a POSIX sh script, for a slurmctld host without Node (Slurm in a chroot: a shell and GNU coreutils, no curl). It takes the arguments of \`relay deliver\` and spools the firing exactly as deliver does (the same file, JSON and id), atomically, and delivers nothing (--endpoint is ignored with a note): \`rollout relay drain\` on a host with Node, or the control plane reading the spool itself (the site profile's siteEvents.spool), delivers it. Exits 0 once spooled, 2 for a bad argument, 1 when it cannot spool. ${RELAY_SCRIPT_FIRED_AT_VARIABLE} replaces its clock, for tests only.`,
    )
    .option('--output <file>', 'write the script to this file (mode 0755) instead of printing it')
    .action(async (options: { output?: string }) => {
      if (options.output === undefined) {
        process.stdout.write(RELAY_SCRIPT);
        return;
      }
      const output = options.output;
      await writeFile(output, RELAY_SCRIPT, { mode: 0o755 })
        .then(() => chmod(output, 0o755))
        .catch((err: unknown) => {
          throw new CliError(`--output: could not write ${output}: ${err instanceof Error ? err.message : String(err)}`, ExitCode.notCompleted);
        });
      process.stderr.write(`the relay script is in ${output}\n`);
    });
}

/** --session: a session id as a trigger's program carries it (SITE_EVENT_SESSION), or a CliError naming the flag. */
function sessionId(value: string): string {
  if (!SITE_EVENT_SESSION.test(value) || value.length > MAX_SITE_EVENT_ID_LENGTH)
    throw new CliError(
      `--session must be a session id (letters, digits, dots, colons, dashes and underscores, at most ${MAX_SITE_EVENT_ID_LENGTH}), not '${value}'`,
      ExitCode.invalidInput,
    );
  return value;
}

const AWS_HELP =
  "deliver to the deployed stack's API (--endpoint: its ApiUrl output), signed with SigV4 for execute-api; the credentials (the stack's SiteRelayRole, assumed through a profile) may only POST /site-events, so the relay reads no stack output";
const REGION_HELP = "with --aws: the API's region (default: read from an execute-api --endpoint's host)";
const PROFILE_HELP = "with --aws: the AWS profile to sign with (one whose role_arn is the stack's SiteRelayRoleArn); default: the credential chain";

/**
 * The signer of `--aws`: SigV4 for execute-api in the API's region, the credentials resolved once per process
 * (a drain signs every firing with one AssumeRole); none without --aws. A CliError names the flag to fix.
 */
function awsSigner(endpoint: string | undefined, options: AwsOptions): DeliverySigner | undefined {
  if (!options.aws) {
    if (options.region !== undefined || options.profile !== undefined) throw new CliError('--region and --profile go with --aws', ExitCode.invalidInput);
    return undefined;
  }
  if (endpoint === undefined) throw new CliError("--aws delivers to --endpoint: give the stack's ApiUrl output", ExitCode.invalidInput);
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new CliError(`--endpoint must be a URL (the stack's ApiUrl, https://...), got '${endpoint}'`, ExitCode.invalidInput);
  }
  const region = options.region ?? executeApiRegion(url);
  if (region === undefined)
    throw new CliError(
      `--region: ${url.host} is not an API Gateway host (<id>.execute-api.<region>.amazonaws.com): say the API's region`,
      ExitCode.invalidInput,
    );
  const signer = signerFor(region, options.profile);
  // The SDK's "Could not load credentials from any providers" does not say where it looked.
  const source = options.profile === undefined ? 'the default credential chain' : `profile ${options.profile}`;
  return (request) =>
    signedHeaders(signer, request).catch((err: unknown) => {
      throw new Error(`${source}: ${err instanceof Error ? err.message : String(err)}`);
    });
}

/** A whole-number flag of at least `min`, or a CliError naming the flag. */
function wholeNumber(flag: string, value: string, min: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min) throw new CliError(`${flag} must be a whole number of at least ${min}, not '${value}'`, ExitCode.invalidInput);
  return n;
}
