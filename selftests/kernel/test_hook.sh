#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test_hook.sh - turning the write-path hook on and off loses no event.
#
# Arming a label in "inject" installs the write-path hook and turns its
# static key on; "off" turns it off again. Both patch the kernel text of
# the write path while writers run through it: that is what the kernel's
# text patching is for, and nothing else is needed. A module that turns
# recording off around the patching (and waits for a grace period) drops
# every event written meanwhile, silently: recording off uses no sequence
# number, so readers see no loss.
#
# The hrtimer source writes the number of its CPU's expiries as the arg of
# each event, counted whether the event was written or not, so on each CPU
# the args of consecutive events go up by exactly one unless an event was
# not written. With a reader draining the buffer (producer/consumer mode),
# hrtimer events only are written while the hook is turned on and off
# RBN_HOOK_ROUNDS times (default 10, 5 with RBN_QUICK=1):
#
#  A. Every round armed and disarmed, and every CPU wrote events.
#  B. No event lost to a full buffer (dropped, overrun), so that a gap can
#     only be an event not written; rbtrace check passes.
#  C. No gap in the args of any CPU's hrtimer events.

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

rbn_require rbtrace

t=$rbn_tmp
rounds=${RBN_HOOK_ROUNDS:-10}
[ "${RBN_QUICK:-0}" = 1 ] && [ -z "${RBN_HOOK_ROUNDS:-}" ] && rounds=5

ktap_print_header
ktap_set_plan 3

if ! rbn_load sources= gen_period_us=200; then
	ktap_print_msg "$rbn_err"
	ktap_test_fail "A: hook turned on and off (module not loaded)"
	ktap_test_fail "B: nothing lost to a full buffer (module not loaded)"
	ktap_test_fail "C: no gap in the hrtimer events (module not loaded)"
	ktap_finished
fi

ok=1
rbn_record_start "$t/rec"
rbn_set sources hrtimer || {
	ktap_print_msg "sources hrtimer: $rbn_err"
	ok=0
}
sleep 1
i=0
while [ $i -lt "$rounds" ]; do
	i=$((i + 1))
	if ! rbn_write inject a; then
		ktap_print_msg "round $i: echo a > inject: $rbn_err"
		ok=0
		break
	fi
	sleep 0.3
	if ! rbn_write inject off; then
		ktap_print_msg "round $i: echo off > inject: $rbn_err"
		ok=0
		break
	fi
	sleep 0.3
done
written=$(rbn_source_field hrtimer events)
rbn_quiesce
rbn_record_stop >"$t/rec.out" || {
	cat "$t/rec.out"
	ok=0
}
lost=$(($(rbn_stat_sum dropped) + $(rbn_stat_sum commit_overrun) + $(rbn_stat_sum overrun)))

# One line per CPU: "CPU events gaps missing", from the hrtimer events
# (src=hrtimer) of the recording in time order.
"$RBTRACE" report "$t/rec" 2>"$t/report.err" | awk '
	/ src=hrtimer / {
		c = ""
		for (i = 1; i <= NF && c == ""; i++)
			if ($i ~ /^\[[0-9]+\]$/)
				c = $i
		gsub(/[^0-9]/, "", c)
		for (i = 3; i <= NF; i++)
			if ($i ~ /^arg=/)
				a = substr($i, 5) + 0
		if (c in last && a != last[c] + 1) {
			gaps[c]++
			miss[c] += a - last[c] - 1
		}
		last[c] = a
		n[c]++
	}
	END { for (c in n) print c + 0, n[c], gaps[c] + 0, miss[c] + 0 }' |
	sort -n >"$t/percpu"
sed 's/^/# report: /' "$t/report.err" | head -n 5
online=$(rbn_online_cpus | tr '\n' ' ')
for c in $online; do
	grep -q "^$c " "$t/percpu" || {
		ktap_print_msg "cpu$c: no hrtimer event recorded"
		ok=0
	}
done
ktap_print_msg "$i of $rounds rounds of inject a / off; hrtimer events written: ${written:-?}"
ktap_test_result $ok "A: hook turned on and off $rounds times under the hrtimer source"

ok=1
rbn_check_ok "$t/rec" >"$t/check.out" || {
	cat "$t/check.out"
	ok=0
}
ktap_print_msg "lost to a full buffer (dropped, overrun): $lost; check: $(rbn_check_events "$t/rec") events, $(tail -n 1 "$t/rec.check")"
[ "$lost" -eq 0 ] || ok=0
ktap_test_result $ok "B: nothing lost to a full buffer, rbtrace check passes"

ok=1
[ -s "$t/percpu" ] || ok=0
while read -r c n gaps miss; do
	ktap_print_msg "cpu$c: $n hrtimer events, $gaps gaps, $miss events not written"
	[ "$gaps" -eq 0 ] || ok=0
done <"$t/percpu"
ktap_test_result $ok "C: no gap in the hrtimer events of any CPU"

rbn_unload || ktap_print_msg "$rbn_err"
ktap_finished
