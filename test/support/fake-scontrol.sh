#!/bin/sh
# A stand-in scontrol for LocalTransport tests: writes each argument on its own NUL-terminated record to $FAKE_SCONTROL_LOG.
for arg in "$@"; do printf '%s\0' "$arg" >> "$FAKE_SCONTROL_LOG"; done
printf '\n' >> "$FAKE_SCONTROL_LOG"
if [ "$1" = "--json" ]; then printf '{"nodes":[{"name":"n1","state":["IDLE","DRAIN"],"reason":"it'"'"'s $(id)","boot_time":1767225600}]}'; fi
