#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test_badinput.sh - bad writes to every writable file are refused with the
# errno of the README and change nothing.
#
# Each write is one write(2) done by dd (the shells' echo does not tell the
# errno: dash prints "I/O error" for all of them); the error text dd prints
# is matched: EINVAL "Invalid argument", ENOENT "No such file", EEXIST
# "File exists". Every write has its outcome asserted (a MISMATCH line and
# a failed case otherwise):
#   buffer_size_kb, tracing_on, buffer_percent, validate: an empty line,
#     garbage, negative, huge (99999999999999999999), a number and
#     garbage, two numbers, overlong (5000 digits), out of range: EINVAL
#     each;
#   trace_clock: an empty line, an unknown name, a name with a suffix, two
#     names, huge, overlong: EINVAL each;
#   reset and trace: garbage, an empty line, huge, overlong: accepted,
#     each (any write resets);
#   sources: garbage, a known and an unknown name (nothing switched on),
#     an unknown name disabled, huge, overlong, a lone "+": EINVAL; an
#     empty line: accepted, nothing changed; a duplicate ("task,task"):
#     accepted, task on;
#   kprobe_events: an unknown symbol, removing an unknown name: ENOENT; a
#     duplicate name (same or other symbol): EEXIST; garbage, no name, no
#     symbol, huge, an overlong name: EINVAL; an empty line: accepted,
#     nothing changed;
#   inject: garbage, a known and an unknown label (nothing armed), huge,
#     overlong, an empty line: EINVAL;
#   bench: garbage, an unknown key, a bad number, a huge number, overlong,
#     an empty line: EINVAL.
# Afterwards every file reads back what it did before, and tracing still
# works (events written, recorded, checked).

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

rbn_require rbtrace

ktap_print_header
ktap_set_plan 14

t=$rbn_tmp
huge=99999999999999999999

# try FILE WANT DESC STRING: write STRING and a newline to FILE; WANT is ok,
# EINVAL, ENOENT or EEXIST. Prints what happened; 0 when as wanted.
try()
{
	printf '%s\n' "$4" >"$t/payload"
	try_payload "$1" "$2" "$3"
}

# try_payload FILE WANT DESC: the same with $t/payload as it is
try_payload()
{
	rbn_write_file "$1" "$t/payload"
	_rc=$?
	_got=ok
	[ $_rc -eq 0 ] || _got=${rbn_err:-error}
	_match=1
	case $2 in
	ok) [ $_rc -eq 0 ] || _match=0 ;;
	EINVAL) echo "$_got" | grep -q 'Invalid argument' || _match=0 ;;
	ENOENT) echo "$_got" | grep -q 'No such file' || _match=0 ;;
	EEXIST) echo "$_got" | grep -q 'File exists' || _match=0 ;;
	*) _match=0 ;;
	esac
	ktap_print_msg "$(printf '%-15s <- %-28s %-26s (want %s)%s' "$1" "$3:" \
		"$_got" "$2" "$([ $_match = 1 ] || echo '  MISMATCH')")"
	[ $_match = 1 ]
}

# long N CHAR: overlong payload
long()
{
	rbn_payload_long "$1" "$2"	# into $rbn_tmp/payload, i.e. $t/payload
}

# common_numeric FILE: the bad numbers every numeric file refuses
common_numeric()
{
	_cn=0
	try "$1" EINVAL "empty line" "" || _cn=1
	try "$1" EINVAL "garbage" "garbage" || _cn=1
	try "$1" EINVAL "negative" "-1" || _cn=1
	try "$1" EINVAL "huge" "$huge" || _cn=1
	try "$1" EINVAL "number and garbage" "12abc" || _cn=1
	try "$1" EINVAL "two numbers" "1 2" || _cn=1
	long 5000 1
	try_payload "$1" EINVAL "overlong (5000 digits)" || _cn=1
	return $_cn
}

# same FILE BEFORE: FILE reads back BEFORE
same()
{
	_now=$(rbn_get "$1")
	if [ "$_now" != "$2" ]; then
		ktap_print_msg "$1 now reads '$_now', was '$2'"
		return 1
	fi
	ktap_print_msg "$1 still reads '$_now'"
	return 0
}

if ! rbn_load sources=; then
	ktap_print_msg "$rbn_err"
	while [ "$KTAP_TESTNO" -lt 13 ]; do
		ktap_test_fail "module not loaded"
	done
	ktap_finished
fi

size0=$(rbn_get buffer_size_kb)
on0=$(rbn_get tracing_on)
clock0=$(rbn_get trace_clock)
pct0=$(rbn_get buffer_percent)
src0=$(rbn_sources_state)

# ---- buffer_size_kb
ok=1
common_numeric buffer_size_kb || ok=0
try buffer_size_kb EINVAL "zero" 0 || ok=0
try buffer_size_kb EINVAL "too big (1048577)" 1048577 || ok=0
same buffer_size_kb "$size0" || ok=0
ktap_test_result $ok "buffer_size_kb: bad sizes refused with EINVAL, size unchanged"

# ---- tracing_on
ok=1
common_numeric tracing_on || ok=0
try tracing_on EINVAL "2" 2 || ok=0
try tracing_on EINVAL "10" 10 || ok=0
same tracing_on "$on0" || ok=0
ktap_test_result $ok "tracing_on: anything but 0/1 refused with EINVAL"

# ---- validate
ok=1
val0=$(rbn_get validate)
common_numeric validate || ok=0
try validate EINVAL "2" 2 || ok=0
same validate "$val0" || ok=0
ktap_test_result $ok "validate: anything but 0/1 refused with EINVAL"

# ---- trace_clock
ok=1
try trace_clock EINVAL "empty line" "" || ok=0
try trace_clock EINVAL "unknown name" bogus || ok=0
try trace_clock EINVAL "name with suffix" local2 || ok=0
try trace_clock EINVAL "two names" "local mono" || ok=0
try trace_clock EINVAL "huge" "$huge" || ok=0
long 5000 x
try_payload trace_clock EINVAL "overlong (5000 chars)" || ok=0
same trace_clock "$clock0" || ok=0
ktap_test_result $ok "trace_clock: unknown clocks refused with EINVAL, clock unchanged"

# ---- buffer_percent
ok=1
common_numeric buffer_percent || ok=0
try buffer_percent EINVAL "101" 101 || ok=0
same buffer_percent "$pct0" || ok=0
ktap_test_result $ok "buffer_percent: outside 0..100 refused with EINVAL"

# ---- reset and trace: any write resets
for f in reset trace; do
	ok=1
	rbn_set sources task
	sleep 1
	rbn_set sources -task
	sleep 1
	e0=$(rbn_stat_sum entries)
	try $f ok "garbage" garbage || ok=0
	e1=$(rbn_stat_sum entries)
	try $f ok "empty line" "" || ok=0
	try $f ok "huge" "$huge" || ok=0
	long 5000 x
	try_payload $f ok "overlong (5000 chars)" || ok=0
	ktap_print_msg "$f: entries $e0 before the garbage write, $e1 after"
	[ "$e0" -gt 0 ] && [ "$e1" -eq 0 ] || ok=0
	ktap_test_result $ok "$f: any write resets the buffer"
done

# ---- sources
ok=1
try sources EINVAL "garbage" garbage || ok=0
try sources EINVAL "known and unknown" "hrtimer,bogus" || ok=0
st=$(rbn_source_field hrtimer state)
ktap_print_msg "hrtimer after 'hrtimer,bogus': $st (want off)"
[ "$st" = off ] || ok=0
try sources EINVAL "unknown disabled" "-bogus" || ok=0
try sources EINVAL "huge" "$huge" || ok=0
long 5000 x
try_payload sources EINVAL "overlong (5000 chars)" || ok=0
try sources ok "empty line" "" || ok=0
[ "$(rbn_sources_state)" = "$src0" ] || {
	ktap_print_msg "sources state changed by an empty line"
	ok=0
}
try sources EINVAL "lone +" "+" || ok=0
[ "$(rbn_sources_state)" = "$src0" ] || {
	ktap_print_msg "sources state changed by a lone +"
	ok=0
}
try sources ok "duplicate" "task,task" || ok=0
st=$(rbn_source_field task state)
ktap_print_msg "task after 'task,task': $st (want on)"
[ "$st" = on ] || ok=0
rbn_set sources -all
[ "$(rbn_sources_state)" = "$src0" ] || {
	ktap_print_msg "sources state changed"
	ok=0
}
ktap_test_result $ok "sources: unknown names and a lone + refused with EINVAL, nothing changed; empty line and duplicate accepted"

# ---- kprobe_events
ok=1
try kprobe_events ENOENT "unknown symbol" "p:rbn_bad rbn_no_such_symbol" || ok=0
try kprobe_events ok "new kprobe" "p:rbn_k1 vfs_read" || ok=0
try kprobe_events EEXIST "the same again" "p:rbn_k1 vfs_read" || ok=0
try kprobe_events EEXIST "same name, other symbol" "p:rbn_k1 vfs_write" || ok=0
try kprobe_events ENOENT "remove unknown" "-:rbn_none" || ok=0
try kprobe_events EINVAL "garbage" garbage || ok=0
try kprobe_events EINVAL "no name" "p:" || ok=0
try kprobe_events EINVAL "no symbol" "p:rbn_k2" || ok=0
try kprobe_events EINVAL "huge" "$huge" || ok=0
{ printf 'p:'; awk 'BEGIN { while (n++ < 5000) printf "x"; print " vfs_read" }'; } >"$t/payload"
try_payload kprobe_events EINVAL "overlong name" || ok=0
try kprobe_events ok "empty line" "" || ok=0
cat "$rbn_dir/kprobe_events" >"$t/kp"
sed 's/^/# kprobe_events: /' "$t/kp"
n=$(grep -c . "$t/kp")
if [ "$n" -ne 1 ] || ! grep -q '^p:rbn_k1 vfs_read' "$t/kp"; then
	ktap_print_msg "want exactly the line of rbn_k1, got $n lines"
	ok=0
fi
try kprobe_events ok "remove" "-:rbn_k1" || ok=0
try kprobe_events ok "add for O_TRUNC" "p:rbn_k3 vfs_read" || ok=0
n1=$(grep -c . "$rbn_dir/kprobe_events")
: >"$rbn_dir/kprobe_events"
n2=$(grep -c . "$rbn_dir/kprobe_events")
ktap_print_msg "kprobe_events: $n1 lines, after '> kprobe_events' (O_TRUNC) $n2"
[ "$n1" -eq 1 ] && [ "$n2" -eq 0 ] || ok=0
ktap_test_result $ok "kprobe_events: ENOENT, EEXIST, EINVAL as specified; O_TRUNC clears"

# ---- inject
armed_total()
{
	awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^armed=/) n += substr($i, 7) }
	     END { print n + 0 }' "$rbn_dir/inject"
}
ok=1
try inject EINVAL "garbage" garbage || ok=0
try inject EINVAL "known and unknown" "a,bogus" || ok=0
a=$(armed_total)
ktap_print_msg "armed after 'a,bogus': $a (want 0)"
[ "$a" -eq 0 ] || ok=0
try inject EINVAL "huge" "$huge" || ok=0
long 5000 x
try_payload inject EINVAL "overlong (5000 chars)" || ok=0
try inject EINVAL "empty line" "" || ok=0
rbn_set inject off
try inject ok "upper case A" A || ok=0
a=$(rbn_inject_field a armed)
ktap_print_msg "label a armed on ${a:-?} CPUs (no writer runs)"
[ "${a:-0}" -gt 0 ] || ok=0
try inject ok "off" off || ok=0
a=$(armed_total)
ktap_print_msg "armed after off: $a"
[ "$a" -eq 0 ] || ok=0
ktap_test_result $ok "inject: unknown labels refused with EINVAL, nothing armed"

# ---- bench
ok=1
try bench EINVAL "garbage" garbage || ok=0
try bench EINVAL "unknown key" "run bogus=1" || ok=0
try bench EINVAL "bad number" "run events=abc" || ok=0
try bench EINVAL "huge number" "run events=$huge" || ok=0
long 5000 x
try_payload bench EINVAL "overlong (5000 chars)" || ok=0
try bench EINVAL "empty line" "" || ok=0
printf 'run size=32 events=1000 rounds=1\n' >"$t/payload"
timeout -s KILL 120 dd if="$t/payload" of="$rbn_dir/bench" conv=notrunc \
	bs=64 2>"$t/bench.err"
rc=$?
ktap_print_msg "bench <- 'run size=32 events=1000 rounds=1': exit $rc $(rbn_errtext "$t/bench.err")"
[ $rc -eq 0 ] || ok=0
n=$(grep -c . "$rbn_dir/bench")
head -n 5 "$rbn_dir/bench" | sed 's/^/# bench: /'
[ "$n" -gt 0 ] || ok=0
ktap_test_result $ok "bench: bad commands refused with EINVAL, a small run works"

# ---- nothing changed
ok=1
same buffer_size_kb "$size0" || ok=0
same tracing_on "$on0" || ok=0
same trace_clock "$clock0" || ok=0
same buffer_percent "$pct0" || ok=0
[ "$(rbn_sources_state)" = "$src0" ] || ok=0
n=$(grep -c . "$rbn_dir/kprobe_events")
a=$(armed_total)
ktap_print_msg "sources all off: $([ "$(rbn_sources_state)" = "$src0" ] && echo yes || echo no); kprobes $n; armed $a"
[ "$n" -eq 0 ] && [ "$a" -eq 0 ] || ok=0
ktap_test_result $ok "every file reads back what it did before"

# ---- tracing still works
ok=1
rbn_set reset 1
rbn_set tracing_on 1
rbn_set sources task || ok=0
sleep 1
rbn_quiesce
w=$(rbn_stat_sum written)
rbn_record "$t/rec"
rbn_check_ok "$t/rec" || ok=0
n=$(rbn_check_events "$t/rec")
ktap_print_msg "task source for 1 s: written $w, recorded ${n:-?}, dropped $(rbn_stat_sum dropped)"
[ "$w" -gt 0 ] && [ "${n:-x}" = "$w" ] || ok=0
rbn_set tracing_on 1
ktap_test_result $ok "tracing still works: events written, recorded, checked"

ok=0
if rbn_unload; then
	ok=1
else
	ktap_print_msg "$rbn_err"
fi
ktap_test_result $ok "unload"

ktap_finished
