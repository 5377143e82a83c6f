#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# module-sources.sh - copy the sources of rbnest.ko into a directory of
# its own, where kbuild can build it as an external module (M=DIR):
# Kbuild, rb_*.[ch], rbn_*.h and port/kernel/. Not rbn_kcompat.h: Kbuild
# generates it for the kernel it builds against. Times are kept (cp -p),
# so that an unchanged file is not rebuilt.
#
# Usage: scripts/module-sources.sh DIR
#
# Used by scripts/module-matrix.sh, scripts/vm-kernel.sh and the
# Makefile's dkms-install.

set -e

[ $# -eq 1 ] || {
	echo "usage: $0 DIR" >&2
	exit 2
}
dest=$1
root=$(cd "$(dirname "$0")/.." && pwd)

mkdir -p "$dest/port/kernel"
cd "$root"
cp -p Kbuild rb_*.c rb_*.h "$dest/"
for f in rbn_*.h; do
	[ "$f" = rbn_kcompat.h ] || cp -p "$f" "$dest/"
done
cp -p port/kernel/* "$dest/port/kernel/"
