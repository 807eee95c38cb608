import { expandHostlist } from '../../core/site/hostlist';
import type { TriggerEvent, TriggerManagerModel } from './trigger-manager';

/**
 * The `strigger` command for node triggers, as SchedMD/slurm's src/strigger/opts.c parses it (getopt_long:
 * `--node` takes its hostlist only as `--node=`) and src/strigger/strigger.c prints it (_set_trigger,
 * _get_trigger, _clear_trigger): `--set --node[=hostlist] --up|--down|--drained --program=PATH
 * [--flags=PERM]`, `--get [--noheader] [--id=N] [--user=U] [--up|--down|--drained]`, `--clear --id=N |
 * --user=U`. Errors as opts.c's error() (`strigger: error: ...`) and slurm_perror (`slurm_set_trigger:
 * <slurm_strerror>`), exit 1. The simulated head node runs every command as root.
 */
/** What a command prints and exits with (head-node.ts's Output, without a pending part). */
interface Output {
  exitCode: number;
  stdout?: string;
  stderr?: string;
}

export function strigger(triggers: TriggerManagerModel, args: readonly string[]): Output {
  const parsed = parseOptions(args);
  if ('exitCode' in parsed) return parsed;
  const { mode, events, program } = parsed;
  if (mode === 'set') {
    if (events.length === 0) return optionError('You must specify a trigger');
    if (program === undefined) return optionError('You must specify a --program value');
  }
  if (program !== undefined && !program.startsWith('/')) return optionError('The --program value must start with "/"');
  if (mode === 'clear' && parsed.id === undefined && parsed.user === undefined) return optionError('You must specify a --id, --jobid, or --user to clear');
  if (mode === 'set') {
    // One trigger of every event asked (strigger sets them as one request's type bits; the rollout asks one at a time).
    if (events.length > 1) return optionError('one event per trigger in the simulator (--up, --down or --drained)');
    const resId = parsed.node ?? '*';
    const nodes = resId === '*' ? undefined : expandHostlist(resId);
    const set = triggers.set({ event: events[0]!, resId, program: program!, perm: parsed.perm, user: 'root' }, nodes);
    if (set === 'duplicate') return perror('slurm_set_trigger', 'Duplicate event trigger');
    if (set === 'invalid-node') return perror('slurm_set_trigger', 'Invalid node name specified');
    return { exitCode: 0 };
  }
  if (mode === 'clear') {
    const cleared = triggers.clear({ ...(parsed.id !== undefined ? { id: parsed.id } : {}), ...(parsed.user !== undefined ? { user: parsed.user } : {}) });
    // trigger_clear answers ESRCH when nothing matched.
    return cleared > 0 ? { exitCode: 0 } : perror('slurm_clear_trigger', 'No such process');
  }
  const shown = triggers
    .list()
    .filter(
      (t) =>
        (events.length === 0 || events.includes(t.event)) &&
        (parsed.id === undefined || t.id === parsed.id) &&
        (parsed.user === undefined || t.user === parsed.user),
    );
  if (shown.length === 0) return { exitCode: 0, stdout: '' };
  const header = 'TRIG_ID RES_TYPE   RES_ID TYPE                                OFFSET USER     FLAGS PROGRAM\n';
  // strigger.c: "%7u %-9s %7s %-35s %6d %-8s %-5s %s\n".
  const rows = shown.map(
    (t) =>
      `${String(t.id).padStart(7)} ${'node'.padEnd(9)} ${t.resId.padStart(7)} ${t.event.padEnd(35)} ${'0'.padStart(6)} ${t.user.padEnd(8)} ${(t.perm ? 'PERM' : '').padEnd(5)} ${t.program}\n`,
  );
  return { exitCode: 0, stdout: (parsed.noHeader ? '' : header) + rows.join('') };
}

interface Options {
  mode: 'set' | 'get' | 'clear';
  events: TriggerEvent[];
  node?: string;
  program?: string;
  perm: boolean;
  id?: number;
  user?: string;
  noHeader: boolean;
}

const EVENT_OPTIONS: Record<string, TriggerEvent> = { '--up': 'up', '-u': 'up', '--down': 'down', '-d': 'down', '--drained': 'drained', '-D': 'drained' };

function parseOptions(args: readonly string[]): Options | Output {
  const modes = new Set<Options['mode']>();
  const options: Omit<Options, 'mode'> = { events: [], perm: false, noHeader: false };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const eq = arg.indexOf('=');
    const name = arg.startsWith('--') && eq > 0 ? arg.slice(0, eq) : arg;
    const inline = arg.startsWith('--') && eq > 0 ? arg.slice(eq + 1) : undefined;
    // A required argument: `--opt=value` or `--opt value` (`-p value`).
    const value = (): string | undefined => inline ?? args[++i];
    if (name === '--set') modes.add('set');
    else if (name === '--get') modes.add('get');
    else if (name === '--clear') modes.add('clear');
    else if (EVENT_OPTIONS[name]) options.events.push(EVENT_OPTIONS[name]);
    else if (name === '--node' || name === '-n') options.node = inline ?? '*';
    else if (name === '--program' || name === '-p') options.program = value();
    else if (name === '--noheader' || name === '-N') options.noHeader = true;
    else if (name === '--flags') {
      const flags = value() ?? '';
      if (!/^perm/i.test(flags)) return optionError(`Invalid flags ${flags}`);
      options.perm = true;
    } else if (name === '--id' || name === '-i') options.id = Number(value());
    else if (name === '--user') options.user = value();
    else return { exitCode: 1, stderr: `strigger: unrecognized option '${arg}'\nTry "strigger --help" for more information\n` };
  }
  if (modes.size !== 1) return optionError('You must use exactly one of the following options: --set, --get or --clear');
  return { mode: [...modes][0]!, ...options };
}

function optionError(message: string): Output {
  return { exitCode: 1, stderr: `strigger: error: ${message}\n` };
}

function perror(call: string, message: string): Output {
  return { exitCode: 1, stderr: `${call}: ${message}\n` };
}
