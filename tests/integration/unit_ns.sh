#!/bin/sh
# unit_ns.sh SERVICE STAGE CMD...: run CMD in the namespaces and mounts that the
# service unit SERVICE asks of systemd (systemd.exec(5)), as far as they
# can be made without systemd as PID 1; test_serve_unit.sh starts it under
# `unshare -m --propagation slave` (PrivateMounts=), with --net (PrivateNetwork=),
# --ipc (PrivateIPC=) and --uts (ProtectHostname=) when the unit sets them.
# It prints nothing on success; each step it cannot take is an error.
#
# What is made here, when the unit sets it:
#   ProtectSystem=strict     every mount read-only but /dev, /proc, /sys
#   ProtectHome=yes          /home, /root, /run/user empty and inaccessible
#   PrivateTmp=yes           /tmp and /var/tmp new, empty tmpfs
#   PrivateDevices=yes       /dev a new tmpfs: null zero full random urandom
#                            tty, with the host's pts and shm
#   ProtectKernelTunables=yes  /proc/sys, /sys (all of it), /proc/acpi, /proc/fs,
#                            /proc/irq, /proc/bus ... read-only; /proc/kallsyms
#                            and /proc/kcore inaccessible
#   ProtectKernelModules=yes /lib/modules, /usr/lib/modules inaccessible
#   ProtectKernelLogs=yes    /proc/kmsg, /dev/kmsg inaccessible
#   ProtectControlGroups=yes /sys/fs/cgroup read-only
# What is not (it needs systemd, or a seccomp loader): SystemCallFilter,
# SystemCallArchitectures, RestrictAddressFamilies, RestrictNamespaces,
# RestrictRealtime, RestrictSUIDSGID, LockPersonality, MemoryDenyWriteExecute
# (all seccomp filters), DevicePolicy=closed (a cgroup device program on the
# unit's own cgroup), KeyringMode=private, RemoveIPC= (at the unit's stop).
# "Inaccessible" is a mode-0 node, as systemd's: the helper has no
# CAP_DAC_OVERRIDE in its bounding set, so it cannot open one.
set -eu

svc=$1 STAGE=$2
shift 2
# The unit is read once, here: a checkout under /tmp has its unit file
# hidden once the private /tmp is in view, and the steps after read it.
unit=$(cat "$svc")
key() { printf '%s\n' "$unit" | sed -n "s/^$1=//p" | tail -n 1; }
is() { [ "$(key "$1")" = "$2" ]; }

# A file CMD names in a place hidden below (the binary of a checkout in
# /tmp or /home) is bound into the private /tmp, and CMD names it there:
# installed, the binary is in @BINDIR@, which none of these hides.
bin="" n=$# i=0
while [ "$i" -lt "$n" ]; do
	a=$1
	shift
	case $a in
	/tmp/* | /var/tmp/* | /home/* | /root/* | /run/user/*)
		if [ -z "$bin" ] && [ -f "$a" ]; then
			bin=$a
			exec 9<"$bin"
			a=/tmp/.pkb-unit-bin/$(basename "$a")
		fi ;;
	esac
	set -- "$@" "$a"
	i=$((i + 1))
done

# ro_all PREFIX: every mount at or below PREFIX read-only (mountinfo's 5th
# field; an escaped path is skipped: none of the hierarchy's here).
ro_all() {
	awk '{ print $5 }' /proc/self/mountinfo | while read -r mp; do
		case $mp in *\\*) continue ;; esac
		case $1 in
		/) case $mp in /proc | /proc/* | /sys | /sys/* | /dev | /dev/*) continue ;; esac ;;
		*) case $mp in "$1" | "$1"/*) ;; *) continue ;; esac ;;
		esac
		mount -n -o remount,bind,ro "$mp" 2>/dev/null || mount -o remount,ro,bind "$mp"
	done
}
# ro_bind PATH: PATH (not a mount point) read-only.
ro_bind() { [ -e "$1" ] || return 0; mount -n --bind "$1" "$1"; mount -n -o remount,bind,ro "$1"; }
# hide PATH: an empty mode-0 directory, or a mode-0 file, over PATH.
hide() {
	[ -e "$1" ] || return 0
	if [ -d "$1" ]; then
		mount -n -t tmpfs -o ro,mode=000,size=4k tmpfs "$1"
	else
		mount -n --bind "$INACCESSIBLE" "$1"
	fi
}

# A private place for what is made before it is moved into view: a new
# directory of the host's /dev/shm, STAGE (which the caller removes), with
# a tmpfs of this namespace on it.
mkdir "$STAGE"
mount -n -t tmpfs -o mode=700,size=1m tmpfs "$STAGE"
INACCESSIBLE=$STAGE/inaccessible
: >"$INACCESSIBLE"
chmod 000 "$INACCESSIBLE"

if is PrivateDevices yes; then
	mkdir "$STAGE/dev"
	mount -n -t tmpfs -o mode=755,nosuid,noexec,size=1m tmpfs "$STAGE/dev"
	for d in null zero full random urandom tty; do
		maj=$(stat -c %t "/dev/$d") min=$(stat -c %T "/dev/$d")
		mknod -m 666 "$STAGE/dev/$d" c "$((0x$maj))" "$((0x$min))"
	done
	mkdir "$STAGE/dev/pts" "$STAGE/dev/shm"
	mount -n --bind /dev/pts "$STAGE/dev/pts"
	ln -s pts/ptmx "$STAGE/dev/ptmx"
fi
if is PrivateTmp yes; then
	mkdir "$STAGE/tmp" "$STAGE/var-tmp"
	mount -n -t tmpfs -o mode=1777,size=16m tmpfs "$STAGE/tmp"
	mount -n -t tmpfs -o mode=1777,size=16m tmpfs "$STAGE/var-tmp"
	if [ -n "$bin" ]; then
		mkdir "$STAGE/tmp/.pkb-unit-bin"
		: >"$STAGE/tmp/.pkb-unit-bin/$(basename "$bin")"
		mount -n --bind /proc/self/fd/9 "$STAGE/tmp/.pkb-unit-bin/$(basename "$bin")"
	fi
elif [ -n "$bin" ]; then
	echo "unit_ns.sh: $bin is hidden by the unit, and PrivateTmp= is off: install it first" >&2
	exit 1
fi

case $(key ProtectSystem) in strict) ro_all / ;; full) ro_all /usr; ro_all /boot; ro_all /etc ;; yes) ro_all /usr; ro_all /boot ;; esac
if is ProtectHome yes; then
	for p in /home /root /run/user; do hide "$p"; done
fi
if is ProtectKernelTunables yes; then
	for p in /proc/sys /proc/sysrq-trigger /proc/latency_stats /proc/acpi /proc/timer_stats \
		/proc/asound /proc/bus /proc/fs /proc/irq; do
		ro_bind "$p"
	done
	for p in /proc/kallsyms /proc/kcore; do hide "$p"; done
	mount -n -o remount,bind,ro /sys
	ro_all /sys
fi
if is ProtectControlGroups yes; then
	ro_all /sys/fs/cgroup
fi
if is ProtectKernelModules yes; then
	for p in /lib/modules /usr/lib/modules; do hide "$p"; done
fi
if is ProtectKernelLogs yes; then
	hide /proc/kmsg
	hide /dev/kmsg
fi
# Into view last: their mounts are new, writable, and not under a
# read-only remount above.
if is PrivateTmp yes; then
	mount -n --move "$STAGE/tmp" /tmp
	mount -n --move "$STAGE/var-tmp" /var/tmp
fi
if is PrivateDevices yes; then
	mount -n --bind /dev/shm "$STAGE/dev/shm"
	mount -n --move "$STAGE/dev" /dev
fi
if ! is PrivateDevices yes; then
	umount -n -l "$STAGE"
	rmdir "$STAGE"
fi
[ -z "$bin" ] || exec 9<&-
exec "$@"
