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
# With NODES=N (2 to 4) in the environment, N slurmds (node1..N), each in a
# network namespace of its own on a bridge (10.77.R.0/24), so that a step
# spans N nodes of one host. Debian's Slurm is not built for several slurmds
# on one address (--enable-multiple-slurmd): namespaces give each its own.
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
	mkdir -p "$D/state" "$D/log"
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
	if [ "$NODES" = 1 ]; then
		nodes="NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN"
		names=$HOST ctld_addr=127.0.0.1
	else
		nodes="NodeName=node[1-$NODES] NodeAddr=$(seq -s, -f "$NET.%g" 2 $((NODES + 1))) CPUs=$cpus RealMemory=$((mem / NODES)) State=UNKNOWN"
		names="node[1-$NODES]" ctld_addr=$NET.1
	fi
	cat >"$D/slurm.conf" <<EOF
ClusterName=peakbpf
SlurmctldHost=$HOST($ctld_addr)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SrunPortRange=$((SLURMD_PORT + 1))-$((SLURMD_PORT + 200))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$D/munge/sock
CredType=cred/munge
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool/%n
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.%n.pid
SlurmctldLogFile=$D/log/slurmctld.log
SlurmdLogFile=$D/log/slurmd.%n.log
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
$nodes
PartitionName=test Nodes=$names Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
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
	[ "$NODES" = 1 ] || start_net
	DB_PORT=$(free_port); DBD_PORT=$(free_port); CTLD_PORT=$(free_port)
	SLURMD_PORT=$(free_port)
	echo "$NODES" >"$D/nodes"
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
	start_slurmds ""
	echo "$D/env"
}

# The bridge and a namespace per node (NODES > 1); its number R in DIR/net.
start_net() {
	R=$(( $(od -An -N1 -tu1 /dev/urandom) % 250 + 1 ))
	while ip link show "pbs$R" >/dev/null 2>&1; do R=$(( R % 250 + 1 )); done
	echo "$R" >"$D/net"
	NET=10.77.$R
	ip link add "pbs$R" type bridge && ip addr add "$NET.1/24" dev "pbs$R" &&
		ip link set "pbs$R" up || skip "cannot make a bridge here (ip link add type bridge)"
	for i in $(seq 1 "$NODES"); do
		ip netns add "pbs$R-$i" && ip link add "pbs$R-$i" type veth peer name "pbs$R-${i}p" &&
			ip link set "pbs$R-${i}p" netns "pbs$R-$i" && ip link set "pbs$R-$i" master "pbs$R" &&
			ip link set "pbs$R-$i" up || skip "cannot make network namespaces here (ip netns)"
		ip -n "pbs$R-$i" link set lo up
		ip -n "pbs$R-$i" addr add "$NET.$((i + 1))/24" dev "pbs$R-${i}p"
		ip -n "pbs$R-$i" link set "pbs$R-${i}p" up
	done
}

stop_net() {
	[ -s "$D/net" ] || return 0
	R=$(cat "$D/net")
	for i in $(seq 1 "$NODES"); do
		ip netns del "pbs$R-$i" 2>/dev/null
	done
	ip link del "pbs$R" 2>/dev/null
	rm -f "$D/net"
}

# slurmd, one per node: in its namespace (nsenter: the host's mounts, so
# /sys/fs/cgroup stays), and with "nobpf" without the capabilities BPF needs.
start_slurmds() {
	export SLURM_CONF="$D/slurm.conf"
	for i in $(seq 1 "$NODES"); do
		if [ "$NODES" = 1 ]; then name=$HOST; enter=""; else name=node$i; enter="nsenter --net=/run/netns/pbs$(cat "$D/net")-$i"; fi
		mkdir -p "$D/spool/$name"
		if [ "$1" = nobpf ]; then
			command -v capsh >/dev/null 2>&1 || skip "capsh is missing (libcap2-bin)"
			$enter capsh --drop=cap_bpf,cap_perfmon,cap_sys_admin -- -c "slurmd -f '$D/slurm.conf' -N $name" ||
				die "slurmd did not start without CAP_BPF"
		else
			$enter slurmd -f "$D/slurm.conf" -N "$name" ||
				die "slurmd $name did not start: $(tail -3 "$D/log/slurmd.$name.log")"
		fi
	done
	wait_for 60 sh -c "[ \"\$(sinfo -h -N -o %t | grep -cx idle)\" = $NODES ]" ||
		die "the nodes are not idle: $(sinfo -h -N -o '%N %t %E' 2>&1); $(tail -3 "$D"/log/slurmd.*.log)"
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
	for f in "$D"/slurmd.*.pid; do
		stop_pidfile "$f"
	done
	start_slurmds "$PLUGSTACK"
}

stop() {
	[ -d "$D" ] || return 0
	for f in "$D"/slurmd.*.pid "$D/slurmctld.pid" "$D/slurmdbd.pid" "$D/db/mariadbd.pid" \
		"$D/munge/munged.pid"; do
		stop_pidfile "$f"
	done
	stop_net
}

[ $# -ge 2 ] || die "usage: $0 start|stop|slurmd DIR [PLUGSTACK_LINE|nobpf]"
cmd=$1
D=$(realpath -m "$2")
HOST=$(hostname -s)
NODES=${NODES:-1}
[ -s "$D/nodes" ] && NODES=$(cat "$D/nodes")
case "$NODES" in 1 | 2 | 3 | 4) ;; *) die "NODES=$NODES: use 1 to 4" ;; esac
PLUGSTACK=${3:-}
case "$cmd" in
start) start ;;
stop) stop ;;
slurmd) restart_slurmd ;;
*) die "usage: $0 start|stop|slurmd DIR [PLUGSTACK_LINE|nobpf]" ;;
esac
