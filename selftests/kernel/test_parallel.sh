#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test_parallel.sh - the module with CPUs that really run at the same time.
#
# Made for a VM whose vCPUs run in parallel (QEMU's multi-threaded TCG:
# scripts/vm-parallel.sh boots it again and again), and just as valid on
# a real machine. Debian 12's QEMU may run a stale int3 after live text
# patching with several TCG threads, so this script patches no kernel
# text while the load runs: the only writers are the load generator's
# (task, hrtimer, softirq, irq_work, nmi), set by insmod and never
# switched; no tracepoint, kprobe or inject.
#
# For overwrite=0 and overwrite=1, three epochs, one per way of reading:
# read() of trace_pipe_raw (rbtrace record -r), splice() of it (rbtrace
# record), and trace_pipe. Each epoch:
#   - resets the buffer while the writers run;
#   - starts, for every CPU C, a reader of C pinned to CPU C+1 (mod N):
#     with N CPUs, every CPU's pages are swapped out by another CPU while
#     its own writers push the head (overwrite) and wake the reader;
#     trace_pipe merges all CPUs, so its N readers race for every CPU's
#     events;
#   - under load: grows buffer_size_kb, switches tracing_on off and on
#     (a reader that finds the buffer empty then gets EOF: it is started
#     again, and its pages appended), shrinks buffer_size_kb back (EBUSY
#     while the unread data does not fit: retried while the readers
#     drain; the number of shrinks that succeeded under load is printed,
#     and in producer/consumer mode at least one must);
#   - stops recording (tracing_on=0); the readers drain what is left and
#     end;
#   - checks, per CPU: the readers ended cleanly; rbtrace check passes
#     on the pages (times never go back, every event at its writer's
#     time, no seq gap not counted as missed), or for trace_pipe: every
#     reader's times per CPU never go back, no (CPU, seq) read twice, no
#     seq at or above written; written == read + overrun and entries == 0
#     (dropped and commit_overrun refused events before they took a seq:
#     printed); the recording holds exactly "read" events of the CPU and,
#     in pages, missed-events counts that add up to overrun.
# A CPU with no events in an epoch fails it (its writers did not run).
#
# Environment: RBN_PARALLEL_SECONDS (seconds of each of the four steps
# of an epoch under load: 2, 1 with RBN_QUICK=1), RBN_PARALLEL_KB
# (buffer size per CPU, 256; grown to twice that), RBN_PARALLEL_GEN (the
# load generator's parameters: "gen_period_us=1000 gen_task_busy_us=50
# gen_task_idle_us=950", a load the readers keep up with, so that a
# shrink can succeed under it, and that the checks in the guest get
# through in a few seconds per epoch).

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

# reader_loop KIND CPU DIR: read CPU until DIR/stop exists. A reader that
# finds the buffer empty while tracing is off gets EOF (also while
# tracing_on is switched off and on under load): it is started again,
# into a new part (DIR/part.CPU.N for pages, appended to DIR/pipe.CPU for
# trace_pipe). After the stop, one more reader takes what writers still
# in flight committed.
reader_loop()
{
	_rl_n=0
	_rl_last=0
	while [ $_rl_last = 0 ]; do
		[ -e "$3/stop" ] && _rl_last=1
		_rl_n=$((_rl_n + 1))
		case $1 in
		read)
			"$RBTRACE" record -d "$rbn_dir" -o "$3/part.$2.$_rl_n" \
				-c "$2" -r >>"$3/reader.$2.log" 2>&1 || return 1
			;;
		splice)
			"$RBTRACE" record -d "$rbn_dir" -o "$3/part.$2.$_rl_n" \
				-c "$2" >>"$3/reader.$2.log" 2>&1 || return 1
			;;
		pipe)
			cat "$rbn_dir/trace_pipe" >>"$3/pipe.$2" 2>>"$3/reader.$2.log" ||
				return 1
			;;
		esac
	done
	echo "$_rl_n" >"$3/runs.$2"
}

# The script again, as the reader loop of one CPU, pinned by taskset.
if [ "${1:-}" = --reader ]; then
	reader_loop "$2" "$3" "$4"
	exit
fi

rbn_require rbtrace taskset

ncpu=$(rbn_online_cpus | wc -l)
if [ "$ncpu" -lt 2 ]; then
	ktap_print_header
	ktap_skip_all "$rbn_test: one online CPU: no reader can run on another CPU"
	exit "$KSFT_SKIP"
fi

ktap_print_header
ktap_set_plan 22

t=$rbn_tmp
step=${RBN_PARALLEL_SECONDS:-$(rbn_secs 2)}
kb=${RBN_PARALLEL_KB:-256}
gen_sources=task,hrtimer,softirq,irq_work,nmi
gen=${RBN_PARALLEL_GEN:-gen_period_us=1000 gen_task_busy_us=50 gen_task_idle_us=950}
ktap_print_msg "$ncpu CPUs${RBN_VM_TCG:+ (QEMU TCG thread=$RBN_VM_TCG)}," \
	"steps of $step s, $kb KiB per CPU, sources $gen_sources, $gen"

# peer C: the CPU that reads CPU C
peer()
{
	rbn_online_cpus | awk -v c="$1" '{ l[n++] = $1 }
		END { for (i = 0; i < n; i++) if (l[i] == c) { print l[(i + 1) % n]; exit } }'
}

# mask C: taskset's hex mask of CPU C
mask()
{
	printf '%x\n' $((1 << $1))
}

# readers_start KIND DIR: a reader loop of every CPU on its peer; their
# pids in $readers
readers_start()
{
	readers=
	mkdir -p "$2"
	for _c in $(rbn_online_cpus); do
		# pinned: the loop and every reader it starts
		taskset "$(mask "$(peer "$_c")")" sh "$0" --reader "$1" "$_c" "$2" &
		rbn_bg_add $!
		readers="$readers $!"
	done
}

# readers_stop DIR: tell the reader loops to stop, turn tracing off, wait
# for them (at most 30 s, then stop them); 0 when all ended by themselves
# with status 0. The pages of each CPU's parts go to DIR/cpuN.raw, in
# order.
readers_stop()
{
	touch "$1/stop"
	rbn_set tracing_on 0
	_ok=0
	_i=0
	while [ $_i -lt 30 ]; do
		_alive=0
		for _r in $readers; do
			kill -0 "$_r" 2>/dev/null && _alive=1
		done
		[ $_alive = 0 ] && break
		sleep 1
		_i=$((_i + 1))
	done
	for _r in $readers; do
		if kill -0 "$_r" 2>/dev/null; then
			ktap_print_msg "reader $_r still running 30 s after tracing_on=0: stopped"
			kill -TERM "$_r" 2>/dev/null
			_ok=1
		fi
		wait "$_r" || {
			ktap_print_msg "reader $_r exited with $?"
			_ok=1
		}
		rbn_bg_done "$_r"
	done
	for _c in $(rbn_online_cpus); do
		_n=1
		while [ -d "$1/part.$_c.$_n" ]; do
			cat "$1/part.$_c.$_n/cpu$_c.raw" >>"$1/cpu$_c.raw"
			[ -f "$1/header_page" ] ||
				cp -r "$1/part.$_c.$_n/header_page" \
					"$1/part.$_c.$_n/header_event" \
					"$1/part.$_c.$_n/events" "$1/"
			_n=$((_n + 1))
		done
	done
	return $_ok
}

# shrink KB: write buffer_size_kb while EBUSY, at most 20 times 0.2 s
# apart; 0 when it took
shrink()
{
	_i=0
	while [ $_i -lt 20 ]; do
		rbn_write buffer_size_kb "$1" && return 0
		case $rbn_err in
		*"busy"*) ;;
		*)
			ktap_print_msg "shrink to $1 KiB: $rbn_err"
			return 1
			;;
		esac
		_i=$((_i + 1))
		sleep 0.2
	done
	ktap_print_msg "shrink to $1 KiB: still EBUSY after 20 tries"
	return 1
}

# pipe_check DIR: the trace_pipe texts of DIR: "CPU SEQ" of every event
# in DIR/keys; fails when a reader's times of a CPU went back
pipe_check()
{
	_pc=0
	for _f in "$1"/pipe.*; do
		awk -v f="${_f##*/}" '
			/ sample: / {
				c = ""; s = ""; t = ""
				for (i = 1; i <= NF; i++) {
					if ($i ~ /^\[[0-9]+\]$/)
						c = substr($i, 2, length($i) - 2) + 0
					else if ($i ~ /^[0-9]+\.[0-9]+:$/ && t == "")
						t = $i
					else if ($i ~ /^seq=/)
						s = substr($i, 5)
				}
				sub(/:$/, "", t)
				split(t, p, ".")
				# no leading zero: some awks read it as octal
				sub(/^0+/, "", p[2])
				ns = p[1] * 1000000000 + p[2]
				if (c in last && ns < last[c]) {
					bad++
					if (bad <= 3)
						printf "%s: cpu %d: seq %s at %s after %.0f\n", f, c, s, t, last[c] > "/dev/stderr"
				}
				last[c] = ns
				print c, s
			}
			END { exit bad > 0 }' "$_f" || _pc=1
	done >"$1/keys"
	return $_pc
}

# epoch MODE KIND: one epoch; three results
epoch()
{
	_mode=$1 _kind=$2
	_d=$t/$_mode-$_kind
	rm -rf "$_d"
	rbn_set tracing_on 1 || ktap_print_msg "$rbn_err"
	sleep 0.5
	# reset while every writer runs
	rbn_set reset 1 || ktap_print_msg "$rbn_err"
	readers_start "$_kind" "$_d"
	sleep "$step"
	_grown=0
	if rbn_write buffer_size_kb $((kb * 2)); then
		_grown=1
	else
		ktap_print_msg "grow to $((kb * 2)) KiB: $rbn_err"
	fi
	sleep "$step"
	rbn_set tracing_on 0
	sleep 0.2
	rbn_set tracing_on 1
	sleep "$step"
	_shrunk=0
	shrink "$kb" && _shrunk=1 && shrinks=$((shrinks + 1))
	sleep "$step"
	_rok=1
	readers_stop "$_d" || _rok=0
	for _c in $(rbn_online_cpus); do
		grep -vE ': cpu [0-9]+, [0-9]+ pages, [0-9]+ bytes, [0-9]+ events lost$' \
			"$_d/reader.$_c.log" | sed "s/^/# reader of cpu$_c: /"
		if [ "$_kind" = pipe ]; then
			_got="$(wc -l <"$_d/pipe.$_c") lines"
		elif [ -f "$_d/cpu$_c.raw" ]; then
			_got="$(($(wc -c <"$_d/cpu$_c.raw") / $(rbn_subbuf_size))) pages"
		else
			_got="no pages"
		fi
		ktap_print_msg "reader of cpu$_c on cpu$(peer "$_c"): $(cat "$_d/runs.$_c" 2>/dev/null || echo ?) runs" \
			"(a run ends at EOF while tracing is off), $_got"
	done
	ktap_print_msg "$_mode $_kind: grown $_grown, shrunk under load $_shrunk," \
		"buffer_size_kb now $(rbn_get buffer_size_kb)"
	[ $_grown = 1 ] && [ "$(rbn_get buffer_size_kb)" -ge "$kb" ] || _rok=0
	ktap_test_result $_rok "$_mode $_kind: a reader of every CPU on another CPU ran and ended cleanly; resized and switched off and on under load"

	rbn_stat_table written read overrun entries dropped commit_overrun ts_abs ts_slow max_depth

	_cok=1
	if [ "$_kind" = pipe ]; then
		pipe_check "$_d" 2>"$_d/pipe.err" || _cok=0
		sed 's/^/# /' "$_d/pipe.err"
		_dups=$(sort "$_d/keys" | uniq -d | wc -l)
		ktap_print_msg "trace_pipe: $(wc -l <"$_d/keys") events from $ncpu readers, $_dups read twice"
		[ "$_dups" -eq 0 ] || _cok=0
		ktap_test_result $_cok "$_mode $_kind: every reader's times per CPU never go back, no event read twice"
	else
		rbn_check_ok "$_d" || _cok=0
		ktap_test_result $_cok "$_mode $_kind: rbtrace check of the pages"
	fi

	_aok=1
	_tot=0
	for _c in $(rbn_online_cpus); do
		_w=$(rbn_stat "$_c" written)
		_r=$(rbn_stat "$_c" read)
		_o=$(rbn_stat "$_c" overrun)
		_e=$(rbn_stat "$_c" entries)
		if [ "$_kind" = pipe ]; then
			_n=$(awk -v c="$_c" '$1 == c' "$_d/keys" | wc -l)
			_hi=$(awk -v c="$_c" '$1 == c && $2 + 0 > m { m = $2 + 0 } END { print m + 0 }' "$_d/keys")
			_m=-
			[ "$_n" -eq 0 ] || [ "$_hi" -lt "$_w" ] || {
				ktap_print_msg "cpu$_c: seq $_hi read, only $_w written"
				_aok=0
			}
		else
			_n=$(rbn_check_col "$_d" "$_c" 3)
			_m=$(rbn_check_col "$_d" "$_c" 8)
			case $_m in
			*+\?) ktap_print_msg "cpu$_c: a missed count was not stored on its page: not compared" ;;
			*) [ "${_m:-x}" = "$_o" ] || _aok=0 ;;
			esac
		fi
		ktap_print_msg "cpu$_c: written $_w = read $_r + overrun $_o (entries $_e);" \
			"recorded ${_n:-?}, missed ${_m:-?}"
		[ "$_w" -gt 0 ] && [ "$_w" -eq $((_r + _o)) ] && [ "$_e" -eq 0 ] &&
			[ "${_n:-x}" = "$_r" ] || _aok=0
		[ "$_mode" = producer ] && [ "$_o" -ne 0 ] && _aok=0
		_tot=$((_tot + _w))
	done
	total=$((total + _tot))
	ktap_test_result $_aok "$_mode $_kind: per CPU written == read + overrun, the recording holds every event read"
}

total=0
for ow in 0 1; do
	mode=producer
	[ $ow = 1 ] && mode=overwrite
	shrinks=0
	# shellcheck disable=SC2086 # gen is a list of parameters
	if ! rbn_load overwrite=$ow buffer_size_kb="$kb" sources=$gen_sources $gen; then
		ktap_print_msg "$rbn_err"
		ktap_test_fail "$mode: load with sources=$gen_sources"
		for _ in 1 2 3 4 5 6 7 8 9; do
			ktap_test_fail "$mode: no module"
		done
		ktap_test_fail "$mode: unload"
		continue
	fi
	ktap_test_pass "$mode: load with sources=$gen_sources"
	for kind in read splice pipe; do
		epoch "$mode" "$kind"
	done
	ktap_print_msg "$mode: $shrinks of 3 shrinks succeeded under load"
	ok=1
	rbn_unload || ok=0
	[ -n "$rbn_err" ] && ktap_print_msg "$rbn_err"
	# Overwrite mode keeps the buffer full whenever the writers outrun
	# the readers, and a shrink never throws unread events away: there
	# EBUSY under load is the expected answer, and it was checked to
	# leave the data intact (the accounting above).
	if [ $ow = 0 ] && [ $shrinks -eq 0 ]; then
		ktap_print_msg "$mode: no shrink succeeded under load: the readers did not keep up"
		ok=0
	fi
	if [ $ow = 0 ]; then
		ktap_test_result $ok "$mode: unload; at least one shrink succeeded under load"
	else
		ktap_test_result $ok "$mode: unload"
	fi
done
ktap_print_msg "events written and accounted for: $total"

ktap_finished
