#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm-kernel.sh - the Debian kernels the rbnest VM boots, and rbnest.ko
# built for each of them.
#
# Usage: scripts/vm-kernel.sh COMMAND KERNEL
#
#   abi KERNEL       print the kernel's ABI name (e.g. 6.1.0-57-amd64)
#   headers-pkg KERNEL
#                    print the name of its headers package
#   headers KERNEL   install the headers when missing; print their directory
#   image KERNEL     fetch the kernel image when needed; print its ABI, the
#                    vmlinuz, the modules directory and the config file,
#                    one per line
#   module KERNEL    build rbnest.ko for the kernel, and its test-only
#                    build in the directory next to it (src-testonly);
#                    print the path of rbnest.ko
#
# KERNEL is one of 6.1, 6.1-rt, 6.12, 6.12-rt, or an ABI name, or a
# kernel that scripts/debug-kernel.sh builds (6.1-debug, 6.1-kcsan,
# 6.12-rt-debug): its build tree stands for the headers, headers-pkg
# prints nothing, and the other commands build it first when it is not
# built yet.
#
#   6.1, 6.1-rt      the kernel behind Debian's linux-image-amd64
#                    (linux-image-rt-amd64): bookworm's own kernel
#   6.12, 6.12-rt    the newest linux-image-6.12.*+deb12-[rt-]amd64
#                    (bookworm's backport of 6.12)
#
# An ABI whose headers are installed (/usr/src/linux-headers-ABI) is
# preferred over a newer one from the archive, as long as its image can
# still be had.
#
# Kernel images are never installed on this machine (that would run the
# initramfs and bootloader hooks): the package is downloaded into
# build/vm/kernels/ and unpacked there. An image that is installed already
# (/boot/vmlinuz-ABI and /lib/modules/ABI/kernel) is used as it is.
#
# rbnest.ko is built from a copy of the module sources in
# build/vm/ABI/src, so that builds for different kernels do not clobber
# each other or the tree's own "make module".

set -eu

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VM_DIR=$ROOT/build/vm
DEBUG_KERNEL=


die() {
	echo "vm-kernel: $*" >&2
	exit 1
}

# Regular expression of the ABI names of a kernel name.
abi_pattern() {
	case $1 in
	6.1) echo '^6\.1\.0-[0-9]+-amd64$' ;;
	6.1-rt) echo '^6\.1\.0-[0-9]+-rt-amd64$' ;;
	6.12) echo '^6\.12\.[0-9]+\+deb12-amd64$' ;;
	6.12-rt) echo '^6\.12\.[0-9]+\+deb12-rt-amd64$' ;;
	*) return 1 ;;
	esac
}

# The newest ABI matching pattern $1 among the names on stdin.
newest() {
	grep -E "$1" | sort -V | tail -n 1
}

installed_abis() {
	local d
	for d in /usr/src/linux-headers-*; do
		[ -f "$d/Makefile" ] && echo "${d#/usr/src/linux-headers-}"
	done
	return 0
}

# True when the image of ABI $1 is here or can be downloaded.
image_available() {
	[ -r "/boot/vmlinuz-$1" ] && [ -d "/lib/modules/$1/kernel" ] && return 0
	[ -r "$VM_DIR/kernels/$1/boot/vmlinuz-$1" ] && return 0
	apt-cache show "linux-image-$1-unsigned" >/dev/null 2>&1 ||
		apt-cache show "linux-image-$1" >/dev/null 2>&1
}

# ABI of the kernel Debian's archive offers for name $1.
archive_abi() {
	local pat=$1 meta
	case $2 in
	6.1 | 6.1-rt)
		# linux-image-amd64 depends on the current 6.1 ABI's image.
		meta=linux-image-amd64
		[ "$2" = 6.1-rt ] && meta=linux-image-rt-amd64
		apt-cache depends "$meta" 2>/dev/null |
			sed -n 's/^ *Depends: linux-image-//p' | newest "$pat"
		;;
	*)
		# The newest ABI that has both an image and headers.
		comm -12 \
			<(apt-cache search --names-only '^linux-image-6\.12\.' |
				sed -n 's/^linux-image-\([^ ]*\)-unsigned .*/\1/p' | sort) \
			<(apt-cache search --names-only '^linux-headers-6\.12\.' |
				sed -n 's/^linux-headers-\([^ ]*\) .*/\1/p' | sort) |
			newest "$pat"
		;;
	esac
}

# ABI name of kernel $1 (a name from the list above, or an ABI).
kernel_abi() {
	local pat abi
	if [ -n "$DEBUG_KERNEL" ]; then
		bash "$ROOT/scripts/debug-kernel.sh" abi "$1"
		return
	fi
	if ! pat=$(abi_pattern "$1"); then
		case $1 in
		*-amd64) echo "$1" && return 0 ;;
		*) die "unknown kernel '$1' (6.1, 6.1-rt, 6.12, 6.12-rt or an ABI name)" ;;
		esac
	fi
	abi=$(installed_abis | newest "$pat")
	if [ -n "$abi" ] && image_available "$abi"; then
		echo "$abi"
		return 0
	fi
	abi=$(archive_abi "$pat" "$1")
	[ -n "$abi" ] || die "no Debian package for kernel $1 (run 'apt-get update'?)"
	echo "$abi"
}

headers_dir() {
	if [ -n "$DEBUG_KERNEL" ]; then
		bash "$ROOT/scripts/debug-kernel.sh" kdir "$1"
		return
	fi
	echo "/usr/src/linux-headers-$1"
}

# Install the headers of ABI $1 when they are missing.
ensure_headers() {
	local dir
	[ -n "$DEBUG_KERNEL" ] && return 0
	dir=$(headers_dir "$1")
	[ -f "$dir/Makefile" ] && return 0
	echo "vm-kernel: installing linux-headers-$1" >&2
	bash "$ROOT/scripts/deps.sh" "linux-headers-$1" >&2 ||
		die "cannot install linux-headers-$1"
	[ -f "$dir/Makefile" ] || die "linux-headers-$1 installed, but no $dir"
}

# Download the image package of ABI $1 and unpack it into
# build/vm/kernels/ABI.
fetch_image() {
	local abi=$1 dir=$VM_DIR/kernels/$1 deb pkg tmp
	tmp=$VM_DIR/kernels/.download
	rm -rf "$tmp" "$dir"
	mkdir -p "$tmp"
	# apt's download sandbox user cannot write here when we are root.
	for pkg in "linux-image-$abi-unsigned" "linux-image-$abi"; do
		echo "vm-kernel: downloading $pkg" >&2
		(cd "$tmp" && apt-get download -q -o APT::Sandbox::User=root \
			"$pkg" >&2) && break
	done
	deb=$(find "$tmp" -name '*.deb' | head -n 1)
	[ -n "$deb" ] || die "cannot download the image of $abi"
	dpkg-deb -x "$deb" "$tmp/root"
	# The packages ship no modules.dep: depmod writes it at install time.
	depmod -b "$tmp/root" "$abi" ||
		die "depmod failed on the unpacked $abi"
	mv "$tmp/root" "$dir"
	rm -rf "$tmp"
}

# Print ABI, vmlinuz, modules directory and config of kernel $1.
kernel_image() {
	local abi dir config
	abi=$(kernel_abi "$1")
	if [ -r "/boot/vmlinuz-$abi" ] && [ -f "/lib/modules/$abi/modules.dep" ]; then
		dir=
	else
		dir=$VM_DIR/kernels/$abi
		[ -r "$dir/boot/vmlinuz-$abi" ] || fetch_image "$abi"
	fi
	# Headers carry the same config, for an image without /boot/config.
	config=$dir/boot/config-$abi
	[ -r "$config" ] || config=$(headers_dir "$abi")/.config
	printf '%s\n' "$abi" "$dir/boot/vmlinuz-$abi" "$dir/lib/modules/$abi" \
		"$config"
}

# Build rbnest.ko for kernel $1 from a copy of the sources.
build_module() {
	local abi src f
	abi=$(kernel_abi "$1")
	ensure_headers "$abi"
	src=$VM_DIR/$abi/src
	sh "$ROOT/scripts/module-sources.sh" "$src"
	make -C "$(headers_dir "$abi")" M="$src" modules >&2 ||
		die "rbnest.ko does not build for $abi"
	# The test-only build next to it (Kbuild: RBN_TESTONLY), which
	# test_validate loads to prove that the validator reports.
	sh "$ROOT/scripts/module-sources.sh" "$src-testonly"
	make -C "$(headers_dir "$abi")" M="$src-testonly" RBN_TESTONLY=y \
		modules >&2 ||
		die "the test-only rbnest.ko does not build for $abi"
	echo "$src/rbnest.ko"
}

# The commands for a kernel built by scripts/debug-kernel.sh.
debug_kernel() {
	local dk=$ROOT/scripts/debug-kernel.sh
	case $1 in
	abi) bash "$dk" abi "$2" ;;
	headers-pkg) ;;
	headers) bash "$dk" kdir "$2" ;;
	image) bash "$dk" image "$2" ;;
	module) build_module "$2" ;;
	*) die "unknown command '$1'" ;;
	esac
}

main() {
	[ $# -eq 2 ] || die "usage: vm-kernel.sh abi|headers-pkg|headers|image|module KERNEL"
	if bash "$ROOT/scripts/debug-kernel.sh" is-debug "$2"; then
		DEBUG_KERNEL=1
		debug_kernel "$@"
		return
	fi
	case $1 in
	abi) kernel_abi "$2" ;;
	headers-pkg) echo "linux-headers-$(kernel_abi "$2")" ;;
	headers)
		local abi
		abi=$(kernel_abi "$2")
		ensure_headers "$abi"
		headers_dir "$abi"
		;;
	image) kernel_image "$2" ;;
	module) build_module "$2" ;;
	*) die "unknown command '$1'" ;;
	esac
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	main "$@"
fi
