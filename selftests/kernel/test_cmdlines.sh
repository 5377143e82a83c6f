#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test_cmdlines.sh - saved_cmdlines names the task of every event.
#
# The module is loaded with cmdlines_size=1024 and a kprobe on vfs_read,
# and its writers run in many tasks at once: the task source's kthreads
# (rbnest_task/N), the generator's interrupts (hrtimer, softirq,
# irq_work: whatever task they interrupt), sched_switch (the task that
# leaves the CPU) and the kprobe (every task that reads a file: the
# shell, the recorder, the workers here). Meanwhile saved_cmdlines is
# read again and again. Workers of this script name themselves through
# /proc/self/comm: rbn_w1 reads all the time, rbn_old reads, renames
# itself rbn_new and reads on (the same pid, a new comm), and rbn_short
# reads a line and exits. After the recording (sources off, tracing off):
#
#  A. saved_cmdlines is root-only, every line "PID COMM" (tracefs'
#     "%d %s"), no pid twice, at most cmdlines_size lines, in every read
#     made while the writers ran as at the end.
#  B. Every pid of the recorded events but 0 (rbtrace report) is named.
#  C. Every named task still alive has the comm /proc/PID/comm shows (a
#     kworker: /proc adds its workqueue's name after the comm).
#  D. The workers: rbn_w1 and rbn_new (not rbn_old) under their pids,
#     rbn_short under its pid although it is gone, rbnest_task/N for every
#     online CPU.
#  E. cmdlines_size=16: 24 tasks (rbn_s1..rbn_s24) read one after the
#     other; the table holds 16 entries, the last tasks among them, not
#     the first.
#  F. cmdlines_size 15 and 1025 are refused at load, 16 and 1024 load.
#  G. With the kprobe the only source, a task reads as rbn_r1, renames
#     itself rbn_r2 and reads on, without a fork or a sleep between (so
#     that no other task writes on its CPU in between, and the CPU's
#     cached last task is that pid): it is named rbn_r2.
#  H. With the kprobe the only source, a task pinned to CPU 0 reads as
#     rbn_x1; moved to CPU 1 it renames itself rbn_x2 and reads; moved
#     back to CPU 0 it renames itself rbn_x1 again and reads: it is named
#     rbn_x1 (CPU 0's cached last task has that pid and that comm, but
#     CPU 1 wrote its entry since: it was named rbn_x2 while there). A
#     try in which another writer wrote on CPU 0 while the task was away
#     proves nothing and is made again, up to three times. Needs CPUs 0
#     and 1 online and taskset.

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

rbn_require rbtrace

t=$rbn_tmp
secs=$(rbn_secs 4)

ktap_print_header
ktap_set_plan 8

fail_all()
{
	ktap_print_msg "$1"
	for c in "A: saved_cmdlines well formed" "B: every pid named" \
		 "C: live tasks named as /proc shows" "D: the workers named" \
		 "E: a table of 16 keeps the last tasks" \
		 "F: cmdlines_size range" "G: renamed between two events" \
		 "H: renamed back on the CPU that saved the old name"; do
		ktap_test_fail "$c (module not loaded)"
	done
	ktap_finished
}

# wellformed FILE MAX: "bad=N dup=N lines=N" of a saved_cmdlines copy
wellformed()
{
	awk -v max="$2" '
		{ n++ }
		!/^[1-9][0-9]* ./ { bad++; if (bad <= 3) print "# bad line: " $0 >"/dev/stderr"; next }
		{ if (seen[$1]++) dup++ }
		END { printf "bad=%d dup=%d lines=%d over=%d\n", bad, dup, n, (n > max) }' "$1"
}

# The task writers at a tenth of their time (50 us of every 500): they
# are named as well, and rbtrace report (B) reads a tenth of their events.
rbn_load cmdlines_size=1024 gen_task_busy_us=50 gen_task_idle_us=450 \
	sources= || fail_all "$rbn_err"

# ---- the recording ---------------------------------------------------------

ok=1
rbn_write kprobe_events "p:rbn_rd vfs_read" || {
	ktap_print_msg "kprobe_events: $rbn_err"
	ok=0
}
: >"$t/run"
(
	printf rbn_w1 >/proc/self/comm
	while [ -e "$t/run" ]; do
		read -r _l </proc/version
		sleep 0.1
	done
) &
w1=$!
rbn_bg_add $w1
(
	printf rbn_old >/proc/self/comm
	while [ ! -e "$t/go" ] && [ -e "$t/run" ]; do
		sleep 0.1
	done
	_i=0
	while [ $_i -lt 20 ]; do
		read -r _l </proc/version
		_i=$((_i + 1))
	done
	# what was read as rbn_old is recorded before the rename
	sleep 1
	printf rbn_new >/proc/self/comm
	while [ -e "$t/run" ]; do
		read -r _l </proc/version
		sleep 0.1
	done
) &
w2=$!
rbn_bg_add $w2

rbn_record_start "$t/rec"
rbn_set sources task,hrtimer,softirq,irq_work,tp_sched,kprobes || {
	ktap_print_msg "sources: $rbn_err"
	ok=0
}
: >"$t/go"
sleep 1
sh -c 'printf rbn_short >/proc/self/comm; read -r l </proc/version' &
wshort=$!
wait $wshort

# saved_cmdlines read while the writers run
reads=0
readbad=0
end=$(($(date +%s) + secs))
while [ "$(date +%s)" -lt "$end" ]; do
	cat "$rbn_dir/saved_cmdlines" >"$t/during" 2>"$t/during.err" || readbad=$((readbad + 1))
	# shellcheck disable=SC2046 # four names and counts
	set -- $(wellformed "$t/during" 1024 2>/dev/null | tr '=' ' ')
	[ "$2" = 0 ] && [ "$4" = 0 ] && [ "$8" = 0 ] || readbad=$((readbad + 1))
	reads=$((reads + 1))
done
rbn_quiesce
rbn_record_stop >"$t/rec.out" || {
	cat "$t/rec.out"
	ok=0
}
cat "$rbn_dir/saved_cmdlines" >"$t/saved"
mode=$(stat -c %a "$rbn_dir/saved_cmdlines" 2>/dev/null)

# ---- A
# shellcheck disable=SC2046 # four names and counts
set -- $(wellformed "$t/saved" 1024 | tr '=' ' ')
ktap_print_msg "saved_cmdlines: mode $mode, $6 lines, $2 malformed, $4 pids twice; $reads reads while writing, $readbad bad"
[ "$mode" = 400 ] && [ "$2" = 0 ] && [ "$4" = 0 ] && [ "$8" = 0 ] &&
	[ "$6" -gt 0 ] && [ "$reads" -gt 0 ] && [ "$readbad" = 0 ] || ok=0
ktap_test_result $ok "A: saved_cmdlines root-only, \"PID COMM\" lines, no pid twice, while writing too"

# ---- B
ok=1
"$RBTRACE" report "$t/rec" 2>"$t/report.err" |
	awk '# "COMM-PID [CPU] TIME: sample: ...", COMM perhaps with spaces
	     / sample: / {
		for (i = 2; i <= NF; i++)
			if ($i ~ /^\[[0-9]+\]$/)
				break
		if (i > NF)
			next
		n++
		p = $(i - 1)
		sub(/.*-/, "", p)
		if (p != 0)
			print p
	     }
	     END { print n + 0 >"'"$t/events"'" }' | sort -u >"$t/pids"
events=$(cat "$t/events")
sed 's/^/# report: /' "$t/report.err" | head -n 3
# the pids of the events that saved_cmdlines does not name
awk 'NR == FNR { named[$1]; next } !($1 in named)' "$t/saved" "$t/pids" \
	>"$t/missing"
missing=$(wc -l <"$t/missing")
npids=$(wc -l <"$t/pids")
head -n 5 "$t/missing" | while read -r p; do
	ktap_print_msg "pid $p of the events is not named ($(cat /proc/"$p"/comm 2>/dev/null || echo gone))"
done
ktap_print_msg "$npids pids (not 0) in the recorded events, $missing not named"
[ "$npids" -ge 4 ] && [ "$missing" = 0 ] || ok=0
ktap_test_result $ok "B: every pid of the recorded events is named in saved_cmdlines"

# ---- C
ok=1
live=0
same=0
kw=0
while read -r p c; do
	[ -r "/proc/$p/comm" ] || continue
	pc=$(cat "/proc/$p/comm" 2>/dev/null) || continue
	live=$((live + 1))
	case $c in
	kworker/*)
		case $pc in
		"$c" | "$c"[-+]*) same=$((same + 1)); kw=$((kw + 1)); continue ;;
		esac
		;;
	*)
		[ "$pc" = "$c" ] && { same=$((same + 1)); continue; }
		;;
	esac
	ktap_print_msg "pid $p: saved \"$c\", /proc/$p/comm \"$pc\""
done <"$t/saved"
ktap_print_msg "$live named tasks alive, $same with the comm of /proc ($kw kworkers)"
[ "$live" -gt 0 ] && [ "$same" = "$live" ] || ok=0
ktap_test_result $ok "C: every named task alive has the comm /proc/PID/comm shows"

# ---- D
ok=1
named()
{
	awk -v p="$1" '$1 == p { sub(/^[0-9]+ /, ""); print; exit }' "$t/saved"
}
for w in "$w1 rbn_w1" "$w2 rbn_new" "$wshort rbn_short"; do
	# shellcheck disable=SC2086 # pid and name
	set -- $w
	got=$(named "$1")
	ktap_print_msg "pid $1: \"$got\", want \"$2\""
	[ "$got" = "$2" ] || ok=0
done
grep -q ' rbn_old$' "$t/saved" && {
	ktap_print_msg "rbn_old still named"
	ok=0
}
for c in $(rbn_online_cpus); do
	grep -q " rbnest_task/$c\$" "$t/saved" || {
		ktap_print_msg "no rbnest_task/$c"
		ok=0
	}
done
ktap_print_msg "rbnest_task threads named: $(grep -c ' rbnest_task/' "$t/saved"); $events events recorded"
ktap_test_result $ok "D: the workers named, the renamed one by its new comm, the exited one too"

rm -f "$t/run"
wait $w1 $w2 2>/dev/null
rbn_bg_done $w1
rbn_bg_done $w2

# h_try: one try of H. The task (builtins only) reads as rbn_x1 on CPU 0,
# is moved to CPU 1 where it renames itself rbn_x2 and reads, and back to
# CPU 0 where it renames itself rbn_x1 and reads. The mover runs on CPU 1
# and, while the task is there, reads CPU 0's written count (as the task
# left it, and before the move back) and the task's name (rbn_x2, saved
# by CPU 1). Sets hres to "" (try again: CPU 0 wrote meanwhile), 1 or 0,
# and hmsg.
h_try()
{
	rm -f "$t"/h[1-4] "$t/hw0" "$t/hw1" "$t/hmid"
	# shellcheck disable=SC2016 # expanded by the inner shell
	taskset -c 0 sh -c 'printf rbn_x1 >/proc/self/comm
		i=0; while [ $i -lt 20 ]; do read -r l </proc/version; i=$((i + 1)); done
		: >"$1/h1"; until [ -e "$1/h2" ]; do :; done
		printf rbn_x2 >/proc/self/comm
		i=0; while [ $i -lt 20 ]; do read -r l </proc/version; i=$((i + 1)); done
		: >"$1/h3"; until [ -e "$1/h4" ]; do :; done
		printf rbn_x1 >/proc/self/comm
		i=0; while [ $i -lt 20 ]; do read -r l </proc/version; i=$((i + 1)); done' sh "$t" &
	wx=$!
	# shellcheck disable=SC2016 # expanded by the inner shell
	taskset -c 1 sh -c 'n=0
		until [ -e "$1/h1" ] || [ $n -ge 3000 ]; do sleep 0.01; n=$((n + 1)); done
		grep "^written:" "$3/per_cpu/cpu0/stats" >"$1/hw0"
		taskset -p 2 "$2" >/dev/null && : >"$1/h2"
		until [ -e "$1/h3" ] || [ $n -ge 6000 ]; do sleep 0.01; n=$((n + 1)); done
		grep "^$2 " "$3/saved_cmdlines" >"$1/hmid"
		grep "^written:" "$3/per_cpu/cpu0/stats" >"$1/hw1"
		taskset -p 1 "$2" >/dev/null && : >"$1/h4"' sh "$t" "$wx" "$rbn_dir"
	_moved=0
	for _f in h1 h2 h3 h4; do
		[ -e "$t/$_f" ] && _moved=$((_moved + 1))
	done
	# a step that failed: let the task end
	: >"$t/h2"
	: >"$t/h4"
	wait $wx
	_back=$(awk -v p="$wx" '$1 == p { print $2 }' "$rbn_dir/saved_cmdlines")
	_mid=$(awk '{ print $2 }' "$t/hmid" 2>/dev/null)
	_w0=$(awk '{ print $2 }' "$t/hw0" 2>/dev/null)
	_w1=$(awk '{ print $2 }' "$t/hw1" 2>/dev/null)
	hmsg="try $h: pid $wx, CPU 0 as rbn_x1, CPU 1 as rbn_x2 (named \"${_mid:-}\" there), CPU 0 as rbn_x1: \"${_back:-}\", want \"rbn_x1\"; $_moved of 4 steps; CPU 0 written ${_w0:-?} -> ${_w1:-?} while the task was away"
	if [ "$_moved" != 4 ] || [ -z "$_w0" ] || [ "${_mid:-}" != rbn_x2 ]; then
		hres=0
	elif [ "$_w0" != "$_w1" ]; then
		ktap_print_msg "$hmsg: another writer on CPU 0, again"
		hres=
	elif [ "${_back:-}" = rbn_x1 ]; then
		hres=1
	else
		hres=0
	fi
}

# ---- E
ok=1
if rbn_load cmdlines_size=16 sources=; then
	rbn_write kprobe_events "p:rbn_rd vfs_read" || ok=0
	rbn_set sources kprobes || ok=0
	# G: builtins only, no fork between the reads
	sh -c 'printf rbn_r1 >/proc/self/comm
		i=0; while [ $i -lt 20 ]; do read -r l </proc/version; i=$((i + 1)); done
		printf rbn_r2 >/proc/self/comm
		i=0; while [ $i -lt 20 ]; do read -r l </proc/version; i=$((i + 1)); done' &
	wr=$!
	wait $wr
	renamed=$(awk -v p="$wr" '$1 == p { print $2 }' "$rbn_dir/saved_cmdlines")
	# H: up to three tries, until no other writer wrote on CPU 0 while
	# the task was away (then even a CPU 0 that never looked at the table
	# again would save: the try proves nothing)
	h=0
	hres=skip
	if rbn_online_cpus | grep -qx 0 && rbn_online_cpus | grep -qx 1 &&
	   command -v taskset >/dev/null; then
		hres=
		while [ $h -lt 3 ] && [ -z "$hres" ]; do
			h=$((h + 1))
			h_try
		done
	fi
	i=1
	while [ $i -le 24 ]; do
		sh -c "printf rbn_s$i >/proc/self/comm; read -r l </proc/version" &
		eval "s$i=\$!"
		wait $!
		i=$((i + 1))
	done
	rbn_quiesce
	cat "$rbn_dir/saved_cmdlines" >"$t/small"
	# shellcheck disable=SC2046 # four names and counts
	set -- $(wellformed "$t/small" 16 | tr '=' ' ')
	last=0
	for i in 21 22 23 24; do
		eval "p=\$s$i"
		[ "$(awk -v p="$p" '$1 == p { print $2 }' "$t/small")" = "rbn_s$i" ] &&
			last=$((last + 1))
	done
	first=$(grep -c ' rbn_s[1-4]$' "$t/small")
	ktap_print_msg "cmdlines_size=16: $6 lines, $2 malformed, $4 pids twice; rbn_s21..24 named: $last of 4, rbn_s1..4: $first"
	[ "$6" = 16 ] && [ "$2" = 0 ] && [ "$4" = 0 ] && [ "$last" = 4 ] &&
		[ "$first" = 0 ] || ok=0
else
	ktap_print_msg "$rbn_err"
	ok=0
fi
ktap_test_result $ok "E: a table of 16 holds the last 16 tasks, not the first"

# ---- F
ok=1
rbn_unload || ok=0
for n in 15 1025; do
	if insmod "$RBNEST_KO" cmdlines_size=$n 2>"$t/insmod.err"; then
		ktap_print_msg "cmdlines_size=$n loaded"
		rbn_unload
		ok=0
	else
		ktap_print_msg "cmdlines_size=$n refused: $(tail -n 1 "$t/insmod.err")"
	fi
done
for n in 16 1024; do
	if rbn_load cmdlines_size=$n; then
		ktap_print_msg "cmdlines_size=$n loaded"
	else
		ktap_print_msg "cmdlines_size=$n: $rbn_err"
		ok=0
	fi
done
ktap_test_result $ok "F: cmdlines_size 15 and 1025 refused, 16 and 1024 loaded"

ktap_print_msg "pid ${wr:-?}, renamed between two reads: \"${renamed:-}\", want \"rbn_r2\""
[ "${renamed:-}" = rbn_r2 ]
ktap_test_result $(($? == 0)) "G: a task renamed between two events in a row is named by its new comm"

if [ "${hres:-}" = skip ]; then
	ktap_test_skip "H: renamed back on the CPU that saved the old name" "needs CPUs 0 and 1 online and taskset"
else
	ktap_print_msg "${hmsg:-H did not run}"
	[ "${hres:-}" = 1 ]
	ktap_test_result $(($? == 0)) "H: a task renamed back on the CPU that saved its old name is named by it"
fi

rbn_unload || ktap_print_msg "$rbn_err"
ktap_finished
