#!/usr/bin/env bash
# A one-node SLURM cluster on this machine, to try (and test) the cluster path without a cluster.
#
#   profiles/slurm/local-cluster.sh start    install slurm-wlm + munge (Debian/Ubuntu) if missing,
#                                            write /etc/slurm/slurm.conf for this machine's real
#                                            CPUs and memory, start munged, slurmctld, slurmd,
#                                            wait until `sinfo` shows the node idle
#   profiles/slurm/local-cluster.sh stop     stop the three daemons (the configuration stays)
#   profiles/slurm/local-cluster.sh status   daemons running? `sinfo` and `squeue`
#
# Needs root (it installs packages and runs the daemons as on a real cluster). Idempotent:
# `start` on a running cluster only waits for the node; `stop` on a stopped one does nothing.
# Logs: /var/log/slurm/slurmctld.log, /var/log/slurm/slurmd.log, /var/log/munge/munged.log.
# The partition is called `local` (FMAT_SLURM_PARTITION to change it); there is no accounting
# database, so `sacct` does not work and Snakemake needs `--slurm-status-command squeue`
# (docs/cluster.md, "Trying it on one machine").
set -euo pipefail

PARTITION="${FMAT_SLURM_PARTITION:-local}"
CONF=/etc/slurm/slurm.conf
LOGDIR=/var/log/slurm
say() { echo "local-cluster: $*"; }
die() { echo "local-cluster: error: $*" >&2; exit 1; }

need_root() { [[ $(id -u) -eq 0 ]] || die "run as root (it installs slurm-wlm and munge and starts daemons)"; }

install_packages() {
  if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null; then
    return
  fi
  command -v apt-get >/dev/null || die "slurm-wlm/munge missing and no apt-get: install SLURM and munge yourself"
  say "installing slurm-wlm and munge from the distribution (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq slurm-wlm munge >/dev/null
}

write_conf() {
  local host node mem
  host="$(hostname -s)"
  # slurmd -C prints this machine's real node line (CPUs, sockets, cores, threads, RealMemory)
  node="$(slurmd -C | head -n 1)"
  [[ $node == NodeName=* ]] || die "slurmd -C gave no node line: $node"
  # leave 5% of the memory to the system and the daemons
  mem="$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$node")"
  node="$(sed "s/RealMemory=[0-9]*/RealMemory=$((mem * 95 / 100))/" <<<"$node")"
  mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd "$LOGDIR"
  local tmp="$CONF.new"
  cat >"$tmp" <<EOF
# written by fmat profiles/slurm/local-cluster.sh: a one-node cluster on $host
ClusterName=fmat-local
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=$LOGDIR/slurmctld.log
SlurmdLogFile=$LOGDIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# no accounting database: sacct does not work here, squeue is the status command
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
# finished jobs stay visible to squeue for 10 minutes (Snakemake's status checks need them)
MinJobAge=600
# a job over its time limit is killed at once (no grace minutes), 5 s after SIGTERM
OverTimeLimit=0
KillWait=5
InactiveLimit=0
SlurmdTimeout=300
$node State=UNKNOWN
PartitionName=$PARTITION Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  if [[ -f $CONF ]] && cmp -s "$tmp" "$CONF"; then rm -f "$tmp"; else mv "$tmp" "$CONF"; say "wrote $CONF"; fi
}

running() { pgrep -x "$1" >/dev/null; }

start_munge() {
  running munged && return
  install -d -o munge -g munge -m 0755 /run/munge
  install -d -o munge -g munge -m 0700 /var/log/munge /var/lib/munge
  if [[ ! -s /etc/munge/munge.key ]]; then
    mungekey --create --keyfile=/etc/munge/munge.key 2>/dev/null \
      || dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
  fi
  chown munge:munge /etc/munge/munge.key
  chmod 0400 /etc/munge/munge.key
  # munged refuses to run as root: start it as the munge user
  su -s /bin/sh munge -c "/usr/sbin/munged" || die "munged did not start (see /var/log/munge/munged.log)"
}

wait_idle() {
  local i state
  for i in $(seq 1 60); do
    state="$(sinfo -h -o '%t' 2>/dev/null | head -n 1 || true)"
    if [[ $state == idle || $state == mix || $state == alloc ]]; then
      say "node $(hostname -s) is $state (partition $PARTITION); logs in $LOGDIR"
      return 0
    fi
    if [[ $state == down* || $state == drain* ]] && ((i % 5 == 0)); then
      scontrol update nodename="$(hostname -s)" state=resume 2>/dev/null || true
    fi
    sleep 1
  done
  die "the node did not become idle in 60 s (sinfo says '${state:-nothing}'); see $LOGDIR/slurmctld.log and slurmd.log"
}

start() {
  need_root
  install_packages
  write_conf
  start_munge
  running slurmctld || slurmctld || die "slurmctld did not start (see $LOGDIR/slurmctld.log)"
  running slurmd || slurmd || die "slurmd did not start (see $LOGDIR/slurmd.log)"
  wait_idle
}

stop_one() {
  local name=$1 pidfile=$2 pid
  running "$name" || return 0
  pid="$(cat "$pidfile" 2>/dev/null || pgrep -x "$name" | head -n 1)"
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.5; done
  kill -9 "$pid" 2>/dev/null || true
}

stop() {
  need_root
  stop_one slurmd /run/slurmd.pid
  stop_one slurmctld /run/slurmctld.pid
  stop_one munged /run/munge/munged.pid
  say "stopped (configuration kept in $CONF, logs in $LOGDIR)"
}

status() {
  local d rc=0
  for d in munged slurmctld slurmd; do
    if running "$d"; then say "$d running"; else say "$d not running"; rc=1; fi
  done
  if ((rc == 0)); then sinfo; squeue; fi
  return $rc
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
