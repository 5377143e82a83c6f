#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench.sh - the in-kernel benchmark of rbnest against the kernel's ring
# buffer (the "bench" debugfs file, rb_bench.c). A benchmark, not a test:
# it fails only when it gets no table, never because of the numbers.
#
# Usage: scripts/bench.sh [FILE]		(make bench)
#
#   FILE	the table of a run made elsewhere (the contents of
#		/sys/kernel/debug/rbnest/bench after "echo run > ...").
#		Without FILE the run is made here: scripts/vm.sh boots
#		$KERNEL, loads rbnest.ko, runs the benchmark and copies the
#		table out.
#
# The table goes to $BUILD/bench/bench-<kernel release>.txt and to stdout.
#
# Environment: KERNEL (vm.sh --kernel, default 6.1), BENCH_CPUS (vm.sh
# --cpus, default: vm.sh's), BENCH_ARGS (words after "run", e.g.
# "sizes=8,1024 events=20000 rounds=5"), BUILD (default build).

set -euo pipefail

cd "$(dirname "$0")/.."
kernel=${KERNEL:-6.1}
build=${BUILD:-build}
args=${BENCH_ARGS:-}
outdir=$build/bench

usage() {
	sed -n 's/^# \{0,1\}//; 3,20p' "$0" >&2
	exit 2
}

case ${1:-} in
-h|--help) usage ;;
esac
[ $# -le 1 ] || usage

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ $# -eq 1 ]; then
	table=$1
	[ -r "$table" ] || { echo "bench.sh: cannot read $table" >&2; exit 1; }
else
	[ -x scripts/vm.sh ] || { echo "bench.sh: scripts/vm.sh is missing" >&2; exit 1; }
	case $args in
	*[!A-Za-z0-9=,_\ ]*)
		echo "bench.sh: BENCH_ARGS may hold only key=value words" >&2
		exit 1 ;;
	esac
	cpus=()
	[ -z "${BENCH_CPUS:-}" ] || cpus=(--cpus "$BENCH_CPUS")
	# The run takes a while under TCG: the guest's console shows nothing
	# meanwhile.
	echo "bench.sh: running the benchmark on $kernel (run $args)" >&2
	scripts/vm.sh --kernel "$kernel" "${cpus[@]}" --out "$tmp/out" -- sh -c "
		grep -q ' /sys/kernel/debug debugfs ' /proc/mounts ||
			mount -t debugfs debugfs /sys/kernel/debug
		insmod rbnest.ko &&
		echo 'run $args' > /sys/kernel/debug/rbnest/bench &&
		cat /sys/kernel/debug/rbnest/bench > /out/bench.txt"
	table=$tmp/out/bench.txt
	[ -s "$table" ] || { echo "bench.sh: the VM run left no table" >&2; exit 1; }
fi

header=$(head -n 1 "$table")
case $header in
"rbnest benchmark: kernel "*) ;;
*)
	echo "bench.sh: $table does not hold a benchmark table" >&2
	exit 1 ;;
esac
release=${header#rbnest benchmark: kernel }
release=${release%%,*}
[ -n "$release" ] || release=$kernel

mkdir -p "$outdir"
out=$outdir/bench-$release.txt
cp "$table" "$out"
cat "$out"
echo "bench.sh: saved in $out" >&2
