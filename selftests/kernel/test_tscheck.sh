#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test_tscheck.sh - trace-cmd reads a recording of the module.
#
# All sources for RBN_TSCHECK_SECONDS (default 4) while rbtrace record
# splices; "rbtrace export" writes a trace-cmd data file. trace-cmd must
# read every event: as many " sample: " lines in "trace-cmd report" as
# "rbtrace check" counted events, and no "FAILED TO PARSE" or "UNKNOWN
# EVENT" in what it prints (libtraceevent prints them inline, in the
# report on stdout; stderr is searched too). "trace-cmd report
# --ts-check" must print no "went backwards" warning, and "trace-cmd
# report -l" must show events written in hard and soft interrupt context
# (the h and s latency flags) and events written by nested writers (depth
# > 1). Skipped without trace-cmd.

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

rbn_require rbtrace trace-cmd

ktap_print_header
ktap_set_plan 6

secs=${RBN_TSCHECK_SECONDS:-$(rbn_secs 4)}
t=$rbn_tmp

if ! rbn_load buffer_size_kb=2048 sources=; then
	ktap_print_msg "$rbn_err"
	while [ "$KTAP_TESTNO" -lt 6 ]; do
		ktap_test_fail "module not loaded"
	done
	ktap_finished
fi

ktap_print_msg "all sources for $secs s, rbtrace record splicing"
rbn_record_start "$t/rec"
rbn_set sources all || ktap_print_msg "$rbn_err"
sleep "$secs"
rbn_quiesce
rbn_record_stop
rc=$?

# ---- 1
ok=0
rbn_check_ok "$t/rec" && [ $rc -eq 0 ] && ok=1
events=$(rbn_check_events "$t/rec")
ktap_test_result $ok "rbtrace check passes ($events events)"

# ---- 2
ok=0
if "$RBTRACE" export "$t/rec" -o "$t/trace.dat" >"$t/export.out" 2>&1; then
	ok=1
fi
sed 's/^/# /' "$t/export.out"
ktap_test_result $ok "rbtrace export writes trace.dat"

# ---- 3: trace-cmd reads every event
ok=0
# The report goes through awk, not to disk: its sample lines and the parse
# failures in it are counted, the first few failures shown.
trace-cmd report "$t/trace.dat" 2>"$t/report.err" | awk '
	/UNKNOWN EVENT|FAILED TO PARSE/ { if (bad++ < 3) print "# stdout: " $0 }
	/ sample: / { n++ }
	END { printf "counts %d %d\n", n, bad }' >"$t/report.sum"
grep '^# ' "$t/report.sum"
grep '^counts ' "$t/report.sum" >"$t/report.counts"
read -r _ n bad_out <"$t/report.counts"
bad_err=$(grep -cE 'UNKNOWN EVENT|FAILED TO PARSE' "$t/report.err")
grep -m 3 -E 'UNKNOWN EVENT|FAILED TO PARSE' "$t/report.err" | sed 's/^/# stderr: /'
ktap_print_msg "trace-cmd report: ${n:-?} sample lines (rbtrace check: ${events:-?} events); 'FAILED TO PARSE' or 'UNKNOWN EVENT': ${bad_out:-?} on stdout, $bad_err on stderr"
[ -n "$events" ] && [ "${n:-0}" -eq "$events" ] && [ "${n:-0}" -gt 0 ] &&
	[ "${bad_out:-1}" -eq 0 ] && [ "$bad_err" -eq 0 ] && ok=1
ktap_test_result $ok "trace-cmd report reads every event, none failed to parse"

# ---- 4: --ts-check
ok=0
# the warnings go to stderr; stdout (the report) is only searched, not kept
{
	trace-cmd report --ts-check "$t/trace.dat" 2>&1
	echo $? >"$t/ts.rc"
} | grep -E 'went backwards|WARNING' >"$t/ts.out"
rc=$(cat "$t/ts.rc")
warn=$(grep -c 'went backwards' "$t/ts.out")
head -n 5 "$t/ts.out" | sed 's/^/# /'
ktap_print_msg "trace-cmd report --ts-check: exit $rc, $warn 'went backwards' warnings, $(wc -l <"$t/ts.out") warning lines"
[ "$rc" -eq 0 ] && [ ! -s "$t/ts.out" ] && ok=1
ktap_test_result $ok "trace-cmd report --ts-check: time never goes backwards"

# ---- 5, 6: latency flags and nesting
trace-cmd report -l "$t/trace.dat" 2>/dev/null | awk '
	/ sample: / {
		n++
		# the CPU and flags column, e.g. "1d.h2."
		if (match($0, / [0-9]+[.dX][.nNp][.hHsZz][0-9.]/)) {
			f = substr($0, RSTART + 1, RLENGTH - 1)
			sub(/^[0-9]+/, "", f)
			c = substr(f, 3, 1)
			if (c == "h" || c == "H") {
				if (hard++ < 3) print "# " $0
			}
			if (c == "s" || c == "H") soft++
			if (substr(f, 1, 1) == "d") irqoff++
		}
		if (match($0, /depth=[0-9]+/)) {
			d = substr($0, RSTART + 6, RLENGTH - 6) + 0
			if (d > 1) nested++
			if (d > maxd) maxd = d
		}
	}
	END { printf "counts %d %d %d %d %d %d\n", n, hard, soft, irqoff, nested, maxd }
' >"$t/flags"
grep '^# ' "$t/flags"
grep '^counts ' "$t/flags" >"$t/counts"
read -r _ n hard soft irqoff nested maxd <"$t/counts"
ktap_print_msg "trace-cmd report -l: $n lines, $hard hardirq (h), $soft softirq (s), $irqoff irqs-off (d)"
ok=0
[ "$hard" -gt 0 ] && [ "$soft" -gt 0 ] && ok=1
ktap_test_result $ok "trace-cmd report -l shows hardirq and softirq flags"

ktap_print_msg "events of nested writers (depth > 1): $nested, deepest $maxd"
ok=0
[ "$nested" -gt 0 ] && [ "$maxd" -ge 2 ] && ok=1
ktap_test_result $ok "trace-cmd shows events of nested writers"

rbn_unload || ktap_print_msg "$rbn_err"
ktap_finished
