#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test_inject.sh - a nested writer at every label of the write path.
#
# For each label of the README, "echo LABEL > inject" arms every CPU; the task
# writers run until every online CPU reports a hit for the label (re-armed
# every few seconds: an arming whose interrupt came late is used up; gives
# up after RBN_INJECT_TIMEOUT s, default 30); then "off". The slow-path
# labels (slow_*, e, f) are only reached by a writer that was interrupted
# between A and C, so they are armed together with "a". For the labels
# from a_tail to c the outer event must take the slow path or the nested
# one a forced absolute stamp: ts_slow + ts_abs grow (only the task source
# writes here, so no other interrupt nests into writers); for the
# slow-path labels ts_slow grows.
#
# Each mode tests its labels one after the other in one recording, which
# "rbtrace check" must pass; each label's window (the buffer's clock, the
# stats' now_ts, before the arming and after the last hit) is its own.
#
# Producer/consumer mode, with rbtrace record draining the buffer so that
# the writers keep moving to new pages: every label but the three of
# overwrite mode. Every nested event must reach the recording: the reader
# keeps up, so nothing may be dropped (dropped + commit_overrun + overrun
# must not grow while the label is tested), and the recorded events of the
# inject source (src=8) in the label's window must be exactly the hits
# (interrupts that wrote their event while the label waited) plus the late
# interrupts (those that wrote it after the label gave up waiting) of that
# window.
# Overwrite mode, 16 KiB per CPU, no reader: page_full, page_head,
# page_new_head and the other page labels; the nested events are usually
# overwritten by the time the pages are read, so only the check of the
# pages and the hits are required there.

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

rbn_require rbtrace

labels_pc="a_tail a_before a_after a_clock a b c d slow_before slow_clock slow_ts
slow_set e f event page_tail page_end page_next commit commit_end"
labels_ow="page_full page_head page_new_head page_tail page_end page_next"
# shellcheck disable=SC2086 # word lists
nr_pc=$(echo $labels_pc | wc -w)
# shellcheck disable=SC2086
nr_ow=$(echo $labels_ow | wc -w)
plan=$((nr_pc + nr_ow + 2))
wait_max=${RBN_INJECT_TIMEOUT:-30}
gen="gen_task_busy_us=100 gen_task_idle_us=900"
t=$rbn_tmp

ktap_print_header
ktap_set_plan $plan

online=$(rbn_online_cpus | tr '\n' ' ')
# shellcheck disable=SC2086
nr_online=$(echo $online | wc -w)
ktap_print_msg "online CPUs: $online"

# total_hits: hits of all labels
total_hits()
{
	awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^hits=/) n += substr($i, 6) }
	     END { print n + 0 }' "$rbn_dir/inject"
}

# total_late: nested interrupts that came after the label gave up
total_late()
{
	awk '$1 == "late" { for (i = 2; i <= NF; i++) { sub(/^[^=]*=/, "", $i); n += $i } }
	     END { print n + 0 }' "$rbn_dir/inject"
}

# cpu_hits LABEL: "cpuN=H ..." of the online CPUs ("" without per-CPU
# fields), in one pass
cpu_hits()
{
	awk -v l="$1" -v cpus="$online" 'tolower($1) == l {
		n = split(cpus, c, " ")
		for (i = 1; i <= n; i++)
			for (j = 2; j <= NF; j++)
				if (index($j, "cpu" c[i] "=") == 1)
					printf " %s", $j
		exit
	}' "$rbn_dir/inject"
}

# all_hit LABEL BASE_HITS BASE_CPU_HITS: every online CPU hit LABEL since
# the base was taken
all_hit()
{
	if [ -n "$3" ]; then
		cpu_hits "$1" | awk -v base="$3" '{
			n = split(base, b, " ")
			for (i = 1; i <= n; i++) {
				split(b[i], kv, "=")
				was[kv[1]] = kv[2]
			}
			for (i = 1; i <= NF; i++) {
				split($i, kv, "=")
				if (kv[2] + 0 <= was[kv[1]] + 0)
					exit 1
			}
			exit NF == 0
		}'
		return
	fi
	_v=$(rbn_inject_field "$1" hits)
	[ $((${_v:-0} - $2)) -ge "$nr_online" ]
}

# inject_wait LABEL WORDS: arm WORDS until every CPU hit LABEL; then off.
# Sets hit_secs, hit_cpus and hit_delta.
inject_wait()
{
	_base=$(rbn_inject_field "$1" hits)
	_base=${_base:-0}
	_base_cpu=$(cpu_hits "$1")
	_start=$(date +%s)
	_armed=$_start
	_ret=1
	_narm=1
	if ! rbn_write inject "$2"; then
		ktap_print_msg "echo '$2' > inject: $rbn_err"
		return 1
	fi
	while :; do
		if all_hit "$1" "$_base" "$_base_cpu"; then
			_ret=0
			break
		fi
		_now=$(date +%s)
		[ $((_now - _start)) -ge "$wait_max" ] && break
		if [ $((_now - _armed)) -ge 3 ]; then
			rbn_write inject "$2"
			_armed=$_now
			_narm=$((_narm + 1))
		fi
		sleep 0.2
	done
	hit_secs=$(($(date +%s) - _start))
	rbn_write inject off || ktap_print_msg "echo off > inject: $rbn_err"
	hit_cpus=$(cpu_hits "$1")
	_v=$(rbn_inject_field "$1" hits)
	hit_delta=$((${_v:-0} - _base))
	ktap_print_msg "$1: armed $_narm times ('$2'), +$hit_delta hits in ${hit_secs}s; per CPU now:${hit_cpus:- (no per-CPU counts)}"
	return $_ret
}

# words LABEL: what to write to inject for LABEL
words()
{
	case $1 in
	slow_before | slow_clock | slow_ts | slow_set | e | f) echo "a $1" ;;
	*) echo "$1" ;;
	esac
}

# stats_now: "NOW ABS SLOW ZERO LOST" of all CPUs in one pass: the
# buffer's clock now (the latest of the CPUs'), the sums of ts_abs,
# ts_slow, ts_zero and of dropped + commit_overrun + overrun
stats_now()
{
	awk '$1 == "now_ts:" && $2 + 0 > now { now = $2 + 0 }
	     $1 == "ts_abs:" { abs += $2 }
	     $1 == "ts_slow:" { slow += $2 }
	     $1 == "ts_zero:" { zero += $2 }
	     $1 == "dropped:" || $1 == "commit_overrun:" || $1 == "overrun:" {
		lost += $2
	     }
	     END { printf "%.0f %.0f %.0f %.0f %.0f\n", now, abs, slow, zero, lost }' \
		"$rbn_dir"/per_cpu/cpu*/stats
}

# window MODE LABEL: one label, in the recording that runs for the whole
# mode: arm it until every CPU hit it, then off and a moment for a late
# interrupt. Appends "LABEL START END HITS LATE ABS SLOW ZERO LOST OK" to
# $t/win.MODE (times of the buffer's clock; the counters' growth).
window()
{
	_mode=$1
	_l=$2
	_ok=1
	stats_now >"$t/stats0"
	read -r _t0 _abs0 _slow0 _zero0 _drop0 <"$t/stats0"
	_hits0=$(total_hits)
	_late0=$(total_late)
	inject_wait "$_l" "$(words "$_l")" || {
		ktap_print_msg "$_l: not hit on every online CPU within ${wait_max}s"
		_ok=0
	}
	# an interrupt of the last arming may still be on its way
	sleep 0.3
	_hits=$(($(total_hits) - _hits0))
	_late=$(($(total_late) - _late0))
	stats_now >"$t/stats1"
	read -r _t1 _abs1 _slow1 _zero1 _drop1 <"$t/stats1"
	echo "$_l $_t0 $_t1 $_hits $_late $((_abs1 - _abs0)) $((_slow1 - _slow0))" \
		"$((_zero1 - _zero0)) $((_drop1 - _drop0)) $_ok" >>"$t/win.$_mode"
}

# run_mode MODE LABELS...: every label in one recording, then a result
# per label. Producer/consumer: rbtrace record runs all the time;
# overwrite: the pages are read at the end.
run_mode()
{
	_mode=$1
	shift
	_rec=$t/rec.$_mode
	: >"$t/win.$_mode"
	rbn_set tracing_on 1
	[ "$_mode" = pc ] && rbn_record_start "$_rec"
	rbn_set sources task || ktap_print_msg "$rbn_err"
	for _l in "$@"; do
		window "$_mode" "$_l"
	done
	rbn_quiesce
	if [ "$_mode" = ow ]; then
		rbn_record "$_rec" >"$t/rec.out"
	else
		rbn_record_stop >"$t/rec.out"
	fi
	_rc=$?
	_cok=1
	if [ $_rc -ne 0 ]; then
		cat "$t/rec.out"
		ktap_print_msg "rbtrace record exit $_rc"
		_cok=0
	fi
	if rbn_check_ok "$_rec" >"$t/check.out"; then
		ktap_print_msg "$_mode: one recording of every label: $(rbn_check_events "$_rec") events, $(tail -n 1 "$_rec.check")"
	else
		cat "$t/check.out"
		_cok=0
	fi
	# The nested events (src=8) of the recording, by window: their times,
	# in ns ("S.NNNNNNNNN:", no leading zero for busybox awk's sake).
	"$RBTRACE" report "$_rec" 2>/dev/null | awk '/ src=8 / {
			for (i = 1; i <= NF; i++)
				if ($i ~ /^[0-9]+\.[0-9]+:$/) {
					sub(/:$/, "", $i)
					split($i, p, ".")
					sub(/^0+/, "", p[2])
					printf "%d%09d\n", p[1], p[2] + 0
					break
				}
		}' >"$t/nested.$_mode"
	ktap_print_msg "$_mode: $(wc -l <"$t/nested.$_mode") nested (src=8) events recorded in all"
	while read -r _l _t0 _t1 _hits _late _dabs _dslow _dzero _ddrop _ok; do
		[ $_cok = 1 ] || _ok=0
		_nested=$(awk -v a="$_t0" -v b="$_t1" '$1 >= a && $1 <= b { n++ } END { print n + 0 }' "$t/nested.$_mode")
		ktap_print_msg "$_l: ts_abs +$_dabs, ts_slow +$_dslow, ts_zero +$_dzero; $_nested nested (src=8) events recorded in its window of $_hits hits + $_late late = $((_hits + _late)); lost (dropped, commit_overrun, overrun) +$_ddrop"
		# Producer/consumer with a reader: nothing may be lost, and
		# every injected event reaches the pages, none more.
		# Overwrite mode keeps only the last 16 KiB: the nested events
		# are usually overwritten; the pages written after them must
		# be right.
		if [ "$_mode" = pc ]; then
			if [ "$_ddrop" -ne 0 ]; then
				ktap_print_msg "$_l: $_ddrop events lost with a reader running (want 0)"
				_ok=0
			fi
			if [ "$_nested" -ne $((_hits + _late)) ]; then
				ktap_print_msg "$_l: $_nested nested events recorded, want hits + late = $((_hits + _late))"
				_ok=0
			fi
			[ "$_nested" -gt 0 ] || _ok=0
		fi
		case $_l in
		a_tail | a_before | a_after | a_clock | a | b | c)
			if [ $((_dabs + _dslow)) -eq 0 ]; then
				ktap_print_msg "$_l: neither ts_slow nor ts_abs grew"
				_ok=0
			fi
			;;
		slow_before | slow_clock | slow_ts | slow_set | e | f)
			if [ "$_dslow" -eq 0 ]; then
				ktap_print_msg "$_l: ts_slow did not grow"
				_ok=0
			fi
			;;
		esac
		if [ "$_mode" = pc ]; then
			ktap_test_result "$_ok" "$_mode: inject $_l: hit on every CPU, every nested event recorded, none lost, rbtrace check passes"
		else
			ktap_test_result "$_ok" "$_mode: inject $_l: hit on every CPU, rbtrace check passes"
		fi
	done <"$t/win.$_mode"
	rm -rf "$_rec"
}

# ---- producer/consumer -----------------------------------------------------

# shellcheck disable=SC2086 # gen is a list of parameters
if rbn_load sources= $gen; then
	ktap_print_msg "producer/consumer, buffer_size_kb $(rbn_get buffer_size_kb), reader running"
	# shellcheck disable=SC2086 # a word list
	run_mode pc $labels_pc
	ktap_print_msg "late interrupts: $(total_late)"
	ok=0
	rbn_unload && ok=1
	[ $ok = 1 ] || ktap_print_msg "$rbn_err"
	ktap_test_result $ok "unload (producer/consumer)"
else
	ktap_print_msg "$rbn_err"
	for l in $labels_pc; do
		ktap_test_fail "pc: inject $l (module not loaded)"
	done
	ktap_test_fail "unload (producer/consumer)"
fi

# ---- overwrite -------------------------------------------------------------

# shellcheck disable=SC2086
if rbn_load overwrite=1 buffer_size_kb="${RBN_INJECT_OW_KB:-16}" sources= $gen; then
	ktap_print_msg "overwrite, buffer_size_kb $(rbn_get buffer_size_kb), no reader while armed"
	# shellcheck disable=SC2086 # a word list
	run_mode ow $labels_ow
	ktap_print_msg "late interrupts: $(total_late)"
	ok=0
	rbn_unload && ok=1
	[ $ok = 1 ] || ktap_print_msg "$rbn_err"
	ktap_test_result $ok "unload (overwrite)"
else
	ktap_print_msg "$rbn_err"
	for l in $labels_ow; do
		ktap_test_fail "ow: inject $l (module not loaded)"
	done
	ktap_test_fail "unload (overwrite)"
fi

ktap_finished
