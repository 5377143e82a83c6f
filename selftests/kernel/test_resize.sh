#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test_resize.sh - control files changed under load.
#
# With all sources on: resize up and down, reset, tracing_on 0 and 1,
# trace_clock local -> mono -> boot -> global -> local. Each file must read
# back what was written, and after each change a recording of the buffer
# (sources off, tracing off, drained) must pass "rbtrace check".
#
# A growth runs with no reader: the buffer is full. A shrink is refused
# with EBUSY while unread events would have to go (the buffer is left
# untouched), and with every source on and no reader the buffer is full
# within a second: a shrink is first tried so, and must get EBUSY with the
# size unchanged; then, with the load generator's hrtimer writer on (a
# load a reader keeps up with, also on a debug kernel), "rbtrace record"
# drains the buffer (buffer_percent=0: woken by every sub-buffer) while
# it keeps writing (written + dropped grows across it), and the shrink
# must succeed under that load within 20 tries (0.2 s apart; after each
# EBUSY the size must read back unchanged). The recording, made across the shrink, must
# pass "rbtrace check". A shrink that never succeeds under load fails its
# case (it is then done on an emptied buffer, for the cases after it).
# The number of shrinks that succeeded under load is printed at the end.

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

rbn_require rbtrace

ktap_print_header
ktap_set_plan 13

t=$rbn_tmp
step=0
shrink_tries=20
shrinks=0
shrinks_load=0
drain_rec=

# attempts: written + dropped (still growing when a producer/consumer
# buffer is full)
attempts()
{
	echo $(($(rbn_stat_sum written) + $(rbn_stat_sum dropped)))
}

load_on()
{
	rbn_set tracing_on 1
	rbn_set sources all || ktap_print_msg "sources all: $rbn_err"
}

# finish OK DESC: stop the load, record (or stop the draining recording),
# check, report the case
finish()
{
	_ok=$1
	shift
	step=$((step + 1))
	sleep 1
	rbn_quiesce
	if [ -n "$drain_rec" ]; then
		_rec=$drain_rec
		drain_rec=
		rbn_record_stop >"$t/rec.out" || {
			cat "$t/rec.out"
			_ok=0
		}
	else
		_rec=$t/rec.$step
		rbn_record "$_rec" >"$t/rec.out" || {
			cat "$t/rec.out"
			_ok=0
		}
	fi
	if rbn_check_ok "$_rec" >"$t/check.out"; then
		ktap_print_msg "recording: $(rbn_check_events "$_rec") events, $(tail -n 1 "$_rec.check")"
	else
		cat "$t/check.out"
		_ok=0
	fi
	rm -rf "$_rec"
	rbn_set tracing_on 1
	ktap_test_result "$_ok" "$*"
}

# shrink OLD KB: the shrink under load, a reader draining; 0 when it
# succeeded under load
shrink()
{
	_s_ok=1
	_s_try=0
	_s_done=0
	_s_busy=0
	_s_a0=$(attempts)
	while [ $_s_try -lt $shrink_tries ]; do
		_s_try=$((_s_try + 1))
		if rbn_write buffer_size_kb "$2"; then
			_s_done=1
			break
		fi
		if ! echo "$rbn_err" | grep -qi 'busy'; then
			ktap_print_msg "buffer_size_kb $1 -> $2, try $_s_try: $rbn_err"
			_s_ok=0
			break
		fi
		_s_busy=$((_s_busy + 1))
		_s_now=$(rbn_get buffer_size_kb)
		if [ "$_s_now" != "$1" ]; then
			ktap_print_msg "buffer_size_kb $1 -> $2, try $_s_try: $rbn_err, but it reads $_s_now"
			_s_ok=0
		fi
		sleep 0.2
	done
	_s_a1=$(attempts)
	ktap_print_msg "buffer_size_kb $1 -> $2 with the hrtimer source on and rbtrace record draining: $([ $_s_done = 1 ] && echo "done at try $_s_try" || echo "not done in $_s_try tries"), $_s_busy EBUSY; written + dropped $_s_a0 -> $_s_a1 meanwhile"
	if [ $_s_done = 1 ] && [ "$_s_a1" -gt "$_s_a0" ] && [ $_s_ok = 1 ]; then
		shrinks_load=$((shrinks_load + 1))
		return 0
	fi
	if [ $_s_done = 0 ]; then
		# for the cases after this one
		echo "-all" >"$rbn_dir/sources"
		sleep 1
		rbn_set reset 1
		if rbn_write buffer_size_kb "$2"; then
			ktap_print_msg "buffer_size_kb $1 -> $2 on the emptied buffer: done (not under load)"
		else
			ktap_print_msg "buffer_size_kb $1 -> $2 on the emptied buffer: $rbn_err"
		fi
		load_on
	fi
	return 1
}

# resize KB: under load; a growth with no reader, a shrink with a reader
# draining
resize()
{
	_ok=1
	_old=$(rbn_get buffer_size_kb)
	if [ "$1" -lt "$_old" ]; then
		shrinks=$((shrinks + 1))
		load_on
		sleep 1
		# no reader yet: the unread events do not fit, EBUSY
		if rbn_write buffer_size_kb "$1"; then
			ktap_print_msg "buffer_size_kb $_old -> $1 with no reader: done (want EBUSY)"
			_ok=0
		else
			_now=$(rbn_get buffer_size_kb)
			ktap_print_msg "buffer_size_kb $_old -> $1 with no reader, $(rbn_stat_sum entries) events unread: $rbn_err; reads $_now (want EBUSY, $_old)"
			if ! echo "$rbn_err" | grep -qi 'busy' ||
			   [ "$_now" != "$_old" ]; then
				_ok=0
			fi
		fi
		# A load a reader keeps up with on any kernel (a debug
		# kernel's reader falls far behind the task writers, which
		# write as fast as they can): the hrtimer writer, 5000
		# hard-irq events per second and CPU.
		if ! rbn_set sources -all || ! rbn_set sources hrtimer; then
			ktap_print_msg "$rbn_err"
		fi
		drain_rec=$t/rec.drain.$((step + 1))
		rbn_record_start "$drain_rec"
		shrink "$_old" "$1" || _ok=0
	else
		load_on
		sleep 1
		if rbn_write buffer_size_kb "$1"; then
			ktap_print_msg "buffer_size_kb $_old -> $1 under load, no reader: done"
		else
			ktap_print_msg "buffer_size_kb $_old -> $1 under load, no reader: $rbn_err"
			_ok=0
		fi
	fi
	_now=$(rbn_get buffer_size_kb)
	ktap_print_msg "buffer_size_kb reads $_now (want $1)"
	[ "$_now" = "$1" ] || _ok=0
	finish $_ok "resize $_old -> $1 KiB under load"
}

# clock NAME: switch the clock under load
clock()
{
	_ok=1
	_old=$(rbn_clock)
	load_on
	sleep 1
	rbn_write trace_clock "$1" || {
		ktap_print_msg "trace_clock $1: $rbn_err"
		_ok=0
	}
	_now=$(rbn_get trace_clock)
	ktap_print_msg "trace_clock $_old -> $1: reads '$_now'"
	[ "$(rbn_clock)" = "$1" ] || _ok=0
	finish $_ok "trace_clock $_old -> $1 under load"
}

if ! rbn_load sources= buffer_percent=0; then
	ktap_print_msg "$rbn_err"
	while [ "$KTAP_TESTNO" -lt 13 ]; do
		ktap_test_fail "module not loaded"
	done
	ktap_finished
fi

for kb in 4096 256 2048 64 1024; do
	resize $kb
done
ktap_print_msg "shrinks under load (a reader draining): $shrinks_load of $shrinks succeeded"

# ---- reset under load: the counters start again
ok=1
load_on
sleep 1
w0=$(attempts)
rbn_write reset 1 || { ktap_print_msg "reset: $rbn_err"; ok=0; }
w1=$(attempts)
ktap_print_msg "reset under load: written + dropped $w0 before, $w1 right after"
[ "$w0" -gt 0 ] && [ "$w1" -lt "$w0" ] || ok=0
finish $ok "reset under load"

# ---- tracing_on 0 and 1 under load
ok=1
load_on
sleep 1
rbn_write tracing_on 0 || { ktap_print_msg "tracing_on 0: $rbn_err"; ok=0; }
v=$(rbn_get tracing_on)
sleep 1
w0=$(rbn_stat_sum written)
sleep 1
w1=$(rbn_stat_sum written)
ktap_print_msg "tracing_on 0 under load: reads '$v'; written $w0, 1 s later $w1"
[ "$v" = 0 ] && [ "$w0" -eq "$w1" ] || ok=0
finish $ok "tracing_on 0 under load: nothing written"

ok=1
rbn_set sources all
rbn_write tracing_on 0
sleep 1
rbn_write tracing_on 1 || { ktap_print_msg "tracing_on 1: $rbn_err"; ok=0; }
v=$(rbn_get tracing_on)
w0=$(attempts)
sleep 1
w1=$(attempts)
ktap_print_msg "tracing_on 1 under load: reads '$v'; written + dropped $w0, 1 s later $w1"
[ "$v" = 1 ] && [ "$w1" -gt "$w0" ] || ok=0
finish $ok "tracing_on 1 under load: writing again"

for c in mono boot global local; do
	clock $c
done

ok=0
if rbn_unload; then
	ok=1
else
	ktap_print_msg "$rbn_err"
fi
ktap_test_result $ok "unload"

ktap_finished
