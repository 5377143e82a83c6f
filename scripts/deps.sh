#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deps.sh - install the Debian packages that building and testing rbnest
# need. Silent when everything is there. Non-interactive; needs root (or
# password-less sudo) only when something is missing.
#
# Required packages build and run the userspace tests and the VM
# (scripts/vm.sh); the optional ones (kernel headers, sparse) are for the
# module: when they cannot be installed (another architecture, no such
# package), a warning is printed and the userspace checks go on.
#
# Usage: scripts/deps.sh [--kernels "KERNEL..."] [extra-package ...]
#
# --kernels adds the headers of the VM's kernels (6.1, 6.1-rt, 6.12,
# 6.12-rt; scripts/vm-kernel.sh) to the required packages.

set -euo pipefail

REQUIRED=(
	gcc
	make
	binutils
	pkg-config
	libtraceevent-dev
	trace-cmd
	valgrind
	python3
	clang
	libclang-rt-14-dev
	qemu-system-x86
	busybox-static
	cpio
	kmod
	xz-utils
	dkms
	librsvg2-bin
)
OPTIONAL=(
	sparse
	linux-headers-amd64
)
KERNELS=
if [ "${1:-}" = --kernels ]; then
	KERNELS=${2:?--kernels needs a list}
	shift 2
fi
REQUIRED+=("$@")

missing() {
	local p st
	for p in "$@"; do
		st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
		[ "$st" = installed ] || echo "$p"
	done
}

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "deps: not a Debian system; install by hand: ${REQUIRED[*]} ${OPTIONAL[*]}" >&2
	exit 0
fi

# Header packages of the kernels in $KERNELS; fails when apt does not know
# a kernel (its package lists may need an update).
kernel_headers() {
	local k
	for k in $KERNELS; do
		bash "$(dirname "$0")/vm-kernel.sh" headers-pkg "$k" 2>/dev/null || return 1
	done
}

kernels_unresolved=
if ! kheaders=$(kernel_headers); then
	kheaders=
	kernels_unresolved=1
fi
# shellcheck disable=SC2086 # package names, one per line
mapfile -t need < <(missing "${REQUIRED[@]}" $kheaders)
mapfile -t want < <(missing "${OPTIONAL[@]}")
[ ${#need[@]} -eq 0 ] && [ ${#want[@]} -eq 0 ] && [ -z "$kernels_unresolved" ] && exit 0

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO=(sudo -n)
	elif [ ${#need[@]} -gt 0 ] || [ -n "$kernels_unresolved" ]; then
		echo "deps: not root and no sudo; install: ${need[*]} ${want[*]}" >&2
		exit 1
	else
		echo "deps: warning: not root; kernel module checks need: ${want[*]}" >&2
		exit 0
	fi
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT

run_apt() {
	"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -q -y \
		-o Dpkg::Use-Pty=0 -o Dpkg::Options::=--force-confdef \
		-o Dpkg::Options::=--force-confold "$@" >>"$log" 2>&1
}

apt_install() {
	run_apt install --no-install-recommends "$@"
}

all=("${need[@]}" "${want[@]}")
echo "deps: installing ${all[*]}${kernels_unresolved:+ and the headers of $KERNELS}"
if ! run_apt update; then
	cat "$log" >&2
	echo "deps: apt-get update failed" >&2
	exit 1
fi
if [ -n "$kernels_unresolved" ]; then
	if ! kheaders=$(kernel_headers); then
		echo "deps: no headers package for a kernel of: $KERNELS" >&2
		exit 1
	fi
	# shellcheck disable=SC2086
	mapfile -t -O ${#need[@]} need < <(missing $kheaders)
fi

if [ ${#need[@]} -gt 0 ] && ! apt_install "${need[@]}"; then
	cat "$log" >&2
	echo "deps: cannot install ${need[*]}" >&2
	exit 1
fi

if [ ${#want[@]} -gt 0 ] && ! apt_install "${want[@]}"; then
	for p in "${want[@]}"; do
		apt_install "$p" ||
			echo "deps: warning: cannot install $p (kernel module checks need it)" >&2
	done
fi
echo "deps: done"
