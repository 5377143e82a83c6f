#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test_unload.sh - rmmod with blocked readers and with pages held by a pipe.
#
# Unload fails while open files hold the module (EAGAIN, "in use"); pages
# spliced into a pipe do not hold it, they are the pipe's. rmmod must never
# hang and never free what a reader or a pipe still uses.
#
#  A. Two readers blocked on an empty buffer (buffer_percent=100), seen
#     asleep in the kernel (state S; /proc/PID/wchan or the top of
#     /proc/PID/stack): dd in read() (rbn_raw_wait), rbtrace record in
#     poll() (do_sys_poll). rmmod either fails (the open files hold the
#     module) or succeeds and the readers end; afterwards, with the
#     readers woken by tracing_on=0, rmmod succeeds.
#  B. Pages spliced into a pipe that nobody reads: rbtrace record splices
#     into its own pipe and from there into OUT/cpu0.raw, here a FIFO that
#     this shell keeps open (fd 3): the pipe buffers, with the module's
#     pages, move into the FIFO and stay there after rbtrace and its
#     trace_pipe_raw file are gone. While they are held, a resize works
#     (the pages left the ring when they were spliced) and rmmod
#     succeeds; read from the FIFO after that, the pages pass rbtrace
#     check and hold only events the "trace" file listed before.
#  C. Pages held in the FIFO while the buffer is reset and written again
#     keep their content: read back, they pass rbtrace check and hold only
#     events the "trace" file listed before.
#  D. No WARNING, BUG, Oops, lockdep report in the kernel log since the
#     start of this test.

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

rbn_require rbtrace mkfifo

ktap_print_header
ktap_set_plan 9

t=$rbn_tmp
held=0

# wait_gone PID SECS: wait until PID has exited; 0 if it did
wait_gone()
{
	_wg=0
	while kill -0 "$1" 2>/dev/null && [ $_wg -lt "$2" ]; do
		sleep 1
		_wg=$((_wg + 1))
	done
	! kill -0 "$1" 2>/dev/null
}

# fill: the task source for a second, then frozen
fill()
{
	rbn_set tracing_on 1
	rbn_set sources task
	sleep 1
	rbn_quiesce
}

# hold NAME: record into $t/NAME with cpu0.raw a FIFO held open on fd 3;
# sets held (pages of cpu0 in the FIFO)
hold()
{
	_d=$t/$1
	mkdir -p "$_d"
	mkfifo "$_d/cpu0.raw"
	exec 3<>"$_d/cpu0.raw"
	timeout -s KILL 30 "$RBTRACE" record -d "$rbn_dir" -o "$_d" -t 3 \
		>"$_d.log" 2>&1
	_rc=$?
	sed 's/^/# /' "$_d.log"
	_total=$(sed -n 's/.*, \([0-9][0-9]*\) bytes,.*/\1/p' "$_d.log")
	_others=0
	for _f in "$_d"/cpu*.raw; do
		[ -f "$_f" ] && _others=$((_others + $(stat -c %s "$_f")))
	done
	held=$(((${_total:-0} - _others) / sub))
	ktap_print_msg "rbtrace record exit $_rc: ${_total:-?} bytes, $_others in the other CPUs' files: $held pages of cpu0 in the FIFO"
	[ $_rc -eq 0 ] && [ "$held" -ge 1 ]
}

release()
{
	exec 3>&-
}

# ---- A: blocked readers ----------------------------------------------------

if rbn_load sources= buffer_percent=100; then
	sub=$(rbn_subbuf_size)
	sub=${sub:-4096}
	dd if="$rbn_dir/per_cpu/cpu0/trace_pipe_raw" of="$t/blk" bs="$sub" \
		count=1 2>"$t/blk.err" &
	dd_pid=$!
	rbn_bg_add $dd_pid
	rbn_record_start "$t/recA"
	rec_pid=$rbn_rec_pid
	ok=1
	rbn_wait_blocked $dd_pid "$rbn_wait_raw" || {
		kill -0 $dd_pid 2>/dev/null ||
			ktap_print_msg "dd returned: $(rbn_errtext "$t/blk.err")"
		ok=0
	}
	rbn_wait_blocked "$(rbn_exec_pid "$rec_pid")" "$rbn_wait_poll" || {
		kill -0 "$rec_pid" 2>/dev/null ||
			ktap_print_msg "rbtrace record returned"
		ok=0
	}
	ktap_test_result $ok "readers block on an empty buffer (buffer_percent=100): asleep in read() and poll()"

	ok=1
	start=$(date +%s)
	timeout -s KILL 30 rmmod "$rbn_name" >"$t/rmmod.err" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	if rbn_timed_out $rc; then
		ktap_print_msg "rmmod hung: killed after 30 s"
		ok=0
	elif [ $rc -eq 0 ]; then
		ktap_print_msg "rmmod succeeded after $secs s with readers blocked"
		wait_gone $dd_pid 10 || { ktap_print_msg "dd still running"; ok=0; }
		wait_gone "$rec_pid" 10 || { ktap_print_msg "rbtrace record still running"; ok=0; }
		[ -d "$rbn_dir" ] && ok=0
	else
		ktap_print_msg "rmmod refused after $secs s: $(tail -n 1 "$t/rmmod.err")"
		if ! rbn_loaded || [ ! -d "$rbn_dir" ]; then
			ktap_print_msg "but the module or its directory is gone"
			ok=0
		fi
	fi
	ktap_test_result $ok "rmmod with blocked readers: refused or done, no hang"

	ok=1
	if rbn_loaded; then
		rbn_set tracing_on 0
		if wait_gone $dd_pid 10; then
			ktap_print_msg "tracing_on=0 woke the blocked read()"
		else
			ktap_print_msg "dd still blocked 10 s after tracing_on=0"
			kill $dd_pid
			ok=0
		fi
		wait_gone "$rec_pid" 5 || kill -TERM "$rec_pid" 2>/dev/null
		if rbn_unload; then
			ktap_print_msg "rmmod with the readers gone: done"
		else
			ktap_print_msg "$rbn_err"
			ok=0
		fi
	else
		ktap_print_msg "already unloaded"
	fi
	wait $dd_pid
	rbn_bg_done $dd_pid
	wait "$rec_pid" 2>/dev/null
	rbn_bg_done "$rec_pid"
	ktap_test_result $ok "rmmod succeeds once the readers are gone"
else
	ktap_print_msg "$rbn_err"
	for d in "readers block" "rmmod with blocked readers" "rmmod after the readers"; do
		ktap_test_fail "$d (module not loaded)"
	done
fi

# ---- B: pages held by a pipe -----------------------------------------------

if rbn_load sources= buffer_size_kb=16; then
	sub=$(rbn_subbuf_size)
	sub=${sub:-4096}
	fill
	rbn_keys <"$rbn_dir/trace" | awk '$1 == 0' >"$t/keysB.before"
	ok=0
	hold B && ok=1
	ktap_test_result $ok "pages of cpu0 spliced into a FIFO nobody reads"

	ok=1
	size=$(rbn_get buffer_size_kb)
	if [ "$held" -lt 1 ]; then
		ktap_print_msg "no page held"
		ok=0
	elif rbn_write buffer_size_kb 64; then
		ktap_print_msg "resize $size -> 64 KiB with $held pages in a pipe: done"
	else
		ktap_print_msg "resize $size -> 64 KiB with $held pages in a pipe: $rbn_err"
		ok=0
	fi
	now=$(rbn_get buffer_size_kb)
	ktap_print_msg "buffer_size_kb $size, now $now"
	[ "$now" = 64 ] || ok=0
	ktap_test_result $ok "resize works while a pipe holds pages"

	# The pages in the pipe are the pipe's: rmmod does not wait for them.
	ok=1
	mkdir -p "$t/B2"
	rbn_copy_formats "$t/B2"
	timeout -s KILL 60 rmmod "$rbn_name" >"$t/rmmod.err" 2>&1 &
	rm_pid=$!
	rbn_bg_add $rm_pid
	if wait_gone $rm_pid 10; then
		wait $rm_pid
		rc=$?
		ktap_print_msg "rmmod with $held pages in a pipe: exit $rc $(tail -n 1 "$t/rmmod.err")"
		[ $rc -eq 0 ] || ok=0
	else
		ktap_print_msg "rmmod still waiting 10 s with $held pages in a pipe"
		ok=0
	fi
	rbn_loaded && ok=0
	rbn_bg_done $rm_pid
	ktap_test_result $ok "rmmod succeeds while a pipe holds pages"

	# Read the pipe after the module is gone: the pages are intact.
	ok=1
	timeout -s KILL 10 dd bs="$sub" count="$held" iflag=fullblock \
		of="$t/B2/cpu0.raw" <&3 2>"$t/ddB.err"
	rc=$?
	release
	size=$(stat -c %s "$t/B2/cpu0.raw" 2>/dev/null)
	ktap_print_msg "read back from the FIFO after rmmod: exit $rc, ${size:-0} bytes ($held pages)"
	[ $rc -eq 0 ] && [ "${size:-0}" -eq $((held * sub)) ] || ok=0
	rbn_check_ok "$t/B2" || ok=0
	"$RBTRACE" report "$t/B2" 2>/dev/null | rbn_keys >"$t/keysB.held"
	n=$(wc -l <"$t/keysB.held")
	extra=$(diff "$t/keysB.before" "$t/keysB.held" | grep -c '^+[0-9]')
	ktap_print_msg "pages read after rmmod: $n events of cpu0, $extra not listed by trace before (of $(wc -l <"$t/keysB.before"))"
	[ "$n" -gt 0 ] && [ "$extra" -eq 0 ] || ok=0
	ktap_test_result $ok "pages held in a pipe outlive the module with their content"
else
	ktap_print_msg "$rbn_err"
	for d in "pages spliced into a FIFO" "resize refused" "rmmod while held" \
		 "read after rmmod"; do
		ktap_test_fail "$d (module not loaded)"
	done
fi

# ---- C: held pages keep their content --------------------------------------

ok=1
if rbn_load sources= buffer_size_kb=16; then
	sub=$(rbn_subbuf_size)
	sub=${sub:-4096}
	fill
	rbn_keys <"$rbn_dir/trace" | awk '$1 == 0' >"$t/keys.before"
	if hold C; then
		# the buffer is reset and written again while the pages are held
		rbn_set tracing_on 1
		rbn_set reset 1
		rbn_set sources task
		sleep 1
		rbn_quiesce
		mkdir -p "$t/C2"
		rbn_copy_formats "$t/C2"
		timeout -s KILL 10 dd bs="$sub" count="$held" iflag=fullblock \
			of="$t/C2/cpu0.raw" <&3 2>"$t/dd.err"
		rc=$?
		release
		size=$(stat -c %s "$t/C2/cpu0.raw" 2>/dev/null)
		ktap_print_msg "read back from the FIFO: exit $rc, ${size:-0} bytes ($held pages)"
		[ $rc -eq 0 ] && [ "${size:-0}" -eq $((held * sub)) ] || ok=0
		rbn_check_ok "$t/C2" || ok=0
		"$RBTRACE" report "$t/C2" 2>/dev/null | rbn_keys >"$t/keys.held"
		n=$(wc -l <"$t/keys.held")
		extra=$(diff "$t/keys.before" "$t/keys.held" | grep -c '^+[0-9]')
		ktap_print_msg "held pages: $n events of cpu0, $extra not listed by trace before (of $(wc -l <"$t/keys.before"))"
		[ "$n" -gt 0 ] && [ "$extra" -eq 0 ] || ok=0
	else
		release
		ok=0
	fi
	rbn_unload || { ktap_print_msg "$rbn_err"; ok=0; }
else
	ktap_print_msg "$rbn_err"
	ok=0
fi
ktap_test_result $ok "pages held in a pipe keep their content while the buffer is reset and rewritten"

# ---- D: the kernel log -----------------------------------------------------

rbn_dmesg_after "rbnest-selftest: $rbn_test start" >"$t/dmesg"
rbn_dmesg_reports "$t/dmesg" >"$t/bad"
n=$(wc -l <"$t/bad")
head -n 20 "$t/bad" | sed 's/^/# dmesg: /'
ktap_print_msg "kernel log since the start: $(wc -l <"$t/dmesg") lines, $n bad"
ok=0
[ "$n" -eq 0 ] && ok=1
ktap_test_result $ok "no WARNING/BUG/Oops in the kernel log"

ktap_finished
