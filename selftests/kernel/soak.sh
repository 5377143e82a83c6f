#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# soak.sh - every writer of rbnest for a long time, every page checked as
# it streams.
#
# Not a test_*.sh: run.sh does not run it; "make soak" runs it in the VM
# (scripts/soak.sh), and it runs as it is on a real machine (root).
#
# Loads rbnest.ko with every source on (the load generator, the
# tracepoints, a kprobe on vfs_read) in producer/consumer mode, and runs
# "rbtrace stream" on all CPUs: each page is checked as it comes with the
# invariants of "rbtrace check" (times never go back, every event at its
# writer's clock or flagged zero delta / clock back, sequence numbers
# read once, every missing one covered by missed-events counts) and
# then forgotten. It runs for RBN_SOAK_MIN minutes (default 30), and on
# until RBN_SOAK_EVENTS events (default 100000000) were checked, at most
# RBN_SOAK_MAX_MIN minutes (default three times RBN_SOAK_MIN). Then every
# source is switched off, the stream drains, and:
#   1. rbtrace stream found no violation;
#   2. at least RBN_SOAK_EVENTS events were checked;
#   3. per CPU, written == checked + overrun (0 here) and nothing is left
#      in the buffer; dropped (refused, never written) is printed;
#   4. writers nested for real: events at depth 2 or more, forced
#      absolute stamps and slow paths taken by real interrupts;
#   5. the module unloads.
# Progress lines (every RBN_SOAK_EVERY seconds, default 60) show the
# events checked so far; the summary shows the events by CPU, context
# and depth, the time-stamp paths and the stats.

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

rbn_require rbtrace

ktap_print_header
ktap_set_plan 5

t=$rbn_tmp
min=${RBN_SOAK_MIN:-30}
target=${RBN_SOAK_EVENTS:-100000000}
max=${RBN_SOAK_MAX_MIN:-$((min * 3))}
every=${RBN_SOAK_EVERY:-60}

# checked: the events the stream has checked so far
checked()
{
	sed -n 's/^progress: .*, \([0-9]*\) events checked.*/\1/p' "$t/stream.log" |
		tail -n 1
}

fail_rest()
{
	while [ "$KTAP_TESTNO" -lt 5 ]; do
		ktap_test_fail "$1"
	done
	ktap_finished
}

if ! rbn_load buffer_size_kb=4096 sources=; then
	ktap_print_msg "$rbn_err"
	fail_rest "module not loaded"
fi
rbn_write kprobe_events "p:rbn_soak vfs_read" || ktap_print_msg "kprobe: $rbn_err"
rbn_set sources all || ktap_print_msg "$rbn_err"
ktap_print_msg "sources on: $(awk '$2 == "on" { printf "%s ", $1 }' "$rbn_dir/sources")"
ktap_print_msg "soak: $min min, on until $target events were checked (at most $max min)"

"$RBTRACE" stream -d "$rbn_dir" -i "$every" >"$t/stream.log" 2>&1 &
spid=$!
rbn_bg_add $spid

start=$(date +%s)
shown=0
while :; do
	sleep 10
	now=$(( $(date +%s) - start ))
	n=$(checked)
	n=${n:-0}
	if [ $((now - shown)) -ge "$every" ]; then
		shown=$now
		ktap_print_msg "$((now / 60)) min $((now % 60)) s: $n events checked" \
			"(written $(rbn_stat_sum written), dropped $(rbn_stat_sum dropped))"
	fi
	kill -0 $spid 2>/dev/null || break
	[ "$now" -ge $((min * 60)) ] && [ "$n" -ge "$target" ] && break
	[ "$now" -ge $((max * 60)) ] && break
done
elapsed=$(( $(date +%s) - start ))

rbn_quiesce
i=0
while kill -0 $spid 2>/dev/null && [ $i -lt 120 ]; do
	sleep 1
	i=$((i + 1))
done
kill -INT $spid 2>/dev/null
wait $spid
rc=$?
rbn_bg_done $spid
grep -v '^progress: ' "$t/stream.log" | sed 's/^/# /'

ok=0
[ $rc -eq 0 ] && grep -q ': OK$' "$t/stream.log" && ok=1
ktap_test_result $ok "rbtrace stream: every page checked as it came, no violation (exit $rc)"

n=$(sed -n 's/^events: \([0-9]*\)$/\1/p' "$t/stream.log")
ok=0
[ "${n:-0}" -ge "$target" ] && ok=1
ktap_print_msg "$n events checked in $((elapsed / 60)) min $((elapsed % 60)) s" \
	"($(( ${n:-0} / (elapsed > 0 ? elapsed : 1) )) per second)"
ktap_test_result $ok "at least $target events checked"

rbn_stat_table written read overrun entries dropped commit_overrun recursion
ok=1
for c in $(rbn_cpus); do
	w=$(rbn_stat "$c" written)
	o=$(rbn_stat "$c" overrun)
	e=$(rbn_stat "$c" entries)
	s=$(awk -v c="$c" '$1 == c && NF >= 10 { print $3; exit }' "$t/stream.log")
	ktap_print_msg "cpu$c: written $w = checked ${s:-?} + overrun $o; entries left $e"
	[ "${s:-x}" = $((w - o)) ] && [ "$e" -eq 0 ] || ok=0
done
ktap_test_result $ok "per CPU: written == checked + overrun, nothing left"

rbn_stat_table ts_fast ts_abs ts_slow ts_zero ts_extend ts_clock_back max_depth
abs=$(rbn_stat_sum ts_abs)
slow=$(rbn_stat_sum ts_slow)
nested=$(awk '$1 ~ /^(task|softirq|hardirq|nmi)$/ { for (i = 3; i <= NF; i++) n += $i }
	END { print n + 0 }' "$t/stream.log")
ktap_print_msg "events at depth >= 2: $nested; forced absolute $abs, slow path $slow," \
	"zero delta $(rbn_stat_sum ts_zero), clock back $(rbn_stat_sum ts_clock_back)"
ok=0
[ "$nested" -gt 0 ] && [ "$abs" -gt 0 ] && [ "$slow" -gt 0 ] && ok=1
ktap_test_result $ok "real interrupts nested: events at depth 2 or more, forced absolute stamps, slow paths"

ok=0
rbn_unload && ok=1
[ -n "$rbn_err" ] && ktap_print_msg "$rbn_err"
ktap_test_result $ok "unload"

ktap_finished
