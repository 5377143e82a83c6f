#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test_wake.sh - when blocked readers wake.
#
# A kprobe on the sync(2) path is the only writer: "taskset -c 0 sync"
# writes exactly one event on CPU 0, so the test knows after each commit
# where the buffer stands. A reader is "blocked" when it sleeps in the
# module's wait (rbn_wait_blocked: state S and /proc/PID/wchan or the top
# of /proc/PID/stack in rbn_raw_wait, or rbn_text_read for trace_pipe),
# not merely when it has not finished yet. Checked:
#   - a read() blocked on cpu0's trace_pipe_raw wakes at the first commit
#     that reaches buffer_percent, and not before (the fill level of the
#     stats file and the formula of the README, after every event; after
#     each event below it the reader is still asleep in the module);
#   - it wakes at once (within a second) when the CPU is reset (EOF) and
#     when tracing_on goes to 0 (EOF);
#   - tracing_on=0 ends blocked trace_pipe_raw and trace_pipe readers also
#     while "trace" is held open (which pauses recording, but is not
#     "tracing stopped").

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

# shellcheck disable=SC2119 # no arguments: nothing more needed
rbn_require

plan=6
percent=40
kb=8
t=$rbn_tmp

ktap_print_header
ktap_set_plan $plan

if ! rbn_load buffer_size_kb=$kb sources= buffer_percent=$percent; then
	ktap_print_msg "$rbn_err"
	while [ "$KTAP_TESTNO" -lt $plan ]; do
		ktap_test_fail "module not loaded"
	done
	ktap_finished
fi
sub=$(rbn_subbuf_size)
sub=${sub:-4096}
data=$((sub - 16))
# sub-buffers in the ring: buffer_size_kb rounded up, at least 2
nr=$(((kb * 1024 + data - 1) / data))
[ $nr -lt 2 ] && nr=2
ktap_print_msg "sub-buffer $sub bytes, $nr in the ring, buffer_percent $percent"

probe=
for sym in ksys_sync __x64_sys_sync; do
	if rbn_set kprobe_events "p:rbn_wake_sync $sym"; then
		probe=$sym
		break
	fi
done
ktap_print_msg "kprobe on ${probe:-nothing} $rbn_err"
[ -n "$probe" ] && ! rbn_set sources kprobes && ktap_print_msg "$rbn_err"

# emit: one event on CPU 0
emit()
{
	taskset -c 0 sync
}

# reached: the watermark formula on cpu0's counters now
reached()
{
	_w_bytes=$(rbn_stat 0 bytes)
	_w_entries=$(rbn_stat 0 entries)
	[ "${_w_entries:-0}" -gt 0 ] &&
		[ $(((_w_bytes + data) * 100)) -ge $((percent * nr * data)) ]
}

# alive PID TENTHS: PID still runs after waiting up to TENTHS/10 s for it
alive()
{
	_a_i=0
	while kill -0 "$1" 2>/dev/null && [ $_a_i -lt "$2" ]; do
		sleep 0.1
		_a_i=$((_a_i + 1))
	done
	kill -0 "$1" 2>/dev/null
}

# start_reader OUT: a blocking read() of one sub-buffer of cpu0 in the
# background; $pid
start_reader()
{
	rm -f "$1"
	dd if="$rbn_dir/per_cpu/cpu0/trace_pipe_raw" of="$1" bs="$sub" \
		count=1 2>"$1.err" &
	pid=$!
	rbn_bg_add $pid
}

# end_reader: wait for $pid; $rc, $size
end_reader()
{
	kill "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	rbn_bg_done "$pid"
	size=$(stat -c %s "$1" 2>/dev/null)
	size=${size:-0}
}

# ---- the watermark, one commit at a time -----------------------------------

# The reader consumes what it wakes for, so the fill level at each event is
# measured first, in a calibration round without a reader: the same events
# on the same pages (sync calls 0.3 s apart: each but a page's first has a
# time extend), after a reset. $need is the first event whose commit
# reaches the watermark.
ok=1
[ -n "$probe" ] || ok=0
need=
levels=
rbn_set reset 1
n=0
while [ $ok = 1 ] && [ $n -lt 400 ]; do
	emit
	n=$((n + 1))
	sleep 0.3
	levels="$levels $(rbn_stat 0 bytes)"
	if reached; then
		need=$n
		break
	fi
done
written=$(rbn_stat 0 written)
ktap_print_msg "calibration: watermark reached at event ${need:-never} of $written; unread bytes after each:$levels"
if [ -z "$need" ] || [ "$written" -ne "$n" ] || [ "$need" -le 1 ]; then
	ktap_print_msg "each sync must write exactly one event on cpu0, and more than one must be needed"
	ok=0
fi

rbn_set reset 1
start_reader "$t/wm"
if ! rbn_wait_blocked $pid "$rbn_wait_raw"; then
	ktap_print_msg "the reader did not block on an empty buffer: $(rbn_errtext "$t/wm.err")"
	ok=0
fi
n=0
early=
late=0
asleep=0
while [ $ok = 1 ] && [ $n -lt "$need" ]; do
	emit
	n=$((n + 1))
	if [ $n -lt "$need" ]; then
		# below the watermark: must stay blocked
		if ! alive $pid 3; then
			early=$n
			ktap_print_msg "event $n of $need: the reader woke below the watermark"
			break
		fi
		if ! rbn_wait_blocked $pid "$rbn_wait_raw" 5 >"$t/wm.where"; then
			cat "$t/wm.where"
			early=$n
			ktap_print_msg "event $n of $need: the reader is not asleep in the module below the watermark"
			break
		fi
		asleep=$((asleep + 1))
	elif alive $pid 10; then
		late=1
		ktap_print_msg "event $n: the watermark is reached, the reader still blocked 1 s later (bytes $(rbn_stat 0 bytes))"
	fi
done
end_reader "$t/wm"
ktap_print_msg "with a reader: $n events; asleep in the module after each of the $asleep below the watermark; woke early: ${early:-no}, late: $([ $late = 1 ] && echo yes || echo no); reader exit $rc with $size bytes"
[ -z "$early" ] && [ $late = 0 ] && [ "$size" -eq "$sub" ] || ok=0
ktap_test_result $ok "buffer_percent=$percent: a blocked read() wakes at the commit that reaches it, not before"

# ended_by OUT FILE VALUE: a reader blocked on one event, then FILE=VALUE;
# ok=0 unless it was blocked and ended within a second; $rc, $size
ended_by()
{
	ok=1
	start_reader "$1"
	rbn_wait_blocked $pid "$rbn_wait_raw" || ok=0
	emit
	# one event is below the watermark: still asleep
	rbn_wait_blocked $pid "$rbn_wait_raw" 5 || ok=0
	rbn_set "$2" "$3"
	_e_fast=yes
	if alive $pid 10; then
		_e_fast=no
		ok=0
	fi
	end_reader "$1"
	ktap_print_msg "$2=$3 with a reader blocked on one event: exit $rc, ended within 1 s: $_e_fast, $size bytes"
}

# ---- a reset wakes at once -------------------------------------------------

rbn_set reset 1
ended_by "$t/rs" reset 1
[ $rc -eq 0 ] && [ "$size" -eq 0 ] || ok=0
ktap_test_result $ok "a reset of its CPU ends a blocked read() at once (EOF)"

# ---- tracing_on=0 wakes at once --------------------------------------------

rbn_set tracing_on 1
ended_by "$t/off" tracing_on 0
[ $rc -eq 0 ] && [ "$size" -eq "$sub" ] || ok=0
ktap_test_result $ok "tracing_on=0 ends a blocked read() at once, with what there is"

# ---- tracing_on=0 while "trace" is open ------------------------------------

rbn_set reset 1
rbn_set tracing_on 1
# "trace" open for reading pauses recording until it is closed: held open
# by a process of its own, so that no other one inherits the descriptor
sleep 60 3<"$rbn_dir/trace" &
holder=$!
rbn_bg_add $holder
start_reader "$t/tr"
raw=$pid
timeout -s KILL 60 cat "$rbn_dir/trace_pipe" >"$t/tp" 2>"$t/tp.err" &
text=$!
rbn_bg_add $text
ok=1
if ! rbn_wait_blocked $raw "$rbn_wait_raw" ||
   ! rbn_wait_blocked $text "$rbn_wait_text"; then
	ktap_print_msg "readers did not block with trace open"
	ok=0
fi
rbn_set tracing_on 0
raw_alive=0
text_alive=0
alive $raw 30 && raw_alive=1
alive $text 30 && text_alive=1
ktap_print_msg "trace held open, tracing_on=0: trace_pipe_raw reader $([ $raw_alive = 1 ] && echo 'still blocked after 3 s' || echo ended), trace_pipe reader $([ $text_alive = 1 ] && echo 'still blocked after 3 s' || echo ended)"
[ $raw_alive = 0 ] && [ $text_alive = 0 ] || ok=0
end_reader "$t/tr"
kill $text 2>/dev/null
wait $text
rbn_bg_done $text
kill $holder
wait $holder
rbn_bg_done $holder
ktap_test_result $ok "tracing_on=0 ends blocked readers while trace is open"

# ---- the kprobe writes again after "trace" is closed -----------------------

rbn_set reset 1
rbn_set tracing_on 1
emit
emit
n=$(rbn_stat 0 written)
ktap_print_msg "after closing trace: 2 sync calls, written $n on cpu0"
ok=0
[ "$n" -eq 2 ] && ok=1
ktap_test_result $ok "recording resumes when trace is closed"

ok=0
rbn_set kprobe_events "-:rbn_wake_sync"
if rbn_unload; then
	ok=1
else
	ktap_print_msg "$rbn_err"
fi
ktap_test_result $ok "unload"

ktap_finished
