import type { Command } from 'commander';
import { connectControlPlane, DEFAULT_STACK, type ControlPlaneTarget } from './targets';
import type { ControlPlane } from '../control-plane/control-plane';
import { dataDirForRun } from './data-dir-option';
import { CliError } from './errors';
import { ExitCode } from './exit-codes';
import type { SiteSource } from '../local/open-runtime';
import { timeScaleOption } from './option-values';

/** The options that name a remote control plane: a `rollout serve` (or LocalStack) URL, or a deployed stack. */
export interface TargetOptions {
  endpoint?: string;
  aws?: boolean;
  stack?: string;
  region?: string;
  profile?: string;
}

export function addTargetOptions(command: Command): Command {
  return command
    .option(
      '--endpoint <url>',
      "a running `rollout serve` (its URL, as its first line prints it), or LocalStack after a cdklocal deploy (the stack's outputs name the rest)",
    )
    .option('--aws', 'the deployed stack, through the default AWS credential chain')
    .option('--stack <name>', `with --aws, or --endpoint on LocalStack: the stack name (default ${DEFAULT_STACK})`)
    .option('--region <region>', "with --aws: the region (default: the credential chain's); with --endpoint on LocalStack: default AWS_REGION or us-east-1")
    .option('--profile <name>', 'with --aws: a named profile of the shared AWS config');
}

/** The remote target the options name; undefined for none (the embedded control plane). */
export function remoteTarget(options: TargetOptions): Exclude<ControlPlaneTarget, { kind: 'embedded' }> | undefined {
  if (options.endpoint && options.aws) throw new CliError('give --endpoint or --aws, not both', ExitCode.invalidInput);
  if (!options.aws && options.profile) throw new CliError('--profile goes with --aws', ExitCode.invalidInput);
  if (!options.aws && !options.endpoint && (options.stack || options.region))
    throw new CliError('--stack and --region go with --aws or --endpoint', ExitCode.invalidInput);
  if (options.endpoint) {
    return {
      kind: 'endpoint',
      url: options.endpoint,
      ...(options.stack ? { stack: options.stack } : {}),
      ...(options.region ? { region: options.region } : {}),
    };
  }
  if (options.aws) {
    return {
      kind: 'aws',
      stack: options.stack ?? DEFAULT_STACK,
      ...(options.region ? { region: options.region } : {}),
      ...(options.profile ? { profile: options.profile } : {}),
    };
  }
  return undefined;
}

/** A client of the target; a remote target's connection errors as one line. */
export async function connectTarget(target: ControlPlaneTarget): Promise<ControlPlane> {
  if (target.kind === 'embedded') return connectControlPlane(target);
  try {
    return await connectControlPlane(target);
  } catch (err) {
    if (err instanceof CliError || (err instanceof Error && err.name === 'InvalidInputError')) throw err;
    throw new CliError(err instanceof Error ? err.message : String(err), ExitCode.notCompleted);
  }
}

/**
 * The control plane a run goes to, through the one client path: the remote target, or the embedded
 * one this process serves on the loaded site (with the run's time scale and data directory).
 */
export async function connectRunTarget(
  target: ControlPlaneTarget | undefined,
  source: SiteSource | undefined,
  options: { timeScale?: string; dataDir?: string },
): Promise<ControlPlane> {
  if (target) return connectTarget(target);
  const timeScale = timeScaleOption(options.timeScale);
  const dataDir = options.dataDir ? await dataDirForRun(options.dataDir) : undefined;
  return connectTarget({ kind: 'embedded', runtime: { site: source!, ...(timeScale ? { timeScale } : {}), ...(dataDir ? { dataDir } : {}) } });
}

/**
 * A local run needs --site or --site-config; a remote control plane has its own site, clock and data,
 * so the options that describe them belong to `rollout serve` (or the stack) instead.
 */
export function checkSiteOptions(
  options: { site?: string; siteConfig?: string; timeScale?: string; dataDir?: string; siteStateOut?: string },
  remote: boolean,
): void {
  if (!remote) {
    if (!options.site && !options.siteConfig) {
      throw new CliError(
        'give exactly one of --site FILE (a simulated site) and --site-config FILE (a site connection profile), or --endpoint URL / --aws',
        ExitCode.invalidInput,
      );
    }
    return;
  }
  const local = Object.entries({
    '--site': options.site,
    '--site-config': options.siteConfig,
    '--time-scale': options.timeScale,
    '--data-dir': options.dataDir,
    '--site-state-out': options.siteStateOut,
  })
    .filter(([, value]) => value !== undefined)
    .map(([name]) => name);
  if (local.length > 0)
    throw new CliError(`${local.join(', ')} describe a local control plane: give them to \`rollout serve\`, not with --endpoint/--aws`, ExitCode.invalidInput);
}
