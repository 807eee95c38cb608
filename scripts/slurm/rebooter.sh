#!/bin/sh
# The rebooter of one real-Slurm cluster on this machine (see scripts/slurm/real-slurm.ts): a long-running
# process, started with the cluster, that carries out the reboots its RebootProgram stand-in
# (reboot-program.sh) records in CLUSTER_DIR/reboot-requests/<node>: it stops that node's slurmd (SIGTERM,
# SIGKILL 5 s later) and, after the node's delay, starts it again with `-b` (as a node that booted) through
# CLUSTER_DIR/bin/slurmd (the host's slurmd, or the chroot's for another release). It ends with the cluster
# (once CLUSTER_DIR/slurm.conf is gone).
#
# usage: rebooter.sh CLUSTER_DIR
# CLUSTER_DIR/reboot-delay holds the default delay in seconds; a request holds the node's control line
# (`never`: no restart; `delay <s>`). Each reboot logs timestamped lines to log/reboot-<node>.log and its
# pid to run/reboot-<node>.pid.
set -u
dir=$1
conf=$dir/slurm.conf
mkdir -p "$dir/reboot-requests"
while [ -e "$conf" ]; do
  for request in "$dir"/reboot-requests/*; do
    [ -f "$request" ] || continue
    node=${request##*/}
    control=$(cat "$request" 2>/dev/null || true)
    rm -f "$request"
    delay=$(cat "$dir/reboot-delay" 2>/dev/null || echo 2)
    case "$control" in "delay "*) delay=${control#delay } ;; esac
    (
      pidfile=$dir/run/slurmd-$node.pid
      slurmd_pid=$(cat "$pidfile" 2>/dev/null)
      echo "$(date +%s) $node: reboot: stopping slurmd ${slurmd_pid:-(no pid file)}"
      if [ -n "$slurmd_pid" ]; then
        kill -TERM "$slurmd_pid" 2>/dev/null
        i=0
        while kill -0 "$slurmd_pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
        if kill -0 "$slurmd_pid" 2>/dev/null; then
          echo "$(date +%s) $node: slurmd $slurmd_pid still there after SIGTERM: SIGKILL"
          kill -KILL "$slurmd_pid" 2>/dev/null
        fi
      fi
      [ "$control" = never ] && echo "$(date +%s) $node: down for good (never)" && exit 0
      sleep "$delay"
      # The health check slurmd runs as it starts lets two seconds pass before it registers (see real-slurm.ts).
      : >"$dir/control/booting-$node"
      echo "$(date +%s) $node: booted: starting slurmd -b"
      exec "$dir/bin/slurmd" -f "$conf" -N "$node" -b
    ) </dev/null >>"$dir/log/reboot-$node.log" 2>&1 &
    echo $! >"$dir/run/reboot-$node.pid"
  done
  sleep 0.2
done
