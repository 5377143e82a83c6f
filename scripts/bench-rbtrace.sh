#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench-rbtrace.sh - memory and speed of rbtrace on a large recording (a
# benchmark, not a test).
#
# Usage: scripts/bench-rbtrace.sh [SIZE_MB]	(make bench-rbtrace)
#
# Writes a recording of about SIZE_MB (default 4096) with build/user/rbgen
# (mode nest: nested writers at every label, clock jumps) into a temporary
# directory (under BENCH_DIR if set, else mktemp -t's), then runs one at
# a time and prints, for each, the wall time, MB/s of the recording and
# the peak RSS (/usr/bin/time):
#   rbtrace check REC, rbtrace report REC >/dev/null, rbtrace export REC,
#   trace-cmd report on that export >/dev/null (if trace-cmd is installed),
#   and, if OLD_RBTRACE names another rbtrace binary (an older build, say),
#   its check and report, when the recording fits in memory 2 times.
# Also the time to the first line of "rbtrace report REC | head -n 1".
# The recording and the export are removed at the end. The table is
# printed and written to build/bench-rbtrace.txt.

set -euo pipefail

cd "$(dirname "$0")/.."
size_mb=${1:-4096}
rbtrace=tools/rbtrace/rbtrace
rbgen=build/user/rbgen
old=${OLD_RBTRACE:-}
out=build/bench-rbtrace.txt

for f in "$rbtrace" "$rbgen" /usr/bin/time; do
	[ -x "$f" ] || { echo "$f is missing: make bench-rbtrace" >&2; exit 1; }
done

if [ -n "${BENCH_DIR:-}" ]; then
	dir=$(mktemp -d -p "$BENCH_DIR" bench-rbtrace.XXXXXX)
else
	dir=$(mktemp -d -t bench-rbtrace.XXXXXX)
fi
trap 'rm -rf "$dir"' EXIT
rec=$dir/rec

# rbgen nest writes about 370 bytes of pages per outer write
outer=$((size_mb * 1024 * 1024 / 370))
echo "writing a recording of about $size_mb MB (rbgen nest, $outer outer writes)"
"$rbgen" nest "$rec" "$outer" >"$dir/gen.txt"
bytes=$(cat "$rec"/cpu*.raw | wc -c)
mb=$(awk -v b="$bytes" 'BEGIN { printf "%.0f", b / 1048576 }')
events=$("$rbtrace" check -q "$rec" | sed -n 's/^events: //p')
{
	echo "recording: $mb MB of pages, $events events, 2 CPUs ($(nproc) CPUs here)"
	printf '%-38s %9s %9s %12s\n' "command" "seconds" "MB/s" "peak RSS MB"
} | tee "$out"

# run NAME CMD...: one line of the table
run() {
	local name=$1 t rss s
	shift
	sync
	if ! /usr/bin/time -f '%e %M' -o "$dir/time" "$@" >/dev/null 2>"$dir/err"; then
		echo "$name: failed: $(tail -n 3 "$dir/err")" >&2
	fi
	read -r t rss < <(tail -n 1 "$dir/time")
	s=$(awk -v t="$t" -v m="$mb" 'BEGIN { printf "%.1f", (t > 0 ? m / t : 0) }')
	printf '%-38s %9s %9s %12s\n' "$name" "$t" "$s" \
		"$(awk -v k="$rss" 'BEGIN { printf "%.1f", k / 1024 }')" | tee -a "$out"
}

run "rbtrace check" "$rbtrace" check "$rec"
run "rbtrace report >/dev/null" "$rbtrace" report "$rec"
run "rbtrace export" "$rbtrace" export "$rec" -o "$dir/rec.dat"
if command -v trace-cmd >/dev/null; then
	run "trace-cmd report (export) >/dev/null" trace-cmd report "$dir/rec.dat"
fi
rm -f "$dir/rec.dat"

avail_mb=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
if [ -n "$old" ] && [ $((mb * 2)) -lt "$avail_mb" ]; then
	run "old rbtrace check" "$old" check "$rec"
	run "old rbtrace report >/dev/null" "$old" report "$rec"
elif [ -n "$old" ]; then
	echo "old rbtrace: $mb MB do not fit 2 times in $avail_mb MB available" | tee -a "$out"
fi

start=$(date +%s%N)
# head ends report with SIGPIPE
"$rbtrace" report "$rec" | head -n 1 >/dev/null || true
end=$(date +%s%N)
echo "rbtrace report: first line after $(((end - start) / 1000000)) ms" | tee -a "$out"
