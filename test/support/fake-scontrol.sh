#!/bin/sh
# A stand-in scontrol (and sinfo, by the name it is called by) for LocalTransport tests: writes each argument on its own NUL-terminated record to $FAKE_SCONTROL_LOG.
for arg in "$@"; do printf '%s\0' "$arg" >> "$FAKE_SCONTROL_LOG"; done
printf '\n' >> "$FAKE_SCONTROL_LOG"
if [ "$(basename "$0")" = "sinfo" ]; then printf '%s\n' 'n1|idle+drain|it'"'"'s $(id)'; exit 0; fi
if [ "$1" = "--version" ]; then printf 'slurm 24.11.7\n'; fi
if [ "$1" = "--json" ]; then printf '{"nodes":[{"name":"n1","state":["IDLE","DRAIN"],"reason":"it'"'"'s $(id)","boot_time":1767225600}]}'; fi
