#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test_clockback.sh - trace_clock=mono with the NMI writers on.
#
# ktime_get_mono_fast_ns() read in an NMI can be behind the reading of the
# event the NMI interrupted. Such an event must be stored at the time of
# the event before it (flagged and counted as clock-back), never below it
# and never as a 59-bit carry 2^59 ns ahead. The module is loaded with
# trace_clock=mono and a self-NMI at every hrtimer expiry; every source
# writes for RBN_CLOCKBACK_SECONDS (default 6, 3 with RBN_QUICK=1) while
# rbtrace record splices. "rbtrace check" must pass (time never goes back,
# every event at its writer's time unless zero-delta or clock-back, and
# clock-back events never a carry away from their clock), no event may be
# later than the clock after the run, and rbtrace's clock-back count must
# match the ts_clock_back counters. Whether the clock steps back at all is
# up to the machine: the counts are printed, zero is no failure.

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

rbn_require rbtrace

ktap_print_header
ktap_set_plan 4

secs=${RBN_CLOCKBACK_SECONDS:-$(rbn_secs 6)}
t=$rbn_tmp

if ! rbn_load trace_clock=mono gen_nmi_every=1 buffer_size_kb=4096 sources=; then
	ktap_print_msg "$rbn_err"
	while [ "$KTAP_TESTNO" -lt 4 ]; do
		ktap_test_fail "module not loaded"
	done
	ktap_finished
fi

# ---- 1: the clock and the NMI source
ok=0
clock=$(cat "$rbn_dir/trace_clock")
ktap_print_msg "trace_clock: $clock"
case $clock in
*"[mono]"*) ok=1 ;;
esac
ktap_test_result $ok "trace_clock=mono selected"

ktap_print_msg "all sources for $secs s, a self-NMI at every hrtimer expiry"
rbn_record_start "$t/rec"
rbn_set sources all || ktap_print_msg "$rbn_err"
sleep "$secs"
rbn_quiesce
rbn_record_stop
rec_rc=$?
now=$(rbn_stat 0 now_ts)
cat "$rbn_dir/sources" >"$t/sources"

# ---- 2: rbtrace check
rbn_check "$t/rec" >/dev/null
check_rc=$?
sed 's/^/# /' "$t/rec.check" | grep -v VIOLATION | head -n 20
grep VIOLATION "$t/rec.check" | head -n 5 | sed 's/^/# /'
events=$(rbn_check_events "$t/rec")
nmi=$(awk '$1 == "nmi" { for (i = 2; i <= NF; i++) n += $i } END { print n + 0 }' \
	"$t/rec.check")
ok=0
[ $rec_rc -eq 0 ] && [ $check_rc -eq 0 ] && grep -q ': OK$' "$t/rec.check" &&
	[ "${events:-0}" -gt 0 ] && [ "$nmi" -gt 0 ] && ok=1
ktap_print_msg "events: ${events:-0} recorded, $nmi written in NMI context; record exit $rec_rc, check exit $check_rc"
ktap_test_result $ok "rbtrace check passes on a mono recording with NMI writers"

# ---- 3: nothing later than the clock after the run
ok=0
# the latest time of each CPU is its "last" column in rbtrace check's
# table (SECONDS.NANOSECONDS): time never goes back on a CPU, which check
# passed (test 2), so it is the latest event of the CPU
last=$(awk '$1 ~ /^[0-9]+$/ && NF == 14 {
		v = $13
		sub(/\./, "", v); sub(/^0+/, "", v)
		if (length(v) > length(m) || (length(v) == length(m) && v > m))
			m = v
	    }
	    END { print m }' "$t/rec.check")
ktap_print_msg "latest event at ${last:-?} ns, mono clock after the run $now ns"
[ -n "$last" ] && [ -n "$now" ] && [ ${#last} -le ${#now} ] &&
	{ [ ${#last} -lt ${#now} ] || [ "$last" -le "$now" ]; } && ok=1
ktap_test_result $ok "no event ahead of the clock (no 2^59 ns jump)"

# ---- 4: clock-back counted
rbn_stat_table written dropped ts_abs ts_slow ts_zero ts_clock_back
cb_stats=$(rbn_stat_sum ts_clock_back)
cb_check=$(sed -n 's/^clock-back: \([0-9][0-9]*\).*/\1/p' "$t/rec.check")
lost=0
for cpu in $(rbn_cpus); do
	m=$(rbn_check_col "$t/rec" "$cpu" 8 | tr -d '+?')
	lost=$((lost + ${m:-0}))
done
ktap_print_msg "clock-back events: ts_clock_back $cb_stats, rbtrace check $cb_check; events lost $lost"
ok=0
if [ -n "$cb_check" ]; then
	if [ "$lost" -eq 0 ]; then
		[ "$cb_check" -eq "$cb_stats" ] && ok=1
	else
		[ "$cb_check" -le "$cb_stats" ] && ok=1
	fi
fi
ktap_test_result $ok "clock-back events counted alike by the stats and rbtrace check"

rbn_unload || ktap_print_msg "$rbn_err"
ktap_finished
