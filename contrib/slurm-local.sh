#!/bin/sh
# A one-machine Slurm (munged, slurmctld, slurmd; node "localhost") for the
# PMI tests, as root:  contrib/slurm-local.sh start | stop
# start prints the SLURM_CONF to export. stop ends, by PID, only the daemons
# that start started. Needs Debian's slurm-wlm and munge (install-deps.sh
# --slurm installs them).
set -eu
dir=/tmp/weft-slurm
conf=$dir/slurm.conf

start() {
    for p in slurmctld slurmd munged sinfo; do
        command -v "$p" >/dev/null 2>&1 || [ -x "/usr/sbin/$p" ] ||
            { echo "slurm-local.sh: $p not found; run contrib/install-deps.sh --slurm" >&2; exit 1; }
    done
    mkdir -p "$dir/state" "$dir/spool" "$dir/log"
    cpus=$(nproc)
    cat >"$conf" <<CONF
ClusterName=weftlocal
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
SwitchType=switch/none
InactiveLimit=0
KillWait=5
MinJobAge=60
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
CONF
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    chown munge:munge /run/munge /var/log/munge /var/lib/munge
    if ! { [ -s /run/munge/munged.pid ] && kill -0 "$(cat /run/munge/munged.pid)" 2>/dev/null; }; then
        runuser -u munge -- /usr/sbin/munged
        cp /run/munge/munged.pid "$dir/munged.pid" # ours to stop
    fi
    /usr/sbin/slurmctld -f "$conf"
    sleep 1
    /usr/sbin/slurmd -f "$conf" -N localhost
    i=0
    until SLURM_CONF=$conf sinfo -h -o %T 2>/dev/null | grep -q idle; do
        i=$((i + 1))
        if [ $i -gt 30 ]; then
            echo "slurm-local.sh: the node did not come up; see $dir/log" >&2
            stop
            exit 1
        fi
        sleep 1
    done
    echo "export SLURM_CONF=$conf"
}

stop() {
    pids=
    for f in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munged.pid"; do
        if [ -s "$f" ]; then
            p=$(cat "$f")
            kill "$p" 2>/dev/null && pids="$pids $p"
            rm -f "$f"
        fi
    done
    # The daemons shut down gracefully; wait (10 s at most) until they are gone.
    i=0
    for p in $pids; do
        while kill -0 "$p" 2>/dev/null && [ $i -lt 100 ]; do
            sleep 0.1
            i=$((i + 1))
        done
    done
}

case "${1:-}" in
start) start ;;
stop) stop ;;
*) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
