#!/bin/sh
# Installs Debian's Slurm packages the real-Slurm tests run (a quick no-op when they are there):
# slurmctld, slurmd, slurmrestd, the client commands, munge, and auth/jwt (slurmrestd's tokens; a
# separate package, not a dependency of slurmrestd). Root only; Debian 12 gives Slurm 22.05, Debian 13 24.11.
set -eu
PACKAGES="slurmctld slurmd slurmrestd slurm-client munge slurm-wlm-jwt-plugin"
missing=
for package in $PACKAGES; do
  if ! dpkg-query -W -f '${Status}' "$package" 2>/dev/null | grep -q 'install ok installed'; then
    missing="$missing $package"
  fi
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "Slurm packages missing:$missing; install them as root: sudo $0" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
echo "installing$missing" >&2
# A fresh machine may have no package lists yet: update only when the install cannot find a package.
# shellcheck disable=SC2086
if ! apt-get install -y -q --no-install-recommends $missing; then
  apt-get update -q
  apt-get install -y -q --no-install-recommends $missing
fi
