#!/bin/sh
# A RebootProgram stand-in for a cluster of `slurmd -N <name>` processes on one machine
# (see test/support/real-slurm.ts). slurmd runs RebootProgram through `sh -c` with no argument naming
# the node, so the node is found by walking up the process tree to the `slurmd ... -N <name>` process.
# It logs the reboot, then stops that node's slurmd and starts it again with `-b` (as a node that
# booted) after a delay, in a detached process, so slurmd's own exit does not take it along.
#
# usage: reboot-program.sh CLUSTER_DIR
# CLUSTER_DIR holds slurm.conf, reboot-delay (seconds), control/<node> (`fail`: exit 1 without
# rebooting; `never`: stop slurmd and never start it again; `delay <s>`: this node's delay), and
# gets reboots.log (`<node> <epoch seconds> <outcome>` a line) and run/reboot-<node>.pid.
set -u
dir=$1
conf=$dir/slurm.conf

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
delay=$(cat "$dir/reboot-delay" 2>/dev/null || echo 2)
case "$control" in
  fail)
    echo "$node $(date +%s) failed" >>"$dir/reboots.log"
    exit 1
    ;;
  "delay "*) delay=${control#delay } ;;
esac
outcome=rebooted
[ "$control" = never ] && outcome=never-back
echo "$node $(date +%s) $outcome" >>"$dir/reboots.log"

pidfile=$dir/run/slurmd-$node.pid
setsid sh -c '
  # Timestamped lines (epoch seconds) in log/reboot-<node>.log: what a failed wait for the node shows.
  slurmd_pid=$(cat "$1" 2>/dev/null)
  echo "$(date +%s) $3: reboot: stopping slurmd ${slurmd_pid:-(no pid file)}"
  if [ -n "$slurmd_pid" ]; then
    kill -TERM "$slurmd_pid" 2>/dev/null
    i=0
    while kill -0 "$slurmd_pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
    if kill -0 "$slurmd_pid" 2>/dev/null; then
      echo "$(date +%s) $3: slurmd $slurmd_pid still there after SIGTERM: SIGKILL"
      kill -KILL "$slurmd_pid" 2>/dev/null
    fi
  fi
  [ "$5" = never ] && echo "$(date +%s) $3: down for good (never)" && exit 0
  sleep "$4"
  # The health check slurmd runs as it starts lets two seconds pass before it registers (see real-slurm.ts).
  : >"$6/control/booting-$3"
  echo "$(date +%s) $3: booted: starting slurmd -b"
  exec slurmd -f "$2" -N "$3" -b
' reboot "$pidfile" "$conf" "$node" "$delay" "$control" "$dir" </dev/null >>"$dir/log/reboot-$node.log" 2>&1 &
echo $! >"$dir/run/reboot-$node.pid"
exit 0
