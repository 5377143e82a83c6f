#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test_discard.sh - every source on, every Nth reserved event discarded.
#
# The module is loaded with discard_every=N (RBN_DISCARD_EVERY, default
# 7): on each CPU, every Nth event reserved is filled and handed to
# rbn_discard() instead of rbn_commit(), by every writer at every depth
# (task, hrtimer, tasklet, irq_work, self-NMI, the tracepoints and a
# kprobe on vfs_read). Every source writes for RBN_DISCARD_SECONDS
# (default 15, 7 with RBN_QUICK=1; the task writers at a tenth of their
# time) while "rbtrace record" splices.
#  1. a discard_every out of range is refused at insmod, nothing left;
#  2. the load with discard_every=N reads N back from sysfs;
#  3. "rbtrace check" passes: time never goes backwards although
#     discarded events (given back, or left as paddings that keep their
#     delta) lie between the events, and the committed events' sequence
#     numbers have no gap (a discarded event takes no number);
#  4. per CPU that wrote, stats' discarded > 0, and exactly
#     discarded == (written + discarded) / N: each reserve that succeeded
#     counts once, every Nth is discarded;
#  5. every source that wrote discarded events (a source with fewer than
#     10 x N reserves may have none), and discards were made by writers
#     nested inside another writer (discarded_nested > 0: depth >= 2);
#  6. per source attempts == events + discarded + refused, and summed over
#     the sources: events == written, discarded == stats' discarded,
#     refused == dropped + commit_overrun + recursion;
#  7. per CPU written == read + overrun with nothing left, and the
#     recording holds exactly the events read;
#  8. "trace-cmd report --ts-check" on "rbtrace export" of the recording
#     prints no "went backwards", and as many sample lines as events were
#     read (skipped without trace-cmd);
#  9. a bad value written to /sys/module/rbnest/parameters/discard_every
#     is refused with EINVAL and changes nothing;
# 10. discard_every=0 written at run time stops the discards (discarded
#     stays 0 after a reset while the hrtimer's events are written), and
#     N written again starts them;
# 11. unload.
# RBN_OPTIONAL_SOURCES: source names allowed to have no events, as in
# test_nesting.

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

rbn_require rbtrace

ktap_print_header
ktap_set_plan 11

secs=${RBN_DISCARD_SECONDS:-$(rbn_secs 15)}
every=${RBN_DISCARD_EVERY:-7}
param=/sys/module/$rbn_name/parameters/discard_every
t=$rbn_tmp

# param_write VALUE: one write(2) of VALUE and a newline to the sysfs file
# of discard_every; 0 on success, else 1 with the errno text in rbn_err
param_write()
{
	printf '%s\n' "$1" >"$t/param"
	rbn_err=
	dd if="$t/param" of="$param" bs="$(wc -c <"$t/param")" count=1 \
		conv=notrunc 2>"$t/dd.err" && return 0
	rbn_err=$(rbn_errtext "$t/dd.err")
	return 1
}

# src_table FILE: a sources file as "NAME STATE ATTEMPTS EVENTS DISCARDED
# NESTED REFUSED AVAIL" lines ("-" for a counter missing, AVAIL 0 for a
# source this kernel lacks)
src_table()
{
	awk 'NF {
		split("attempts events discarded discarded_nested refused", k)
		for (j = 1; j <= 5; j++) v[k[j]] = "-"
		avail = 1
		for (i = 3; i <= NF; i++) {
			if ($i == "unavailable")
				avail = 0
			p = index($i, "=")
			if (p && substr($i, p + 1) ~ /^[0-9]+$/)
				v[substr($i, 1, p - 1)] = substr($i, p + 1)
		}
		print $1, $2, v["attempts"], v["events"], v["discarded"],
		      v["discarded_nested"], v["refused"], avail
	}' "$1"
}

# ---- 1: out of range at insmod
ok=1
bad=1000001
if insmod "$RBNEST_KO" discard_every=$bad >"$t/insmod.err" 2>&1; then
	ktap_print_msg "insmod discard_every=$bad succeeded"
	ok=0
else
	ktap_print_msg "insmod discard_every=$bad: $(tail -n 1 "$t/insmod.err")"
fi
if rbn_loaded || [ -d "$rbn_dir" ]; then
	ktap_print_msg "left behind: $(rbn_loaded && echo 'module ')$([ -d "$rbn_dir" ] && echo "$rbn_dir")"
	ok=0
	rbn_unload >/dev/null 2>&1
fi
ktap_test_result $ok "insmod discard_every=$bad (above 1000000) fails, nothing left"

# ---- 2: load
# The task writers at a tenth of their time (50 us of every 500), not
# half of it: the recording stays at a few million events, which
# trace-cmd reads in a couple of minutes under emulation.
if ! rbn_load buffer_size_kb="${RBN_NEST_BUFFER_KB:-4096}" \
	    gen_task_busy_us=50 gen_task_idle_us=450 \
	    discard_every="$every" sources=; then
	ktap_print_msg "$rbn_err"
	while [ "$KTAP_TESTNO" -lt 11 ]; do
		ktap_test_fail "module not loaded"
	done
	ktap_finished
fi
v=$(cat "$param" 2>/dev/null)
ktap_print_msg "$param: '$v'"
ok=0
[ "$v" = "$every" ] && ok=1
ktap_test_result $ok "load with discard_every=$every, read back"

kprobe=0
if rbn_write kprobe_events "p:rbn_discard vfs_read"; then
	kprobe=1
else
	ktap_print_msg "no kprobe on vfs_read ($rbn_err): kprobes source not required"
fi

ktap_print_msg "all sources for $secs s, every ${every}th reserve of a CPU discarded, rbtrace record splicing"
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
sed 's/^/# /' "$t/sources"
src_table "$t/sources" >"$t/counts"

# ---- 3: rbtrace check
rbn_check "$t/rec" >/dev/null
check_rc=$?
sed 's/^/# /' "$t/rec.check" | grep -v VIOLATION | head -n 20
grep -m 5 VIOLATION "$t/rec.check" | sed 's/^/# /'
events=$(rbn_check_events "$t/rec")
ok=0
[ $rec_rc -eq 0 ] && [ $check_rc -eq 0 ] && grep -q ': OK$' "$t/rec.check" &&
	[ "${events:-0}" -gt 0 ] && ok=1
ktap_print_msg "events: ${events:-0} recorded; record exit $rec_rc, check exit $check_rc"
ktap_test_result $ok "rbtrace check passes on a recording with discarded events"

# ---- 4: discarded per CPU, at the rate asked
ok=1
ncpu=0
rbn_stat_table written discarded dropped commit_overrun recursion ts_abs ts_slow max_depth
for c in $(rbn_cpus); do
	w=$(rbn_stat "$c" written)
	d=$(rbn_stat "$c" discarded)
	r=$((w + d))
	[ "$r" -gt 0 ] || continue
	ncpu=$((ncpu + 1))
	ktap_print_msg "cpu$c: discarded $d of $r reserved (written $w); want > 0 and == $r / $every = $((r / every))"
	[ "$d" -gt 0 ] && [ "$d" -eq $((r / every)) ] || ok=0
done
[ $ncpu -gt 0 ] || ok=0
ktap_test_result $ok "every CPU that wrote discarded every ${every}th reserved event ($ncpu CPUs)"

# ---- 5: every source discarded, nested writers too
ok=1
optional=$(echo "${RBN_OPTIONAL_SOURCES:-}" | tr ',' ' ')
[ $kprobe = 1 ] || optional="$optional kprobes"
nsrc=0
nested=0
ktap_print_msg "$(printf '%-16s %-4s %10s %10s %10s %10s %8s' source state attempts events discarded nested refused)"
while read -r name state at ev di dn rf avail; do
	ktap_print_msg "$(printf '%-16s %-4s %10s %10s %10s %10s %8s' "$name" "$state" "$at" "$ev" "$di" "$dn" "$rf")"
	nsrc=$((nsrc + 1))
	if [ "$ev$di$dn" != "${ev#-}${di#-}${dn#-}" ]; then
		ktap_print_msg "$name: a counter is missing"
		ok=0
		continue
	fi
	nested=$((nested + dn))
	need=1
	for o in $optional; do
		[ "$o" = "$name" ] && need=0
	done
	if [ "$avail" = 0 ]; then
		ktap_print_msg "$name: unavailable on this kernel"
		continue
	elif [ $need = 0 ]; then
		ktap_print_msg "$name: optional"
		continue
	fi
	if [ "$ev" -eq 0 ]; then
		ktap_print_msg "$name: wrote no event"
		ok=0
	elif [ $((ev + di)) -lt $((10 * every)) ]; then
		ktap_print_msg "$name: $((ev + di)) reserves, too few to require a discard"
	elif [ "$di" -eq 0 ]; then
		ktap_print_msg "$name: no event discarded"
		ok=0
	fi
done <"$t/counts"
ktap_print_msg "discards by writers at depth >= 2: $nested (want > 0)"
[ $nsrc -gt 0 ] && [ "$nested" -gt 0 ] || ok=0
ktap_test_result $ok "every source that wrote discarded events, nested writers too ($nsrc sources)"

# ---- 6: accounting of the attempts
ok=1
sum_ev=0
sum_di=0
sum_rf=0
while read -r name _ at ev di _ rf _; do
	if [ "$at$ev$di$rf" != "${at#-}${ev#-}${di#-}${rf#-}" ]; then
		ktap_print_msg "$name: a counter is missing"
		ok=0
		continue
	fi
	if [ "$at" -ne $((ev + di + rf)) ]; then
		ktap_print_msg "$name: attempts $at != events $ev + discarded $di + refused $rf"
		ok=0
	fi
	sum_ev=$((sum_ev + ev))
	sum_di=$((sum_di + di))
	sum_rf=$((sum_rf + rf))
done <"$t/counts"
w=$(rbn_stat_sum written)
d=$(rbn_stat_sum discarded)
refused=$(($(rbn_stat_sum dropped) + $(rbn_stat_sum commit_overrun) + $(rbn_stat_sum recursion)))
ktap_print_msg "sources: events $sum_ev, discarded $sum_di, refused $sum_rf; stats: written $w, discarded $d, dropped + commit_overrun + recursion $refused"
[ "$sum_ev" -eq "$w" ] && [ "$sum_di" -eq "$d" ] && [ "$sum_rf" -eq "$refused" ] || ok=0
ktap_test_result $ok "per source attempts == events + discarded + refused; the sums match the stats"

# ---- 7: what was written was read and recorded
ok=1
for c in $(rbn_cpus); do
	w=$(rbn_stat "$c" written)
	r=$(rbn_stat "$c" read)
	o=$(rbn_stat "$c" overrun)
	e=$(rbn_stat "$c" entries)
	n=$(rbn_check_col "$t/rec" "$c" 3)
	p=$(rbn_check_col "$t/rec" "$c" 7)
	g=$(rbn_check_col "$t/rec" "$c" 9)
	ktap_print_msg "cpu$c: written $w = read $r + overrun $o + entries $e; recorded ${n:-?} events, ${p:-?} paddings, ${g:-?} seq gaps"
	[ "$w" -eq $((r + o)) ] && [ "$e" -eq 0 ] && [ "${n:-0}" -eq "$r" ] || ok=0
done
ktap_test_result $ok "per CPU: written == read + overrun, all read events recorded"

# ---- 8: trace-cmd --ts-check
if ! command -v trace-cmd >/dev/null 2>&1; then
	ktap_test_skip "trace-cmd report --ts-check" "no trace-cmd on PATH"
else
	ok=0
	if "$RBTRACE" export "$t/rec" -o "$t/trace.dat" >"$t/export.out" 2>&1; then
		# the warnings go to stderr; the report's sample lines are
		# counted: every event read must be there
		: >"$t/ts.out"
		{
			trace-cmd report --ts-check "$t/trace.dat" 2>&1
			echo $? >"$t/ts.rc"
		} | awk -v w="$t/ts.out" '
			/went backwards|WARNING/ { print >w }
			/ sample: / { n++ }
			END { print n + 0 }' >"$t/ts.count"
		rc=$(cat "$t/ts.rc")
		n=$(cat "$t/ts.count")
		r=$(rbn_stat_sum read)
		warn=$(grep -c 'went backwards' "$t/ts.out")
		head -n 5 "$t/ts.out" | sed 's/^/# /'
		ktap_print_msg "trace-cmd report --ts-check: exit $rc, $warn 'went backwards' warnings, $(wc -l <"$t/ts.out") warning lines; $n sample lines, $r events read"
		[ "$rc" -eq 0 ] && [ ! -s "$t/ts.out" ] && [ "$n" -eq "$r" ] && ok=1
	else
		head -n 5 "$t/export.out" | sed 's/^/# /'
		ktap_print_msg "rbtrace export failed"
	fi
	ktap_test_result $ok "trace-cmd report --ts-check: time never goes backwards, every event read is there"
fi

# ---- 9: bad values at run time
ok=1
for b in 1000001 -1 abc 4294967296 ""; do
	if param_write "$b"; then
		ktap_print_msg "discard_every='$b' accepted"
		ok=0
	else
		ktap_print_msg "discard_every='$b': $rbn_err"
		case $rbn_err in
		*"Invalid argument"*) ;;
		*) ok=0 ;;
		esac
	fi
	v=$(cat "$param")
	[ "$v" = "$every" ] || { ktap_print_msg "discard_every now '$v'"; ok=0; }
done
ktap_test_result $ok "bad values written to discard_every are refused (EINVAL), the value stays $every"

# ---- 10: 0 at run time stops discarding, N starts again
# The buffer is reset first (no reader from here on) and only the
# generator's hrtimer writes, so that it does not fill up.
ok=1
rbn_set tracing_on 1 || { ktap_print_msg "$rbn_err"; ok=0; }
rbn_set reset 1 || { ktap_print_msg "$rbn_err"; ok=0; }
param_write 0 || { ktap_print_msg "discard_every=0: $rbn_err"; ok=0; }
rbn_set sources hrtimer || { ktap_print_msg "$rbn_err"; ok=0; }
step=$(rbn_secs 3)
sleep "$step"
w1=$(rbn_stat_sum written)
d1=$(rbn_stat_sum discarded)
sleep "$step"
w2=$(rbn_stat_sum written)
d2=$(rbn_stat_sum discarded)
ktap_print_msg "discard_every=0: written $w1 -> $w2, discarded $d1 -> $d2 over $step s (want written growing, discarded 0)"
[ "$w2" -gt "$w1" ] && [ "$d1" -eq 0 ] && [ "$d2" -eq 0 ] || ok=0
param_write "$every" || { ktap_print_msg "discard_every=$every: $rbn_err"; ok=0; }
sleep "$step"
w3=$(rbn_stat_sum written)
d3=$(rbn_stat_sum discarded)
ktap_print_msg "discard_every=$every again: written $w2 -> $w3, discarded $d2 -> $d3 over $step s (want discarded growing)"
[ "$d3" -gt "$d2" ] || ok=0
rbn_quiesce
rbn_stat_table written discarded dropped
ktap_test_result $ok "discard_every=0 at run time stops the discards, $every starts them again"

# ---- 11: unload
ok=0
if rbn_unload; then
	ok=1
else
	ktap_print_msg "$rbn_err"
fi
ktap_test_result $ok "unload"

ktap_finished
