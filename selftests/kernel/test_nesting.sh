#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test_nesting.sh - every source on at once while rbtrace record splices.
#
# Task writers, the hrtimer, its tasklet, irq_work and self-NMIs, the
# tracepoints and a kprobe write into the buffer for RBN_NEST_SECONDS
# (default 20, 10 with RBN_QUICK=1) while "rbtrace record" reads. The
# recording must hold at least RBN_MIN_EVENTS events (default 1000000,
# 500000 with RBN_QUICK=1) and pass "rbtrace check"; real interrupts must
# have nested into writers, without the inject file: both time-stamp paths
# of an interrupted write taken (forced absolute stamps: ts_abs > 0, and
# as many absolute stamps in the recorded pages; slow paths: ts_slow > 0,
# counted by the core for events it wrote), and events recorded at depth
# two or more (the depth field of the events in the recording, as "rbtrace
# check" tabulates it; depth three is reported, not required); every
# source must have written.
# RBN_OPTIONAL_SOURCES: source names allowed to have no events (besides
# those the sources file marks unavailable).

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

rbn_require rbtrace

ktap_print_header
ktap_set_plan 7

secs=${RBN_NEST_SECONDS:-$(rbn_secs 20)}
if [ "${RBN_QUICK:-0}" = 1 ]; then
	min_events=${RBN_MIN_EVENTS:-500000}
else
	min_events=${RBN_MIN_EVENTS:-1000000}
fi
t=$rbn_tmp

if ! rbn_load buffer_size_kb="${RBN_NEST_BUFFER_KB:-4096}" sources=; then
	ktap_print_msg "$rbn_err"
	while [ "$KTAP_TESTNO" -lt 7 ]; do
		ktap_test_fail "module not loaded"
	done
	ktap_finished
fi

kprobe=0
if rbn_write kprobe_events "p:rbn_nest vfs_read"; then
	kprobe=1
	ktap_print_msg "kprobe_events: $(cat "$rbn_dir/kprobe_events")"
else
	ktap_print_msg "no kprobe on vfs_read ($rbn_err): kprobes source not required"
fi

ktap_print_msg "all sources for $secs s while rbtrace record splices; inject is never written in this test"
rbn_record_start "$t/rec"
rbn_set sources all || ktap_print_msg "$rbn_err"
ktap_print_msg "sources on: $(rbn_sources_state | awk '$2 == "on" { print $1 }' | tr '\n' ' ')"
i=0
while [ $i -lt "$secs" ]; do
	sleep 1
	# some reads for the kprobe
	cat "$rbn_dir/per_cpu/cpu0/stats" >/dev/null
	i=$((i + 1))
done
rbn_quiesce
rbn_record_stop
rec_rc=$?

cat "$rbn_dir/sources" >"$t/sources"
cat "$rbn_dir/inject" >"$t/inject"

# ---- 1: enough events
written=$(rbn_stat_sum written)
dropped=$(rbn_stat_sum dropped)
covr=$(rbn_stat_sum commit_overrun)
ok=1
[ $rec_rc -eq 0 ] || { ktap_print_msg "rbtrace record exit $rec_rc"; ok=0; }
rbn_check "$t/rec" >"$t/check.out"
check_rc=$?
events=$(rbn_check_events "$t/rec")
ktap_print_msg "events: $events recorded (want >= $min_events); written $written, dropped $dropped, commit_overrun $covr"
[ "${events:-0}" -ge "$min_events" ] || ok=0
ktap_test_result $ok "at least $min_events events recorded in $secs s"

# ---- 2: rbtrace check
cat "$t/check.out"
ok=0
[ $check_rc -eq 0 ] && grep -q ': OK$' "$t/rec.check" && ok=1
ktap_test_result $ok "rbtrace check passes on the recording (exit $check_rc)"

# ---- 3: nesting without injection
ok=1
rbn_stat_table written dropped ts_fast ts_abs ts_slow ts_zero ts_extend max_depth
abs=$(rbn_stat_sum ts_abs)
slow=$(rbn_stat_sum ts_slow)
zero=$(rbn_stat_sum ts_zero)
# absolute stamps in the recorded pages: the "abs" column of the check
rec_abs=0
for c in $(rbn_cpus); do
	a=$(rbn_check_col "$t/rec" "$c" 5)
	rec_abs=$((rec_abs + ${a:-0}))
done
hits=$(awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^hits=/) n += substr($i, 6) }
	    END { print n + 0 }' "$t/inject")
ktap_print_msg "forced absolute: ts_abs $abs, absolute stamps in the recorded pages $rec_abs (want > 0 and equal)"
ktap_print_msg "slow path: ts_slow $slow (want > 0); zero delta: ts_zero $zero; inject hits $hits (never armed)"
if [ "$abs" -le 0 ] || [ "$rec_abs" -ne "$abs" ] || [ "$slow" -le 0 ] ||
   [ "$hits" -ne 0 ]; then
	ok=0
fi
ktap_test_result $ok "real interrupts nest: forced absolute stamps and slow paths, both"

# ---- 4: depth
ok=0
# Two deep is an interrupt writing inside a writer it interrupted: the
# nesting the time stamps are about. Three deep (task -> softirq ->
# hardirq, or an NMI inside an interrupt's write) is reported, not
# required: it needs an interrupt inside a softirq writer's few hundred
# nanoseconds, which a 10 s run under TCG does not always catch, and
# PREEMPT_RT runs softirqs in threads. The depth is that of the events
# recorded (their depth field: rbnest writers in progress on the CPU, this
# one included), not the stats' max_depth, which the core raises before it
# knows whether the reserve succeeds.
awk '$1 == "depth" { for (i = 2; i <= NF; i++) col[i] = $i; t = 1; next }
     t && ($1 == "task" || $1 == "softirq" || $1 == "hardirq" || $1 == "nmi") {
	for (i = 2; i <= NF; i++) n[col[i]] += $i
	line = line " " $1 "=" $2; for (i = 3; i <= NF; i++) line = line "/" $i
     }
     END {
	for (d in n) {
		if (n[d] > 0 && d + 0 > max) max = d + 0
		if (d + 0 >= 2) nested += n[d]
	}
	printf "%d %d%s\n", max, nested, line
     }' "$t/rec.check" >"$t/depth"
read -r rec_depth rec_nested rec_line <"$t/depth"
depth=$(rbn_stat_max max_depth)
ktap_print_msg "recorded events by context, depth 1/2/...:${rec_line:- none}"
ktap_print_msg "deepest recorded event: depth ${rec_depth:-0}, $rec_nested events at depth >= 2 (want depth >= 2; 3 is reached by chance); stats max_depth $depth"
[ "${rec_depth:-0}" -ge 2 ] && [ "${rec_nested:-0}" -gt 0 ] && ok=1
ktap_test_result $ok "events recorded from writers nested at least two deep"

# ---- 5: every source wrote
ok=1
optional=$(echo "${RBN_OPTIONAL_SOURCES:-}" | tr ',' ' ')
[ $kprobe = 1 ] || optional="$optional kprobes"
nsrc=0
while read -r name state counts; do
	[ -n "$name" ] || continue
	nsrc=$((nsrc + 1))
	n=$(echo "$counts" | sed -n 's/.*events=\([0-9][0-9]*\).*/\1/p')
	need=1
	for o in $optional; do
		[ "$o" = "$name" ] && need=0
	done
	why=
	[ $need = 0 ] && why=" (optional)"
	case " $counts " in
	*" unavailable "*)
		need=0
		why=" (unavailable on this kernel)"
		;;
	esac
	ktap_print_msg "$(printf '%-16s %-4s events %12s%s' "$name" "$state" "${n:-?}" "$why")"
	if [ $need = 1 ] && [ "${n:-0}" -eq 0 ]; then
		ok=0
	fi
done <"$t/sources"
[ $nsrc -gt 0 ] || ok=0
ktap_test_result $ok "every source wrote events ($nsrc sources)"

# ---- 6: accounting after the drain
ok=1
for c in $(rbn_cpus); do
	w=$(rbn_stat "$c" written)
	r=$(rbn_stat "$c" read)
	o=$(rbn_stat "$c" overrun)
	e=$(rbn_stat "$c" entries)
	n=$(rbn_check_col "$t/rec" "$c" 3)
	ktap_print_msg "cpu$c: written $w = read $r + overrun $o + entries $e; recorded ${n:-?}"
	[ "$w" -eq $((r + o)) ] && [ "$e" -eq 0 ] && [ "${n:-0}" -eq "$r" ] || ok=0
done
ktap_test_result $ok "per CPU: written == read + overrun, all read events recorded"

# ---- 7: unload
ok=0
if rbn_unload; then
	ok=1
else
	ktap_print_msg "$rbn_err"
fi
ktap_test_result $ok "unload"

ktap_finished
