#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test_read.sh - the readers agree on a frozen buffer.
#
# The task source writes for a second into a small buffer, then the sources
# and tracing are switched off: the buffer is frozen. The "trace" text (not
# consuming) lists every event as CPU, seq and time stamp (the "SEC.NSEC:"
# column, to the nanosecond); the same events at the same times must come
# out of trace_pipe_raw spliced (rbtrace record, decoded by rbtrace
# report), read() with dd into a recording directory laid out as rbtrace
# record does, and of trace_pipe. trace_pipe runs on a fill of its own:
# its times are compared with those of "trace" on that fill, which run 1
# compared with the spliced pages. The times in "trace", in trace_pipe and
# in rbtrace report of the spliced pages never decrease, in the order the
# lines come and per CPU.
# Also: read() sizes are whole sub-buffers, a short read() is EINVAL and
# consumes nothing, "> trace" resets, a reader blocked (asleep in the
# module's wait: /proc/PID/wchan or stack) is woken by tracing_on=0 and by
# data at buffer_percent=0, O_NONBLOCK gives EAGAIN.

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

rbn_require rbtrace

ktap_print_header
ktap_set_plan 13

# fill: the task source for a second, then freeze the buffer
fill()
{
	rbn_set tracing_on 1
	rbn_set sources task
	sleep 1
	rbn_quiesce
}

# tkeys: "CPU SEQ TIME" of every event in text on stdin (trace,
# trace_pipe, rbtrace report: the CPU as "[NNN]", the time as "SEC.NSEC:",
# a seq= field), sorted by CPU and seq; TIME is "?" when a line has none
tkeys()
{
	awk '{
		s = ""; c = ""; ts = ""
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^seq=[0-9]+$/)
				s = substr($i, 5)
			else if (c == "" && $i ~ /^\[[0-9]+\]$/) {
				# "[010]": no leading 0 (busybox awk: octal)
				c = substr($i, 2, length($i) - 2)
				sub(/^0+/, "", c)
				c = c == "" ? 0 : c
			}
			else if (ts == "" && $i ~ /^[0-9]+\.[0-9]+:$/)
				ts = substr($i, 1, length($i) - 1)
		}
		if (s != "" && c != "") print c, s, (ts == "" ? "?" : ts)
	}' | sort -n -k1,1 -k2,2
}

# text_keys FILE OUT: "CPU SEQ TIME" of a text file
text_keys()
{
	tkeys <"$1" >"$2"
}

# same_keys A B WHAT: compare two key files (CPU, seq and time of each
# event), print the counts; 0 when they hold the same events at the same
# times
same_keys()
{
	_na=$(wc -l <"$1")
	_nb=$(wc -l <"$2")
	awk 'NR == FNR { t[$1 " " $2] = $3; next }
	     { k = $1 " " $2; if (!(k in t)) only++
	       else { if (t[k] != $3 || $3 == "?") tdiff++; delete t[k] } }
	     END { for (k in t) only++; printf "%d %d\n", only, tdiff }' \
		"$1" "$2" >"$t/same"
	read -r _only _tdiff <"$t/same"
	ktap_print_msg "$3: $_na events ($(rbn_keys_per_cpu "$1")) vs $_nb ($(rbn_keys_per_cpu "$2")); $_only in one only, $_tdiff at another time; first: $(head -n 1 "$1") / $(head -n 1 "$2")"
	[ "$_na" -gt 0 ] && [ "$_only" -eq 0 ] && [ "$_tdiff" -eq 0 ] &&
		cmp -s "$1" "$2"
}

# monotonic FILE WHAT: the times of the events of text FILE, in the order
# of its lines, never decrease, neither from line to line nor per CPU;
# prints the counts; 0 when so
monotonic()
{
	awk '{
		c = ""; ts = ""
		for (i = 1; i <= NF; i++) {
			if (c == "" && $i ~ /^\[[0-9]+\]$/) {
				c = substr($i, 2, length($i) - 2)
				sub(/^0+/, "", c)
				c = c == "" ? 0 : c
			} else if (ts == "" && $i ~ /^[0-9]+\.[0-9]+:$/)
				ts = substr($i, 1, length($i) - 1)
		}
		if (c == "" || ts == "" || $0 !~ / seq=[0-9]/)
			next
		n++
		# the nanoseconds always have 9 digits: a 1 in front keeps
		# them decimal (busybox awk reads "0001255" as octal)
		split(ts, p, ".")
		sec = p[1] + 0; ns = ("1" p[2]) + 0
		if (n > 1 && (sec < psec || (sec == psec && ns < pns))) {
			if (!back++) first = NR ": " $0
		}
		if ((c in csec) && (sec < csec[c] || (sec == csec[c] && ns < cns[c])))
			cback++
		psec = sec; pns = ns; csec[c] = sec; cns[c] = ns
	} END { printf "%d %d %d %s\n", n, back, cback, first }' "$1" >"$t/mono"
	read -r _mn _mback _mcback _mfirst <"$t/mono"
	ktap_print_msg "$2: $_mn events, the time goes back $_mback times from line to line, $_mcback times per CPU${_mfirst:+ (first: line $_mfirst)}"
	[ "$_mn" -gt 0 ] && [ "$_mback" -eq 0 ] && [ "$_mcback" -eq 0 ]
}

if ! rbn_load buffer_size_kb=64 sources=; then
	ktap_print_msg "$rbn_err"
	while [ "$KTAP_TESTNO" -lt 13 ]; do
		ktap_test_fail "module not loaded"
	done
	ktap_finished
fi
sub=$(rbn_subbuf_size)
ktap_print_msg "sub-buffer: ${sub:-?} bytes, buffer_size_kb $(rbn_get buffer_size_kb)"
sub=${sub:-4096}
t=$rbn_tmp

# ---- run 1: trace text vs splice -------------------------------------------

fill
cat "$rbn_dir/trace" >"$t/t1a"
cat "$rbn_dir/trace" >"$t/t1b"
text_keys "$t/t1a" "$t/k1a"
text_keys "$t/t1b" "$t/k1b"
ktap_print_msg "trace: $(wc -l <"$t/t1a") lines; first: $(grep -m1 'seq=' "$t/t1a")"
ok=1
same_keys "$t/k1a" "$t/k1b" "trace read twice" || ok=0
monotonic "$t/t1a" "trace, time order" || ok=0
ktap_test_result $ok "trace: lists the events in time order, not consuming"

ok=1
rbn_record "$t/rec1"
"$RBTRACE" report -t "$t/rec1" >"$t/rep1" 2>"$t/rep1.err"
text_keys "$t/rep1" "$t/r1"
same_keys "$t/k1a" "$t/r1" "trace vs spliced pages (CPU, seq, time)" || ok=0
monotonic "$t/rep1" "rbtrace report of the spliced pages" || ok=0
ktap_test_result $ok "splice (rbtrace record) gives the events of trace, at the same times"

ok=0
if rbn_check_ok "$t/rec1"; then
	n=$(rbn_check_events "$t/rec1")
	[ "${n:-0}" -eq "$(wc -l <"$t/r1")" ] && [ "$n" -gt 0 ] && ok=1
fi
ktap_test_result $ok "rbtrace check passes on the spliced pages"

ok=1
cat "$rbn_dir/trace" >"$t/t1c"
n=$(rbn_keys <"$t/t1c" | wc -l)
e=$(rbn_stat_sum entries)
r=$(rbn_stat_sum read)
w=$(rbn_stat_sum written)
ktap_print_msg "after the recording: trace lists $n events; stats: entries $e, read $r, written $w"
[ "$n" -eq 0 ] && [ "$e" -eq 0 ] && [ "$r" -eq "$w" ] && [ "$w" -gt 0 ] || ok=0
ktap_test_result $ok "the pages read are consumed: buffer empty, read == written"

# ---- run 2: "> trace" resets; read() with dd -------------------------------

fill
before=$(rbn_stat_sum entries)
: >"$rbn_dir/trace"
after=$(rbn_stat_sum entries)
n=$(rbn_keys <"$rbn_dir/trace" | wc -l)
ktap_print_msg "'> trace': entries $before -> $after, trace lists $n events"
ok=0
[ "$before" -gt 0 ] && [ "$after" -eq 0 ] && [ "$n" -eq 0 ] && ok=1
ktap_test_result $ok "'> trace' resets the buffer"

fill
cat "$rbn_dir/trace" >"$t/t2"
text_keys "$t/t2" "$t/k2"
# a CPU with events for the short read
cpu=$(awk 'NR == 1 { print $1 }' "$t/k2")
cpu=${cpu:-0}
ok=0
timeout -s KILL 20 dd if="$rbn_dir/per_cpu/cpu$cpu/trace_pipe_raw" \
	of="$t/short" bs=$((sub / 2)) count=1 2>"$t/short.err"
rc=$?
size=$(stat -c %s "$t/short" 2>/dev/null)
ktap_print_msg "read($((sub / 2))) on cpu$cpu: exit $rc, ${size:-0} bytes, '$(rbn_errtext "$t/short.err")'"
[ $rc -ne 0 ] && [ "${size:-0}" -eq 0 ] &&
	grep -q 'Invalid argument' "$t/short.err" && ok=1
ktap_test_result $ok "read() smaller than a sub-buffer: EINVAL"

ok=1
mkdir -p "$t/rec2"
rbn_copy_formats "$t/rec2"
sizes=
for c in $(rbn_cpus); do
	timeout -s KILL 30 dd if="$rbn_dir/per_cpu/cpu$c/trace_pipe_raw" \
		of="$t/rec2/cpu$c.raw" bs="$sub" 2>"$t/dd.err"
	rc=$?
	size=$(stat -c %s "$t/rec2/cpu$c.raw")
	sizes="$sizes cpu$c=$size"
	if [ $rc -ne 0 ]; then
		ktap_print_msg "dd cpu$c: exit $rc: $(rbn_errtext "$t/dd.err")"
		ok=0
	fi
	[ $((size % sub)) -eq 0 ] || ok=0
done
ktap_print_msg "read() with dd bs=$sub:$sizes bytes"
ktap_test_result $ok "read(): whole sub-buffers, ends at EOF with tracing off"

ok=0
"$RBTRACE" report -t "$t/rec2" 2>"$t/rep2.err" | tkeys >"$t/r2"
head -n 3 "$t/rep2.err" | sed 's/^/# /'
if same_keys "$t/k2" "$t/r2" "trace vs read() pages, after the short read (CPU, seq, time)" &&
   rbn_check_ok "$t/rec2"; then
	ok=1
fi
ktap_test_result $ok "read() gives the events of trace at the same times; rbtrace check passes"

# ---- run 3: trace_pipe -----------------------------------------------------

fill
cat "$rbn_dir/trace" >"$t/t3"
text_keys "$t/t3" "$t/k3"
timeout -s KILL 5 cat "$rbn_dir/trace_pipe" >"$t/tp3" 2>"$t/tp3.err"
rc=$?
text_keys "$t/tp3" "$t/p3"
n=$(rbn_keys <"$rbn_dir/trace" | wc -l)
ktap_print_msg "trace_pipe: exit $rc ($(rbn_timed_out $rc && echo 'blocked at the end, killed' || echo 'ended')); trace lists $n events after it"
ok=1
monotonic "$t/t3" "trace (run 3), time order" || ok=0
same_keys "$t/k3" "$t/p3" "trace vs trace_pipe (CPU, seq, time)" || ok=0
monotonic "$t/tp3" "trace_pipe, time order" || ok=0
[ "$n" -eq 0 ] || ok=0
ktap_test_result $ok "trace_pipe gives the events of trace at the same times, in time order, and consumes them"

# ---- blocking and non-blocking readers -------------------------------------

rbn_set reset 1
rbn_set tracing_on 1
ok=1
dd if="$rbn_dir/per_cpu/cpu0/trace_pipe_raw" of="$t/blk" bs="$sub" count=1 \
	2>"$t/blk.err" &
pid=$!
rbn_bg_add $pid
if ! rbn_wait_blocked $pid "$rbn_wait_raw"; then
	kill -0 $pid 2>/dev/null ||
		ktap_print_msg "reader on an empty cpu0 buffer returned: $(rbn_errtext "$t/blk.err")"
	ok=0
fi
rbn_set tracing_on 0
i=0
while kill -0 $pid 2>/dev/null && [ $i -lt 5 ]; do
	sleep 1
	i=$((i + 1))
done
if kill -0 $pid 2>/dev/null; then
	ktap_print_msg "still blocked 5 s after tracing_on=0"
	kill $pid
	ok=0
fi
wait $pid
rc=$?
rbn_bg_done $pid
size=$(stat -c %s "$t/blk" 2>/dev/null)
ktap_print_msg "after tracing_on=0: reader exit $rc after ~${i} s, ${size:-0} bytes"
[ $rc -eq 0 ] && [ $((${size:-0} % sub)) -eq 0 ] || ok=0
ktap_test_result $ok "a blocked read() is woken by tracing_on=0 (EOF)"

# O_NONBLOCK: busybox dd has no iflag=nonblock; rbtrace record opens the
# pipes O_NONBLOCK and polls: on an empty buffer with tracing on it must get
# EAGAIN and run until -t, not block in read (killed) and not see EOF.
ktap_print_msg "O_NONBLOCK checked through rbtrace record (opens trace_pipe_raw O_NONBLOCK)"
rbn_set tracing_on 1
ok=0
start=$(date +%s)
timeout -s KILL 30 "$RBTRACE" record -d "$rbn_dir" -o "$t/nb" -t 3 \
	>"$t/nb.log" 2>&1
rc=$?
secs=$(($(date +%s) - start))
sed 's/^/# /' "$t/nb.log"
ktap_print_msg "rbtrace record -t 3 on an empty buffer: exit $rc after $secs s (want 0 after 2..10 s)"
[ $rc -eq 0 ] && [ $secs -ge 2 ] && [ $secs -le 10 ] &&
	grep -q ' 0 pages' "$t/nb.log" && ok=1
ktap_test_result $ok "O_NONBLOCK: EAGAIN on an empty buffer, no EOF with tracing on"

# buffer_percent=0: any data wakes a blocked reader
ok=1
rbn_set buffer_percent 0 || { ktap_print_msg "$rbn_err"; ok=0; }
rm -f "$t/blk"
dd if="$rbn_dir/per_cpu/cpu0/trace_pipe_raw" of="$t/blk" bs="$sub" count=1 \
	2>"$t/blk.err" &
pid=$!
rbn_bg_add $pid
if ! rbn_wait_blocked $pid "$rbn_wait_raw"; then
	ktap_print_msg "reader did not block on an empty buffer"
	ok=0
fi
rbn_set sources task
i=0
while kill -0 $pid 2>/dev/null && [ $i -lt 10 ]; do
	sleep 1
	i=$((i + 1))
done
rbn_set sources -task
if kill -0 $pid 2>/dev/null; then
	ktap_print_msg "reader still blocked 10 s after the task source started"
	kill $pid
	ok=0
fi
wait $pid
rc=$?
rbn_bg_done $pid
size=$(stat -c %s "$t/blk" 2>/dev/null)
ktap_print_msg "buffer_percent=0, task source on: reader exit $rc after ~$i s with ${size:-0} bytes (want $sub)"
[ $rc -eq 0 ] && [ "${size:-0}" -eq "$sub" ] || ok=0
ktap_test_result $ok "buffer_percent=0: data wakes a blocked reader with one sub-buffer"

ok=0
if rbn_unload; then
	ok=1
else
	ktap_print_msg "$rbn_err"
fi
ktap_test_result $ok "unload"

ktap_finished
