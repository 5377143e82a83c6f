#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test_lockup.sh - readers on another CPU while a writer pushes the head page.
#
# Overwrite mode, a small buffer and busy task writers, so that the
# writers push the head page all the time. "inject page_head" stops a
# writer right after it flagged the head page UPDATE and lets a real
# interrupt write a nested event there; that event's commit wakes the
# readers through the module's irq_work, which runs on top of the stopped
# writer. Meanwhile:
#   - a reader of CPU 0's trace_pipe_raw on CPU 1 keeps blocking in
#     read() until the watermark (one dd reading one sub-buffer per
#     read(), again and again: the wake-up is for it; a dd per read,
#     started anew each time, would find the buffer full every time and
#     hardly ever wait), and
#   - trace_pipe is read on CPU 1, consuming the events of every CPU, so
#     that CPU 1 keeps taking CPU 0's reader lock and swapping its head
#     page (which waits, lock held, while the flag is UPDATE).
# Anything the writer's side does there that waits for the reader lock
# locks both CPUs up with interrupts off. The inject label is armed again
# and again for RBN_LOCKUP_SECONDS (default 20); the test prints how often
# it was hit, requires hits on CPU 0, requires the reader of CPU 0 to be
# seen asleep in the module's wait (rbn_raw_wait, by /proc/PID/wchan or
# stack; one look a second) at least once and both readers to run to the
# end, and requires the kernel's lockup and stall detectors to have said
# nothing (a lockup with interrupts off also stops the test itself: the VM
# then times out).

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

# shellcheck disable=SC2119 # no arguments: nothing more needed
rbn_require

plan=4
secs=$(rbn_secs "${RBN_LOCKUP_SECONDS:-20}")
t=$rbn_tmp

ktap_print_header
ktap_set_plan $plan

nr_online=$(rbn_online_cpus | wc -l)
if [ "$nr_online" -lt 2 ]; then
	ktap_skip_all "needs two online CPUs (has $nr_online)"
	exit $KSFT_SKIP
fi

detectors=
for f in watchdog soft_watchdog nmi_watchdog; do
	[ -r "/proc/sys/kernel/$f" ] &&
		detectors="$detectors $f=$(cat "/proc/sys/kernel/$f")"
done
ktap_print_msg "lockup detectors:${detectors:- none}"
rbn_dmesg_mark "test_lockup load"

if ! rbn_load overwrite=1 buffer_size_kb=8 sources= buffer_percent=100 \
	gen_task_busy_us=900 gen_task_idle_us=100; then
	ktap_print_msg "$rbn_err"
	while [ "$KTAP_TESTNO" -lt $plan ]; do
		ktap_test_fail "module not loaded"
	done
	ktap_finished
fi

sub=$(rbn_subbuf_size)
sub=${sub:-4096}
taskset -c 1 dd if="$rbn_dir/per_cpu/cpu0/trace_pipe_raw" of=/dev/null \
	bs="$sub" 2>"$t/reads.err" &
blk=$!
rbn_bg_add $blk
taskset -c 1 cat "$rbn_dir/trace_pipe" >/dev/null 2>"$t/tp.err" &
tp=$!
rbn_bg_add $tp

# sample_reader: one look at the reader of cpu0: $samples looks, $asleep
# of them found it asleep in the module; the first few are shown
samples=0
asleep=0
sample_reader()
{
	samples=$((samples + 1))
	if rbn_wait_blocked "$blk" "$rbn_wait_raw" 0 >"$t/where"; then
		asleep=$((asleep + 1))
		[ $asleep -le 3 ] && cat "$t/where"
		return 0
	fi
	return 1
}

# The first arming patches the hook's jump sites: before the writers run,
# so that the load runs on unpatched text (two vCPUs may then run truly
# at once in the VM: see scripts/vm.sh). Re-arming patches nothing.
base0=$(rbn_inject_field page_head cpu0)
base=$(rbn_inject_field page_head hits)
arms=0
rbn_write inject page_head && arms=1
rbn_set sources task
# Re-armed through a descriptor kept open, by the shell's own echo: no
# process to start per arming, so armings follow each other closely (each
# is used up by the first writer of each CPU that reaches the label).
exec 4>"$rbn_dir/inject"
start=$(date +%s)
last=$start
while :; do
	now=$(date +%s)
	[ $((now - start)) -lt "$secs" ] || break
	if [ "$now" != "$last" ]; then
		sample_reader
		last=$now
	fi
	i=0
	while [ $i -lt 10 ]; do
		echo page_head >&4 || break 2
		arms=$((arms + 1))
		i=$((i + 1))
		sleep 0.02
	done
done
exec 4>&-
rbn_set sources -task
sleep 1
rbn_write inject off
hits=$(($(rbn_inject_field page_head hits) - ${base:-0}))
hits0=$(($(rbn_inject_field page_head cpu0) - ${base0:-0}))
late=$(awk '$1 == "late" { for (i = 2; i <= NF; i++) { sub(/^[^=]*=/, "", $i); n += $i } }
	    END { print n + 0 }' "$rbn_dir/inject")
ktap_print_msg "$secs s: page_head armed $arms times, hit $hits times ($hits0 on cpu0), $late interrupts late"
rbn_stat_table written overrun read pages_touched
ok=0
[ "$hits0" -ge 10 ] && ok=1
ktap_test_result $ok "page_head hit on cpu0 with a blocking reader of cpu0 and a consumer on cpu1"

ok=1
kill -0 $tp 2>/dev/null || {
	ktap_print_msg "trace_pipe reader on cpu1 ended early: $(rbn_errtext "$t/tp.err")"
	ok=0
}
kill -0 $blk 2>/dev/null || {
	ktap_print_msg "the blocking reader of cpu0 ended early: $(rbn_errtext "$t/reads.err")"
	ok=0
}
# tracing_on=0 ends the reader (EOF)
rbn_quiesce
wait $blk
rc=$?
rbn_bg_done $blk
kill $tp 2>/dev/null
wait $tp
rbn_bg_done $tp
# dd: "N+M records in", N the whole sub-buffers read
reads=$(sed -n 's/^\([0-9][0-9]*\)+[0-9]* records in$/\1/p' "$t/reads.err")
ktap_print_msg "the reader of cpu0 (exit $rc): ${reads:-0} sub-buffers read; seen asleep in the module in $asleep of $samples looks"
[ "${reads:-0}" -gt 0 ] && [ "$asleep" -gt 0 ] || ok=0
ktap_test_result $ok "both readers ran to the end; the reader of cpu0 blocked in the module"

rbn_dmesg_after "rbnest-selftest: test_lockup load" >"$t/dmesg"
{
	rbn_dmesg_reports "$t/dmesg"
	grep -E "rcu.*stall" "$t/dmesg"
} | sort -u >"$t/bad"
n=$(wc -l <"$t/bad")
head -n 20 "$t/bad" | sed 's/^/# dmesg: /'
ktap_print_msg "kernel log since the load: $(wc -l <"$t/dmesg") lines, $n from the lockup/stall detectors or worse"
ok=0
[ "$n" -eq 0 ] && ok=1
ktap_test_result $ok "no lockup, stall or warning in the kernel log"

ok=0
if rbn_unload; then
	ok=1
else
	ktap_print_msg "$rbn_err"
fi
ktap_test_result $ok "unload"

ktap_finished
