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
# report on stdout; stderr is searched too). "--ts-check" must print no
# "went backwards" warning, and "-l" must show events written in hard and
# soft interrupt context (the h and s latency flags) and events written
# by nested writers (depth > 1). All of it is one "trace-cmd report -l
# --ts-check" pass over the file (a pass takes a minute under TCG).
# Skipped without trace-cmd.

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

rbn_require rbtrace trace-cmd

ktap_print_header
ktap_set_plan 6

secs=${RBN_TSCHECK_SECONDS:-$(rbn_secs 4)}
t=$rbn_tmp

# The task writers at a tenth of their time (50 us of every 500): the
# interrupts nest as often, and trace-cmd reads a tenth of the task
# events (a million of them took it two minutes under emulation).
if ! rbn_load buffer_size_kb=2048 gen_task_busy_us=50 gen_task_idle_us=450 \
	    sources=; then
	ktap_print_msg "$rbn_err"
	while [ "$KTAP_TESTNO" -lt 6 ]; do
		ktap_test_fail "module not loaded"
	done
	ktap_finished
fi

ktap_print_msg "all sources for $secs s (the task writers at a tenth of their time), rbtrace record splicing"
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

# ---- 3-6: one pass of "trace-cmd report -l --ts-check"
# The report goes through awk, not to disk: its sample lines, the parse
# failures and time warnings in it, the latency flags and the nesting
# depths are counted, the first few of each shown; stderr (where the
# --ts-check warnings go) is kept and searched.
{
	trace-cmd report -l --ts-check "$t/trace.dat" 2>"$t/report.err"
	echo $? >"$t/ts.rc"
} | awk '
	/UNKNOWN EVENT|FAILED TO PARSE/ { if (bad++ < 3) print "# stdout: " $0 }
	/went backwards|WARNING/ { if (warn++ < 3) print "# stdout: " $0 }
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
	END {
		printf "counts %d %d %d %d %d %d %d %d\n", n, bad, warn,
		       hard, soft, irqoff, nested, maxd
	}' >"$t/report.sum"
grep '^# ' "$t/report.sum"
grep '^counts ' "$t/report.sum" >"$t/report.counts"
read -r _ n bad_out warn_out hard soft irqoff nested maxd <"$t/report.counts"
bad_err=$(grep -cE 'UNKNOWN EVENT|FAILED TO PARSE' "$t/report.err")
grep -m 3 -E 'UNKNOWN EVENT|FAILED TO PARSE' "$t/report.err" | sed 's/^/# stderr: /'

ok=0
ktap_print_msg "trace-cmd report: ${n:-?} sample lines (rbtrace check: ${events:-?} events); 'FAILED TO PARSE' or 'UNKNOWN EVENT': ${bad_out:-?} on stdout, $bad_err on stderr"
[ -n "$events" ] && [ "${n:-0}" -eq "$events" ] && [ "${n:-0}" -gt 0 ] &&
	[ "${bad_out:-1}" -eq 0 ] && [ "$bad_err" -eq 0 ] && ok=1
ktap_test_result $ok "trace-cmd report reads every event, none failed to parse"

ok=0
rc=$(cat "$t/ts.rc")
warn=$(grep -c 'went backwards' "$t/report.err")
warn_lines=$(grep -cE 'went backwards|WARNING' "$t/report.err")
grep -m 5 -E 'went backwards|WARNING' "$t/report.err" | sed 's/^/# stderr: /'
ktap_print_msg "trace-cmd report --ts-check: exit $rc, $warn 'went backwards' warnings, $((warn_lines + ${warn_out:-0})) warning lines"
[ "$rc" -eq 0 ] && [ "$warn_lines" -eq 0 ] && [ "${warn_out:-1}" -eq 0 ] &&
	ok=1
ktap_test_result $ok "trace-cmd report --ts-check: time never goes backwards"

ktap_print_msg "trace-cmd report -l: $n lines, $hard hardirq (h), $soft softirq (s), $irqoff irqs-off (d)"
ok=0
[ "${hard:-0}" -gt 0 ] && [ "${soft:-0}" -gt 0 ] && ok=1
ktap_test_result $ok "trace-cmd report -l shows hardirq and softirq flags"

ktap_print_msg "events of nested writers (depth > 1): $nested, deepest $maxd"
ok=0
[ "${nested:-0}" -gt 0 ] && [ "${maxd:-0}" -ge 2 ] && ok=1
ktap_test_result $ok "trace-cmd shows events of nested writers"

rbn_unload || ktap_print_msg "$rbn_err"
ktap_finished
