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
# Shrinking may be refused with EBUSY while unread events would have to go
# (the README: "resize refused; buffer untouched on error"): then the size
# must be unchanged, and the shrink is done again on an emptied buffer,
# where it must succeed.

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

rbn_require rbtrace

ktap_print_header
ktap_set_plan 13

t=$rbn_tmp
step=0

load_on()
{
	rbn_set tracing_on 1
	rbn_set sources all || ktap_print_msg "sources all: $rbn_err"
}

# finish OK DESC: stop the load, record, check, report the case
finish()
{
	_ok=$1
	shift
	step=$((step + 1))
	sleep 1
	rbn_quiesce
	_rec=$t/rec.$step
	rbn_record "$_rec" >"$t/rec.out" || {
		cat "$t/rec.out"
		_ok=0
	}
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

# resize KB: under load; a shrink may get EBUSY, then retried emptied
resize()
{
	_ok=1
	_old=$(rbn_get buffer_size_kb)
	load_on
	sleep 1
	if rbn_write buffer_size_kb "$1"; then
		ktap_print_msg "buffer_size_kb $_old -> $1 under load: done"
	elif [ "$1" -lt "$_old" ] && echo "$rbn_err" | grep -qi 'busy'; then
		_now=$(rbn_get buffer_size_kb)
		ktap_print_msg "buffer_size_kb $_old -> $1 under load: $rbn_err; reads $_now"
		[ "$_now" = "$_old" ] || _ok=0
		echo "-all" >"$rbn_dir/sources"
		sleep 1
		rbn_set reset 1
		if rbn_write buffer_size_kb "$1"; then
			ktap_print_msg "buffer_size_kb $_old -> $1 on the emptied buffer: done"
		else
			ktap_print_msg "buffer_size_kb $_old -> $1 on the emptied buffer: $rbn_err"
			_ok=0
		fi
		load_on
	else
		ktap_print_msg "buffer_size_kb $_old -> $1 under load: $rbn_err"
		_ok=0
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

if ! rbn_load sources=; then
	ktap_print_msg "$rbn_err"
	while [ "$KTAP_TESTNO" -lt 13 ]; do
		ktap_test_fail "module not loaded"
	done
	ktap_finished
fi

for kb in 4096 256 2048 64 1024; do
	resize $kb
done

# attempts: written + dropped (still growing when a producer/consumer
# buffer is full)
attempts()
{
	echo $(($(rbn_stat_sum written) + $(rbn_stat_sum dropped)))
}

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
