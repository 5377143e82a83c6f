#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test_gp.sh - opening "trace" and writing "reset" wait for one grace
# period, whatever the number of CPUs.
#
# Both stop the writers (recording off) and wait until none is still in
# the write path: one synchronize_rcu() does that for every CPU at once.
# One per CPU makes them take as long as nr_cpus grace periods (a second
# or more on a large machine, with recording off all the while).
#
# A kprobe event of the kernel's own (tracefs kprobe_events) on
# synchronize_rcu records each call with the pid of its caller; a process
# of its own opens and closes "trace" (or writes "reset"), and its calls
# are counted:
#
#  A. open and close of trace: exactly 1 synchronize_rcu()
#  B. echo 1 > reset: exactly 1
#  C. "cat trace" still lists the events written before (the buffer was
#     not emptied by the open), and reset emptied it
#
# Skips where tracefs has no kprobe_events (CONFIG_KPROBE_EVENTS).

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

rbn_require insmod rmmod

t=$rbn_tmp
tr=/sys/kernel/tracing
[ -d $tr/events ] || tr=/sys/kernel/debug/tracing
ev=rbn_gp_test

ktap_print_header
if [ ! -w $tr/kprobe_events ]; then
	ktap_skip_all "$rbn_test: no kprobe_events in tracefs"
	exit "$KSFT_SKIP"
fi
ktap_set_plan 3

kp_cleanup()
{
	echo 0 >"$tr/events/kprobes/$ev/enable" 2>/dev/null
	echo "-:$ev" >>$tr/kprobe_events 2>/dev/null
}

# count_gp CMD...: run "sh -c CMD" as a process of its own; prints how many
# times that process called synchronize_rcu()
count_gp()
{
	echo >$tr/trace
	echo 1 >"$tr/events/kprobes/$ev/enable"
	sh -c "echo \$\$ >'$t/pid'; $*"
	echo 0 >"$tr/events/kprobes/$ev/enable"
	_pid=$(cat "$t/pid")
	grep -v '^#' $tr/trace >"$t/gp.trace"
	awk -v p="$_pid" '{ if ($1 ~ ("-" p "$")) n++ } END { print n + 0 }' \
		"$t/gp.trace"
}

ok=1
if ! echo "p:$ev synchronize_rcu" >>$tr/kprobe_events 2>"$t/kp.err"; then
	ktap_print_msg "kprobe on synchronize_rcu: $(cat "$t/kp.err")"
	ok=0
fi
if [ $ok = 1 ] && ! rbn_load sources=; then
	ktap_print_msg "$rbn_err"
	ok=0
fi
if [ $ok = 0 ]; then
	kp_cleanup
	ktap_test_fail "A: open of trace (not set up)"
	ktap_test_fail "B: reset (not set up)"
	ktap_test_fail "C: trace lists the events, reset empties (not set up)"
	ktap_finished
fi
ncpus=$(rbn_cpus | wc -l)
ktap_print_msg "$ncpus CPU buffers, $(rbn_online_cpus | wc -l) online"

rbn_set sources task || ktap_print_msg "sources task: $rbn_err"
sleep 1
echo "-all" >"$rbn_dir/sources"
sleep 0.5

ok=1
n=$(count_gp "exec 3<'$rbn_dir/trace'")
ktap_print_msg "open and close of trace: $n synchronize_rcu() calls"
[ "$n" -eq 1 ] || ok=0
ktap_test_result $ok "A: open of trace waits one grace period ($ncpus CPUs)"

before=$(grep -c ' seq=' "$rbn_dir/trace")

ok=1
n=$(count_gp "echo 1 >'$rbn_dir/reset'")
ktap_print_msg "echo 1 > reset: $n synchronize_rcu() calls"
[ "$n" -eq 1 ] || ok=0
ktap_test_result $ok "B: reset waits one grace period ($ncpus CPUs)"

after=$(grep -c ' seq=' "$rbn_dir/trace")
ok=1
ktap_print_msg "trace: $before events before the reset, $after after"
[ "$before" -gt 0 ] && [ "$after" -eq 0 ] || ok=0
ktap_test_result $ok "C: trace lists the events written, reset empties the buffer"

kp_cleanup
rbn_unload || ktap_print_msg "$rbn_err"
ktap_finished
