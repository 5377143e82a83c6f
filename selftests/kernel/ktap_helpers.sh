# SPDX-License-Identifier: GPL-2.0
#
# ktap_helpers.sh - KTAP output and rbnest.ko helpers for the kernel tests.
#
# Sourced by every selftests/kernel/test_*.sh. POSIX sh and busybox applets
# only: the tests run under busybox ash in the VM and under dash or bash on
# a real machine, as root.
#
# KTAP:
#	ktap_print_header		"KTAP version 1"
#	ktap_set_plan N			"1..N"
#	ktap_skip_all REASON		"1..0 # SKIP REASON" (then exit $KSFT_SKIP)
#	ktap_test_pass DESC		"ok N DESC"
#	ktap_test_fail DESC		"not ok N DESC"
#	ktap_test_skip DESC [REASON]	"ok N DESC # SKIP REASON"
#	ktap_test_result OK DESC	pass when OK is 1, fail otherwise
#	ktap_print_msg MSG...		"# MSG"
#	ktap_finished			totals line; exit 1 on a failure or a
#					plan mismatch, 4 when all skipped, else 0
#
# rbnest (the module's debugfs directory is $rbn_dir):
#	rbn_require [rbtrace] [trace-cmd]   root, debugfs, module, tools, or
#					    skip the whole script (exit 4)
#	rbn_load [PARAM=VALUE...]	    insmod; rbn_err has the error text
#	rbn_unload			    rmmod with retries
#	rbn_wait_blocked PID WHERE [TENTHS] PID asleep in the kernel function
#					    WHERE (wchan, or the stack's top)
#	rbn_children PID, rbn_exec_pid PID  its children; the command a
#					    timeout(1) PID runs
#	rbn_stat CPU FIELD, rbn_stat_sum FIELD, rbn_stat_max FIELD
#	rbn_write FILE STRING		    one write(2) of STRING and a newline
#					    via dd; rbn_err = errno text or ""
#	rbn_record_start OUT / rbn_record_stop, rbn_record OUT (drain)
#	rbn_check REC			    rbtrace check, table as "# " lines
#
# Environment: RBNEST_KO (module, default <root>/rbnest.ko), RBTRACE
# (default <root>/tools/rbtrace/rbtrace, else rbtrace on PATH), RBN_TMPDIR
# (scratch space, default $TMPDIR or /tmp), RBN_KEEP=1 (keep the scratch
# directory), RBN_QUICK=1 (halve durations: rbn_secs).

# shellcheck disable=SC2034 # the constants and rbn_dmesg_bad_re are API
KSFT_PASS=0
KSFT_FAIL=1
KSFT_XFAIL=2
KSFT_XPASS=3
KSFT_SKIP=4

KTAP_TESTNO=0
KTAP_CNT_PASS=0
KTAP_CNT_FAIL=0
KTAP_CNT_SKIP=0
KTAP_PLAN=

ktap_print_header()
{
	echo "KTAP version 1"
}

ktap_set_plan()
{
	KTAP_PLAN=$1
	echo "1..$1"
}

ktap_skip_all()
{
	echo "1..0 # SKIP $*"
}

ktap_print_msg()
{
	echo "# $*"
}

ktap_test_pass()
{
	KTAP_TESTNO=$((KTAP_TESTNO + 1))
	KTAP_CNT_PASS=$((KTAP_CNT_PASS + 1))
	echo "ok $KTAP_TESTNO $*"
}

ktap_test_fail()
{
	KTAP_TESTNO=$((KTAP_TESTNO + 1))
	KTAP_CNT_FAIL=$((KTAP_CNT_FAIL + 1))
	echo "not ok $KTAP_TESTNO $*"
}

ktap_test_skip()
{
	KTAP_TESTNO=$((KTAP_TESTNO + 1))
	KTAP_CNT_SKIP=$((KTAP_CNT_SKIP + 1))
	echo "ok $KTAP_TESTNO $1 # SKIP ${2:-}"
}

# ktap_test_result OK DESC: OK is 1 for a pass
ktap_test_result()
{
	if [ "$1" = 1 ]; then
		shift
		ktap_test_pass "$*"
	else
		shift
		ktap_test_fail "$*"
	fi
}

ktap_finished()
{
	echo "# Totals: pass:$KTAP_CNT_PASS fail:$KTAP_CNT_FAIL xfail:0 xpass:0 skip:$KTAP_CNT_SKIP error:0"
	if [ -n "$KTAP_PLAN" ] && [ "$KTAP_PLAN" -ne "$KTAP_TESTNO" ]; then
		echo "# Planned tests != run tests ($KTAP_PLAN != $KTAP_TESTNO)"
		exit $KSFT_FAIL
	fi
	if [ "$KTAP_CNT_FAIL" -gt 0 ]; then
		exit $KSFT_FAIL
	fi
	if [ "$KTAP_CNT_SKIP" -gt 0 ] && [ "$KTAP_CNT_PASS" -eq 0 ]; then
		exit $KSFT_SKIP
	fi
	exit $KSFT_PASS
}

# ---------------------------------------------------------------------------
# rbnest
# ---------------------------------------------------------------------------

rbn_name=rbnest
rbn_debugfs=/sys/kernel/debug
rbn_dir=$rbn_debugfs/rbnest
rbn_root=$(cd "$(dirname "$0")/../.." 2>/dev/null && pwd)
RBNEST_KO=${RBNEST_KO:-$rbn_root/rbnest.ko}
if [ -z "${RBTRACE:-}" ]; then
	if [ -x "$rbn_root/tools/rbtrace/rbtrace" ]; then
		RBTRACE=$rbn_root/tools/rbtrace/rbtrace
	else
		RBTRACE=$(command -v rbtrace 2>/dev/null)
	fi
fi
rbn_test=$(basename "$0" .sh)
rbn_tmp=
rbn_bg_pids=
rbn_err=
rbn_rec_pid=
rbn_rec_out=
rbn_leaks=0

# rbn_secs N: N seconds, halved (at least 1) with RBN_QUICK=1
rbn_secs()
{
	if [ "${RBN_QUICK:-0}" = 1 ]; then
		if [ "$1" -gt 1 ]; then
			echo $(($1 / 2))
		else
			echo 1
		fi
	else
		echo "$1"
	fi
}

# rbn_timed_out RC: RC is what timeout(1) returns when it had to kill
# (GNU: 124, or 128+signal with -s; busybox: 128+signal)
rbn_timed_out()
{
	case $1 in
	124 | 137 | 143) return 0 ;;
	esac
	return 1
}

rbn_loaded()
{
	grep -q "^$rbn_name " /proc/modules 2>/dev/null
}

# rbn_bg_add PID: a background process this script started; killed (by its
# id) on exit if still running
rbn_bg_add()
{
	rbn_bg_pids="$rbn_bg_pids $1"
}

# rbn_bg_done PID: PID was waited for: not to be killed on exit
rbn_bg_done()
{
	_b_new=
	for _b_pid in $rbn_bg_pids; do
		[ "$_b_pid" = "$1" ] || _b_new="$_b_new $_b_pid"
	done
	rbn_bg_pids=$_b_new
}

rbn_cleanup()
{
	for _c_pid in $rbn_bg_pids; do
		kill "$_c_pid" 2>/dev/null
	done
	for _c_pid in $rbn_bg_pids; do
		wait "$_c_pid" 2>/dev/null
	done
	rbn_bg_pids=
	if [ -d "$rbn_dir" ]; then
		[ -e "$rbn_dir/inject" ] && echo off >"$rbn_dir/inject" 2>/dev/null
		[ -e "$rbn_dir/sources" ] && echo "-all" >"$rbn_dir/sources" 2>/dev/null
	fi
	if rbn_loaded; then
		rbn_unload >/dev/null 2>&1
	fi
	if [ -n "$rbn_tmp" ] && [ -d "$rbn_tmp" ]; then
		if [ "${RBN_KEEP:-0}" = 1 ]; then
			echo "# kept $rbn_tmp"
		else
			rm -rf "$rbn_tmp"
		fi
	fi
}

# rbn_dmesg_mark TEXT: a line in the kernel log to find this test's part
rbn_dmesg_mark()
{
	if [ -w /dev/kmsg ]; then
		echo "rbnest-selftest: $*" >/dev/kmsg 2>/dev/null
	fi
}

# rbn_dmesg_after PATTERN: the kernel log from the last line with PATTERN
# on (all of it when there is none)
rbn_dmesg_after()
{
	dmesg 2>/dev/null | awk -v p="$1" '
		{ l[NR] = $0; if (index($0, p)) m = NR }
		END { for (i = (m ? m : 1); i <= NR; i++) print l[i] }'
}

# The lines of the kernel log that show a kernel problem: the generic
# reports (WARNING, BUG, Oops, panic, general protection, the kernel-mode
# "RIP: 0010:" of a register dump), lockdep (possible circular /
# recursive locking, inconsistent lock state, "Invalid wait context",
# "suspicious RCU usage", "lockdep is turned off", DEBUG_LOCKS_WARN_ON),
# "BUG: sleeping function called from invalid context", KASAN,
# KFENCE and KCSAN ("BUG: KASAN: ...", "BUG: KFENCE: ...", "BUG: KCSAN:
# data-race in ..."), UBSAN ("UBSAN: shift-out-of-bounds in ..."), debug
# objects ("ODEBUG: free active ... object type: hrtimer"), list debugging ("list_add corruption"), the lockup
# detectors (soft lockup, hard LOCKUP, RCU stalls, "blocked for more
# than N seconds") and kmemleak ("N new suspected memory leaks"). Not the
# frames of a stack dump that is no report, such as the one of an
# allocation failure test_faultinj makes ("? lockdep_hardirqs_on+0x79",
# the user-mode "RIP: 0033:"). selftests/user/test_dmesg_re.sh holds a
# sample of each.
# shellcheck disable=SC2034
rbn_dmesg_bad_re='WARNING|(^|[^A-Za-z])BUG|Oops|Kernel panic|general protection|RIP: 0010:'
rbn_dmesg_bad_re="$rbn_dmesg_bad_re|lockdep is turned off|DEBUG_LOCKS_WARN_ON|possible circular|possible recursive"
rbn_dmesg_bad_re="$rbn_dmesg_bad_re|inconsistent lock|Invalid wait context|suspicious RCU"
rbn_dmesg_bad_re="$rbn_dmesg_bad_re|sleeping function|KASAN|KFENCE|KCSAN|UBSAN:"
rbn_dmesg_bad_re="$rbn_dmesg_bad_re|list_(add|del) corruption|soft lockup|hard LOCKUP"
rbn_dmesg_bad_re="$rbn_dmesg_bad_re|self-detected stall|detected stalls|blocked for more than"
rbn_dmesg_bad_re="$rbn_dmesg_bad_re|ODEBUG:.*(object type|disabled)|suspected memory leak|cut here"

# rbn_dmesg_reports LOG [RACES]: the report lines (rbn_dmesg_bad_re) of
# the kernel log in the file LOG, except KCSAN reports of a data race in
# which rbnest makes neither access: the first frame under each "read
# to"/"write to" line is the function that made it, and when neither is
# an "[rbnest]" frame the race is the kernel's own, even with rbnest
# further down a stack as the caller (6.1 has many that later kernels
# annotated: the timekeeping latch behind ktime_get_mono_fast_ns(), which
# the module's clock calls, is one). The title line of each of those
# goes to the file RACES when given. A KCSAN report whose end is missing
# counts.
rbn_dmesg_reports()
{
	awk -v re="$rbn_dmesg_bad_re" -v races="${2:-}" '
		function show(	i) {
			for (i = 1; i <= n; i++)
				if (blk[i] ~ re)
					print blk[i]
		}
		inblk {
			blk[++n] = $0
			l = $0
			sub(/^\[[ 0-9.]*\]/, "", l)
			if (top && l ~ /[^ ]/) {
				if (index(l, "[rbnest]"))
					rbn = 1
				top = 0
			}
			if ($0 ~ / to 0x[0-9a-f]+ of [0-9]+ bytes by /)
				top = 1
			if ($0 ~ /==========/) {
				if (rbn)
					show()
				else if (races != "")
					print title >races
				inblk = 0
			}
			next
		}
		/BUG: KCSAN: / {
			inblk = 1; n = 1; blk[1] = $0; title = $0; rbn = 0; top = 0
			next
		}
		$0 ~ re { print }
		END { if (inblk) show() }' "$1"
}

# rbn_kmemleak_scan: where the kernel has kmemleak, scan, wait for its
# minimum object age (5 s) and scan again; rbn_leaks is the number of
# unreferenced objects it reports, the first few are shown as "# "
# lines. Returns 1 when the kernel has no kmemleak.
rbn_kmemleak_scan()
{
	_k=$rbn_debugfs/kmemleak
	rbn_leaks=0
	[ -w "$_k" ] && [ -r "$_k" ] && echo scan >"$_k" 2>/dev/null || return 1
	sleep 6
	echo scan >"$_k"
	rbn_leaks=$(grep -c '^unreferenced object' "$_k")
	grep -A 16 -m 4 '^unreferenced object' "$_k" | sed 's/^/# kmemleak: /'
	return 0
}

# rbn_require [rbtrace] [trace-cmd] [mkfifo]: everything the script needs,
# or "1..0 # SKIP" and exit 4. rbnest already loaded is a failure (one
# failed case, the module unloaded, exit 1). Sets up the scratch directory
# and the exit trap.
rbn_require()
{
	_r_missing=
	if [ "$(id -u 2>/dev/null)" != 0 ]; then
		_r_missing="not root"
	elif [ ! -r /proc/modules ]; then
		_r_missing="no /proc/modules"
	elif [ ! -f "$RBNEST_KO" ]; then
		_r_missing="no module $RBNEST_KO (set RBNEST_KO)"
	fi
	if [ -z "$_r_missing" ] &&
	   ! grep -q " $rbn_debugfs debugfs " /proc/mounts 2>/dev/null; then
		mount -t debugfs debugfs "$rbn_debugfs" 2>/dev/null
		grep -q " $rbn_debugfs debugfs " /proc/mounts 2>/dev/null ||
			_r_missing="no debugfs at $rbn_debugfs"
	fi
	for _r_need in "$@"; do
		[ -n "$_r_missing" ] && break
		case $_r_need in
		rbtrace)
			[ -n "$RBTRACE" ] && [ -x "$RBTRACE" ] ||
				_r_missing="no rbtrace (set RBTRACE)"
			;;
		trace-cmd)
			command -v trace-cmd >/dev/null 2>&1 ||
				_r_missing="no trace-cmd on PATH"
			;;
		*)
			command -v "$_r_need" >/dev/null 2>&1 ||
				_r_missing="no $_r_need"
			;;
		esac
	done
	if [ -z "$_r_missing" ] && rbn_loaded; then
		# Left by a script before (run.sh fails that one too) or
		# loaded by hand: this script fails, it does not skip.
		ktap_print_header
		ktap_set_plan 1
		if rbn_unload >/dev/null 2>&1; then
			ktap_print_msg "$rbn_name was loaded at the start; unloaded now"
		else
			ktap_print_msg "$rbn_name was loaded at the start and cannot be unloaded: $rbn_err"
		fi
		ktap_test_fail "$rbn_test: $rbn_name not loaded at the start"
		ktap_finished
	fi
	if [ -n "$_r_missing" ]; then
		ktap_print_header
		ktap_skip_all "$rbn_test: $_r_missing"
		exit $KSFT_SKIP
	fi
	_r_base=${RBN_TMPDIR:-${TMPDIR:-/tmp}}
	rbn_tmp=$(mktemp -d "$_r_base/rbnest-$rbn_test.XXXXXX") || {
		ktap_print_header
		ktap_skip_all "$rbn_test: cannot create a directory in $_r_base"
		exit $KSFT_SKIP
	}
	trap rbn_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	trap 'exit 129' HUP
	rbn_dmesg_mark "$rbn_test start"
}

# rbn_load [PARAM=VALUE...]: load the module; 0 when loaded and its
# directory is there, else 1 with the reason in rbn_err
rbn_load()
{
	rbn_err=
	if rbn_loaded && ! rbn_unload; then
		return 1
	fi
	if ! insmod "$RBNEST_KO" "$@" >"$rbn_tmp/insmod.err" 2>&1; then
		rbn_err="insmod failed: $(tail -n 1 "$rbn_tmp/insmod.err")"
		return 1
	fi
	if [ ! -d "$rbn_dir" ]; then
		rbn_err="loaded, but no $rbn_dir"
		return 1
	fi
	return 0
}

# rbn_unload: rmmod, retried for a few seconds (a reader may be exiting);
# 0 when the module and its directory are gone, else 1 with rbn_err
rbn_unload()
{
	rbn_err=
	_u_try=0
	while rbn_loaded; do
		timeout -s KILL 60 rmmod "$rbn_name" >"${rbn_tmp:-/tmp}/rmmod.err" 2>&1 &&
			break
		_u_try=$((_u_try + 1))
		if [ $_u_try -ge 5 ]; then
			rbn_err="rmmod failed: $(tail -n 1 "${rbn_tmp:-/tmp}/rmmod.err")"
			return 1
		fi
		sleep 1
	done
	if [ -d "$rbn_dir" ]; then
		rbn_err="$rbn_dir still there after rmmod"
		return 1
	fi
	return 0
}

# Where the module's readers sleep, for rbn_wait_blocked: read() and
# splice() of trace_pipe_raw (wait_event_interruptible() in rbn_raw_wait(),
# which the compiler may fold into its callers), read() of trace_pipe, and
# poll() of any of them (the kernel's do_sys_poll(), or on a debug kernel
# the poll_schedule_timeout() it does not inline).
# shellcheck disable=SC2034 # used by the tests
rbn_wait_raw='rbn_raw_wait|rbn_raw_read|rbn_raw_splice_read'
# shellcheck disable=SC2034
rbn_wait_text='rbn_text_read'
# shellcheck disable=SC2034
rbn_wait_poll='do_sys_poll|do_poll|do_select|core_sys_select|poll_schedule_timeout'
rbn_where=

# rbn_task_where PID: "STATE WCHAN TOP" of PID now: the state letter of
# /proc/PID/stat (S asleep, R running, ...), /proc/PID/wchan ("0" when it
# runs) and the first function of /proc/PID/stack ("-" without one);
# "gone" when PID has exited
rbn_task_where()
{
	_tw_stat=$(cat "/proc/$1/stat" 2>/dev/null) || { echo gone; return; }
	[ -n "$_tw_stat" ] || { echo gone; return; }
	_tw_state=${_tw_stat##*) }
	_tw_state=${_tw_state%% *}
	_tw_wchan=$(cat "/proc/$1/wchan" 2>/dev/null)
	_tw_top=$(sed -n '1s/^\[<[^>]*>\] \([^+ ]*\).*/\1/p' "/proc/$1/stack" 2>/dev/null)
	echo "${_tw_state:-?} ${_tw_wchan:-?} ${_tw_top:--}"
}

# rbn_wait_blocked PID WHERE [TENTHS]: wait up to TENTHS tenths of a
# second (default 50, 0: look once) until PID sleeps in the kernel (state
# S or D) in a function WHERE names (an extended regex, anchored: e.g.
# $rbn_wait_raw), by its wchan or the top of its stack: blocked for real,
# not only still running. Prints what it saw as a "# " line; 0 when
# blocked, else 1. rbn_where is the last "STATE WCHAN TOP".
rbn_wait_blocked()
{
	_wb_max=${3:-50}
	_wb_i=0
	while :; do
		# the name now: a "cmd &" may still be the shell before its exec
		_wb_comm=$(cat "/proc/$1/comm" 2>/dev/null) || _wb_comm=
		rbn_where=$(rbn_task_where "$1")
		# a function the compiler cloned keeps its name before a
		# suffix ("poll_schedule_timeout.constprop.0")
		if echo "$rbn_where" | awk -v re="^($2)([.].*)?\$" '
			($1 == "S" || $1 == "D") && ($2 ~ re || $3 ~ re) { f = 1 }
			END { exit !f }'; then
			ktap_print_msg "pid $1 (${_wb_comm:-?}) blocked after $((_wb_i / 10)).$((_wb_i % 10)) s: state, wchan, stack top: $rbn_where"
			return 0
		fi
		if [ "$_wb_i" -ge "$_wb_max" ] || [ "$rbn_where" = gone ]; then
			break
		fi
		sleep 0.1
		_wb_i=$((_wb_i + 1))
	done
	ktap_print_msg "pid $1 (${_wb_comm:-?}) not blocked in $2 after $((_wb_i / 10)).$((_wb_i % 10)) s: state, wchan, stack top: $rbn_where"
	return 1
}

# rbn_children PID: the processes whose parent is PID, one per line
rbn_children()
{
	cat /proc/[0-9]*/stat 2>/dev/null |
		sed -n 's/^\([0-9]*\) (.*) [A-Za-z] \([0-9]*\) .*/\1 \2/p' |
		awk -v p="$1" '$2 == p { print $1 }'
}

# rbn_exec_pid PID: PID, or its child when PID is a timeout(1) that forked
# the command (coreutils; busybox's timeout execs it in PID itself)
rbn_exec_pid()
{
	if [ "$(cat "/proc/$1/comm" 2>/dev/null)" = timeout ]; then
		rbn_children "$1" | head -n 1
	else
		echo "$1"
	fi
}

# rbn_cpus: the CPUs with a per_cpu/cpuN directory, one per line
rbn_cpus()
{
	for _p in "$rbn_dir"/per_cpu/cpu*; do
		[ -d "$_p" ] && echo "${_p##*/cpu}"
	done | sort -n
}

# rbn_online_cpus: the online CPUs, one per line
rbn_online_cpus()
{
	if [ -r /sys/devices/system/cpu/online ]; then
		tr ',' '\n' </sys/devices/system/cpu/online | awk -F- '
			NF == 1 && $1 != "" { print $1 }
			NF == 2 { for (i = $1; i <= $2; i++) print i }'
	else
		echo 0
	fi
}

# rbn_stat CPU FIELD: a value of per_cpu/cpuCPU/stats
rbn_stat()
{
	awk -v f="$2" '$1 == f ":" { print $2; exit }' \
		"$rbn_dir/per_cpu/cpu$1/stats" 2>/dev/null
}

# rbn_attempts CPU: written + dropped of a CPU (grows as long as writers
# run, also when a producer/consumer buffer is full)
rbn_attempts()
{
	echo $(($(rbn_stat "$1" written) + $(rbn_stat "$1" dropped)))
}

# rbn_stat_sum FIELD: the sum over all CPUs (shell arithmetic: 64 bits)
rbn_stat_sum()
{
	_s_sum=0
	for _s_cpu in $(rbn_cpus); do
		_s_v=$(rbn_stat "$_s_cpu" "$1")
		_s_sum=$((_s_sum + ${_s_v:-0}))
	done
	echo "$_s_sum"
}

# rbn_stat_max FIELD: the largest value over all CPUs
rbn_stat_max()
{
	_s_max=0
	for _s_cpu in $(rbn_cpus); do
		_s_v=$(rbn_stat "$_s_cpu" "$1")
		[ "${_s_v:-0}" -gt "$_s_max" ] && _s_max=$_s_v
	done
	echo "$_s_max"
}

# rbn_stat_table FIELD...: a per-CPU table of stats fields as "# " lines
rbn_stat_table()
{
	_t_line=$(printf '%-5s' cpu)
	for _t_f in "$@"; do
		_t_line="$_t_line $(printf '%14s' "$_t_f")"
	done
	ktap_print_msg "$_t_line"
	for _t_cpu in $(rbn_cpus); do
		_t_line=$(printf '%-5s' "$_t_cpu")
		for _t_f in "$@"; do
			_t_line="$_t_line $(printf '%14s' "$(rbn_stat "$_t_cpu" "$_t_f")")"
		done
		ktap_print_msg "$_t_line"
	done
}

# rbn_subbuf_size: bytes of one sub-buffer image (header_page data + 16)
rbn_subbuf_size()
{
	_d=$(sed -n 's/.*field: char data;.*size:\([0-9][0-9]*\);.*/\1/p' \
		"$rbn_dir/header_page" 2>/dev/null)
	[ -n "$_d" ] && echo $((_d + 16))
}

# rbn_errtext FILE: the errno text of the last error line of dd/sh in FILE
rbn_errtext()
{
	grep -vE 'records in|records out|bytes.*copied|bytes transferred' "$1" |
		tail -n 1 | sed 's/.*: //'
}

# rbn_write_file FILE PAYLOAD [trunc]: write the bytes of PAYLOAD (a file)
# into $rbn_dir/FILE with one write(2). The file is opened without O_TRUNC
# unless "trunc" is given. Returns dd's status; rbn_err is the error text.
rbn_write_file()
{
	_w_conv=conv=notrunc
	[ "${3:-}" = trunc ] && _w_conv=
	_w_size=$(wc -c <"$2")
	[ "$_w_size" -gt 0 ] || _w_size=1
	# shellcheck disable=SC2086 # _w_conv is one word or nothing
	dd if="$2" of="$rbn_dir/$1" bs="$_w_size" count=1 $_w_conv \
		2>"$rbn_tmp/dd.err"
	_w_rc=$?
	rbn_err=
	[ $_w_rc -eq 0 ] || rbn_err=$(rbn_errtext "$rbn_tmp/dd.err")
	return $_w_rc
}

# rbn_write FILE STRING [trunc]: write STRING and a newline (as echo does)
rbn_write()
{
	printf '%s\n' "$2" >"$rbn_tmp/payload"
	rbn_write_file "$1" "$rbn_tmp/payload" "${3:-}"
}

# rbn_set FILE VALUE: a plain shell write; 0 on success, else 1 and rbn_err
rbn_set()
{
	rbn_err=
	if ! (echo "$2" >"$rbn_dir/$1") 2>"$rbn_tmp/set.err"; then
		rbn_err="echo '$2' > $1: $(rbn_errtext "$rbn_tmp/set.err")"
		return 1
	fi
	return 0
}

# rbn_get FILE: the content of $rbn_dir/FILE
rbn_get()
{
	cat "$rbn_dir/$1" 2>/dev/null
}

# rbn_clock: the clock in brackets in trace_clock
rbn_clock()
{
	sed -n 's/.*\[\([a-z]*\)\].*/\1/p' "$rbn_dir/trace_clock" 2>/dev/null
}

# rbn_source_field NAME FIELD: "state" (on/off) or "events" of a source
rbn_source_field()
{
	awk -v n="$1" -v f="$2" '$1 == n {
		if (f == "state") { print $2; exit }
		for (i = 3; i <= NF; i++)
			if (substr($i, 1, length(f) + 1) == f "=") {
				print substr($i, length(f) + 2); exit
			}
	}' "$rbn_dir/sources" 2>/dev/null
}

# rbn_source_names: the names in the sources file
rbn_source_names()
{
	awk 'NF { print $1 }' "$rbn_dir/sources" 2>/dev/null
}

# rbn_sources_state: "NAME on|off" of every source (no counters)
rbn_sources_state()
{
	awk 'NF { print $1, $2 }' "$rbn_dir/sources" 2>/dev/null
}

# rbn_inject_field LABEL FIELD: armed, hits, or cpuN of an inject line
rbn_inject_field()
{
	awk -v l="$1" -v f="$2" 'tolower($1) == l {
		for (i = 2; i <= NF; i++)
			if (substr($i, 1, length(f) + 1) == f "=") {
				print substr($i, length(f) + 2); exit
			}
	}' "$rbn_dir/inject" 2>/dev/null
}

# rbn_quiesce: all sources off, let writers in flight finish, tracing off.
# After this nothing writes and readers get what there is, then EOF.
rbn_quiesce()
{
	echo "-all" >"$rbn_dir/sources" 2>/dev/null
	sleep 1
	echo 0 >"$rbn_dir/tracing_on"
}

# rbn_record_start OUT [ARGS]: "rbtrace record" in the background, stopped
# by rbn_record_stop; its output goes to OUT.log
rbn_record_start()
{
	rbn_rec_out=$1
	shift
	timeout -s KILL "${RBN_RECORD_TIMEOUT:-600}" "$RBTRACE" record \
		-d "$rbn_dir" -o "$rbn_rec_out" "$@" >"$rbn_rec_out.log" 2>&1 &
	rbn_rec_pid=$!
	rbn_bg_add $rbn_rec_pid
}

# rbn_record_stop: stop the recording started by rbn_record_start (SIGTERM
# makes it drain what is left); returns its exit status
rbn_record_stop()
{
	# with tracing off the reader may end by itself (EOF); give it time
	_rs_i=0
	while kill -0 "$rbn_rec_pid" 2>/dev/null && [ $_rs_i -lt 3 ]; do
		sleep 1
		_rs_i=$((_rs_i + 1))
	done
	kill -TERM "$rbn_rec_pid" 2>/dev/null
	wait "$rbn_rec_pid"
	_rs_rc=$?
	rbn_bg_done "$rbn_rec_pid"
	sed 's/^/# /' "$rbn_rec_out.log"
	if rbn_timed_out $_rs_rc; then
		ktap_print_msg "rbtrace record killed after ${RBN_RECORD_TIMEOUT:-600}s"
	fi
	return $_rs_rc
}

# rbn_record OUT [ARGS]: record what is in the buffer now. Call it after
# rbn_quiesce: it ends at EOF, or after a few seconds with nothing left.
rbn_record()
{
	rbn_record_start "$@"
	rbn_record_stop
}

# rbn_check REC: "rbtrace check REC"; the output (in REC.check) is shown as
# "# " lines; returns rbtrace's exit status
rbn_check()
{
	"$RBTRACE" check "$1" >"$1.check" 2>&1
	_ck_rc=$?
	sed 's/^/# /' "$1.check" | head -n 40
	return $_ck_rc
}

# rbn_check_ok REC: rbtrace check exited 0 and said OK
rbn_check_ok()
{
	rbn_check "$1" && grep -q ': OK$' "$1.check"
}

# rbn_check_events REC: the events counted by the last rbn_check of REC
rbn_check_events()
{
	sed -n 's/^events: \([0-9][0-9]*\)$/\1/p' "$1.check"
}

# rbn_check_col REC CPU COL: a column of the check table for one CPU
# (3 events, 4 zero, 5 abs, 6 extend, 7 padding, 8 missed, 9 seq-gaps)
rbn_check_col()
{
	awk -v c="$2" -v k="$3" '$1 == c && NF >= 10 { print $k; exit }' \
		"$1.check"
}

# rbn_keys: "CPU SEQ" of every event in text on stdin, sorted: lines with
# a seq= field and the CPU as "[NNN]" (trace, trace_pipe, rbtrace report,
# trace-cmd report) or as a cpu= field
rbn_keys()
{
	awk '{
		s = ""; c = ""; b = ""
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^seq=[0-9]+$/) s = substr($i, 5)
			else if ($i ~ /^cpu=[0-9]+$/) c = substr($i, 5)
			else if (b == "" && $i ~ /^\[[0-9]+\]$/) {
				# "[010]": no leading 0 (busybox awk: octal)
				b = substr($i, 2, length($i) - 2)
				sub(/^0+/, "", b)
				b = b == "" ? 0 : b
			}
		}
		if (b != "") c = b
		if (s != "" && c != "") print c, s
	}' | sort -n -k1,1 -k2,2
}

# rbn_keys_per_cpu FILE: "cpuN=COUNT ..." of a keys file
rbn_keys_per_cpu()
{
	awk '{ n[$1]++ } END { for (c in n) printf "cpu%s=%d\n", c, n[c] }' "$1" |
		sort | tr '\n' ' '
}

# rbn_copy_formats DIR: the format files a recording needs, as rbtrace
# record copies them
rbn_copy_formats()
{
	mkdir -p "$1/events/rbnest/sample"
	cat "$rbn_dir/header_page" >"$1/header_page"
	cat "$rbn_dir/header_event" >"$1/header_event"
	cat "$rbn_dir/trace_clock" >"$1/trace_clock"
	cat "$rbn_dir/events/rbnest/sample/format" \
		>"$1/events/rbnest/sample/format"
}

# rbn_payload_long N CHAR: N times CHAR and a newline, in $rbn_tmp/payload
rbn_payload_long()
{
	awk -v n="$1" -v c="$2" 'BEGIN {
		s = c; while (length(s) < n) s = s s
		print substr(s, 1, n)
	}' >"$rbn_tmp/payload"
}
