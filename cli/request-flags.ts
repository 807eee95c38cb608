import { InvalidInputError } from '../core/errors';
import { CliError } from './errors';
import { ExitCode } from './exit-codes';

/**
 * The request fields each command's flags fill in, in one place: an error about a field names the
 * flag the operator typed (`--template`, not `upgradeTemplateId`).
 */
export const UPGRADE_REQUEST_FLAGS: Readonly<Record<string, string>> = {
  startingLabel: '--starting-label',
  upgradingLabel: '--upgrading-label',
  failedLabel: '--failed-label',
  upgradeStepSize: '--step-size',
  upgradeTemplateId: '--template',
  workloadManagerType: '--wlm',
  quiesceTimeoutSeconds: '--quiesce-timeout',
  bootTimeoutSeconds: '--boot-timeout',
  wlmReturnTimeoutSeconds: '--wlm-timeout',
  pollIntervalSeconds: '--poll-interval',
  mode: '--mode',
  maxUnavailable: '--max-unavailable',
  drainAhead: '--drain-ahead',
  order: '--order',
  maxUnavailablePerRack: '--max-unavailable-per-rack',
  batches: '--batches',
  pauseAfterBatches: '--pause-after-batches',
  approval: '--approval',
  maxFailed: '--max-failed',
  haltOnOutsideFailures: '--halt-on-outside-failures',
  bakeSeconds: '--bake-seconds',
  'healthCheck.command': '--health-check',
  'healthCheck.timeoutSeconds': '--health-check-timeout',
  healthCheck: '--health-check',
  maintenanceWindows: '--maintenance-window',
  waitForGroups: '--wait-for-groups',
};

export const DEPLOYMENT_REQUEST_FLAGS: Readonly<Record<string, string>> = {
  strategy: '--strategy',
  nodes: '--nodes',
  maxParallelGroups: '--max-parallel-groups',
  prepareTimeoutSeconds: '--prepare-timeout',
  deployTimeoutSeconds: '--deploy-timeout',
  pollIntervalSeconds: '--poll-interval',
  taskGraph: '--graph',
};

/**
 * Runs `work`; an invalid-input error it throws is said again with the flags instead of the request
 * fields (`--step-size must be at least 1`, `--maintenance-window #2: durationMinutes must be a whole
 * number`), whether it came from the request's parser (InvalidInputError) or, as text, from the
 * workflow's first state.
 */
export async function namingFlags<T>(flags: Readonly<Record<string, string>>, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    // Only errors about the request's fields: a file's own problems (a task graph, a strategy) keep their subject and paths.
    if (err instanceof InvalidInputError && err.problems.some((p) => knownField(p.field, flags) !== undefined)) {
      throw new CliError(err.problems.map((p) => flagProblem(p.field, p.message, flags)).join('; '), ExitCode.invalidInput);
    }
    if (err instanceof CliError && err.exitCode === ExitCode.invalidInput) throw new CliError(flagNamedText(err.message, flags), ExitCode.invalidInput);
    throw err;
  }
}

/** `Invalid upgrade request: upgradeStepSize: ...; maintenanceWindows[0].durationMinutes: ...` read back into its problems. */
function flagNamedText(message: string, flags: Readonly<Record<string, string>>): string {
  const match = /^Invalid [^:]*request: (.*)$/s.exec(message);
  if (!match) return message;
  return match[1]!
    .split('; ')
    .map((part) => {
      const field = /^([A-Za-z][\w.[\]]*): (.*)$/s.exec(part);
      return field ? flagProblem(field[1]!, field[2]!, flags) : part;
    })
    .join('; ');
}

/** The longest request field of the table that `field` is or lies under. */
function knownField(field: string, flags: Readonly<Record<string, string>>): string | undefined {
  return Object.keys(flags)
    .filter((name) => field === name || field.startsWith(`${name}.`) || field.startsWith(`${name}[`))
    .sort((a, b) => b.length - a.length)[0];
}

function flagProblem(field: string, message: string, flags: Readonly<Record<string, string>>): string {
  const known = knownField(field, flags);
  if (known === undefined) return field ? `${field}: ${message}` : message;
  const flag = flags[known]!;
  const rest = field.slice(known.length);
  const item = /^\[(\d+)\]\.?(.*)$/.exec(rest);
  const where = item ? `${flag} #${Number(item[1]) + 1}${item[2] ? ` (${item[2]})` : ''}` : rest ? `${flag} (${rest.replace(/^\./, '')})` : flag;
  // `upgradeStepSize must be at least 1` -> `--step-size must be at least 1`.
  const lastName = known.split('.').at(-1)!;
  if (message.startsWith(`${lastName} `) && !item && !rest) return withFlags(`${flag}${message.slice(lastName.length)}`, flags);
  return `${where}: ${withFlags(message, flags)}`;
}

/** `must differ from startingLabel` -> `must differ from --starting-label`. */
function withFlags(message: string, flags: Readonly<Record<string, string>>): string {
  // Whole field names only, never inside a flag or a longer path (`healthCheck.command` is one name), and only
  // names no sentence has (camelCase or dotted): `mode` or `nodes` in prose stay words.
  return message.replace(/(?<![-\w.])[a-z][A-Za-z]*(?:\.[a-z][A-Za-z]*)*(?![\w-])/g, (word) => (/[A-Z.]/.test(word) && word in flags ? flags[word]! : word));
}
