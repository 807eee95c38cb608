import { MAX_SITE_EVENT_ID_LENGTH, NODE_EVENT_KINDS } from '../core/site/site-event';
import { FIRING_HASH_DIGITS, FIRING_SUFFIX, FIRING_TIME_DIGITS, TEMPORARY_SUFFIX } from './site-relay';

/** The environment variable that fixes the script's firedAt: for tests only (a relay in service takes the clock). */
export const RELAY_SCRIPT_FIRED_AT_VARIABLE = 'ROLLOUT_RELAY_FIRED_AT';

/** The events, as the script's `case` matches them. */
const EVENTS = NODE_EVENT_KINDS.join('|');

/**
 * The site relay as a POSIX sh script (`rollout relay script`), for a slurmctld host without Node (Slurm in a
 * chroot, say: coreutils and a shell, no curl). It takes the arguments of `rollout relay deliver` and spools the
 * firing exactly as spoolFiring does (the same file name, JSON body and id: sha256sum of the same text, GNU date's
 * milliseconds), atomically (a temporary name, sync, mv); it delivers nothing: `rollout relay drain`, or the
 * control plane's own spool intake (siteEvents.spool) on this host, takes the firings from there. It exits at once:
 * 0 once the firing is spooled, 2 for a bad argument, 1 when it cannot spool (slurmctld only logs the status).
 * A hostlist is written into the JSON as it is: one with a character other than letters, digits, `.`, `_`, `-`,
 * `,`, `[` and `]` is refused (Slurm's hostlists have none).
 */
export const RELAY_SCRIPT = `#!/bin/sh
# rollout site relay, written by \`rollout relay script\`: the strigger program for a slurmctld host without Node.
#   <this script> --spool DIR --event ${EVENTS} [--session ID] HOSTLIST
# spools the firing as \`rollout relay deliver\` does (same file, same JSON, same id) and delivers nothing:
# \`rollout relay drain --spool DIR --endpoint URL\` (on a host with Node), or the control plane reading the spool
# itself (a site profile's siteEvents.spool), delivers it. --endpoint and --timeout are accepted and ignored.
# Exit status: 0 spooled, 2 a bad argument, 1 the firing could not be spooled (slurmctld only logs it).
# ${RELAY_SCRIPT_FIRED_AT_VARIABLE}, an ISO time with milliseconds (2026-11-29T01:00:00.000Z), replaces the clock: for tests only.
# Needs sh, GNU coreutils' date (%N), sha256sum, cut, mkdir, sync, mv.

# slurmctld runs a trigger's program with almost no environment.
PATH=/usr/local/bin:/usr/bin:/bin:$PATH

say() { printf '%s\\n' "rollout relay: $1" >&2 2>/dev/null; }
fail() { say "$2"; exit "$1"; }
needs_value() { [ "$2" -ge 2 ] || fail 2 "$1 needs a value"; }

event= session= session_given= spool= hostlist= json= endpoint=
while [ $# -gt 0 ]; do
  case $1 in
    --event) needs_value "$1" $#; event=$2; shift 2 ;;
    --event=*) event=\${1#--event=}; shift ;;
    --session) needs_value "$1" $#; session=$2; session_given=1; shift 2 ;;
    --session=*) session=\${1#--session=}; session_given=1; shift ;;
    --spool) needs_value "$1" $#; spool=$2; shift 2 ;;
    --spool=*) spool=\${1#--spool=}; shift ;;
    --endpoint) needs_value "$1" $#; endpoint=$2; shift 2 ;;
    --endpoint=*) endpoint=\${1#--endpoint=}; shift ;;
    --timeout) needs_value "$1" $#; shift 2 ;;
    --timeout=*) shift ;;
    --json) json=1; shift ;;
    --) shift; break ;;
    -*) fail 2 "unknown option $1" ;;
    *) [ -z "$hostlist" ] || fail 2 "one hostlist only, not '$hostlist' and '$1'"; hostlist=$1; shift ;;
  esac
done
if [ $# -gt 0 ]; then
  [ -z "$hostlist" ] && [ $# -eq 1 ] || fail 2 "one hostlist only"
  hostlist=$1
fi

case $event in
  ${EVENTS}) ;;
  *) fail 2 "--event must be one of ${NODE_EVENT_KINDS.join(', ')}, not '$event'" ;;
esac
if [ -n "$session_given" ]; then
  case $session in
    ''|*[!A-Za-z0-9._:-]*) fail 2 "--session must be a session id (letters, digits, dots, colons, dashes and underscores), not '$session'" ;;
  esac
  [ \${#session} -le ${MAX_SITE_EVENT_ID_LENGTH} ] || fail 2 "--session must be at most ${MAX_SITE_EVENT_ID_LENGTH} characters"
fi
[ -n "$spool" ] || fail 2 "--spool is required: the spool directory"
case $spool in
  *[\\"\\\\]*) fail 2 "--spool must not contain a quote or a backslash" ;;
esac
[ -n "$hostlist" ] || fail 2 "the hostlist is required (slurmctld gives it as the last argument)"
case $hostlist in
  *[!]A-Za-z0-9._,[-]*) fail 2 "the hostlist '$hostlist' has a character other than letters, digits, . _ - , [ ]" ;;
esac
[ -z "$endpoint" ] || say "--endpoint $endpoint ignored: this script only spools (rollout relay drain, or the control plane's spool intake, delivers)"

fired_at=\${${RELAY_SCRIPT_FIRED_AT_VARIABLE}:-$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)}
case $fired_at in
  [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z) ;;
  *) fail 1 "the firing's time '$fired_at' is not an ISO time with milliseconds (GNU date's %N is needed)" ;;
esac
fired_ms=$(date -u -d "$fired_at" +%s%3N) || fail 1 "date cannot read '$fired_at'"
case $fired_ms in
  ''|*[!0-9]*) fail 1 "date gave '$fired_ms' for the firing's epoch milliseconds (GNU date's %N is needed)" ;;
esac

# The id: the event, then the first ${FIRING_HASH_DIGITS} hex digits of sha256(event LF hostlist LF firedAt [LF session]).
if [ -n "$session" ]; then
  hash=$(printf '%s\\n%s\\n%s\\n%s' "$event" "$hostlist" "$fired_at" "$session" | sha256sum | cut -c1-${FIRING_HASH_DIGITS})
  session_field="\\"session\\":\\"$session\\","
else
  hash=$(printf '%s\\n%s\\n%s' "$event" "$hostlist" "$fired_at" | sha256sum | cut -c1-${FIRING_HASH_DIGITS})
  session_field=
fi
case $hash in
  *[!0-9a-f]*) fail 1 "sha256sum gave '$hash'" ;;
esac
[ \${#hash} -eq ${FIRING_HASH_DIGITS} ] || fail 1 "sha256sum gave '$hash'"
id="$event-$hash"
name=$(printf '%0${FIRING_TIME_DIGITS}d-%s${FIRING_SUFFIX}' "$fired_ms" "$id")
file="$spool/$name"
temporary="$spool/.$name.$$${TEMPORARY_SUFFIX}"

# Written whole under a temporary name, flushed, then renamed into place: a reader sees the whole firing or none.
mkdir -p -- "$spool" || fail 1 "cannot create the spool directory $spool"
set -C
if ! printf '{"id":"%s","event":"%s","nodes":"%s",%s"firedAt":"%s"}\\n' "$id" "$event" "$hostlist" "$session_field" "$fired_at" > "$temporary"; then
  rm -f -- "$temporary"
  fail 1 "cannot write $temporary"
fi
set +C
sync -- "$temporary" 2>/dev/null || sync
if ! mv -f -- "$temporary" "$file"; then
  rm -f -- "$temporary"
  fail 1 "cannot rename $temporary to $file"
fi
if [ -n "$json" ]; then
  printf '{"id":"%s","file":"%s","outcome":{"spooled":true}}\\n' "$id" "$file" 2>/dev/null
else
  printf '%s: spooled in %s\\n' "$id" "$file" 2>/dev/null
fi
exit 0
`;
