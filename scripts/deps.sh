#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# deps.sh - install the Debian packages that building and testing rbnest
# need. Silent when everything is there. Non-interactive; needs root (or
# password-less sudo) only when something is missing.
#
# Required packages build and run the userspace tests; the optional ones
# (kernel headers, sparse) are for the module: when they cannot be
# installed (another architecture, no such package), a warning is printed
# and the userspace checks go on.
#
# Usage: scripts/deps.sh [extra-package ...]

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
)
OPTIONAL=(
	sparse
	linux-headers-amd64
)
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

mapfile -t need < <(missing "${REQUIRED[@]}")
mapfile -t want < <(missing "${OPTIONAL[@]}")
[ ${#need[@]} -eq 0 ] && [ ${#want[@]} -eq 0 ] && exit 0

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO=(sudo -n)
	elif [ ${#need[@]} -gt 0 ]; then
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
echo "deps: installing ${all[*]}"
if ! run_apt update; then
	cat "$log" >&2
	echo "deps: apt-get update failed" >&2
	exit 1
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
