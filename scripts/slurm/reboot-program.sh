#!/bin/sh
# A RebootProgram stand-in for a cluster of `slurmd -N <name>` processes on one machine
# (see scripts/slurm/real-slurm.ts). slurmd runs RebootProgram through `sh -c` with no argument naming
# the node, so the node is found by walking up the process tree to the `slurmd ... -N <name>` process.
# It only records the reboot: the cluster's rebooter (scripts/slurm/rebooter.sh, a long-running process
# of its own) stops that node's slurmd and starts it again with `-b`. A restart forked from here
# sometimes never ran on Slurm 26.05 (REFERENCE.md "Slurm 24.11 and 26.05 on the same machine"). It runs
# inside the cluster's chroot for a release other than the host's: it needs sh, tr, awk and cat only.
#
# usage: reboot-program.sh CLUSTER_DIR
# CLUSTER_DIR holds control/<node> (`fail`: exit 1 without rebooting; `never`: stop slurmd and never start
# it again; `delay <s>`: this node's delay), and gets reboots.log (`<node> <epoch seconds> <outcome>` a
# line) and reboot-requests/<node> (what the rebooter acts on: the node's control line).
set -u
dir=$1

node=
pid=$$
while [ "$pid" -gt 1 ] 2>/dev/null; do
  if [ -r "/proc/$pid/cmdline" ]; then
    # cmdline is NUL-separated: the word after -N is the node name.
    name=$(tr '\0' '\n' <"/proc/$pid/cmdline" | awk 'NR == 1 && $0 !~ /slurmd$/ { exit } prev == "-N" { print; exit } { prev = $0 }')
    if [ -n "$name" ]; then
      node=$name
      break
    fi
  fi
  pid=$(awk '{ print $4 }' "/proc/$pid/stat" 2>/dev/null || echo 0)
done
if [ -z "$node" ]; then
  echo "$(date +%s) reboot-program: no 'slurmd -N <name>' above pid $$" >>"$dir/reboots.log"
  exit 1
fi

control=$(cat "$dir/control/$node" 2>/dev/null || true)
if [ "$control" = fail ]; then
  echo "$node $(date +%s) failed" >>"$dir/reboots.log"
  exit 1
fi
outcome=rebooted
[ "$control" = never ] && outcome=never-back
echo "$node $(date +%s) $outcome" >>"$dir/reboots.log"
mkdir -p "$dir/reboot-requests"
echo "$control" >"$dir/reboot-requests/.$node.new"
mv -f "$dir/reboot-requests/.$node.new" "$dir/reboot-requests/$node"
exit 0
