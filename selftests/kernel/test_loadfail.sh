#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test_loadfail.sh - a load that fails never leaves a file of the module
# open.
#
# A module whose init fails is freed whatever its reference count: a file
# opened while the init still runs keeps pointers into the freed module,
# and closing it oopses. So no file of the module may exist before the
# last thing that can fail. Two openers race against insmods that fail:
# each opens buffer_size_kb or tracing_on (the first files created) in a
# tight loop and holds what it got open for a moment; every open that
# succeeds is counted.
#
#  A. sources=bogus: refused by the writers' setup. ROUNDS insmods, each
#     fails with EINVAL.
#  B. buffer_size_kb=1048576: more memory than is available on all the
#     possible CPUs (skipped where 1 GiB per CPU fits into MemAvailable:
#     no allocation can be made to fail there without fault injection,
#     which Debian's kernels lack). A few insmods, each fails with ENOMEM.
#  C. No open succeeded during A and B (the files of a load that fails
#     are never there), the module is not loaded, its directory is gone.
#  D. A good load still works, and unloads.
#  E. No WARNING, BUG, Oops, general protection fault in the kernel log
#     since the start of this test.
#
# RBN_LOADFAIL_ROUNDS: rounds of A (default 40, 20 with RBN_QUICK=1).

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

rbn_require insmod rmmod

ktap_print_header
ktap_set_plan 5

t=$rbn_tmp
rounds=${RBN_LOADFAIL_ROUNDS:-40}
[ "${RBN_QUICK:-0}" = 1 ] && [ -z "${RBN_LOADFAIL_ROUNDS:-}" ] && rounds=20

# opener NAME: open $rbn_dir/NAME over and over until $t/stop exists;
# hold each file it got for a moment. Writes the number of opens to
# $t/opens.NAME. The braces keep a failed open from ending the shell.
opener()
{
	_o=0
	while [ ! -e "$t/stop" ]; do
		if { _o=$((_o + 1)); sleep 0.1; } 2>/dev/null 3<"$rbn_dir/$1"; then
			:
		fi
	done
	echo "$_o" >"$t/opens.$1"
}

# race DESC WANT N PARAM...: N insmods with PARAM... against the openers;
# each must fail with WANT (text in insmod's error). Sets fails, wrong.
race()
{
	_desc=$1 _want=$2 _n=$3
	shift 3
	rm -f "$t/stop"
	opener buffer_size_kb &
	_p1=$!
	rbn_bg_add $_p1
	opener tracing_on &
	_p2=$!
	rbn_bg_add $_p2
	fails=0 wrong=0
	_i=0
	while [ $_i -lt "$_n" ]; do
		_i=$((_i + 1))
		if insmod "$RBNEST_KO" "$@" >"$t/insmod.err" 2>&1; then
			ktap_print_msg "$_desc: round $_i: insmod succeeded"
			wrong=$((wrong + 1))
			rbn_unload || ktap_print_msg "$rbn_err"
		elif grep -q "$_want" "$t/insmod.err"; then
			fails=$((fails + 1))
		else
			wrong=$((wrong + 1))
			ktap_print_msg "$_desc: round $_i: $(tail -n 1 "$t/insmod.err")"
		fi
	done
	: >"$t/stop"
	wait $_p1
	rbn_bg_done $_p1
	wait $_p2
	rbn_bg_done $_p2
	_opens=$(($(cat "$t/opens.buffer_size_kb") + $(cat "$t/opens.tracing_on")))
	opens=$((opens + _opens))
	ktap_print_msg "$_desc: $_n insmods, $fails failed with '$_want'," \
		"$wrong otherwise; files opened during them: $_opens"
}

rbn_dmesg_mark "test_loadfail begin"
opens=0

# ---- A
race "sources=bogus" "Invalid argument" "$rounds" sources=bogus
ok=1
[ $fails -eq "$rounds" ] && [ $wrong -eq 0 ] || ok=0
ktap_test_result $ok "A: $rounds insmods with sources=bogus fail with EINVAL, openers racing"

# ---- B
ncpu=$(awk -F- '{ print $NF + 1 }' /sys/devices/system/cpu/possible 2>/dev/null)
mem_kb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
need_kb=$((${ncpu:-1} * 1048576))
if [ "$need_kb" -gt "${mem_kb:-0}" ]; then
	race "buffer_size_kb=1048576" "Cannot allocate memory" 4 \
		buffer_size_kb=1048576
	ok=1
	[ $fails -eq 4 ] && [ $wrong -eq 0 ] || ok=0
	ktap_test_result $ok \
		"B: 4 insmods whose buffer cannot be allocated fail with ENOMEM, openers racing"
else
	ktap_print_msg "MemAvailable ${mem_kb} kB holds 1 GiB on each of ${ncpu} possible CPUs"
	ktap_test_skip "B: insmods whose buffer cannot be allocated" \
		"no allocation can be made to fail here"
fi

# ---- C
ok=1
ktap_print_msg "files opened while a load was failing: $opens (want 0)"
[ $opens -eq 0 ] || ok=0
if rbn_loaded; then
	ktap_print_msg "module left loaded"
	ok=0
fi
if [ -d "$rbn_dir" ]; then
	ktap_print_msg "$rbn_dir left behind"
	ok=0
fi
ktap_test_result $ok "C: no file of a failing load was ever opened; nothing left behind"

# ---- D
ok=1
if rbn_load sources=; then
	[ -r "$rbn_dir/buffer_size_kb" ] || ok=0
	rbn_unload || { ktap_print_msg "$rbn_err"; ok=0; }
else
	ktap_print_msg "$rbn_err"
	ok=0
fi
ktap_test_result $ok "D: a good load and unload still work"

# ---- E
rbn_dmesg_after "test_loadfail begin" >"$t/dmesg"
{
	rbn_dmesg_reports "$t/dmesg"
	grep -E "Unable to handle|page fault" "$t/dmesg"
} | sort -u >"$t/bad"
bad=$(grep -c . "$t/bad")
head -n 20 "$t/bad" | sed 's/^/# dmesg: /'
ktap_print_msg "kernel log: $(grep -c . "$t/dmesg") lines since the start, $bad bad"
ok=1
[ "$bad" -eq 0 ] || ok=0
ktap_test_result $ok "E: kernel log clean"

ktap_finished
