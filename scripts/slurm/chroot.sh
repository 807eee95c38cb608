#!/bin/sh
# Slurm releases other than the host's, from Debian's own packages, in chroots built with mmdebstrap
# (/work/shared/REFERENCE.md "Slurm 24.11 and 26.05 on the same machine"): 24.11 from Debian 13
# (trixie), 26.05 from Debian sid, 22.05 from Debian 12 (bookworm, for a host that is not Debian 12).
#
#   chroot.sh build RELEASE   build the chroot when it is missing or broken (a no-op otherwise); prints its path
#   chroot.sh path RELEASE    prints where the chroot of RELEASE is (built or not)
#   chroot.sh check RELEASE   exit 0 when the chroot is complete and holds Slurm RELEASE, else 1 saying why
#   chroot.sh up RELEASE      mounts /proc and /sys in it and starts its munged (idempotent; what a cluster needs)
#   chroot.sh remove RELEASE  stops its munged, unmounts and removes it (refused while another process runs in it)
#
# The chroots are cached on the machine under $SLURM_CHROOT_CACHE (default /var/cache/baremetal-rollout),
# as slurm-<release>: built in a temp dir beside it, checked, then renamed into place, so that a chroot
# that is there is complete. Concurrent builds of one release wait for each other (flock).
# The Debian mirror: $SLURM_CHROOT_MIRROR when set, else the first non-security one of the machine's apt
# sources (/etc/apt/sources.list.d/*.sources `URIs:`, /etc/apt/sources.list `deb` lines).
#
# /proc and /sys stay mounted in a chroot once a cluster needed them: clusters of one release share them and
# its munged (its own key and socket under the chroot), and none unmounts what another may still use.
set -eu

usage() {
  echo "usage: $0 build|path|check|up|remove RELEASE (22.05, 24.11 or 26.05)" >&2
  exit 2
}
[ $# -eq 2 ] || usage
command=$1
release=$2
case "$release" in
  22.05) suite=bookworm ;;
  24.11) suite=trixie ;;
  26.05) suite=sid ;;
  *)
    echo "$0: no Debian suite ships Slurm '$release' (known: 22.05 bookworm, 24.11 trixie, 26.05 sid)" >&2
    exit 2
    ;;
esac
cache=${SLURM_CHROOT_CACHE:-/var/cache/baremetal-rollout}
root=$cache/slurm-$release
marker=.baremetal-rollout-slurm
packages=slurmctld,slurmd,slurmrestd,slurm-client,slurm-wlm-jwt-plugin,munge,procps

# Why the chroot at $1 is not a usable Slurm $release (empty: it is).
broken() {
  [ -d "$1" ] || {
    echo "no chroot at $1"
    return
  }
  [ -f "$1/$marker" ] || {
    echo "$1 is not a finished build (no $marker)"
    return
  }
  for binary in usr/sbin/slurmctld usr/sbin/slurmd usr/sbin/slurmrestd usr/bin/scontrol usr/sbin/munged; do
    [ -x "$1/$binary" ] || {
      echo "$1 has no /$binary"
      return
    }
  done
  installed=$(chroot "$1" dpkg-query -W -f '${Version}' slurmctld 2>/dev/null || true)
  case "$installed" in
    "$release".*) ;;
    *) echo "$1 holds slurmctld '${installed:-none}', not $release (Debian $suite moved on?)" ;;
  esac
}

mirror() {
  if [ -n "${SLURM_CHROOT_MIRROR:-}" ]; then
    echo "$SLURM_CHROOT_MIRROR"
    return
  fi
  found=
  for file in /etc/apt/sources.list.d/*.sources; do
    [ -r "$file" ] || continue
    found=$(awk 'tolower($1) == "uris:" { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }' "$file")
    [ -n "$found" ] && break
  done
  if [ -z "$found" ] && [ -r /etc/apt/sources.list ]; then
    found=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { if ($i !~ /security/) { print $i; exit } else break } }' /etc/apt/sources.list)
  fi
  if [ -z "$found" ]; then
    echo "$0: no Debian mirror in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list: set SLURM_CHROOT_MIRROR" >&2
    exit 1
  fi
  echo "$found"
}

need_root() {
  if [ "$(id -u)" != 0 ]; then
    echo "$0 $command needs root (mmdebstrap, chroot, mount): sudo $0 $command $release" >&2
    exit 1
  fi
}

mounted() { awk -v m="$1" '$2 == m { found = 1 } END { exit !found }' /proc/mounts; }

build() {
  need_root
  mkdir -p "$cache"
  exec 9>"$cache/slurm-$release.lock"
  flock 9
  why=$(broken "$root")
  if [ -z "$why" ]; then
    echo "$root"
    return
  fi
  echo "building the Slurm $release chroot (Debian $suite): $why" >&2
  if ! command -v mmdebstrap >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q mmdebstrap >&2 || { apt-get update -q >&2 && apt-get install -y -q mmdebstrap >&2; }
  fi
  [ -d "$root" ] && remove_dir "$root"
  tmp=$(mktemp -d "$cache/.slurm-$release.XXXXXX")
  rmdir "$tmp"
  started=$(date +%s)
  # sid's Release file can be past its Valid-Until on a mirror.
  if ! mmdebstrap --quiet --variant=minbase --include="$packages" \
    --aptopt='Acquire::Check-Valid-Until "false"' "$suite" "$tmp" "$(mirror)" >&2; then
    rm -rf --one-file-system "$tmp"
    echo "$0: mmdebstrap of Debian $suite failed" >&2
    exit 1
  fi
  : >"$tmp/$marker"
  why=$(broken "$tmp")
  if [ -n "$why" ]; then
    rm -rf --one-file-system "$tmp"
    echo "$0: the new chroot is not usable: $why" >&2
    exit 1
  fi
  mv -T "$tmp" "$root"
  echo "built $root ($(chroot "$root" dpkg-query -W -f '${Version}' slurmctld)) in $(($(date +%s) - started)) s" >&2
  echo "$root"
}

# Processes whose root is the chroot (daemons of its clusters, its munged).
processes_in() {
  for link in /proc/[0-9]*/root; do
    [ "$(readlink "$link" 2>/dev/null)" = "$1" ] && echo "${link#/proc/}" | cut -d/ -f1
  done
  return 0
}

remove_dir() {
  munged_pid=$(cat "$1/run/munge/munged.pid" 2>/dev/null || true)
  [ -n "$munged_pid" ] && kill "$munged_pid" 2>/dev/null && sleep 1
  others=$(processes_in "$1" | tr '\n' ' ')
  if [ -n "$others" ]; then
    echo "$0: processes still run in $1 (pids $others): stop their clusters first" >&2
    exit 1
  fi
  for m in "$1/sys" "$1/proc"; do mounted "$m" && umount "$m"; done
  rm -rf --one-file-system "$1"
}

up() {
  need_root
  why=$(broken "$root")
  if [ -n "$why" ]; then
    echo "$0: $why: build it with $0 build $release" >&2
    exit 1
  fi
  exec 9>"$cache/slurm-$release.lock"
  flock 9
  mounted "$root/proc" || mount -t proc proc "$root/proc"
  mounted "$root/sys" || mount -t sysfs -o ro sysfs "$root/sys"
  in_root() { chroot "$root" "$@"; }
  if in_root sh -c 'munge -n 2>/dev/null | unmunge >/dev/null 2>&1'; then return; fi
  in_root sh -c '
    set -e
    [ -s /etc/munge/munge.key ] || mungekey -c -k /etc/munge/munge.key
    mkdir -p /run/munge /var/lib/munge /var/log/munge
    chown munge:munge /etc/munge /etc/munge/munge.key /run/munge /var/lib/munge /var/log/munge
    chmod 0700 /etc/munge
    chmod 0600 /etc/munge/munge.key
    chmod 0755 /run/munge
    # A socket left by a munged that died with the machine: --force takes it over.
    runuser -u munge -- /usr/sbin/munged --force </dev/null >/dev/null 2>&1 9>&- || true
  '
  i=0
  until in_root sh -c 'munge -n 2>/dev/null | unmunge >/dev/null 2>&1'; do
    i=$((i + 1))
    if [ "$i" -ge 50 ]; then
      echo "$0: the munged of $root did not start: see $root/var/log/munge/munged.log" >&2
      exit 1
    fi
    sleep 0.1
  done
}

case "$command" in
  path) echo "$root" ;;
  check)
    why=$(broken "$root")
    [ -z "$why" ] || {
      echo "$why" >&2
      exit 1
    }
    ;;
  build) build ;;
  up) up ;;
  remove)
    need_root
    exec 9>"$cache/slurm-$release.lock"
    flock 9
    [ -e "$root" ] && remove_dir "$root"
    ;;
  *) usage ;;
esac
