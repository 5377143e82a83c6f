#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# debug-kernel.sh - kernels built here with the kernel's own debugging
# checks, for the VM (scripts/vm.sh --kernel NAME) and the module build.
#
# Usage: scripts/debug-kernel.sh COMMAND NAME
#
#   abi NAME         print the kernel's release (uname -r in the VM)
#   build NAME       build the kernel when it is missing or its config
#                    fragment changed
#   image NAME       build when needed; print its release, the bzImage,
#                    the modules directory and the config file, one per
#                    line (as scripts/vm-kernel.sh image does)
#   kdir NAME        build when needed; print the build tree to build
#                    modules against (make -C KDIR M=...)
#   is-debug NAME    exit 0 when NAME is a kernel of this script
#
# Kernels, each on top of allnoconfig with scripts/debug-kernel.config
# (the VM's machine and drivers, built in, and what rbnest uses) and
# scripts/debug-kernel-NAME.config (its checkers):
#
#   6.1-debug        Debian's linux-source-6.1, PREEMPT, with KASAN
#                    (inline), UBSAN, KFENCE, kmemleak, PROVE_LOCKING,
#                    PROVE_RCU, DEBUG_ATOMIC_SLEEP, DEBUG_PREEMPT,
#                    DEBUG_OBJECTS, DEBUG_LIST, the lockup and hung-task
#                    detectors, and fault injection (failslab,
#                    fail_page_alloc) with its debugfs
#   6.1-kcsan        Debian's linux-source-6.1, PREEMPT, with KCSAN (the
#                    module is instrumented too)
#   6.12-rt-debug    Debian's linux-source-6.12 with PREEMPT_RT,
#                    PROVE_LOCKING, PROVE_RAW_LOCK_NESTING,
#                    DEBUG_ATOMIC_SLEEP, DEBUG_OBJECTS and the lockup
#                    detectors
#
# Everything lives in build/debug-kernel/NAME: the unpacked source, built
# in place (it is the module's build tree), and root/ with boot/ and
# lib/modules/ as an image package would have them. A kernel is built
# once; it is built again only when its config fragments change. A build
# is 13 (6.12-rt-debug) to ?? (6.1-debug) CPU-minutes (DEBUG_KERNEL_JOBS,
# default 2).

set -eu

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DK_DIR=$ROOT/build/debug-kernel

die() {
	echo "debug-kernel: $*" >&2
	exit 1
}

# Source package, tarball and config fragment of kernel $1.
kernel_def() {
	case $1 in
	6.1-debug | 6.1.*-debug)
		SRC_PKG=linux-source-6.1
		TARBALL=/usr/src/linux-source-6.1.tar.xz
		NAME=6.1-debug
		;;
	6.1-kcsan | 6.1.*-kcsan)
		SRC_PKG=linux-source-6.1
		TARBALL=/usr/src/linux-source-6.1.tar.xz
		NAME=6.1-kcsan
		;;
	6.12-rt-debug | 6.12.*-rt-debug)
		SRC_PKG=linux-source-6.12
		TARBALL=/usr/src/linux-source-6.12.tar.xz
		NAME=6.12-rt-debug
		;;
	*) return 1 ;;
	esac
	FRAGMENTS="$ROOT/scripts/debug-kernel.config $ROOT/scripts/debug-kernel-$NAME.config"
}

# The release of an unpacked, configured tree $1.
tree_release() {
	make -s -C "$1" kernelrelease 2>/dev/null
}

unpack() {
	local dir=$1 tmp
	[ -f "$dir/src/.rbn-unpacked" ] && return 0
	bash "$ROOT/scripts/deps.sh" "$SRC_PKG" flex bison bc libelf-dev \
		libssl-dev >&2 || die "cannot install $SRC_PKG and the build tools"
	[ -r "$TARBALL" ] || die "no $TARBALL"
	echo "debug-kernel: unpacking $TARBALL" >&2
	tmp=$dir/.unpack
	rm -rf "$tmp" "$dir/src"
	mkdir -p "$tmp"
	tar -xJf "$TARBALL" -C "$tmp"
	mv "$tmp"/linux-source-* "$dir/src"
	rm -rf "$tmp"
	touch "$dir/src/.rbn-unpacked"
}

# Every option the fragment sets must come out set as it says: an option
# whose dependencies are missing would be dropped silently.
check_config() {
	local frag=$1 config=$2 line bad=0
	while read -r line; do
		case $line in
		CONFIG_*=*) grep -qxF "$line" "$config" || {
			echo "debug-kernel: $line did not stick: $(grep "^${line%%=*}=" "$config" || echo unset)" >&2
			bad=1
		} ;;
		"# CONFIG_"*" is not set")
			line=${line#\# }
			line=${line%% *}
			! grep -q "^$line=" "$config" || {
				echo "debug-kernel: $line should not be set" >&2
				bad=1
			} ;;
		esac
	done <"$frag"
	[ $bad -eq 0 ] || die "the config of $NAME is not what $FRAGMENTS ask for"
}

build() {
	local dir=$DK_DIR/$NAME src sum rel jobs=${DEBUG_KERNEL_JOBS:-2} start
	local frag=$dir/fragment.config
	src=$dir/src
	mkdir -p "$dir"
	# shellcheck disable=SC2086 # FRAGMENTS is a list of paths
	sum=$(cat $FRAGMENTS | sha256sum | cut -d' ' -f1)
	if [ -f "$dir/built" ] && [ "$(cat "$dir/built")" = "$sum" ]; then
		return 0
	fi
	# Two builds of one kernel would share the tree.
	exec 8>"$dir/lock"
	flock -n 8 || { echo "debug-kernel: waiting for another build of $NAME" >&2 && flock 8; }
	if [ -f "$dir/built" ] && [ "$(cat "$dir/built")" = "$sum" ]; then
		return 0
	fi
	unpack "$dir"
	rm -f "$dir/built"
	# shellcheck disable=SC2086
	cat $FRAGMENTS >"$frag"
	echo "debug-kernel: configuring $NAME" >&2
	make -C "$src" -s KCONFIG_ALLCONFIG="$frag" allnoconfig >&2 ||
		die "allnoconfig failed"
	check_config "$frag" "$src/.config"
	start=$(date +%s)
	echo "debug-kernel: building $NAME with -j$jobs (log: $dir/build.log)" >&2
	if ! make -C "$src" -j"$jobs" bzImage modules >"$dir/build.log" 2>&1; then
		tail -n 30 "$dir/build.log" >&2
		die "the build of $NAME failed (see $dir/build.log)"
	fi
	rel=$(tree_release "$src")
	rm -rf "$dir/root"
	mkdir -p "$dir/root/boot"
	make -C "$src" -s INSTALL_MOD_PATH="$dir/root" modules_install >&2 ||
		die "modules_install failed"
	# No module is built in; the VM still reads a modules directory.
	mkdir -p "$dir/root/lib/modules/$rel"
	[ -f "$dir/root/lib/modules/$rel/modules.dep" ] ||
		depmod -b "$dir/root" "$rel"
	cp "$src/arch/x86/boot/bzImage" "$dir/root/boot/vmlinuz-$rel"
	cp "$src/.config" "$dir/root/boot/config-$rel"
	echo "$sum" >"$dir/built"
	echo "debug-kernel: $NAME ($rel) built in $(($(date +%s) - start)) s" >&2
}

main() {
	[ $# -eq 2 ] || die "usage: debug-kernel.sh abi|build|image|kdir|is-debug NAME"
	if ! kernel_def "$2"; then
		[ "$1" = is-debug ] && exit 1
		die "unknown kernel '$2' (6.1-debug, 6.1-kcsan, 6.12-rt-debug)"
	fi
	local dir=$DK_DIR/$NAME rel
	case $1 in
	is-debug) exit 0 ;;
	build) build ;;
	abi)
		build
		tree_release "$dir/src"
		;;
	image)
		build
		rel=$(tree_release "$dir/src")
		printf '%s\n' "$rel" "$dir/root/boot/vmlinuz-$rel" \
			"$dir/root/lib/modules/$rel" "$dir/root/boot/config-$rel"
		;;
	kdir)
		build
		echo "$dir/src"
		;;
	*) die "unknown command '$1'" ;;
	esac
}

main "$@"
