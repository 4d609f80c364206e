#!/usr/bin/env bash
# vmtest.sh: run a test script inside Debian's own kernels under qemu (TCG).
#
#   tools/vm/vmtest.sh [--cache DIR] [--kernels "5.10 6.1 6.12"] [--timeout SECONDS] \
#                      --files "FILE..." -- SCRIPT
#   tools/vm/vmtest.sh [--cache DIR] [--kernels "..."] --fetch-only
#
# For each kernel version it fetches Debian's linux-image package for that version's suite
# (5.10 = bullseye, 6.1 = bookworm, 6.12 = trixie) with a private apt configuration under the
# cache dir (the machine's own apt set-up is not touched), boots it with a busybox initramfs
# that carries FILEs under /opt/test/, runs `/bin/sh /opt/test/<basename of SCRIPT>` there and
# brings back its output (prefixed "[<version>] ") and its exit status.
# See tools/vm/README.md.
set -eu
set -o pipefail

PROG=vmtest
SELF_DIR=$(cd "$(dirname "$0")" && pwd)
REPO_ROOT=$(cd "$SELF_DIR/../.." && pwd)

CACHE=$REPO_ROOT/.output/vm
KERNELS="5.10 6.1 6.12"
TIMEOUT=300
FILES=""
LIBS=""
SCRIPT=""
HAVE_SCRIPT=0
FETCH_ONLY=0
REFRESH=0
STRICT=0
VM_MEM=${VMTEST_MEM:-2048}
VM_SMP=${VMTEST_SMP:-2}
# Kernels run at once: one a host CPU (VMTEST_JOBS overrides).
JOBS=${VMTEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
# More qemu options, split on spaces: make bench-cpus boots with
# "-icount shift=0,sleep=off", so that the guest's clock counts
# instructions and its timings do not move with the host's load.
read -r -a VM_QEMU_ARGS <<<"${VMTEST_QEMU_ARGS:-}"
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg

die() { echo "$PROG: error: $*" >&2; exit 2; }
warn() { echo "$PROG: warning: $*" >&2; }
note() { echo "$PROG: $*" >&2; }

usage() {
    cat <<'EOF'
usage: tools/vm/vmtest.sh [--cache DIR] [--kernels "5.10 6.1 6.12"] [--timeout SECONDS]
                          --files "FILE..." -- SCRIPT
       tools/vm/vmtest.sh [--cache DIR] [--kernels "..."] --fetch-only

Boots Debian's kernels (5.10 bullseye, 6.1 bookworm, 6.12 trixie) under qemu-system-x86_64
(TCG, -cpu max, 2 vCPUs, 2 GiB) with a busybox initramfs, runs SCRIPT inside as
`/bin/sh /opt/test/<basename>` (cwd /opt/test) and prints its output prefixed "[<version>] ".

  --cache DIR        cache for apt lists, .debs, kernels and logs (default: <repo>/.output/vm)
  --kernels LIST     kernel versions to test (default: "5.10 6.1 6.12")
  --timeout SECONDS  per-kernel limit, boot included (default: 300); over it counts as FAIL
  --files "FILE..."  host files copied to /opt/test/<basename> (dynamic binaries get their
                     shared libraries copied too); SCRIPT is added if not among them
  --libs "LIB..."    shared libraries copied at their own paths, with theirs: the ones a
                     binary opens with dlopen, which ldd does not list
  --fetch-only       only download and extract the kernels, print what is cached
  --refresh          look for newer kernel packages even if one is cached (needs the mirror)
  --strict           count a SKIPPED kernel as a failure (exit non-zero)
  -h, --help         this text

Exit status: 0 if no kernel FAILED (SKIPs are printed loudly but allowed unless --strict),
1 if any kernel failed, 2 on a usage or set-up error.
Logs: <cache>/logs/<version>.log (serial console + test output), <version>.out (test output).
Environment: VMTEST_MEM (MiB, default 2048), VMTEST_SMP (default 2), VMTEST_JOBS (kernels
booted at once, default: the host's CPUs; each VM runs on one host thread),
VMTEST_QEMU_ARGS (more qemu options, split on spaces),
VMTEST_MIRROR / VMTEST_SECURITY_MIRROR (override the Debian mirror read from /etc/apt).
EOF
}

# ---------------------------------------------------------------- arguments
while [ $# -gt 0 ]; do
    case $1 in
        --cache) [ $# -ge 2 ] || die "--cache needs a directory"; CACHE=$2; shift 2 ;;
        --cache=*) CACHE=${1#*=}; shift ;;
        --kernels) [ $# -ge 2 ] || die "--kernels needs a list"; KERNELS=$2; shift 2 ;;
        --kernels=*) KERNELS=${1#*=}; shift ;;
        --timeout) [ $# -ge 2 ] || die "--timeout needs seconds"; TIMEOUT=$2; shift 2 ;;
        --timeout=*) TIMEOUT=${1#*=}; shift ;;
        --files) [ $# -ge 2 ] || die "--files needs a list"; FILES="$FILES $2"; shift 2 ;;
        --files=*) FILES="$FILES ${1#*=}"; shift ;;
        --libs) [ $# -ge 2 ] || die "--libs needs a list"; LIBS="$LIBS $2"; shift 2 ;;
        --libs=*) LIBS="$LIBS ${1#*=}"; shift ;;
        --fetch-only) FETCH_ONLY=1; shift ;;
        --refresh) REFRESH=1; shift ;;
        --strict) STRICT=1; shift ;;
        -h|--help) usage; exit 0 ;;
        --) shift
            [ $# -eq 1 ] || die "expected exactly one SCRIPT after --, got $# argument(s)"
            SCRIPT=$1; HAVE_SCRIPT=1; shift ;;
        -*) die "unknown option: $1 (see tools/vm/vmtest.sh --help)" ;;
        *) [ $HAVE_SCRIPT -eq 0 ] || die "unexpected argument: $1"
           SCRIPT=$1; HAVE_SCRIPT=1; shift ;;
    esac
done

KERNELS=$(echo "$KERNELS" | tr ',' ' ')
[ -n "${KERNELS// /}" ] || die "--kernels is empty"
case $JOBS in ''|*[!0-9]*|0) die "VMTEST_JOBS must be a whole number of kernels at once, at least 1: $JOBS" ;; esac
case $TIMEOUT in ''|*[!0-9]*) die "--timeout must be a whole number of seconds: $TIMEOUT" ;; esac
[ "$TIMEOUT" -ge 40 ] || die "--timeout must be at least 40 seconds (TCG boots take 10-20 s)"
if [ $FETCH_ONLY -eq 0 ]; then
    [ $HAVE_SCRIPT -eq 1 ] || die "no SCRIPT given: tools/vm/vmtest.sh --files \"FILE...\" -- SCRIPT (or --fetch-only; see --help)"
    [ -f "$SCRIPT" ] || die "SCRIPT not found: $SCRIPT"
    case $(basename "$SCRIPT") in
        *[!A-Za-z0-9._+-]*) die "SCRIPT's name may hold only A-Z a-z 0-9 . _ + -: $SCRIPT" ;;
    esac
fi
mkdir -p "$CACHE" || die "cannot create cache dir $CACHE"
CACHE=$(cd "$CACHE" && pwd)

suite_for() {
    case $1 in
        5.10) echo bullseye ;;
        6.1) echo bookworm ;;
        6.12) echo trixie ;;
        *) return 1 ;;
    esac
}

# ---------------------------------------------------------------- host tools
apt_install() {
    # apt_install PKG...: install host packages the runner needs.
    if [ "$(id -u)" -ne 0 ]; then
        die "missing host package(s): $*; fix: sudo apt-get install --no-install-recommends $*"
    fi
    note "installing host package(s): $*"
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null 2>&1; then
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1 || true
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2 ||
            die "apt-get install $* failed; fix: run 'apt-get update && apt-get install --no-install-recommends $*' by hand"
    fi
}

pkg_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }

need_host_tools() {
    local missing=""
    command -v apt-get >/dev/null || die "apt-get not found: this runner needs a Debian/Ubuntu host"
    command -v dpkg-deb >/dev/null || die "dpkg-deb not found: this runner needs a Debian/Ubuntu host"
    command -v timeout >/dev/null || missing="$missing coreutils"
    command -v flock >/dev/null || missing="$missing util-linux"
    if [ $FETCH_ONLY -eq 0 ]; then
        command -v qemu-system-x86_64 >/dev/null || missing="$missing qemu-system-x86"
        # -kernel boots need SeaBIOS (a Recommends-level firmware on some releases).
        [ -e /usr/share/seabios/bios-256k.bin ] || [ -e /usr/share/qemu/bios-256k.bin ] ||
            missing="$missing seabios"
        pkg_installed busybox-static || missing="$missing busybox-static"
        command -v cpio >/dev/null || missing="$missing cpio"
        command -v gzip >/dev/null || missing="$missing gzip"
        command -v pkill >/dev/null || missing="$missing procps"
    fi
    [ -e "$KEYRING" ] || missing="$missing debian-archive-keyring"
    # shellcheck disable=SC2086 # a list of package names
    [ -z "$missing" ] || apt_install $missing
    BUSYBOX=""
    if [ $FETCH_ONLY -eq 0 ]; then
        BUSYBOX=$(dpkg -L busybox-static 2>/dev/null | grep -E '/busybox$' | head -n1 || true)
        if [ -z "$BUSYBOX" ] || [ ! -x "$BUSYBOX" ]; then
            die "busybox-static is installed but its binary was not found; fix: apt-get install --reinstall busybox-static"
        fi
    fi
}

# ---------------------------------------------------------------- mirror discovery
# Prints "URI SUITE" for every enabled deb source of the host's apt configuration.
host_sources() {
    local f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] || continue
        # deb [opts] URI SUITE COMPONENT...
        sed -e 's/#.*//' -e 's/\[[^]]*\]//' "$f" | awk '$1 == "deb" && NF >= 3 { print $2, $3 }'
    done
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        # deb822 stanzas separated by blank lines.
        awk '
            function flush() {
                if (types ~ /(^| )deb( |$)/ && enabled !~ /^(no|false|0)$/) {
                    n = split(uris, u, " "); m = split(suites, s, " ")
                    for (i = 1; i <= n; i++) for (j = 1; j <= m; j++) print u[i], s[j]
                }
                types = ""; uris = ""; suites = ""; enabled = ""; key = ""
            }
            /^[ \t]*#/ { next }
            /^[ \t]*$/ { flush(); next }
            /^[A-Za-z-]+:/ {
                key = tolower($0); sub(/:.*/, "", key)
                val = $0; sub(/^[^:]*:[ \t]*/, "", val)
                if (key == "types") types = val
                else if (key == "uris") uris = val
                else if (key == "suites") suites = val
                else if (key == "enabled") enabled = tolower(val)
                next
            }
            /^[ \t]/ { val = $0; sub(/^[ \t]+/, "", val)
                if (key == "uris") uris = uris " " val
                else if (key == "suites") suites = suites " " val
                next }
            END { flush() }
        ' "$f"
    done
}

DEBIAN_CODENAMES="buster bullseye bookworm trixie forky duke sid stable oldstable oldoldstable testing unstable"
MIRROR=""
SECURITY_MIRROR=""
HAVE_UPDATES=0
find_mirrors() {
    local uri suite base
    [ -z "$MIRROR" ] || return 0
    while read -r uri suite; do
        base=${suite%%[-/]*}
        case " $DEBIAN_CODENAMES " in *" $base "*) ;; *) continue ;; esac
        case $suite in
            *-security|*/updates) [ -n "$SECURITY_MIRROR" ] || SECURITY_MIRROR=$uri ;;
            *-backports|*-proposed-updates) ;;
            *-updates) HAVE_UPDATES=1; [ -n "$MIRROR" ] || MIRROR=$uri ;;
            *) [ -n "$MIRROR" ] || MIRROR=$uri ;;
        esac
    done < <(host_sources)
    MIRROR=${VMTEST_MIRROR:-$MIRROR}
    SECURITY_MIRROR=${VMTEST_SECURITY_MIRROR:-$SECURITY_MIRROR}
    [ -n "$MIRROR" ] || die "no Debian mirror found in /etc/apt/sources.list or /etc/apt/sources.list.d/; fix: set VMTEST_MIRROR=http://<mirror>/debian (and VMTEST_SECURITY_MIRROR=http://<mirror>/debian-security)"
    MIRROR=${MIRROR%/}
    SECURITY_MIRROR=${SECURITY_MIRROR%/}
}

# ---------------------------------------------------------------- private apt
# apt_setup SUITE: writes $CACHE/apt/SUITE/{apt.conf,sources.list} and sets APTCONF.
apt_setup() {
    local suite=$1 d
    d=$CACHE/apt/$suite
    mkdir -p "$d/lists/partial" "$d/cache/archives/partial" "$d/sources.list.d" "$d/preferences.d"
    [ -e "$d/status" ] || : > "$d/status"
    {
        echo "deb [signed-by=$KEYRING] $MIRROR $suite main"
        [ $HAVE_UPDATES -eq 0 ] || echo "deb [signed-by=$KEYRING] $MIRROR $suite-updates main"
        [ -z "$SECURITY_MIRROR" ] || echo "deb [signed-by=$KEYRING] $SECURITY_MIRROR $suite-security main"
    } > "$d/sources.list.new"
    mv "$d/sources.list.new" "$d/sources.list"
    cat > "$d/apt.conf" <<EOF
// Private apt configuration of tools/vm/vmtest.sh: nothing here touches /etc/apt or /var/lib/apt.
Dir::State "$d";
Dir::State::lists "$d/lists";
Dir::State::status "$d/status";
Dir::Cache "$d/cache";
Dir::Etc::sourcelist "$d/sources.list";
Dir::Etc::sourceparts "$d/sources.list.d";
Dir::Etc::preferences "$d/preferences";
Dir::Etc::preferencesparts "$d/preferences.d";
APT::Architecture "amd64";
APT::Architectures { "amd64"; };
APT::Sandbox::User "root";
Acquire::Languages "none";
EOF
    APTCONF=$d/apt.conf
    APTDIR=$d
}

# ---------------------------------------------------------------- kernel fetch
# ensure_kernel VER: leaves the kernel in $CACHE/kernels/VER (vmlinuz, config, modules/,
# info) and returns 0, or sets SKIP_REASON and returns 1.
SKIP_REASON=""
kinfo() { sed -n "s/^$2=//p" "$CACHE/kernels/$1/info" 2>/dev/null | head -n1; }

ensure_kernel() {
    local ver=$1 kdir suite meta pkg pversion debname deb tmp krel vml
    kdir=$CACHE/kernels/$ver
    SKIP_REASON=""
    if [ $REFRESH -eq 0 ] && [ -f "$kdir/info" ] && [ -f "$kdir/vmlinuz" ]; then
        return 0
    fi
    if ! suite=$(suite_for "$ver"); then
        SKIP_REASON="no Debian suite known for kernel $ver (known: 5.10 6.1 6.12)"
        return 1
    fi
    find_mirrors
    apt_setup "$suite"
    note "$ver: updating private apt lists for $suite from $MIRROR"
    if ! apt-get -c "$APTCONF" -q update > "$APTDIR/update.log" 2>&1; then
        warn "$ver: apt-get update for $suite reported errors (see $APTDIR/update.log)"
    fi
    if ! meta=$(apt-cache -c "$APTCONF" show --no-all-versions linux-image-amd64 2>/dev/null); then
        SKIP_REASON="linux-image-amd64 not found in $suite at $MIRROR: $(grep -m1 -E '^(E|Err|W):' "$APTDIR/update.log" || echo 'no package lists') (log: $APTDIR/update.log)"
        return 1
    fi
    pkg=$(echo "$meta" | sed -n 's/^Depends: //p' | head -n1 | tr ',|' '\n' |
          sed -e 's/^ *//' -e 's/ .*//' | grep -m1 '^linux-image-' || true)
    if [ -z "$pkg" ]; then
        SKIP_REASON="cannot read the image package from linux-image-amd64's Depends in $suite"
        return 1
    fi
    case $pkg in
        linux-image-"$ver".*) ;;
        *) SKIP_REASON="$suite's linux-image-amd64 points to $pkg, not a $ver kernel"; return 1 ;;
    esac
    # Prefer the -unsigned variant (same kernel, no Secure Boot signature) when it exists.
    if apt-cache -c "$APTCONF" show --no-all-versions "$pkg-unsigned" >/dev/null 2>&1; then
        pkg=$pkg-unsigned
    fi
    pversion=$(apt-cache -c "$APTCONF" show --no-all-versions "$pkg" | sed -n 's/^Version: //p' | head -n1)
    [ -n "$pversion" ] || { SKIP_REASON="no version of $pkg in $suite"; return 1; }

    mkdir -p "$CACHE/debs"
    debname=${pkg}_${pversion//:/%3a}_amd64.deb
    deb=$CACHE/debs/$debname
    if [ -f "$kdir/info" ] && [ "$(kinfo "$ver" package)" = "$pkg" ] &&
       [ "$(kinfo "$ver" version)" = "$pversion" ] && [ -f "$kdir/vmlinuz" ]; then
        return 0    # --refresh found nothing newer
    fi
    if [ ! -s "$deb" ] || ! dpkg-deb --info "$deb" >/dev/null 2>&1; then
        note "$ver: downloading $pkg $pversion ($suite)"
        tmp=$(mktemp -d "$CACHE/debs/.dl.XXXXXX")
        if ! (cd "$tmp" && apt-get -c "$APTCONF" -q download "$pkg=$pversion") > "$APTDIR/download.log" 2>&1; then
            rm -rf "$tmp"
            SKIP_REASON="apt-get download $pkg=$pversion failed: $(grep -m1 -E '^(E|Err):' "$APTDIR/download.log" || tail -n1 "$APTDIR/download.log") (log: $APTDIR/download.log)"
            return 1
        fi
        mv "$tmp"/*.deb "$deb" 2>/dev/null || { rm -rf "$tmp"; SKIP_REASON="apt-get download left no .deb for $pkg"; return 1; }
        rm -rf "$tmp"
    fi
    note "$ver: extracting $debname"
    mkdir -p "$CACHE/kernels"
    tmp=$(mktemp -d "$CACHE/kernels/.x.XXXXXX")
    if ! dpkg-deb -x "$deb" "$tmp/root"; then
        rm -rf "$tmp"; SKIP_REASON="dpkg-deb -x $deb failed (corrupt download? delete it and retry)"; return 1
    fi
    vml=$(find "$tmp/root/boot" -maxdepth 1 -name 'vmlinuz-*' 2>/dev/null | head -n1 || true)
    if [ -z "$vml" ]; then
        rm -rf "$tmp"; SKIP_REASON="$debname has no /boot/vmlinuz-*"; return 1
    fi
    krel=${vml##*/vmlinuz-}
    mkdir -p "$tmp/k"
    mv "$vml" "$tmp/k/vmlinuz"
    [ ! -f "$tmp/root/boot/config-$krel" ] || mv "$tmp/root/boot/config-$krel" "$tmp/k/config"
    [ ! -f "$tmp/root/boot/System.map-$krel" ] || mv "$tmp/root/boot/System.map-$krel" "$tmp/k/System.map"
    if [ -d "$tmp/root/lib/modules/$krel" ]; then
        mv "$tmp/root/lib/modules/$krel" "$tmp/k/modules"
    elif [ -d "$tmp/root/usr/lib/modules/$krel" ]; then
        mv "$tmp/root/usr/lib/modules/$krel" "$tmp/k/modules"
    fi
    {
        echo "version=$pversion"
        echo "package=$pkg"
        echo "krel=$krel"
        echo "suite=$suite"
        echo "deb=$debname"
        echo "btf=$(grep -q '^CONFIG_DEBUG_INFO_BTF=y' "$tmp/k/config" 2>/dev/null && echo y || echo n)"
    } > "$tmp/k/info"
    rm -rf "$kdir.old"
    [ ! -e "$kdir" ] || mv "$kdir" "$kdir.old"
    mv "$tmp/k" "$kdir"
    rm -rf "$tmp" "$kdir.old"
    # Drop .debs of older packages of this kernel series.
    local old
    for old in "$CACHE/debs/linux-image-$ver".*_amd64.deb; do
        [ -e "$old" ] && [ "$old" != "$deb" ] && rm -f "$old"
    done
    return 0
}

# ---------------------------------------------------------------- initramfs
WORK=""
# shellcheck disable=SC2317 # called by the trap
# The VMs of kernels still running go too (run side by side, in the
# background, they would not see the Ctrl-C): each boots $WORK's initramfs.
cleanup() {
    [ -n "$WORK" ] || return 0
    pkill -TERM -f -- "-initrd $WORK/initramfs.gz" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

copy_with_libs() {
    # copy_with_libs FILE ROOT: FILE to ROOT/opt/test/, its shared libraries to ROOT/<path>.
    local f=$1 root=$2 lib
    if [ -d "$f" ]; then
        cp -a "$f" "$root/opt/test/"
        return 0
    fi
    cp -pL "$f" "$root/opt/test/"
    # Only ELF files with a program interpreter are dynamic; ldd prints nothing useful otherwise.
    [ "$(head -c4 "$f" | od -An -c | tr -d ' ')" = '177ELF' ] || return 0
    copy_libs_of "$f" "$root"
}

copy_libs_of() {
    # copy_libs_of FILE ROOT: FILE's shared libraries to ROOT/<path>.
    local f=$1 root=$2 lib
    ldd "$f" >/dev/null 2>&1 || return 0
    for lib in $(ldd "$f" 2>/dev/null | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }'); do
        [ -e "$root$lib" ] && continue
        mkdir -p "$root$(dirname "$lib")"
        cp -L "$lib" "$root$lib"
    done
}

copy_lib_at_path() {
    # copy_lib_at_path LIB ROOT: LIB to ROOT/<its path>, and its own libraries.
    local lib=$1 root=$2
    [ -f "$lib" ] || die "--libs: no such library: $lib"
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
    copy_libs_of "$lib" "$root"
}

# build_initramfs OUT: one initramfs shared by all kernels (nothing in it is per kernel).
build_initramfs() {
    local out=$1 root f base applet seen=" "
    root=$WORK/root
    mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,usr/lib,usr/lib64,etc,proc,sys,dev,tmp,run,root,mnt,opt/test}
    ln -s usr/lib "$root/lib"
    ln -s usr/lib64 "$root/lib64"
    cp "$BUSYBOX" "$root/bin/busybox"
    for applet in $("$root/bin/busybox" --list-full); do
        [ -e "$root/$applet" ] || ln -s /bin/busybox "$root/$applet"
    done
    ln -sf /bin/busybox "$root/bin/sh"
    mknod -m 600 "$root/dev/console" c 5 1 2>/dev/null || true
    mknod -m 666 "$root/dev/null" c 1 3 2>/dev/null || true
    printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' > "$root/etc/passwd"
    printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"
    echo vmtest > "$root/etc/hostname"

    for f in $FILES "$SCRIPT"; do
        base=$(basename "$f")
        case $seen in
            *" $base "*)
                # The same file named twice (e.g. SCRIPT also in --files) is fine.
                [ "$(readlink -f "$f")" = "$(readlink -f "${SEEN_PATH[$base]}")" ] ||
                    die "two files with the same basename '$base': ${SEEN_PATH[$base]} and $f"
                continue ;;
        esac
        [ -e "$f" ] || die "file not found: $f (from --files)"
        seen="$seen$base "
        SEEN_PATH[$base]=$f
        copy_with_libs "$f" "$root"
    done
    for f in $LIBS; do
        copy_lib_at_path "$f" "$root"
    done

    cat > "$root/etc/vmtest.env" <<EOF
VMTEST_SCRIPT='$(basename "$SCRIPT")'
VMTEST_GUEST_TIMEOUT=$GUEST_TIMEOUT
VMTEST_ID=$RUN_ID
EOF
    cat > "$root/init" <<'INIT'
#!/bin/sh
# /init of tools/vm/vmtest.sh. Kernel console on ttyS0, test output on ttyS1.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TMPDIR=/tmp VMTEST=1
. /etc/vmtest.env
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
exec </dev/null >/dev/console 2>&1
OUT=/dev/ttyS1
[ -c "$OUT" ] || OUT=/dev/console
# No CR/LF translation and no echo on the test output channel.
stty -F "$OUT" raw -echo 2>/dev/null
say() { echo "vmtest: $*"; echo "vmtest: $*" >"$OUT"; }
try_mount() { # try_mount TYPE DIR [OPTIONS]
    mkdir -p "$2" 2>/dev/null
    mount -t "$1" ${3:+-o "$3"} "$1" "$2" 2>/dev/null || say "warning: mount -t $1 $2 failed"
}
mkdir -p /dev/pts /dev/shm
try_mount devpts /dev/pts
try_mount tmpfs /dev/shm
try_mount tmpfs /tmp
try_mount tmpfs /run
try_mount bpf /sys/fs/bpf
try_mount tracefs /sys/kernel/tracing
try_mount debugfs /sys/kernel/debug
try_mount cgroup2 /sys/fs/cgroup
echo +memory > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null ||
    say "warning: cannot enable the memory controller in /sys/fs/cgroup/cgroup.subtree_control"
hostname vmtest
ip link set lo up 2>/dev/null
cd /opt/test
timeout -s KILL "$VMTEST_GUEST_TIMEOUT" /bin/sh "/opt/test/$VMTEST_SCRIPT" >"$OUT" 2>&1 </dev/null
rc=$?
[ $rc -ne 137 ] || say "script killed (SIGKILL, or the in-VM timeout of ${VMTEST_GUEST_TIMEOUT}s)"
echo "VMTEST-EXIT=$rc id=$VMTEST_ID"
echo "VMTEST-EXIT=$rc id=$VMTEST_ID" >"$OUT"
sleep 0.2
poweroff -f
sleep 5
reboot -f
INIT
    chmod 755 "$root/init"
    (cd "$root" && find . -print0 | LC_ALL=C sort -z |
        cpio --null -o -H newc --owner=0:0 --quiet) | gzip -1 > "$out"
}

# ---------------------------------------------------------------- boot
fmt_ms() { printf '%d.%d' $(($1 / 1000)) $((($1 % 1000) / 100)); }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# run_kernel VER: boots it; sets RESULT (PASS/FAIL) and DETAIL.
run_kernel() {
    local ver=$1 kdir logdir console out qlog qrc rc krel
    kdir=$CACHE/kernels/$ver
    logdir=$CACHE/logs
    mkdir -p "$logdir"
    console=$WORK/$ver.console
    out=$logdir/$ver.out
    qlog=$WORK/$ver.qemu
    krel=$(kinfo "$ver" krel)
    echo "== $ver: $(kinfo "$ver" package) $(kinfo "$ver" version) =="
    rm -f "$console" "$out"
    set +e
    # thread=single: one host thread runs every vCPU in turn. With
    # multi-threaded TCG a vCPU can run a stale translation of kernel text
    # that another vCPU is patching (text_poke_bp's int3, as attaching BPF
    # to a tracepoint does): 6.12 died with "Oops: int3" in trace_rss_stat.
    timeout -k 10 "$TIMEOUT" qemu-system-x86_64 \
        -accel tcg,thread=single -cpu max -smp "$VM_SMP" -m "$VM_MEM" "${VM_QEMU_ARGS[@]}" \
        -nodefaults -no-reboot -display none -monitor none \
        -kernel "$kdir/vmlinuz" -initrd "$WORK/initramfs.gz" \
        -append "console=ttyS0 quiet loglevel=3 panic=-1 oops=panic" \
        -serial "file:$console" -serial stdio \
        </dev/null 2>"$qlog" |
        sed -u 's/\r$//' | tee "$out" |
        sed -u -e "/VMTEST-EXIT=[0-9]* id=$RUN_ID\$/{s///;/^\$/d;}" -e "s/^/[$ver] /"
    qrc=${PIPESTATUS[0]}    # timeout's: 124 (or 137) when it had to stop qemu, else qemu's
    set -e
    {
        echo "# vmtest $ver: $(kinfo "$ver" package) $(kinfo "$ver" version) ($krel)"
        echo "# ---- serial console (ttyS0) ----"
        tr -d '\r' < "$console" 2>/dev/null || true
        echo "# ---- test output (ttyS1) ----"
        cat "$out" 2>/dev/null || true
        if [ -s "$qlog" ]; then echo "# ---- qemu stderr ----"; cat "$qlog"; fi
    } > "$logdir/$ver.log"
    # The marker may follow a last line that had no newline: match it at the end of a line.
    rc=$(sed -n "s/.*VMTEST-EXIT=\([0-9]*\) id=$RUN_ID\$/\1/p" "$out" | tail -n1)
    [ -n "$rc" ] || rc=$(tr -d '\r' < "$console" | sed -n "s/.*VMTEST-EXIT=\([0-9]*\) id=$RUN_ID\$/\1/p" | tail -n1)
    if [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ]; then
        RESULT=FAIL; DETAIL="timed out after ${TIMEOUT}s (log: $logdir/$ver.log)"
    elif [ -z "$rc" ]; then
        RESULT=FAIL
        if grep -q 'Kernel panic' "$console" 2>/dev/null; then
            DETAIL="kernel panic: $(grep -m1 'Kernel panic' "$console" | tr -d '\r') (log: $logdir/$ver.log)"
        elif [ -s "$qlog" ]; then
            DETAIL="no exit marker; qemu said: $(head -n1 "$qlog") (log: $logdir/$ver.log)"
        else
            DETAIL="no exit marker, the VM stopped before the script finished (log: $logdir/$ver.log)"
        fi
    elif [ "$rc" -ne 0 ]; then
        RESULT=FAIL; DETAIL="script exited $rc (log: $logdir/$ver.log)"
    else
        RESULT=PASS; DETAIL=""
    fi
}

# ---------------------------------------------------------------- main
need_host_tools
declare -A RESULTS SECS DETAILS SEEN_PATH

# Fetch (serialised across concurrent runs sharing the cache).
mkdir -p "$CACHE/kernels"
exec 9> "$CACHE/.lock"
flock 9
for ver in $KERNELS; do
    if ensure_kernel "$ver"; then
        RESULTS[$ver]=""
    else
        RESULTS[$ver]=SKIP; DETAILS[$ver]=$SKIP_REASON; SECS[$ver]=-
    fi
done
flock -u 9

if [ $FETCH_ONLY -eq 1 ]; then
    nskip=0
    printf '%-8s %-8s %-48s %-12s %-22s %s\n' kernel result package version release btf
    for ver in $KERNELS; do
        if [ "${RESULTS[$ver]}" = SKIP ]; then
            nskip=$((nskip + 1))
            printf '%-8s %-8s %s\n' "$ver" SKIP "${DETAILS[$ver]}"
        else
            printf '%-8s %-8s %-48s %-12s %-22s %s\n' "$ver" cached "$(kinfo "$ver" package)" \
                "$(kinfo "$ver" version)" "$(kinfo "$ver" krel)" "$(kinfo "$ver" btf)"
        fi
    done
    echo "cache: $CACHE/kernels"
    if [ $nskip -gt 0 ]; then
        echo "!!! $nskip kernel(s) SKIPPED: could not be fetched (see above) !!!"
        [ $STRICT -eq 0 ] || exit 1
    fi
    exit 0
fi

RUN_ID=$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
# In-VM limit for the script: the per-kernel budget less a margin for booting (10-20 s
# under TCG) and powering off, so a slow script is reported with its output and rc 137.
margin=$((TIMEOUT / 5)); [ $margin -ge 30 ] || margin=30
GUEST_TIMEOUT=$((TIMEOUT - margin))
WORK=$(mktemp -d "${TMPDIR:-/tmp}/vmtest.XXXXXX")
build_initramfs "$WORK/initramfs.gz"

# Kernels boot side by side, JOBS at a time: with thread=single a VM runs on
# one host thread, so on two CPUs two VMs take the time of one (the three
# kernels were 24 of CI's 40 minutes one after another). Their lines stay
# apart by the "[<version>] " prefix.
run_one() {
    local ver=$1 t0 t1
    t0=$(now_ms)
    run_kernel "$ver"
    t1=$(now_ms)
    printf '%s\n%s\n%s\n' "$RESULT" "$(fmt_ms $((t1 - t0)))" "$DETAIL" > "$WORK/$ver.result"
    echo "== $ver: $RESULT in $(fmt_ms $((t1 - t0)))s${DETAIL:+: $DETAIL} =="
}
for ver in $KERNELS; do
    [ "${RESULTS[$ver]}" != SKIP ] || continue
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
    run_one "$ver" &
done
wait
for ver in $KERNELS; do
    [ "${RESULTS[$ver]}" != SKIP ] || continue
    if [ -s "$WORK/$ver.result" ]; then
        { read -r RESULTS[$ver]; read -r SECS[$ver]; read -r DETAILS[$ver] || true; } < "$WORK/$ver.result"
    else
        RESULTS[$ver]=FAIL; SECS[$ver]=-; DETAILS[$ver]="its runner stopped before it reported"
    fi
done

nfail=0 nskip=0
echo
printf '%-8s %-7s %s\n' kernel result seconds
for ver in $KERNELS; do
    r=${RESULTS[$ver]}
    case $r in FAIL) nfail=$((nfail + 1)) ;; SKIP) nskip=$((nskip + 1)) ;; esac
    printf '%-8s %-7s %-8s %s\n' "$ver" "$r" "${SECS[$ver]}" "${DETAILS[$ver]:-}"
done
if [ $nskip -gt 0 ]; then
    echo
    echo "!!! WARNING: $nskip kernel(s) SKIPPED (not tested, not passed):"
    for ver in $KERNELS; do
        [ "${RESULTS[$ver]}" != SKIP ] || echo "!!!   SKIP $ver: ${DETAILS[$ver]}"
    done
fi
# One closing line in the form CI reads: kernels passed, failed, skipped.
echo "vmtest: $(( $(echo $KERNELS | wc -w) - nfail - nskip )) passed, $nfail failed, $nskip skipped"
if [ $nfail -gt 0 ]; then
    echo "$PROG: $nfail kernel(s) FAILED"
    exit 1
fi
if [ $nskip -gt 0 ] && [ $STRICT -eq 1 ]; then
    echo "$PROG: --strict: skipped kernels count as failures"
    exit 1
fi
exit 0
