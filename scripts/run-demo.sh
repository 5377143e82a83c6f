#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# run-demo.sh - "make run": rbnest.ko with every writer on, in the VM.
#
# Usage: scripts/run-demo.sh [SECONDS]
#
# Boots the VM (scripts/vm.sh, KERNEL, default 6.1), loads rbnest with all
# writers on (the load generator's task writers, hard-irq hrtimer, softirq,
# irq_work and self-NMIs, and the irq/softirq/timer/NMI/sched tracepoints),
# records SECONDS (default 5) of every CPU's pages with "rbtrace record"
# (splice), and brings the recording back. On the host it then prints:
#
#   - the time-stamp paths each CPU's writers took (per_cpu/cpuN/stats);
#   - "rbtrace check": every time stamp rebuilt from the pages, per CPU
#     never going backwards, nothing lost without being counted;
#   - an excerpt of "trace-cmd report --debug -l -t --ts-diff" of the
#     exported recording around the deepest nesting found: the events of
#     an NMI, of the interrupt it hit, and of the task below, each with its
#     own time and its delta as stored in the page;
#   - the path of "rbtrace plot"'s picture of the deepest nesting.
#
# Environment: KERNEL (6.1, 6.1-rt, 6.12, 6.12-rt), VM_CPUS (default 2),
# RUN_OUT (default build/run).

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECONDS_REC=${1:-5}
KERNEL=${KERNEL:-6.1}
OUT=${RUN_OUT:-$ROOT/build/run}
RBTRACE=$ROOT/tools/rbtrace/rbtrace

case $SECONDS_REC in
''|*[!0-9]*) echo "run-demo: SECONDS must be a number" >&2; exit 1 ;;
esac

rm -rf "$OUT"
mkdir -p "$OUT"

# The guest side: all writers on while rbtrace splices every CPU's pages.
# Recording stops before the writers do, so the stats are those of the
# recorded run.
# shellcheck disable=SC2016 # expanded in the guest
guest='set -e
D=/sys/kernel/debug/rbnest
insmod rbnest.ko sources=all buffer_size_kb=4096
echo "p:vfs_read vfs_read" > $D/kprobe_events
./tools/rbtrace/rbtrace record -t '"$SECONDS_REC"' -o /out/rec
echo 0 > $D/tracing_on
for c in $D/per_cpu/cpu*; do
	echo "${c##*/}"
	cat "$c/stats"
done > /out/stats
cat $D/sources > /out/sources
echo -all > $D/sources
rmmod rbnest'

echo "# booting $KERNEL, all writers on for $SECONDS_REC s"
bash "$ROOT/scripts/vm.sh" --kernel "$KERNEL" --cpus "${VM_CPUS:-2}" \
	--out "$OUT" -- sh -c "$guest" >"$OUT/vm.log" 2>&1 || {
	tail -n 40 "$OUT/vm.log" >&2
	echo "run-demo: the VM run failed (log: $OUT/vm.log)" >&2
	exit 1
}

echo
echo "# writers (sources file)"
sed 's/^/  /' "$OUT/sources"

echo
echo "# time-stamp paths per CPU (per_cpu/cpuN/stats)"
awk '
	/^cpu[0-9]+$/ { cpu = $1; cpus[++n] = cpu; next }
	{ sub(/:$/, "", $1); v[cpu, $1] = $2 }
	END {
		printf "  %-5s %10s %9s %8s %8s %6s %7s %5s\n", "cpu", "written",
		       "fast", "abs", "slow", "zero", "extend", "depth"
		for (i = 1; i <= n; i++) {
			c = cpus[i]
			printf "  %-5s %10d %9d %8d %8d %6d %7d %5d\n", c,
			       v[c, "written"], v[c, "ts_fast"], v[c, "ts_abs"],
			       v[c, "ts_slow"], v[c, "ts_zero"],
			       v[c, "ts_extend"], v[c, "max_depth"]
		}
	}' "$OUT/stats"

echo
echo "# rbtrace check $OUT/rec"
status=0
"$RBTRACE" check "$OUT/rec" | sed 's/^/  /' || status=1

"$RBTRACE" plot "$OUT/rec" -o "$OUT/plot.svg" || status=1
echo
echo "# picture (rbtrace plot, the deepest nesting): $OUT/plot.svg"

"$RBTRACE" export "$OUT/rec" -o "$OUT/trace.dat" >/dev/null
trace-cmd report --debug -l -t --ts-diff "$OUT/trace.dat" \
	>"$OUT/report.txt" 2>/dev/null || true

# Events of one CPU around the first one matching the awk condition $1
# ("abs": an interrupting writer's forced absolute stamp, "abs" among
# its flags), 12 before it and 6 after, with the
# TIME STAMP and TIME EXTEND entries trace-cmd --debug shows before them.
excerpt() {
	awk "
		/TIME (STAMP|EXTEND):/ { pend = pend \$0 \"\\n\"; next }
		/sample:/ {
			cpu = \"\"; ctx = \"\"; depth = 0; f = \"\"
			for (i = 1; i <= NF; i++) {
				if (\$i ~ /^cpu=/) cpu = substr(\$i, 5)
				if (\$i ~ /^ctx=/) ctx = substr(\$i, 5)
				if (\$i ~ /^depth=/) depth = substr(\$i, 7)
				if (\$i ~ /^flags=/) f = \"|\" substr(\$i, 7) \"|\"
			}
			abs = index(f, \"|abs|\") > 0
			line[cpu, ++n[cpu]] = pend \$0
			pend = \"\"
			if (!found && ($1)) {
				found = 1; fc = cpu; at = n[cpu]
			}
			if (found && cpu == fc && n[cpu] >= at + 6)
				exit
		}
		END {
			if (!found)
				exit 1
			for (i = (at > 12 ? at - 12 : 1); i <= n[fc]; i++)
				print line[fc, i]
		}" "$OUT/report.txt"
}

echo
echo "# trace-cmd report --debug -l -t --ts-diff $OUT/trace.dat"
echo "# (events of one CPU around an interrupt's absolute stamp; ctx, src,"
echo "#  flags and tp are named by the format: see \"Event fields\" in README;"
echo "#  [delta:offset:length] as stored in the page)"
excerpt 'abs && depth >= 2' || excerpt abs || excerpt 'depth >= 2' ||
	echo "  (no nested event in this recording)"

echo
echo "# files: $OUT/rec (recording), $OUT/plot.svg, $OUT/trace.dat, $OUT/report.txt"
exit $status
