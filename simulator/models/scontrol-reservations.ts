import { compressHostlist, expandHostlist } from '../../core/site/hostlist';
import { SimRequestError } from '../errors';
import type { WlmReservation, WorkloadManagerModel } from './workload-manager';

/** What a head-node command prints and returns. */
export interface ReservationCommandOutput {
  exitCode: number;
  stdout?: string;
  stderr?: string;
}

const UNIT_SECONDS: Record<string, number> = {
  '': 1,
  s: 1,
  sec: 1,
  secs: 1,
  second: 1,
  seconds: 1,
  minute: 60,
  minutes: 60,
  hour: 3600,
  hours: 3600,
  day: 86400,
  days: 86400,
};

/**
 * A reservation time as scontrol takes it (src/common/parse_time.c): `now`, `now+N[units]`, or an
 * epoch-free ISO `YYYY-MM-DDTHH:MM[:SS]` read as UTC (the simulated head node's time zone).
 */
export function parseReservationTime(text: string, now: number): number | undefined {
  const relative = /^now(?:\+(\d+)([a-z]*))?$/i.exec(text);
  if (relative) {
    const unit = UNIT_SECONDS[(relative[2] ?? '').toLowerCase()];
    if (unit === undefined) return undefined;
    return now + Number(relative[1] ?? 0) * unit * 1000;
  }
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(text)) return Date.parse(`${text}Z`);
  return undefined;
}

function keyValues(args: readonly string[]): Map<string, string> | undefined {
  const pairs = new Map<string, string>();
  for (const arg of args) {
    const eq = arg.indexOf('=');
    if (eq <= 0) return undefined;
    pairs.set(arg.slice(0, eq).toLowerCase(), arg.slice(eq + 1));
  }
  return pairs;
}

const fail = (stderr: string): ReservationCommandOutput => ({ exitCode: 1, stderr: `${stderr}\n` });

/** Runs a model call; a refusal is scontrol's message and exit 1. */
function attempt(what: string, action: () => void): ReservationCommandOutput | undefined {
  try {
    action();
    return undefined;
  } catch (err) {
    if (err instanceof SimRequestError) return fail(err.message.startsWith('Error') ? err.message : `${what}: ${err.message}`);
    throw err;
  }
}

/**
 * `scontrol create reservation ReservationName= Nodes= StartTime= EndTime=|Duration= Users= Flags=`,
 * `scontrol update ReservationName= [StartTime=] [EndTime=] [Nodes=]`: what src/scontrol/create_res.c
 * sends slurmctld, and its answers ("Reservation created: <name>", "Reservation updated.").
 */
export function putReservation(wlm: WorkloadManagerModel, args: readonly string[], mode: 'create' | 'update', now: number): ReservationCommandOutput {
  const kv = keyValues(args);
  const name = kv?.get('reservationname') ?? kv?.get('reservation');
  if (!kv || !name) return fail(`Error ${mode === 'create' ? 'creating' : 'updating'} the reservation: ReservationName must be given`);
  const existing = wlm.listReservations().find((r) => r.name === name);
  const time = (key: string) => {
    const text = kv.get(key);
    return text === undefined ? undefined : parseReservationTime(text, now);
  };
  const startsAt = time('starttime') ?? existing?.startsAt ?? (mode === 'create' ? undefined : now);
  const duration = kv.get('duration');
  const endsAt = time('endtime') ?? (duration !== undefined && startsAt !== undefined ? startsAt + Number(duration) * 60_000 : existing?.endsAt);
  if (
    (kv.has('starttime') && time('starttime') === undefined) ||
    (kv.has('endtime') && time('endtime') === undefined) ||
    startsAt === undefined ||
    endsAt === undefined
  ) {
    return fail(`Error ${mode === 'create' ? 'creating' : 'updating'} the reservation: Invalid time specification`);
  }
  const nodes = kv.has('nodes') ? expandHostlist(kv.get('nodes')!) : (existing?.nodes ?? []);
  const reservation: WlmReservation = {
    name,
    nodes,
    startsAt,
    endsAt,
    flags: kv.has('flags') ? kv.get('flags')!.toUpperCase().split(',').filter(Boolean) : (existing?.flags ?? []),
    users: kv.has('users') ? kv.get('users')!.split(',').filter(Boolean) : (existing?.users ?? []),
  };
  if (mode === 'create' && reservation.users.length === 0 && !kv.has('accounts'))
    return fail('Error creating the reservation: Either Users or Accounts must be specified');
  const refused = attempt(mode, () => wlm.putReservation(reservation, mode));
  if (refused) return refused;
  return { exitCode: 0, stdout: mode === 'create' ? `Reservation created: ${name}\n` : 'Reservation updated.\n' };
}

/** `scontrol delete ReservationName=<name>` (scontrol's "delete_reservation" message when it is unknown). */
export function deleteReservation(wlm: WorkloadManagerModel, args: readonly string[]): ReservationCommandOutput {
  const kv = keyValues(args);
  const name = kv?.get('reservationname') ?? kv?.get('reservation');
  if (!name) return fail('scontrol: delete needs ReservationName=<name>');
  return attempt('delete_reservation error', () => wlm.deleteReservation(name)) ?? { exitCode: 0 };
}

/**
 * `scontrol [-o] show reservation [name]` as 22.05 prints it (src/api/reservation_info.c,
 * slurm_sprint_reservation_info): four lines per reservation, or one with -o; times as
 * SLURM_TIME_FORMAT asks (`%s`: epoch seconds).
 */
export function showReservations(
  wlm: WorkloadManagerModel,
  name: string | undefined,
  oneLiner: boolean,
  epochTimes: boolean,
  now: number,
): ReservationCommandOutput {
  const all = wlm.listReservations().filter((r) => name === undefined || r.name === name);
  if (all.length === 0) return name === undefined ? { exitCode: 0, stdout: 'No reservations in the system\n' } : fail(`Reservation ${name} not found`);
  const time = (at: number) => (epochTimes ? String(Math.floor(at / 1000)) : new Date(at).toISOString().slice(0, 19));
  const duration = (ms: number) => {
    const s = Math.round(ms / 1000);
    const days = Math.floor(s / 86400);
    const hms = [Math.floor((s % 86400) / 3600), Math.floor((s % 3600) / 60), s % 60].map((v) => String(v).padStart(2, '0')).join(':');
    return days > 0 ? `${days}-${hms}` : hms;
  };
  const text = all
    .map((r) => {
      const lines = [
        `ReservationName=${r.name} StartTime=${time(r.startsAt)} EndTime=${time(r.endsAt)} Duration=${duration(r.endsAt - r.startsAt)}`,
        `Nodes=${r.nodes.length > 0 ? compressHostlist(r.nodes) : '(null)'} NodeCnt=${r.nodes.length} CoreCnt=${r.nodes.length} Features=(null) PartitionName=(null) Flags=${r.flags.join(',') || '(null)'}`,
        `TRES=cpu=${r.nodes.length}`,
        `Users=${r.users.join(',') || '(null)'} Groups=(null) Accounts=(null) Licenses=(null) State=${r.startsAt <= now ? 'ACTIVE' : 'INACTIVE'} BurstBuffer=(null) Watts=n/a`,
        'MaxStartDelay=(null)',
      ];
      return oneLiner ? `${lines.join(' ')}\n` : `${lines.join('\n   ')}\n\n`;
    })
    .join('');
  return { exitCode: 0, stdout: text };
}
