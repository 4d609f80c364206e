#!/bin/sh
# A single-node Slurm cluster on this host, from Debian's packages, all in
# a directory of its own (its own munge key and socket, MariaDB datadir,
# slurm.conf, spool, state and ports), for tests.
#
#   tools/slurm/cluster.sh start DIR [PLUGSTACK_LINE]   # prints the env to source
#   tools/slurm/cluster.sh stop DIR
#   tools/slurm/cluster.sh slurmd DIR [nobpf]   # restart slurmd (nobpf: without
#                                               # CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN)
#
# start writes DIR/env (SLURM_CONF=...; source it to use srun, sbatch, sacct)
# and exits 0 once the node is idle; 77 (and a line saying why) where the
# cluster cannot start here (a package missing, not root); 1 on a failure.
# The daemons are started directly (PID 1 need not be systemd) and stop
# stops every one of them by the PID files it wrote, and nothing else.
#
# Why slurmdbd and MariaDB: sacct reads the accounting database only;
# without slurmdbd (AccountingStorageType=none) it answers "Slurm accounting
# storage is disabled", and the file-based storage was removed from Slurm
# long ago. MaxRSS and AdminComment are both read from there.
set -eu

die() { echo "slurm-cluster: $*" >&2; exit 1; }
skip() { echo "slurm-cluster: cannot start: $*" >&2; exit 77; }

# A TCP port nobody listens on, from a range other tests do not use.
free_port() {
	p=$(( 20000 + $(od -An -N2 -tu2 /dev/urandom) % 20000 ))
	while ss -Hltn "sport = :$p" 2>/dev/null | grep -q .; do p=$((p + 1)); done
	echo "$p"
}

wait_for() {	# wait_for SECONDS COMMAND...: until COMMAND succeeds
	end=$(( $(date +%s) + $1 )); shift
	while ! timeout 10 "$@" >/dev/null 2>&1; do
		[ "$(date +%s)" -lt "$end" ] || return 1
		sleep 0.2
	done
}

start_munge() {
	mkdir -p "$D/munge"
	chmod 700 "$D/munge"
	dd if=/dev/urandom of="$D/munge/munge.key" bs=1024 count=1 2>/dev/null
	chmod 400 "$D/munge/munge.key"
	munged --force --socket="$D/munge/sock" --key-file="$D/munge/munge.key" \
		--pid-file="$D/munge/munged.pid" --log-file="$D/munge/munged.log" \
		--seed-file="$D/munge/seed" ||
		die "munged did not start: $(tail -2 "$D/munge/munged.log" 2>/dev/null)"
}

start_mariadb() {
	mkdir -p "$D/db"
	mariadb-install-db --no-defaults --user=root --datadir="$D/db/data" \
		--auth-root-authentication-method=socket >"$D/db/install.log" 2>&1 ||
		die "mariadb-install-db failed: $(tail -3 "$D/db/install.log")"
	mariadbd --no-defaults --user=root --datadir="$D/db/data" \
		--socket="$D/db/sock" --port="$DB_PORT" --bind-address=127.0.0.1 \
		--pid-file="$D/db/mariadbd.pid" --log-error="$D/db/mariadbd.log" \
		--innodb-buffer-pool-size=16M --skip-name-resolve >/dev/null 2>&1 &
	wait_for 30 mariadb --no-defaults -S "$D/db/sock" -u root -e 'select 1' ||
		die "mariadbd did not start: $(tail -3 "$D/db/mariadbd.log")"
	mariadb --no-defaults -S "$D/db/sock" -u root -e "
		CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'peakbpf-test';
		GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';" ||
		die "could not create the database user"
}

write_conf() {
	mem=$(awk '/^MemTotal/ { print int($2 / 1024) - 512 }' /proc/meminfo)
	# 8 CPUs whatever the host has (config_overrides): a 3-task step fits a
	# 2-CPU CI machine, and two jobs can run side by side.
	cpus=8
	mkdir -p "$D/state" "$D/spool" "$D/log"
	cat >"$D/slurmdbd.conf" <<EOF
AuthType=auth/munge
AuthInfo=socket=$D/munge/sock
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
LogFile=$D/log/slurmdbd.log
PidFile=$D/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=slurm
StoragePass=peakbpf-test
StorageLoc=slurm_acct_db
EOF
	chmod 600 "$D/slurmdbd.conf"
	cat >"$D/slurm.conf" <<EOF
ClusterName=peakbpf
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SrunPortRange=$((SLURMD_PORT + 1))-$((SLURMD_PORT + 200))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$D/munge/sock
CredType=cred/munge
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.log
SlurmdDebug=info
SlurmdParameters=config_overrides
PlugStackConfig=$D/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherParams=OverMemoryKill
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$DBD_PORT
# for slurmdbd, the munge socket to sign with (not a password)
AccountingStoragePass=$D/munge/sock
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
InactiveLimit=0
KillWait=5
MinJobAge=300
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=$HOST Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
EOF
	printf '%s\n' "$PLUGSTACK" >"$D/plugstack.conf"
	cat >"$D/env" <<EOF
export SLURM_CONF=$D/slurm.conf
EOF
}

start() {
	[ "$(id -u)" = 0 ] || skip "needs root (slurmd runs the steps as their users)"
	for b in munged mariadbd mariadb-install-db slurmdbd slurmctld slurmd srun sacct sacctmgr; do
		command -v "$b" >/dev/null 2>&1 ||
			skip "$b is missing (tools/install-deps.sh installs munge, mariadb-server, slurmdbd, slurmctld, slurmd, slurm-client)"
	done
	mkdir -p "$D"
	HOST=$(hostname -s)
	DB_PORT=$(free_port); DBD_PORT=$(free_port); CTLD_PORT=$(free_port)
	SLURMD_PORT=$(free_port)
	start_munge
	start_mariadb
	write_conf
	export SLURM_CONF="$D/slurm.conf"   # slurmdbd reads slurmdbd.conf beside it
	slurmdbd || die "slurmdbd did not start: $(tail -3 "$D/log/slurmdbd.log")"
	wait_for 30 sacctmgr -i list cluster ||
		die "slurmdbd does not answer: $(tail -3 "$D/log/slurmdbd.log")"
	sacctmgr -i add cluster peakbpf >/dev/null
	sacctmgr -i add account peakbpf Cluster=peakbpf >/dev/null
	sacctmgr -i add user root Account=peakbpf >/dev/null
	slurmctld -f "$D/slurm.conf" || die "slurmctld did not start: $(tail -3 "$D/log/slurmctld.log")"
	slurmd -f "$D/slurm.conf" || die "slurmd did not start: $(tail -3 "$D/log/slurmd.log")"
	wait_for 60 sh -c "sinfo -h -o %t | grep -qx idle" ||
		die "the node is not idle: $(sinfo -h -o '%t %E' 2>&1); $(tail -3 "$D/log/slurmd.log")"
	echo "$D/env"
}

stop_pidfile() {
	[ -s "$1" ] || return 0
	pid=$(cat "$1")
	kill "$pid" 2>/dev/null || return 0
	n=50
	while kill -0 "$pid" 2>/dev/null && [ "$n" -gt 0 ]; do sleep 0.2; n=$((n - 1)); done
	kill -9 "$pid" 2>/dev/null || true
}

# slurmd again, its steps (slurmstepd inherits the bounding set) able to load
# BPF or not: a node where BPF cannot load.
restart_slurmd() {
	export SLURM_CONF="$D/slurm.conf"
	stop_pidfile "$D/slurmd.pid"
	if [ "$PLUGSTACK" = nobpf ]; then
		command -v capsh >/dev/null 2>&1 || skip "capsh is missing (libcap2-bin)"
		capsh --drop=cap_bpf,cap_perfmon,cap_sys_admin -- -c "slurmd -f '$D/slurm.conf'" ||
			die "slurmd did not start without CAP_BPF"
	else
		slurmd -f "$D/slurm.conf" || die "slurmd did not start"
	fi
	wait_for 60 sh -c "sinfo -h -o %t | grep -qx idle" ||
		die "the node is not idle: $(sinfo -h -o '%t %E' 2>&1); $(tail -3 "$D/log/slurmd.log")"
}

stop() {
	[ -d "$D" ] || return 0
	for f in slurmd slurmctld slurmdbd db/mariadbd munge/munged; do
		stop_pidfile "$D/$f.pid"
	done
}

[ $# -ge 2 ] || die "usage: $0 start|stop|slurmd DIR [PLUGSTACK_LINE|nobpf]"
cmd=$1
D=$(realpath -m "$2")
PLUGSTACK=${3:-}
case "$cmd" in
start) start ;;
stop) stop ;;
slurmd) restart_slurmd ;;
*) die "usage: $0 start|stop|slurmd DIR [PLUGSTACK_LINE|nobpf]" ;;
esac
