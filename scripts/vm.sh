#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm.sh - run a command as root in a QEMU VM booted on a Debian kernel,
# with rbnest.ko built for that kernel.
#
# Usage: scripts/vm.sh [OPTIONS] -- COMMAND [ARG...]
#
#   --kernel K      6.1 (default), 6.1-rt, 6.12, 6.12-rt or an ABI name
#                   (scripts/vm-kernel.sh says which packages they are),
#                   or a debug kernel built here by scripts/debug-kernel.sh
#                   on first use (6.1-debug, 6.1-kcsan, 6.12-rt-debug)
#   --cpus N        virtual CPUs (default 2)
#   --mem SIZE      memory, as QEMU takes it (default 4G; / and /tmp of
#                   the guest live in it)
#   --out DIR       where the guest's /out is copied (default
#                   build/vm/ABI/out, emptied first; a DIR given here is
#                   not emptied)
#   --timeout S     kill the VM after S seconds (default 1200)
#   --ko FILE       boot with this rbnest.ko instead of building one
#   --append ARGS   more kernel command line arguments
#   --verbose       show all the kernel's messages on the console (by
#                   default only warnings and worse: loglevel=5)
#
# The VM boots from an initramfs built for each run in build/vm/ABI/run
# (build/vm/ABI/run-NAME with VM_RUN_NAME=NAME: runs on one kernel wait
# for each other, unless their names differ):
# busybox, bash, trace-cmd, and in /rbnest rbnest.ko, selftests/kernel/
# tools/rbtrace/rbtrace and tools/fail_nth/fail_nth. COMMAND runs in
# /rbnest with RBN_VM=1 and RBN_VM_TCG (single or multi: VM_TCG_THREAD)
# in its environment; what it writes to /out comes back into the --out
# directory, with the kernel log of the run (vm-dmesg.txt) and the
# console output (vm-console.log). The console is also shown here as it
# comes.
#
# The exit status is COMMAND's. A VM that does not get as far as running
# it to the end (kernel panic, oops, timeout) exits 1.
#
# QEMU emulates the CPU (TCG): it does not need /dev/kvm, and a kernel
# that crashes takes nothing down with it.

set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
VM_DIR=$ROOT/build/vm

# Modules of the kernel that the guest loads at boot, besides the ones
# the results disk needs: none so far.
TEST_MODULES=()

# What the results disk (virtio-blk on PCI) needs, as config option:module.
DISK_MODULES=(VIRTIO_PCI:virtio_pci VIRTIO_BLK:virtio_blk)

die() {
	echo "vm: $*" >&2
	exit 1
}

usage() {
	sed -n '/^# Usage/,/^# QEMU/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit "${1:-0}"
}

# ---- the initramfs -------------------------------------------------------

# Copy program $1 into the initramfs at path $2 (default: the same path),
# with the shared libraries and the loader it needs.
copy_prog() {
	local src=$1 dst=${2:-$1} lib
	mkdir -p "$STAGE$(dirname "$dst")"
	cp -L "$src" "$STAGE$dst"
	# ldd names each library "soname => path" and the loader by its path.
	for lib in $(ldd "$src" 2>/dev/null |
		sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) .*/\1/p'); do
		[ -e "$STAGE$lib" ] && continue
		mkdir -p "$STAGE$(dirname "$lib")"
		cp -L "$lib" "$STAGE$lib"
	done
}

# The base system: a merged /usr like Debian's, busybox and its applets.
stage_base() {
	local d applet busybox
	rm -rf "$STAGE"
	mkdir -p "$STAGE"
	for d in dev proc sys tmp root out vm rbnest etc/rbnest-vm/ko \
		usr/bin usr/sbin usr/lib usr/lib64; do
		mkdir -p "$STAGE/$d"
	done
	for d in bin sbin lib lib64; do
		ln -s "usr/$d" "$STAGE/$d"
	done
	# The kernel opens the console before /init runs; without the node
	# /init's first lines are lost (it redirects to devtmpfs' node later).
	[ "$(id -u)" -eq 0 ] && mknod -m 600 "$STAGE/dev/console" c 5 1

	busybox=$(command -v busybox) || die "no busybox (run 'make deps')"
	copy_prog "$busybox" /usr/bin/busybox
	for applet in $("$busybox" --list-full); do
		[ -e "$STAGE/$applet" ] || ln -s /usr/bin/busybox "$STAGE/$applet"
	done
	# Tests may be bash scripts.
	if command -v bash >/dev/null; then
		rm -f "$STAGE/usr/bin/bash"
		copy_prog "$(command -v bash)" /usr/bin/bash
	fi
}

# trace-cmd, its libraries and the event parsers libtraceevent loads.
stage_trace_cmd() {
	local tc plugins=/usr/lib/x86_64-linux-gnu/traceevent/plugins p
	tc=$(command -v trace-cmd) || die "no trace-cmd (run 'make deps')"
	copy_prog "$tc" /usr/bin/trace-cmd
	[ -d "$plugins" ] || return 0
	for p in "$plugins"/*.so; do
		copy_prog "$p"
	done
}

# The project's files in /rbnest.
stage_project() {
	local ko=$1 testonly
	cp "$ko" "$STAGE/rbnest/rbnest.ko"
	# The test-only build vm-kernel.sh makes next to it, if there is one.
	testonly=$(dirname "$ko")-testonly/rbnest.ko
	if [ -f "$testonly" ]; then
		cp "$testonly" "$STAGE/rbnest/rbnest-testonly.ko"
	fi
	mkdir -p "$STAGE/rbnest/selftests" "$STAGE/rbnest/tools/rbtrace"
	if [ -d "$ROOT/selftests/kernel" ]; then
		cp -a "$ROOT/selftests/kernel" "$STAGE/rbnest/selftests/"
	fi
	copy_prog "$ROOT/tools/rbtrace/rbtrace" /rbnest/tools/rbtrace/rbtrace
	mkdir -p "$STAGE/rbnest/tools/fail_nth"
	copy_prog "$ROOT/tools/fail_nth/fail_nth" /rbnest/tools/fail_nth/fail_nth
	ln -s /rbnest/tools/rbtrace/rbtrace "$STAGE/usr/bin/rbtrace"
}

# Print module $1 and the modules it depends on, dependencies first,
# from modules.dep of $MODDIR; once each ($SEEN holds those printed).
module_order() {
	local name=$1 line path dep
	case " $SEEN " in *" $name "*) return 0 ;; esac
	line=$(grep -E "(^|/)$name\.ko(\.[a-z]+)?:" "$MODDIR/modules.dep") ||
		die "module $name not in $MODDIR/modules.dep"
	for dep in ${line#*:}; do
		dep=${dep##*/}
		module_order "${dep%%.ko*}"
	done
	SEEN="$SEEN $name"
	path=${line%%:*}
	echo "$name $path"
}

# Copy the kernel modules the guest loads at boot, uncompressed (busybox
# insmod may not decompress), and list them in load order.
stage_modules() {
	local config=$1 roots=() item opt val name path ko order
	for item in "${DISK_MODULES[@]}"; do
		opt=CONFIG_${item%%:*}
		val=$(sed -n "s/^$opt=//p" "$config")
		case $val in
		y) ;;
		m) roots+=("${item#*:}") ;;
		*) die "$(basename "$config") lacks $opt" ;;
		esac
	done
	roots+=("${TEST_MODULES[@]}")

	SEEN=
	order=$(for name in "${roots[@]}"; do module_order "$name"; done)
	: >"$STAGE/etc/rbnest-vm/modules"
	while read -r name path; do
		[ -n "$name" ] || continue
		ko=$STAGE/etc/rbnest-vm/ko/$name.ko
		case $path in
		*.xz) xz -dc "$MODDIR/$path" >"$ko" ;;
		*.zst) zstd -qdc "$MODDIR/$path" >"$ko" ;;
		*.gz) gzip -dc "$MODDIR/$path" >"$ko" ;;
		*) cp "$MODDIR/$path" "$ko" ;;
		esac
		echo "$name" >>"$STAGE/etc/rbnest-vm/modules"
	done <<<"$order"
	MODULES=$(tr '\n' ' ' <"$STAGE/etc/rbnest-vm/modules")
}

# The command, one quoted word per argument, for the guest's sh.
write_command() {
	local arg q="'" out=
	for arg in "$@"; do
		out="$out '${arg//$q/$q\\$q$q}'"
	done
	echo "$out" >"$STAGE/etc/rbnest-vm/cmd"
}

write_init() {
	cat >"$STAGE/init" <<'EOF'
#!/bin/sh
# /init of the rbnest VM, written by scripts/vm.sh: mount the kernel's
# file systems, run the command, hand /out back on the results disk
# (a tar archive written on the raw disk) and power off.

export PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root RBN_VM=1
export RBN_VM_TCG=$(cat /etc/rbnest-vm/tcg)

mount -t devtmpfs dev /dev
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs /sys/kernel/tracing
mount -t tmpfs tmp /tmp
hostname rbnest-vm

for m in $(cat /etc/rbnest-vm/modules); do
	insmod "/etc/rbnest-vm/ko/$m.ko" || echo "rbnest-vm: cannot load $m"
done
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do
	usleep 100000
	i=$((i + 1))
done
[ -b /dev/vda ] || echo "rbnest-vm: no results disk, nothing will come back"

echo "rbnest-vm: up after $(cut -d' ' -f1 /proc/uptime) s, $(nproc) CPUs, kernel $(uname -r)"
cd /rbnest
sh /etc/rbnest-vm/cmd </dev/null
echo $? >/vm/status
dmesg >/vm/dmesg.txt

cd /
tar -cf /dev/vda vm out || echo "rbnest-vm: cannot write /out to the results disk"
sync
poweroff -f
EOF
	chmod 755 "$STAGE/init"
}

build_initramfs() {
	local ko=$1 config=$2
	shift 2
	stage_base
	stage_trace_cmd
	stage_project "$ko"
	stage_modules "$config"
	write_init
	echo "$TCG_THREAD" >"$STAGE/etc/rbnest-vm/tcg"
	write_command "$@"
	(cd "$STAGE" && find . | LC_ALL=C sort | cpio -o -H newc --quiet) |
		gzip -1 >"$RUN/initramfs.cpio.gz"
}

# ---- the run -------------------------------------------------------------

# Tell why the VM gave no status, from its console output.
explain_failure() {
	local rc=$1 log=$2
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		echo "vm: timed out after $TIMEOUT s (--timeout)" >&2
	elif grep -q 'Kernel panic' "$log"; then
		echo "vm: the guest kernel panicked:" >&2
		grep -E 'Kernel panic|BUG:|Oops|RIP:' "$log" | head -n 8 >&2
	elif [ "$rc" -ne 0 ]; then
		echo "vm: QEMU failed (exit $rc)" >&2
	else
		echo "vm: the VM stopped before the command finished (boot failure?)" >&2
	fi
}

# Point at kernel warnings of the run; they do not fail it.
report_warnings() {
	local dmesg=$1 n
	[ -f "$dmesg" ] || return 0
	n=$(grep -cE 'WARNING:|BUG:|Oops|Call Trace:' "$dmesg" || true)
	[ "$n" -eq 0 ] && return 0
	echo "vm: the kernel log has $n warning lines (see $dmesg):" >&2
	grep -E 'WARNING:|BUG:|Oops' "$dmesg" | head -n 5 >&2
}

# Size of the results disk in bytes: as big as the memory that /out lives in.
disk_size() {
	case $MEM in
	*[!0-9]*) echo "$MEM" ;;
	*) echo "${MEM}M" ;;
	esac
}

run_qemu() {
	local vmlinuz=$1 log=$2 cmdline rc=0
	# tsc=reliable: the emulated TSC is the clock under test; keep the
	# clocksource watchdog from trading it for HPET when TCG is slow.
	# oops=panic, panic=-1 and -no-reboot: an oops ends the run at once
	# (a WARN does not: it is reported from the kernel log).
	# mitigations=off: emulated page table switches on every system
	# call are slow, and nothing here needs them.
	cmdline="console=ttyS0 tsc=reliable panic=-1 oops=panic mitigations=off"
	[ -n "$VERBOSE" ] || cmdline="$cmdline loglevel=5"
	cmdline="$cmdline $APPEND"
	# A fresh, sparse results disk: zeros read as "no archive".
	rm -f "$RUN/results.img"
	truncate -s "$(disk_size)" "$RUN/results.img"
	# -cpu max: a local APIC (NMI IPIs to self), TSC, everything TCG
	# emulates. stdin is not the terminal, so that QEMU leaves it alone
	# and ^C stops it.
	timeout -k 10 "$TIMEOUT" qemu-system-x86_64 \
		-accel "tcg,thread=$TCG_THREAD" -machine q35 -cpu max -smp "$CPUS" -m "$MEM" \
		-nodefaults -display none -serial stdio -no-reboot \
		-kernel "$vmlinuz" -initrd "$RUN/initramfs.cpio.gz" \
		-append "$cmdline" \
		-drive "file=$RUN/results.img,format=raw,if=none,id=results" \
		-device virtio-blk-pci,drive=results \
		</dev/null | tee "$log" || true
	rc=${PIPESTATUS[0]}
	return "$rc"
}

# Unpack the results disk into $OUT; print the command's status.
collect() {
	local res=$RUN/results ok=1
	rm -rf "$res"
	mkdir -p "$res"
	tar -xf "$RUN/results.img" -C "$res" 2>/dev/null || ok=
	[ -f "$res/vm/status" ] || return 1
	[ -n "$ok" ] || echo "vm: the results on the disk are incomplete" >&2
	[ -d "$res/out" ] && cp -a "$res/out/." "$OUT/"
	[ -f "$res/vm/dmesg.txt" ] && cp "$res/vm/dmesg.txt" "$OUT/vm-dmesg.txt"
	cat "$res/vm/status"
}

main() {
	local kernel=6.1 ko='' image abi vmlinuz config status start rc=0 arg
	CPUS=2 MEM=4G OUT='' TIMEOUT=1200 APPEND='' VERBOSE=''
	while [ $# -gt 0 ]; do
		arg=$1
		case $arg in
		--kernel | --cpus | --mem | --out | --timeout | --ko | --append)
			[ $# -ge 2 ] || die "$arg needs a value"
			shift ;;
		esac
		case $arg in
		--kernel) kernel=$1 ;;
		--cpus) CPUS=$1 ;;
		--mem) MEM=$1 ;;
		--out) OUT=$1 ;;
		--timeout) TIMEOUT=$1 ;;
		--ko) ko=$1 ;;
		--append) APPEND=$1 ;;
		--verbose) VERBOSE=1 ;;
		-h | --help) usage ;;
		--) shift && break ;;
		*) die "unknown option '$arg' (--help)" ;;
		esac
		shift
	done
	[ $# -gt 0 ] || usage 1 >&2
	command -v qemu-system-x86_64 >/dev/null ||
		die "no qemu-system-x86_64 (run 'make deps')"

	image=$(bash "$ROOT/scripts/vm-kernel.sh" image "$kernel") || exit 1
	{ read -r abi; read -r vmlinuz; read -r MODDIR; read -r config; } <<<"$image"
	if [ -z "$ko" ]; then
		ko=$(bash "$ROOT/scripts/vm-kernel.sh" module "$abi") || exit 1
	fi
	[ -f "$ko" ] || die "no module $ko"
	make -C "$ROOT" --no-print-directory -s rbtrace fail-nth ||
		die "tools/rbtrace/rbtrace or tools/fail_nth/fail_nth does not build"

	RUN=$VM_DIR/$abi/run${VM_RUN_NAME:+-$VM_RUN_NAME}
	STAGE=$RUN/initramfs
	mkdir -p "$RUN"
	# Two runs on one kernel would share the run directory.
	exec 9>"$RUN/lock"
	flock -n 9 || { echo "vm: waiting for another run on $abi" >&2 && flock 9; }
	if [ -z "$OUT" ]; then
		OUT=$VM_DIR/$abi/out
		rm -rf "$OUT"
	fi
	mkdir -p "$OUT"
	rm -f "$OUT/vm-console.log" "$OUT/vm-dmesg.txt"

	# Debian 12's QEMU (7.2) has a known multi-threaded TCG bug: after
	# text_poke_bp() has finished, a vCPU can still run a stale
	# translated block that holds the int3 (fixed in QEMU 8.1, "accel/tcg:
	# Always lock pages before translation"). Live patching of kernel
	# text (static keys, tracepoints, kprobes) under thread=multi then
	# oopses now and then: twice on 6.12 an int3 oops at a jump site
	# (rbnest's hook key; the kernel's handle_softirqs() while a softirq
	# tracepoint was switched on), and most likely the two RCU stalls of
	# test_resize on 6.1, which switches every source on and off. With
	# one TCG thread for all vCPUs they still interleave, at translation
	# block boundaries, but never run at the same time, and the module
	# needs no workaround. VM_TCG_THREAD=multi brings the faster mode
	# back, for runs that patch no text while their load runs.
	case ${VM_TCG_THREAD:-single} in
	single | multi) TCG_THREAD=${VM_TCG_THREAD:-single} ;;
	*) die "VM_TCG_THREAD must be single or multi" ;;
	esac

	build_initramfs "$ko" "$config" "$@"
	echo "vm: booting $abi on $CPUS CPUs, TCG thread=$TCG_THREAD (modules: ${MODULES:-none})" >&2
	start=$(date +%s)
	run_qemu "$vmlinuz" "$OUT/vm-console.log" || rc=$?
	if ! status=$(collect); then
		explain_failure "$rc" "$OUT/vm-console.log"
		exit 1
	fi
	report_warnings "$OUT/vm-dmesg.txt"
	echo "vm: command exited with $status after $(($(date +%s) - start)) s; results in $OUT" >&2
	exit "$status"
}

main "$@"
