#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test_faultinj.sh - every allocation of the module's operations can fail.
#
# For each operation below, the Nth fault-injection point of the task that
# runs it fails, for N = 1, 2, ... until the operation succeeds without
# reaching its Nth point (tools/fail_nth: /proc/self/fail-nth, with
# failslab and fail_page_alloc on for every allocation, sleeping ones and
# order 0 included; counted in the test's own task only, so nothing else
# in the machine fails). Every attempt that failed must have returned an
# errno (ENOMEM for the writes) and left the module as it was; one that
# succeeded although a point failed (a fallback, a failure the caller
# ignores) is undone and counted as tolerated. The number of points of
# each operation and the number tried are printed. Cases:
#
#  1-5. insmod with sources=all at sub-buffer orders 0-4 (RBN_FAULT_ORDERS,
#       "0 1 2 3 4" or "0,1,2,3,4"; order 0 only with RBN_QUICK=1): a failed insmod leaves no module
#       and no debugfs directory. An insmod passes about 550 points, most
#       of them in the kernel's module loader (reading the file, laying
#       out the module) before the module's init runs: the first point
#       whose stack holds do_init_module() is found by bisection (the
#       fault-injection stack trace of each probe, verbose=2); every point
#       from 20 before it on is tried, at most the last 80 (the count
#       varies between loads), and ten of the loader's points before
#       those. A load that
#       succeeded although a point failed must have every file. The
#       first order's last 40 points (20 with RBN_QUICK=1) are tried
#       again while another task keeps opening files of the module: none
#       may be open when a load fails (the module would be freed under
#       it)
#    6. growing buffer_size_kb (16 -> 64, 32 with RBN_QUICK=1): the size
#       and the data stay
#    7. adding a kprobe to kprobe_events: the list stays
#    8. opening trace (and one read)
#    9. opening trace_pipe_raw and splicing a page of it
#   10. arming a label in inject: it stays off
#   11. every writer source switched on from none: all stay off
#   12. after the sweeps: a load with every source traces, rbtrace check
#       passes, the module unloads; kmemleak (where the kernel has it)
#       finds no leak after two scans
#
# Skipped where the kernel has no fault injection (Debian's kernels: the
# 6.1-debug kernel of scripts/debug-kernel.sh has it). RBN_FAULT_MAX: the
# most failure points tried per operation (default 5000); reaching it
# fails the case.

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

rbn_require rbtrace insmod rmmod

fail_nth=${RBN_FAIL_NTH:-$rbn_root/tools/fail_nth/fail_nth}
fi_dir=$rbn_debugfs
why=
if [ ! -e /proc/self/fail-nth ]; then
	why="no /proc/self/fail-nth: this kernel has no CONFIG_FAULT_INJECTION"
elif [ ! -d "$fi_dir/failslab" ] || [ ! -d "$fi_dir/fail_page_alloc" ]; then
	why="no failslab or fail_page_alloc in debugfs (CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC, CONFIG_FAULT_INJECTION_DEBUG_FS)"
elif [ ! -x "$fail_nth" ]; then
	why="no $fail_nth (make fail-nth; or set RBN_FAIL_NTH)"
fi
if [ -n "$why" ]; then
	ktap_print_header
	ktap_skip_all "$rbn_test: $why"
	exit "$KSFT_SKIP"
fi

ktap_print_header
ktap_set_plan 12

t=$rbn_tmp
max=${RBN_FAULT_MAX:-5000}
orders=${RBN_FAULT_ORDERS:-0 1 2 3 4}
# the last points of an insmod tried again while files are opened
race=40
# the size a resize grows to: a sub-buffer and its descriptor per
# allocation
grow=64
if [ "${RBN_QUICK:-0}" = 1 ]; then
	orders=${RBN_FAULT_ORDERS:-0}
	race=20
	grow=32
fi
# "0,1,2" as well as "0 1 2"
orders=$(echo "$orders" | tr ',' ' ')

# Every allocation is a fault-injection point: sleeping ones, order-0
# pages, highmem. Only fail-nth makes them fail (probability stays 0).
fi_set()
{
	for _f in "$@"; do
		_a=${_f%%=*}
		_v=${_f#*=}
		cat "$fi_dir/$_a" >"$t/fi.$(echo "$_a" | tr / _)" 2>/dev/null
		echo "$_v" >"$fi_dir/$_a"
	done
}
fi_restore()
{
	for _s in "$t"/fi.*; do
		[ -f "$_s" ] || continue
		_a=$(basename "$_s" | sed 's/^fi\.//; s/_/\//')
		cat "$_s" >"$fi_dir/$_a" 2>/dev/null
	done
}
fi_set failslab/ignore-gfp-wait=N failslab/verbose=0 \
	fail_page_alloc/ignore-gfp-wait=N fail_page_alloc/ignore-gfp-highmem=N \
	fail_page_alloc/min-order=0 fail_page_alloc/verbose=0
ktap_print_msg "failslab: ignore-gfp-wait=$(cat "$fi_dir/failslab/ignore-gfp-wait")," \
	"fail_page_alloc: ignore-gfp-wait=$(cat "$fi_dir/fail_page_alloc/ignore-gfp-wait")" \
	"min-order=$(cat "$fi_dir/fail_page_alloc/min-order")"

# The state a failed operation must leave as it was.
snapshot()
{
	if [ -d "$rbn_dir" ]; then
		for _f in buffer_size_kb tracing_on inject kprobe_events; do
			printf '%s: ' "$_f"
			tr '\n' ' ' <"$rbn_dir/$_f"
			echo
		done
		# on or off; not the events and attempts of the sources a
		# failed "sources" write started and stopped again
		printf 'sources: '
		rbn_sources_state | tr '\n' ' '
		echo
		# the data; not the counters of attempts, which writers
		# that a failed "sources" write started and stopped again
		# move (they find the buffer full: dropped)
		for _c in "$rbn_dir"/per_cpu/cpu*; do
			printf '%s: ' "${_c##*/}"
			grep -E '^(entries|bytes|overrun):' "$_c/stats" |
				tr '\n' ' '
			echo
		done
	else
		echo "no $rbn_dir"
	fi
	grep -c "^$rbn_name " /proc/modules
}

# try N OP ARG...: the operation with its Nth point failed, once. Counts
# into points (failure points that made it fail), tolerated, bad; sets
# done when it succeeded without reaching point N. Needs the functions
# undo (after a success) and prepare (before each attempt; may be empty).
try()
{
	_n=$1
	shift
	prepare
	snapshot >"$t/before"
	_out=$("$fail_nth" "$_n" "$@" 2>&1)
	_rc=$?
	case $_rc:$_out in
	0:*injected=0*)
		done=1
		total_points=$(echo "$_out" | sed -n 's/.*points=\([0-9]*\).*/\1/p')
		undo
		;;
	0:*injected=1*)
		tolerated=$((tolerated + 1))
		undo
		;;
	1:*injected=1*)
		points=$((points + 1))
		echo "$_out" | sed 's/.*errno=[0-9]* (\(.*\)).*/\1/' >>"$t/errnos"
		snapshot >"$t/after"
		if ! cmp -s "$t/before" "$t/after"; then
			bad=$((bad + 1))
			[ $bad -le 3 ] && {
				ktap_print_msg "$_desc: point $_n: $_out; state changed:"
				diff "$t/before" "$t/after" | sed 's/^/#   /'
			}
		fi
		if [ -n "$want_errno" ] &&
		   ! echo "$_out" | grep -q "($want_errno)"; then
			bad=$((bad + 1))
			[ $bad -le 3 ] &&
				ktap_print_msg "$_desc: point $_n: $_out (want $want_errno)"
		fi
		;;
	*)
		bad=$((bad + 1))
		ktap_print_msg "$_desc: point $_n: exit $_rc: $_out"
		[ $_rc -ge 2 ] && return 2
		;;
	esac
	return 0
}

# sweep DESC FROM OP ARG...: the operation with its Nth point failed, N =
# FROM, FROM + 1, ... until it succeeds without reaching point N (at most
# RBN_FAULT_MAX tries); prints a summary. Before, with FROM > 1, the
# points 1 .. FROM - 1 are sampled (SAMPLE of them, evenly spaced). 0 when
# it reached success, every failure failed cleanly and one point at
# least made it fail.
sweep()
{
	_desc=$1
	_from=$2
	shift 2
	points=0 tolerated=0 bad=0 done=0 total_points=
	: >"$t/errnos"
	_t0=$(date +%s)
	_tried=0
	if [ "$_from" -gt 1 ]; then
		_step=$(( (_from - 1) / ${SAMPLE:-10} ))
		[ $_step -ge 1 ] || _step=1
		_k=1
		while [ $_k -lt "$_from" ]; do
			try $_k "$@" || break
			_tried=$((_tried + 1))
			_k=$((_k + _step))
		done
		ktap_print_msg "$_desc: points 1 to $((_from - 1)): $_tried tried (every ${_step}th):" \
			"$points failed it, $tolerated tolerated, $bad wrong"
	fi
	_n=$((_from - 1))
	while [ $done = 0 ] && [ "$_n" -lt $((_from + max)) ]; do
		_n=$((_n + 1))
		[ $(((_n - _from + 1) % 100)) = 0 ] &&
			ktap_print_msg "$_desc: at point $_n after $(($(date +%s) - _t0)) s:" \
				"$points failed it, $tolerated tolerated, $bad wrong"
		try $_n "$@" || break
		_tried=$((_tried + 1))
	done
	_errs=$(sort "$t/errnos" | uniq -c | awk '{ $1 = $1 "x"; print }' | tr '\n' ',')
	ktap_print_msg "$_desc: ${total_points:-?} points in all; tried $_tried in" \
		"$(($(date +%s) - _t0)) s (each of $_from to $((_n - 1)));" \
		"$points failure points failed it (${_errs%,}), $tolerated tolerated," \
		"$bad wrong; succeeded without reaching point $_n: $done"
	[ $done = 1 ] || ktap_print_msg "$_desc: did not succeed within $max tries"
	[ $done = 1 ] && [ $bad -eq 0 ] && [ $points -gt 0 ]
}

# init_point ARG...: the first fault-injection point of "insmod ARG..."
# that comes from do_init_module() (the module's init and what the
# loader does after it), by bisection over the points of a whole insmod;
# each probe fails point N with the fault-injection stack trace on
# (verbose=2) and looks for do_init_module in it. Prints "FIRST TOTAL".
init_point()
{
	"$fail_nth" 100000000 insmod "$@" >"$t/probe" 2>&1
	_total=$(sed -n 's/.*points=\([0-9]*\).*/\1/p' "$t/probe")
	# the files of a whole load, for loads that tolerated a failure
	find "$rbn_dir" | sort >"$t/tree.ref"
	# the opener below holds the module while a file is open
	opener_pause
	rbn_unload >/dev/null 2>&1
	opener_resume
	[ -n "$_total" ] || return 1
	echo 2 >"$fi_dir/failslab/verbose"
	echo 2 >"$fi_dir/fail_page_alloc/verbose"
	_lo=1
	_hi=$_total
	while [ "$_lo" -lt "$_hi" ]; do
		_mid=$(( (_lo + _hi) / 2 ))
		rbn_loaded && return 1
		rbn_dmesg_mark "faultinj probe $_mid"
		"$fail_nth" $_mid insmod "$@" >/dev/null 2>&1
		opener_pause
		rbn_unload >/dev/null 2>&1
		opener_resume
		if rbn_dmesg_after "faultinj probe $_mid" | grep -q 'do_init_module'; then
			_hi=$_mid
		else
			_lo=$((_mid + 1))
		fi
	done
	echo 0 >"$fi_dir/failslab/verbose"
	echo 0 >"$fi_dir/fail_page_alloc/verbose"
	echo "$_lo $_total"
}

# ---- 1-5: insmod at each sub-buffer order
prepare() { :; }
# A load that succeeded although one of its points failed must be a whole
# load: every file of the module there.
undo()
{
	find "$rbn_dir" | sort >"$t/tree.now"
	if ! cmp -s "$t/tree.now" "$t/tree.ref"; then
		bad=$((bad + 1))
		[ $bad -le 3 ] && ktap_print_msg "$_desc: point $_n: loaded, but without" \
			"$(grep -vxFf "$t/tree.now" "$t/tree.ref" | sed "s|^$rbn_dir/||" | tr '\n' ' ')"
	fi
	opener_pause
	rbn_unload || ktap_print_msg "$rbn_err"
	opener_resume
}
# Meanwhile, another task keeps opening files of the module: a file
# opened while the load is going on must not outlive a load that fails
# (the module is freed whatever its reference count).
# It pauses while the module is unloaded (an open file holds the module).
opener()
{
	while [ ! -e "$t/opener.stop" ]; do
		for _f in header_page per_cpu/cpu0/stats trace; do
			while [ -e "$t/opener.pause" ]; do
				touch "$t/opener.idle"
				sleep 0.05
			done
			# held open for 0.1 s (a failed open must not end the
			# loop, as a failed "exec 3<FILE" would)
			# shellcheck disable=SC2217 # the open is the point
			if sleep 0.1 <"$rbn_dir/$_f"; then
				opened=$((opened + 1))
				echo "$opened" >"$t/opener.count"
			fi
		done 2>/dev/null
	done
}
opener_pause()
{
	rm -f "$t/opener.idle"
	touch "$t/opener.pause"
	while [ -n "$opener_pid" ] && [ ! -e "$t/opener.idle" ] &&
	      [ ! -e "$t/opener.stop" ] && kill -0 "$opener_pid" 2>/dev/null; do
		sleep 0.05
	done
}
opener_resume()
{
	rm -f "$t/opener.pause" "$t/opener.idle"
}
# opener_start / opener_stop: the opener in the background
opener_start()
{
	rm -f "$t/opener.stop" "$t/opener.count"
	opener_resume
	opened=0
	opener &
	opener_pid=$!
	rbn_bg_add $opener_pid
}
opener_stop()
{
	touch "$t/opener.stop"
	wait $opener_pid
	rbn_bg_done $opener_pid
	opener_pid=
	cat "$t/opener.count" 2>/dev/null || echo 0
}
opener_pid=
want_errno=
i=0
for o in 0 1 2 3 4; do
	i=$((i + 1))
	case " $orders " in
	*" $o "*) ;;
	*)
		ktap_test_skip "$i: insmod sources=all subbuf_order=$o" \
			"orders swept: $orders (RBN_FAULT_ORDERS)"
		continue
		;;
	esac
	ok=0
	set -- "$RBNEST_KO" sources=all buffer_size_kb=$((16 << o)) subbuf_order=$o
	if ! first=$(init_point "$@"); then
		ktap_print_msg "insmod order $o: cannot count its points: $(cat "$t/probe")"
	else
		# shellcheck disable=SC2086 # two numbers
		set -- $first
		ktap_print_msg "insmod order $o: $2 points; the first in do_init_module" \
			"(the module's init and after) is point $1"
		# A margin: the number of points varies between loads (a
		# slab that needs a new page adds one, the module's vmalloc
		# area may need KASAN shadow pages or not), and so does the
		# bisection's answer; the module's init and what follows it
		# took 24 to 45 points in every load measured: at most the
		# last 80 are tried.
		from=$(($1 > 20 ? $1 - 20 : 1))
		[ "$from" -lt $(($2 - 80)) ] && from=$(($2 - 80))
		SAMPLE=10 sweep "insmod order $o" "$from" insmod "$RBNEST_KO" \
			sources=all buffer_size_kb=$((16 << o)) subbuf_order=$o && ok=1
		# The last points once more, while another task keeps
		# opening files of the module: those are where the files
		# exist, and none may be open when the load fails.
		if [ $ok = 1 ] && [ "$o" = "${orders%% *}" ]; then
			opener_start
			ok=0
			last=${total_points:-$2}
			SAMPLE=1 sweep "insmod order $o, files opened meanwhile" \
				$((last > race ? last - race : 1)) insmod "$RBNEST_KO" \
				sources=all buffer_size_kb=$((16 << o)) \
				subbuf_order=$o && ok=1
			ktap_print_msg "insmod order $o: another task opened a file of the" \
				"module $(opener_stop) times meanwhile"
		fi
	fi
	ktap_test_result $ok "$i: insmod sources=all subbuf_order=$o: every failure point fails it cleanly"
done

# ---- 6-11: on a loaded module
if ! rbn_load buffer_size_kb=16 sources=; then
	ktap_print_msg "$rbn_err"
	for i in 6 7 8 9 10 11; do
		ktap_test_fail "$i: no module to try"
	done
else
	want_errno="Cannot allocate memory"

	# a few events on every CPU, so that the size change has data to keep
	echo hrtimer >"$rbn_dir/sources"
	sleep 1
	echo -all >"$rbn_dir/sources"
	undo() { echo 16 >"$rbn_dir/buffer_size_kb"; }
	ok=0
	sweep "buffer_size_kb 16 -> $grow" 1 write "$rbn_dir/buffer_size_kb" "$grow" && ok=1
	ktap_test_result $ok "6: growing buffer_size_kb: every failure point gets ENOMEM, size and data stay"

	undo() { : >"$rbn_dir/kprobe_events"; }
	ok=0
	sweep "kprobe_events add" 1 write "$rbn_dir/kprobe_events" "p:rbn_fi vfs_read" && ok=1
	ktap_test_result $ok "7: adding a kprobe: every failure point gets ENOMEM, the list stays"

	undo() { :; }
	want_errno=
	ok=0
	sweep "open trace" 1 open "$rbn_dir/trace" && ok=1
	ktap_test_result $ok "8: opening and reading trace: every failure point fails it cleanly"

	# each attempt finds a page to splice
	prepare()
	{
		echo hrtimer >"$rbn_dir/sources"
		sleep 0.2
		echo -all >"$rbn_dir/sources"
	}
	ok=0
	sweep "splice trace_pipe_raw" 1 splice "$rbn_dir/per_cpu/cpu0/trace_pipe_raw" && ok=1
	ktap_test_result $ok "9: opening and splicing trace_pipe_raw: every failure point fails it cleanly"
	prepare() { :; }

	want_errno="Cannot allocate memory"
	undo() { echo off >"$rbn_dir/inject"; }
	ok=0
	sweep "inject arm" 1 write "$rbn_dir/inject" a && ok=1
	ktap_test_result $ok "10: arming inject: every failure point gets ENOMEM, it stays off"

	undo() { echo -all >"$rbn_dir/sources"; }
	ok=0
	sweep "sources all" 1 write "$rbn_dir/sources" all && ok=1
	ktap_test_result $ok "11: every source on: every failure point gets ENOMEM, all stay off"

	rbn_unload || ktap_print_msg "$rbn_err"
fi
fi_restore

# ---- 12: still works, nothing leaked
ok=0
if rbn_load sources=all; then
	rbn_record_start "$t/rec"
	sleep 2
	echo -all >"$rbn_dir/sources"
	if rbn_record_stop && rbn_check_ok "$t/rec"; then
		ktap_print_msg "recorded and checked $(rbn_check_events "$t/rec") events"
		ok=1
	fi
	rbn_unload || { ktap_print_msg "$rbn_err"; ok=0; }
else
	ktap_print_msg "$rbn_err"
fi
if [ $ok = 1 ] && rbn_kmemleak_scan; then
	ktap_print_msg "kmemleak: $rbn_leaks unreferenced objects"
	[ "$rbn_leaks" -eq 0 ] || ok=0
fi
ktap_test_result $ok "12: after the sweeps the module traces, rbtrace check passes, nothing leaked"

ktap_finished
