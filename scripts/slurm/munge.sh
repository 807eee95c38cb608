#!/bin/sh
# Starts munge once per machine, idempotently: a running munged is reused; a key is made only when
# there is none. Every Slurm cluster on this machine shares it (one socket, /run/munge).
set -eu
if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" != 0 ]; then
  echo "munge is not running and only root can start it: sudo $0" >&2
  exit 1
fi
if [ ! -s /etc/munge/munge.key ]; then
  mkdir -p /etc/munge
  mungekey -c -k /etc/munge/munge.key
fi
mkdir -p /run/munge /var/lib/munge /var/log/munge
chown munge:munge /etc/munge /etc/munge/munge.key /run/munge /var/lib/munge /var/log/munge
chmod 0700 /etc/munge
chmod 0600 /etc/munge/munge.key
chmod 0755 /run/munge
# Two callers at once: the second munged finds the socket taken and exits; both then see a working munge.
runuser -u munge -- /usr/sbin/munged 2>/dev/null || true
i=0
until munge -n 2>/dev/null | unmunge >/dev/null 2>&1; do
  i=$((i + 1))
  if [ "$i" -ge 50 ]; then
    echo "munged did not start: see /var/log/munge/munged.log" >&2
    exit 1
  fi
  sleep 0.1
done
