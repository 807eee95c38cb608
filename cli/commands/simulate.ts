import { writeFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { stringify } from 'yaml';
import { parseSiteProfile } from '../../core/site/site-profile';
import { DEFAULT_TIME_SCALE } from '../../local/embedded-runtime';
import { SimClock, loadSiteFile, siteProfileFor, simulatorUrls, startSiteSimulator, writeHeadNodeStandIns, type SimulatedTransport } from '../../simulator';
import { CliError } from '../errors';
import { numberOrRaw, timeScaleOption } from '../option-values';
import { ExitCode } from '../exit-codes';

interface SimulateOptions {
  site: string;
  port: string;
  host: string;
  timeScale: string;
  profileOut?: string;
  profileHost?: string;
  transport: SimulatedTransport;
}

/** A host name or an IP address (v6 in brackets): it goes into the URLs of the written profile. */
const PROFILE_HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])$/;

export function registerSimulateCommand(program: Command): void {
  program
    .command('simulate')
    .description('Serve a simulated site (slurmrestd, BOS, HSM, provisioner, SSM) on loopback until stopped; the first line out is its URLs as JSON')
    .requiredOption('--site <file>', 'simulated site file (YAML or JSON)')
    .option('--port <n>', 'port to listen on (0: any free port)', '0')
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--time-scale <n>', 'simulated seconds per real second', String(DEFAULT_TIME_SCALE))
    .option('--profile-out <file>', 'write a site connection profile that points at this site')
    .option(
      '--profile-host <host>',
      "the host the written profile's URLs name (default: the listen address), e.g. the Docker bridge gateway when LocalStack's Lambdas reach a site listening on 0.0.0.0",
    )
    .addOption(
      new Option('--transport <kind>', 'what the written profile uses (local: stand-in scontrol, sinfo, wwctl... written beside it, run on this host)')
        .choices(['http', 'ssm', 'local'])
        .default('http'),
    )
    .action(async (options: SimulateOptions) => {
      await simulate(options);
    });
}

async function simulate(options: SimulateOptions): Promise<void> {
  const timeScale = timeScaleOption(options.timeScale)!;
  const port = numberOrRaw(options.port);
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65535)
    throw new CliError(`--port must be a port number, got '${options.port}'`, ExitCode.invalidInput);
  if (options.profileHost !== undefined && !PROFILE_HOST.test(options.profileHost)) {
    throw new CliError(`--profile-host must be a host name or an IP address, got '${options.profileHost}'`, ExitCode.invalidInput);
  }
  const site = await loadSiteFile(options.site);

  const running = await startSiteSimulator({ site, clock: new SimClock({ timeScale }), host: options.host, port }).catch((err: unknown) => {
    throw listenRefused(err, options.host, port);
  });
  if (options.profileOut) {
    // Validated as any profile would be, so what is written is what --site-config accepts.
    const urls = options.profileHost ? simulatorUrls(`http://${options.profileHost}:${new URL(running.url).port}`) : running.urls;
    // The local transport runs programs on this host: stand-ins beside the profile pass each command to the simulated head node.
    const programs = options.transport === 'local' ? await writeHeadNodeStandIns(`${options.profileOut}.bin`, `${running.urls.control}/sim/exec`) : undefined;
    let profile;
    try {
      profile = siteProfileFor(urls, options.transport, timeScale, programs, site, running.simulator.workloadManager.version.restdVersions);
    } catch (err) {
      await running.close();
      throw new CliError(`--transport ${options.transport}: ${(err as Error).message}`, ExitCode.invalidInput);
    }
    parseSiteProfile(profile, 'generated site profile');
    await writeFile(options.profileOut, stringify(profile));
  }
  const { control, slurmrestd, bos, hsm, provisioner, ssm } = running.urls;
  process.stdout.write(`${JSON.stringify({ control, slurmrestd, bos, hsm, provisioner, ssm })}\n`);

  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await running.close();
}

/** The address cannot be listened on (no such host, a port in use or privileged): the options' fault, said as such. */
function listenRefused(err: unknown, host: string, port: number): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  const why: Record<string, string> = {
    ENOTFOUND: `--host '${host}' is not a known host or address`,
    EADDRNOTAVAIL: `--host '${host}' is not an address of this machine`,
    EADDRINUSE: `--port ${port} is in use`,
    EACCES: `--port ${port} needs privileges`,
  };
  return code && why[code] ? new CliError(`cannot serve the simulated site: ${why[code]}`, ExitCode.invalidInput) : err;
}
