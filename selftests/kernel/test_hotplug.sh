#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test_hotplug.sh - CPU 1 goes offline and online under load.
#
# All sources on and rbtrace record splicing while CPU 1 is taken offline
# and brought back RBN_HOTPLUG_CYCLES times (default 3, 2 with RBN_QUICK=1).
# CPU 0 must keep writing (written + dropped grows) while CPU 1 is offline, CPU 1 must write again
# once it is back, and the recording must pass "rbtrace check". Skipped
# when CPU 1 cannot be taken offline (one CPU, no hotplug).

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

online_file=/sys/devices/system/cpu/cpu1/online
if [ "$(id -u 2>/dev/null)" = 0 ] && { [ ! -w "$online_file" ] ||
   [ "$(rbn_online_cpus | wc -l)" -lt 2 ]; }; then
	ktap_print_header
	ktap_skip_all "$rbn_test: no CPU 1 to take offline ($online_file)"
	exit "$KSFT_SKIP"
fi
rbn_require rbtrace

cycles=3
[ "${RBN_QUICK:-0}" = 1 ] && cycles=2
cycles=${RBN_HOTPLUG_CYCLES:-$cycles}
t=$rbn_tmp

# shellcheck disable=SC2317 # called by the trap
hotplug_cleanup()
{
	[ "$(cat "$online_file" 2>/dev/null)" = 0 ] && echo 1 >"$online_file"
	rbn_cleanup
}
trap hotplug_cleanup EXIT

ktap_print_header
ktap_set_plan 5

if ! rbn_load buffer_size_kb=2048 sources=; then
	ktap_print_msg "$rbn_err"
	while [ "$KTAP_TESTNO" -lt 5 ]; do
		ktap_test_fail "module not loaded"
	done
	ktap_finished
fi

rbn_record_start "$t/rec"
rbn_set sources all || ktap_print_msg "$rbn_err"
sleep 1

ok_plug=1
ok_cpu0=1
i=0
while [ $i -lt "$cycles" ]; do
	i=$((i + 1))
	if ! (echo 0 >$online_file) 2>"$t/err"; then
		ktap_print_msg "cycle $i: offline: $(rbn_errtext "$t/err")"
		ok_plug=0
	fi
	off=$(cat $online_file)
	a=$(rbn_attempts 0)
	sleep 1
	b=$(rbn_attempts 0)
	[ "$b" -gt "$a" ] || ok_cpu0=0
	if ! (echo 1 >$online_file) 2>"$t/err"; then
		ktap_print_msg "cycle $i: online: $(rbn_errtext "$t/err")"
		ok_plug=0
	fi
	on=$(cat $online_file)
	ktap_print_msg "cycle $i: cpu1 online=$off, cpu0 wrote $((b - a)) events in 1 s; cpu1 online=$on"
	[ "$off" = 0 ] && [ "$on" = 1 ] || ok_plug=0
	sleep 1
done
ktap_test_result $ok_plug "cpu1 offline and online $cycles times under load"
ktap_test_result $ok_cpu0 "cpu0 keeps writing while cpu1 is offline"

a=$(rbn_attempts 1)
sleep 2
b=$(rbn_attempts 1)
ktap_print_msg "cpu1 back online: written + dropped $a, 2 s later $b"
ok=0
[ "$b" -gt "$a" ] && ok=1
ktap_test_result $ok "cpu1 writes again once back online"

rbn_quiesce
rbn_record_stop
rc=$?
ok=0
rbn_check_ok "$t/rec" && [ $rc -eq 0 ] && ok=1
rbn_stat_table written dropped overrun read entries
ktap_test_result $ok "the recording across the hotplug passes rbtrace check ($(rbn_check_events "$t/rec") events)"

ok=0
if rbn_unload; then
	ok=1
else
	ktap_print_msg "$rbn_err"
fi
ktap_test_result $ok "unload"

ktap_finished
