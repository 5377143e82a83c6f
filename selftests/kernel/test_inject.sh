#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test_inject.sh - a nested writer at every label of the write path, by a
# real interrupt, on every online CPU, in both modes.
#
# "echo WORDS > inject" arms labels on every CPU: the next task writer that
# reaches an armed label raises a hard irq_work there and waits until the
# interrupt has written its nested events ("events=N": N per interrupt,
# default 1). Each label of the core (enum rbn_label, 70; but the two of
# rbn_swap_cpu(), which runs with interrupts off) is tested in a
# window of its own: WORDS are armed (again every second: an arming whose
# interrupt came late is used up) until every online CPU hit the label,
# then "off" (which waits for an interrupt still on its way); a label not
# hit on every CPU within RBN_INJECT_TIMEOUT seconds (default 30) fails.
# The task source is the only writer, so no other interrupt nests into the
# writers.
#
# The scenario of each label (words()):
#   - most labels are on the path of every event, or of every event that
#     moves to the next sub-buffer, and are armed alone;
#   - slow_before .. f are only reached by a writer that was interrupted
#     between A and C: armed with "a";
#   - commit_recheck needs a writer nested in the outer writer's commit
#     (armed with commit_end: that one publishes its own event),
#     commit_again one left for the outer writer to publish (armed with
#     commit_set);
#   - a_page, commit_page, commit_next and commit_check: the interrupt
#     writes more events than a sub-buffer holds ($cross), so that it moves
#     the tail while the writer it interrupted has not committed: at a_page
#     that writer then reserves on a full page and retries; with a_page
#     armed too, the outer commit walks across the pages the first
#     interrupt filled, and an interrupt at commit_page or commit_next
#     moves the tail again while it walks; at commit_check it sends the
#     commit round once more;
#   - page_drop: producer/consumer, a full buffer (16 KiB, no reader);
#     overwrite, a lapped commit: armed with "started" and an interrupt
#     that writes more than the ring holds ($lap): the outer writer has
#     not committed, the nested events go round the ring up to its commit
#     page and are dropped (commit_overrun), and the outer writer's own
#     event then finds the next page to be its commit page.
#   - discard .. discard_done: only a writer that discards its event
#     (rbn_discard()) gets there, so the window sets the module's
#     discard_every to 2 and back to 0 after "off". Every reserve on a CPU
#     counts (the interrupts' too), every second one is discarded: the
#     task writer's event that reaches the label is the discarded one, and
#     the interrupt's event (events=1) is the next reserve, committed.
#     At discard and discard_entries the interrupt writes behind the
#     padding that keeps the task's delta, and takes its own delta from
#     that stamp; the bytes cannot be given back. discard_tail has two
#     sites: alone, it is reached with nothing behind the event (the
#     bytes can still be given back), and the interrupt's event written
#     behind makes the give-back (the cmpxchg of the write index) fail;
#     as "discard_tail:kept", armed with discard, the interrupt at
#     discard has already written behind, the task finds the write index
#     moved and reaches the other site (event kept as padding), where a
#     second interrupt writes the next reserve, discarded (given back,
#     nothing behind it). discard_stamp is only reached on the give-back
#     path: write_stamp is 0, the interrupt's event takes a forced
#     absolute stamp behind the task's event, and the task's cmpxchg
#     fails. At discard_done, the task's bytes are back (nothing was
#     behind) and write_stamp is 0: the interrupt writes an absolute
#     stamp where the task's event was.
#   - validate_note, validate: only with the run-time validator on, so
#     the window writes 1 to the validate file and 0 after "off" (the
#     static key is patched with the load running, as the inject hook's
#     is). At validate_note the interrupt's event is noted in the slot
#     after the task's; at validate (the outermost commit's check) it is
#     noted behind the count the check read, and checked too. Either
#     way validate_fail must not grow.
#
# Labels a mode cannot reach by construction: in producer/consumer mode
# the head page is never pushed (a full buffer refuses the event instead):
# page_full and the labels of rb_handle_head_page() (head_*, page_head,
# page_new_head) are overwrite mode's only. A full overwrite ring always
# has the head next to the tail, so page_free (the next page is not the
# head) is producer/consumer mode's only. Each mode must hit each label it can reach on every online CPU,
# and every label must be hit on every CPU in some mode. No label is out
# of a real interrupt's reach: each is passed by a task writer with
# interrupts on, in the scenario above.
#
# Producer/consumer mode, 1 MiB per CPU, with rbtrace record draining the
# buffer in one recording for all its labels, which "rbtrace check" must
# pass: nothing may be lost while a label is tested (dropped +
# commit_overrun + overrun do not grow), and the recorded events of the
# inject source (src=inject) in the label's window (the buffer's clock, from
# before the arming to after the last hit) must be exactly N times the
# interrupts of the window: those that wrote their events while the label
# waited (hits) and those that came after it gave up waiting (late), less
# the interrupts' events that were discarded (the inject file counts them;
# 0 but in the discard windows). Then
# page_drop on a full 16 KiB buffer: dropped must grow by the outer event
# and the nested ones at page_drop at least.
# Overwrite mode, 16 KiB per CPU, no reader while armed: the pages are read
# at the end and must pass rbtrace check; the nested events are usually
# overwritten by then. commit_overrun must grow at page_drop (by the outer
# event and the nested ones there at least) and nowhere else.
# For the labels from a_tail to c the outer event must take the slow path
# or the nested one a forced absolute stamp (ts_slow + ts_abs grow), for
# the slow-path labels ts_slow must grow.
# In the discard windows, both modes: stats' discarded grows by the task
# events discarded at the label and the interrupts' discarded events at
# least; when no interrupt came late, none of the interrupts' events was
# discarded (each one committed behind or in the place of the task's
# event), but in discard_tail:kept exactly those at discard_tail (the
# second of each pair: hits at discard >= hits at discard_tail); at
# discard_stamp and discard_done every interrupt's event took a forced
# absolute stamp (ts_abs grows by the hits at least).
#
# Before the labels: a bad "events=N" is refused with EINVAL and arms
# nothing. At the end, a table of the hits of each label's window per CPU
# and mode.

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

rbn_require rbtrace

# enum rbn_label, in its order; the inject file must list the same
labels_all="context locked nest start started a_page a_tail a_before a_after
a_clock a b c d slow_before slow_clock slow_ts slow_set e f_write f event
event_entries event_stamp reserved page_move page_free page_drop page_full
head_entries head_flagged head_overrun page_head page_new_head head_tail
head_fixed head_done page_claim page_tail page_ours page_reset_write
page_reset page_zero page_end pad_end pad pad_done page_next entries
commit_read commit commit_page commit_next commit_write commit_check
commit_set commit_end commit_recheck commit_again commit_done unnest
discard discard_entries discard_tail discard_stamp discard_done
validate_note validate swap swap_done"
# the head page push: overwrite mode only
labels_head="page_full head_entries head_flagged head_overrun page_head
page_new_head head_tail head_fixed head_done"

# Windows of a scenario of their own, "LABEL:NAME", each right after
# LABEL's window (see the top)
scen_extra="discard_tail:kept"

# labels_but LABEL...: labels_all without the LABELs
labels_but()
{
	_lb_skip=" $* "
	for _l in $labels_all; do
		case $_lb_skip in
		*" $_l "*) ;;
		*) printf '%s ' "$_l" ;;
		esac
	done
}

# the next page not the head: a full overwrite ring always has the head
# next, so only producer/consumer mode (which refuses instead) gets there
labels_pc_only="page_free"

# rbn_swap_cpu()'s: it runs in an IPI, with interrupts off, where no
# irq_work can come in (the userspace enumeration, test_nest's swap
# family, puts a writer at each); listed by the inject file, never armed
labels_noirq="swap swap_done"

# with_scen LABEL...: the windows of the LABELs, scen_extra's included
with_scen()
{
	for _l in "$@"; do
		printf '%s ' "$_l"
		for _s in $scen_extra; do
			[ "${_s%%:*}" = "$_l" ] && printf '%s ' "$_s"
		done
	done
}

# shellcheck disable=SC2046,SC2086
labels_pc=$(with_scen $(labels_but $labels_head page_drop $labels_noirq))
# shellcheck disable=SC2046,SC2086
labels_ow=$(with_scen $(labels_but $labels_pc_only $labels_noirq))
# shellcheck disable=SC2086
nr_all=$(labels_but $labels_noirq | wc -w)
# shellcheck disable=SC2086
nr_pc=$(echo $labels_pc | wc -w)
# shellcheck disable=SC2086
nr_ow=$(echo $labels_ow | wc -w)
# events=N refused or taken, pc with a reader, page_drop on a full buffer,
# overwrite, each load's unload, the union
plan=$((1 + nr_pc + 1 + nr_ow + 3 + 1))
wait_max=${RBN_INJECT_TIMEOUT:-30}
ow_kb=${RBN_INJECT_OW_KB:-16}
# A few events every millisecond on each CPU: a sub-buffer fills in tens
# of milliseconds, and the recording stays small enough to check quickly.
gen="gen_task_busy_us=5 gen_task_idle_us=995"
# payload (struct rbn_sample) + header: the size of every event here
ev_bytes=44
t=$rbn_tmp
param=/sys/module/$rbn_name/parameters/discard_every

ktap_print_header
ktap_set_plan $plan

online=$(rbn_online_cpus | tr '\n' ' ')
# shellcheck disable=SC2086 # a word list
nr_online=$(echo $online | wc -w)
ktap_print_msg "online CPUs: $online"

# Each window runs a handful of processes only: on a debug kernel under
# emulation every fork and exec costs tens of milliseconds.

# snap LABEL: one line, in one pass over inject and the stats: "NOW ABS
# SLOW ZERO DROPPED COVERRUN OVERRUN DISC HITS LATE IDISC EVENTS H...": the
# buffer's clock now (the latest of the CPUs'); the sums over the CPUs of
# ts_abs, ts_slow, ts_zero, dropped, commit_overrun, overrun and
# discarded; the hits of all labels, the late interrupts, the interrupts'
# events discarded, the events per interrupt; the hits of LABEL on each
# online CPU
snap()
{
	awk -v l="$1" -v cpus="$online" '
	FILENAME ~ /inject$/ {
		if ($1 == "late") {
			for (i = 2; i <= NF; i++) {
				sub(/^[^=]*=/, "", $i)
				late += $i
			}
		} else if ($1 == "discarded") {
			for (i = 2; i <= NF; i++) {
				sub(/^[^=]*=/, "", $i)
				idisc += $i
			}
		} else if ($1 == "events") {
			ev = $2
		} else {
			for (i = 2; i <= NF; i++) {
				if ($i ~ /^hits=/)
					hits += substr($i, 6)
				if (tolower($1) == l && $i ~ /^cpu[0-9]+=/) {
					split($i, kv, "=")
					lh[kv[1]] = kv[2]
				}
			}
		}
		next
	}
	$1 == "now_ts:" && $2 + 0 > now { now = $2 + 0 }
	$1 == "ts_abs:" { abs += $2 }
	$1 == "ts_slow:" { slow += $2 }
	$1 == "ts_zero:" { zero += $2 }
	$1 == "dropped:" { drop += $2 }
	$1 == "commit_overrun:" { cover += $2 }
	$1 == "overrun:" { over += $2 }
	$1 == "discarded:" { disc += $2 }
	END {
		printf "%.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %.0f %d",
		       now, abs, slow, zero, drop, cover, over, disc, hits,
		       late, idisc, ev == "" ? 1 : ev
		n = split(cpus, c, " ")
		for (i = 1; i <= n; i++)
			printf " %d", lh["cpu" c[i]]
		printf "\n"
	}' "$rbn_dir/inject" "$rbn_dir"/per_cpu/cpu*/stats
}

# cpu_hits LABEL: the hits of LABEL on each online CPU, "N N ..."
cpu_hits()
{
	awk -v l="$1" -v cpus="$online" 'tolower($1) == l {
		n = split(cpus, c, " ")
		for (i = 1; i <= n; i++) {
			v = 0
			for (j = 2; j <= NF; j++)
				if (index($j, "cpu" c[i] "=") == 1)
					v = substr($j, length("cpu" c[i] "=") + 1)
			printf "%s%d", (i > 1 ? " " : ""), v
		}
		exit
	}' "$rbn_dir/inject"
}

# hits_since BASE NOW: sets hs to the growth per CPU from BASE to NOW
# ("N N ..." each), and hs_sum to its sum
hits_since()
{
	hs=
	hs_sum=0
	_hs_base=$1
	# shellcheck disable=SC2086 # a word list
	set -- $2
	for _b in $_hs_base; do
		hs="$hs${hs:+ }$((${1:-0} - _b))"
		hs_sum=$((hs_sum + ${1:-0} - _b))
		[ $# -gt 0 ] && shift
	done
}

# all_hit DELTA: every online CPU has a hit in DELTA ("N N ...")
all_hit()
{
	[ -n "$1" ] || return 1
	for _v in $1; do
		[ "$_v" -ge 1 ] || return 1
	done
	return 0
}

# uptime_s: sets up to the whole seconds since boot (no process)
uptime_s()
{
	read -r up _up_x </proc/uptime
	up=${up%.*}
}

# arm WORDS: one write of WORDS to inject by the shell itself (no process);
# 0 on success, else 1 with the error in rbn_err
arm()
{
	rbn_err=
	echo "$1" >"$rbn_dir/inject" 2>"$t/arm.err" && return 0
	read -r rbn_err <"$t/arm.err"
	return 1
}

# inject_wait LABEL WORDS BASE: arm WORDS until every CPU hit LABEL (BASE:
# its hits per CPU before), again every second; then off, which waits
# for an interrupt still on its way. Sets _narm (armings) and _secs.
inject_wait()
{
	uptime_s
	_start=$up
	_armed=$up
	_secs=0
	_ret=1
	_narm=1
	if ! arm "$2"; then
		ktap_print_msg "echo '$2' > inject: $rbn_err"
		return 1
	fi
	while :; do
		cpu_hits "$1" >"$t/poll"
		read -r _now <"$t/poll"
		hits_since "$3" "$_now"
		if all_hit "$hs"; then
			_ret=0
			break
		fi
		uptime_s
		[ $((up - _start)) -ge "$wait_max" ] && break
		if [ $((up - _armed)) -ge 1 ]; then
			arm "$2"
			_armed=$up
			_narm=$((_narm + 1))
		fi
		sleep 0.1
	done
	arm off || ktap_print_msg "echo off > inject: $rbn_err"
	uptime_s
	_secs=$((up - _start))
	return $_ret
}

# words MODE LABEL: what to write to inject for LABEL (see the top)
words()
{
	case $2 in
	slow_before | slow_clock | slow_ts | slow_set | e | f_write | f)
		echo "a $2" ;;
	commit_recheck) echo "commit_end $2" ;;
	commit_again) echo "commit_set $2" ;;
	a_page | commit_check) echo "events=$cross $2" ;;
	commit_page | commit_next) echo "events=$cross a_page $2" ;;
	discard_tail:kept) echo "discard discard_tail" ;;
	page_drop)
		if [ "$1" = ow ]; then
			echo "events=$lap started $2"
		else
			echo "$2"
		fi
		;;
	*) echo "$2" ;;
	esac
}

# discard_every_of WINDOW: discard_every while WINDOW is armed (see the top)
discard_every_of()
{
	case $1 in
	discard*) echo 2 ;;
	*) echo 0 ;;
	esac
}

# validate_of WINDOW: 1 when WINDOW needs the validator on
validate_of()
{
	case $1 in
	validate*) echo 1 ;;
	*) echo 0 ;;
	esac
}

# set_discard_every N: the module's discard_every, by the shell itself
set_discard_every()
{
	echo "$1" >"$param" 2>"$t/param.err" && return 0
	ktap_print_msg "echo $1 > discard_every: $(rbn_errtext "$t/param.err")"
	return 1
}

# inject_events: the events each interrupt of the last arming writes
inject_events()
{
	awk '$1 == "events" { print $2; f = 1 } END { if (!f) print 1 }' \
		"$rbn_dir/inject"
}

# window MODE WINDOW: one label (WINDOW is LABEL or LABEL:SCENARIO), in
# the recording that runs for the whole mode: arm it until every CPU hit
# it, then off and a moment for a late interrupt. Appends "WINDOW START
# END HITS LATE EVENTS LHITS ABS SLOW ZERO DROPPED COVERRUN OVERRUN DISC
# IDISC EVERY OK" to $t/win.MODE (times of the buffer's clock; interrupts
# at any label, late ones, events per interrupt, hits of LABEL; the
# counters' growth; the interrupts' events discarded; discard_every) and
# "WINDOW MODE N N ..." (the label's hits per CPU) to $t/hits.
window()
{
	_mode=$1
	_l=$2
	_lab=${_l%%:*}
	_ok=1
	_every=$(discard_every_of "$_l")
	snap "$_lab" >"$t/snap0"
	read -r _t0 _abs0 _slow0 _zero0 _drop0 _cov0 _ovr0 _disc0 _hits0 _late0 _idisc0 _ev0 _base <"$t/snap0"
	words "$_mode" "$_l" >"$t/words"
	read -r _w <"$t/words"
	_val=$(validate_of "$_l")
	if [ "$_every" -ne 0 ]; then
		set_discard_every "$_every" || _ok=0
	fi
	if [ "$_val" -ne 0 ]; then
		_vfail0=$(rbn_stat_sum validate_fail)
		_vcheck0=$(rbn_stat_sum validate_checked)
		rbn_set validate 1 || { ktap_print_msg "$rbn_err"; _ok=0; }
	fi
	inject_wait "$_lab" "$_w" "$_base" || _ok=0
	if [ "$_every" -ne 0 ]; then
		set_discard_every 0 || _ok=0
	fi
	if [ "$_val" -ne 0 ]; then
		rbn_set validate 0 || { ktap_print_msg "$rbn_err"; _ok=0; }
		_vfail1=$(rbn_stat_sum validate_fail)
		_vcheck1=$(rbn_stat_sum validate_checked)
		ktap_print_msg "$_l: validator checked $((_vcheck1 - _vcheck0)), failed $((_vfail1 - _vfail0)) (want > 0, 0)"
		[ "$_vfail1" -eq "$_vfail0" ] && [ "$_vcheck1" -gt "$_vcheck0" ] ||
			_ok=0
	fi
	snap "$_lab" >"$t/snap1"
	read -r _t1 _abs1 _slow1 _zero1 _drop1 _cov1 _ovr1 _disc1 _hits1 _late1 _idisc1 _events _now <"$t/snap1"
	hits_since "$_base" "$_now"
	hit_cpus=$hs
	_dw=
	[ "$_every" -ne 0 ] && _dw=" with discard_every=$_every"
	ktap_print_msg "$_l: armed $_narm times ('$_w')$_dw in ${_secs}s; hits per CPU ($online): $hit_cpus"
	[ $_ok = 1 ] ||
		ktap_print_msg "$_l: not hit on every online CPU within ${wait_max}s"
	echo "$_l $_t0 $_t1 $((_hits1 - _hits0)) $((_late1 - _late0)) $_events" \
		"$hs_sum $((_abs1 - _abs0)) $((_slow1 - _slow0))" \
		"$((_zero1 - _zero0)) $((_drop1 - _drop0)) $((_cov1 - _cov0))" \
		"$((_ovr1 - _ovr0)) $((_disc1 - _disc0)) $((_idisc1 - _idisc0))" \
		"$_every $_ok" >>"$t/win.$_mode"
	echo "$_l $_mode $hit_cpus" >>"$t/hits"
}

# check_labels: the inject file lists the labels of labels_all, in order
check_labels()
{
	_have=$(awk '$2 ~ /^armed=/ { printf "%s ", tolower($1) }' "$rbn_dir/inject")
	# shellcheck disable=SC2086 # a word list
	_want=$(printf '%s ' $labels_all)
	[ "$_have" = "$_want" ] && return 0
	ktap_print_msg "the inject file lists: $_have"
	ktap_print_msg "the test knows:        $_want"
	labels_ok=0
}

# nested_times MODE REC: the times of the nested events (src=inject) of REC,
# in ns ("S.NNNNNNNNN:", no leading zero for busybox awk's sake)
nested_times()
{
	"$RBTRACE" report -t "$2" 2>/dev/null | grep ' src=inject ' | awk '{
		for (i = 1; i <= NF; i++)
			if ($i ~ /^[0-9]+\.[0-9]+:$/) {
				sub(/:$/, "", $i)
				split($i, p, ".")
				sub(/^0+/, "", p[2])
				printf "%d%09d\n", p[1], p[2] + 0
				break
			}
	}' >"$t/nested.$1"
}

# run_mode MODE LABELS...: every label in one recording, then a result
# per label. pc: rbtrace record runs all the time; pcfull and ow: the
# pages are read at the end.
run_mode()
{
	_mode=$1
	shift
	_rec=$t/rec.$_mode
	: >"$t/win.$_mode"
	check_labels
	rbn_set tracing_on 1
	[ "$_mode" = pc ] && rbn_record_start "$_rec"
	rbn_set sources task || ktap_print_msg "$rbn_err"
	# The sub-buffer's events and one more: a nested writer that writes
	# $cross crosses a page; $lap laps the overwrite ring (its sub-buffers
	# and two more).
	_data=$(($(rbn_subbuf_size) - 16))
	_kb=$(rbn_get buffer_size_kb)
	cross=$((_data / ev_bytes + 8))
	lap=$(((((_kb * 1024 + _data - 1) / _data) + 2) * (_data / ev_bytes + 1)))
	ktap_print_msg "$_mode: buffer_size_kb $_kb, $_data bytes per sub-buffer: events=$cross crosses one, events=$lap laps the ring"
	for _l in "$@"; do
		window "$_mode" "$_l"
	done
	rbn_quiesce
	if [ "$_mode" = pc ]; then
		rbn_record_stop >"$t/rec.out"
	else
		rbn_record "$_rec" >"$t/rec.out"
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
	nested_times "$_mode" "$_rec"
	ktap_print_msg "$_mode: $(wc -l <"$t/nested.$_mode") nested (src=inject) events recorded in all"
	# each window's line and the nested events recorded in it
	awk -v nested="$t/nested.$_mode" 'FILENAME == nested { t[++n] = $1; next }
		{
			c = 0
			for (i = 1; i <= n; i++)
				if (t[i] >= $2 && t[i] <= $3)
					c++
			print $0, c
		}' "$t/nested.$_mode" "$t/win.$_mode" >"$t/win.$_mode.nested"
	while read -r _l _t0 _t1 _hits _late _events _lhits _dabs _dslow _dzero _ddrop _dcov _dovr _ddisc _didisc _every _ok _nested; do
		[ $_cok = 1 ] || _ok=0
		_lab=${_l%%:*}
		_want=$(((_hits + _late) * _events - _didisc))
		_msg="$_l: $_hits interrupts ($_lhits at $_lab) + $_late late, $_events events each"
		[ "$_every" -ne 0 ] &&
			_msg="$_msg, discard_every=$_every: $_didisc of the interrupts' events discarded, stats' discarded +$_ddisc"
		_msg="$_msg; ts_abs +$_dabs, ts_slow +$_dslow, ts_zero +$_dzero; dropped +$_ddrop, commit_overrun +$_dcov, overrun +$_dovr"
		[ "$_mode" = pc ] &&
			_msg="$_msg; $_nested nested (src=inject) events recorded in its window, want $_want"
		ktap_print_msg "$_msg"
		case $_mode in
		pc)
			# A reader keeps up: nothing may be lost, and every
			# injected event reaches the pages, none more.
			if [ $((_ddrop + _dcov + _dovr)) -ne 0 ]; then
				ktap_print_msg "$_l: events lost with a reader running (want none)"
				_ok=0
			fi
			if [ "$_nested" -ne "$_want" ]; then
				ktap_print_msg "$_l: $_nested nested events recorded, want $_want"
				_ok=0
			fi
			[ "$_nested" -gt 0 ] || _ok=0
			_what="every nested event recorded, none lost"
			;;
		pcfull)
			# The buffer is full: the outer event and every event
			# of the interrupt at page_drop are refused.
			_min=$((_lhits * (_events + 1)))
			if [ "$_ddrop" -lt "$_min" ]; then
				ktap_print_msg "$_l: dropped +$_ddrop, want at least $_min"
				_ok=0
			fi
			_what="outer and nested events dropped"
			;;
		ow)
			# Only a lapped commit overruns it; at page_drop the
			# ring is still lapped: the outer event and every
			# event of the interrupt there go.
			_min=$((_lhits * (_events + 1)))
			if [ "$_l" = page_drop ] && [ "$_dcov" -lt "$_min" ]; then
				ktap_print_msg "$_l: commit_overrun +$_dcov, want at least $_min"
				_ok=0
			elif [ "$_l" != page_drop ] && [ "$_dcov" -ne 0 ]; then
				ktap_print_msg "$_l: commit_overrun +$_dcov, want 0"
				_ok=0
			fi
			_what="commit overruns only at page_drop"
			;;
		esac
		case $_l in
		a_tail | a_before | a_after | a_clock | a | b | c)
			if [ $((_dabs + _dslow)) -eq 0 ]; then
				ktap_print_msg "$_l: neither ts_slow nor ts_abs grew"
				_ok=0
			fi
			;;
		slow_before | slow_clock | slow_ts | slow_set | e | f_write | f)
			if [ "$_dslow" -eq 0 ]; then
				ktap_print_msg "$_l: ts_slow did not grow"
				_ok=0
			fi
			;;
		esac
		if [ "$_every" -eq 0 ] && [ "$_didisc" -ne 0 ]; then
			ktap_print_msg "$_l: $_didisc of the interrupts' events discarded with discard_every=0"
			_ok=0
		fi
		[ "$_every" -eq 0 ] || check_discard || _ok=0
		ktap_test_result "$_ok" "$_mode: inject $_l: hit on every CPU, $_what, rbtrace check passes"
	done <"$t/win.$_mode.nested"
	snap - >"$t/snap"
	read -r _x _x _x _x _x _x _x _x _x _late _idisc _x <"$t/snap"
	ktap_print_msg "late interrupts: $_late; interrupts' events discarded: $_idisc"
	rm -rf "$_rec"
}

# check_discard: the checks of a discard window (see the top), on
# run_mode's variables of the window; 0 when they pass
check_discard()
{
	_cd_ok=0
	# each hit at the label is a task event discarded
	_cd_min=$((_lhits + _didisc))
	if [ "$_ddisc" -lt "$_cd_min" ]; then
		ktap_print_msg "$_l: stats' discarded +$_ddisc, want at least $_cd_min"
		_cd_ok=1
	fi
	# with discard_every=2 the interrupt's event is the reserve after
	# the discarded one: committed; a late interrupt can come anywhere
	_cd_want=0
	[ "$_l" = discard_tail:kept ] && _cd_want=$_lhits
	if [ "$_late" -eq 0 ] && [ "$_didisc" -ne "$_cd_want" ]; then
		ktap_print_msg "$_l: $_didisc of the interrupts' events discarded, want $_cd_want"
		_cd_ok=1
	fi
	case $_l in
	discard_tail:kept)
		if [ $((_hits - _lhits)) -lt "$_lhits" ]; then
			ktap_print_msg "$_l: $((_hits - _lhits)) hits at discard, want at least the $_lhits at discard_tail"
			_cd_ok=1
		fi
		;;
	discard_stamp | discard_done)
		if [ "$_dabs" -lt "$_lhits" ]; then
			ktap_print_msg "$_l: ts_abs +$_dabs, want at least $_lhits (write_stamp 0)"
			_cd_ok=1
		fi
		;;
	esac
	return $_cd_ok
}

# check_knob: events=N out of range, not a number, or without a label is
# refused with EINVAL and arms nothing; events=3 shows in the file. Runs
# while no writer runs.
check_knob()
{
	_ck_ok=1
	for _ck_w in "events=0 a" "events=4097 a" "events=x a" "events=3"; do
		if rbn_write inject "$_ck_w"; then
			ktap_print_msg "echo '$_ck_w' > inject: accepted, want EINVAL"
			_ck_ok=0
		elif [ "$rbn_err" != "Invalid argument" ]; then
			ktap_print_msg "echo '$_ck_w' > inject: $rbn_err, want EINVAL"
			_ck_ok=0
		fi
	done
	_ck_armed=$(awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^armed=/) n += substr($i, 7) }
			 END { print n + 0 }' "$rbn_dir/inject")
	rbn_write inject "events=3 a" || _ck_ok=0
	_ck_ev=$(inject_events)
	rbn_write inject off || _ck_ok=0
	ktap_print_msg "armed after the refused writes: $_ck_armed (want 0); events after 'events=3 a': $_ck_ev (want 3)"
	[ "$_ck_armed" -eq 0 ] && [ "$_ck_ev" = 3 ] || _ck_ok=0
	ktap_test_result $_ck_ok "inject: a bad events=N is refused (EINVAL), events=3 is taken"
}

# load_mode MODE DESC PARAMS...: load, run the labels of MODE, unload; the
# labels fail when the module does not load
load_mode()
{
	_lm_mode=$1
	_lm_desc=$2
	shift 2
	case $_lm_mode in
	pc) _lm_labels=$labels_pc ;;
	pcfull) _lm_labels=page_drop ;;
	*) _lm_labels=$labels_ow ;;
	esac
	# shellcheck disable=SC2086 # gen is a list of parameters
	if rbn_load "$@" sources= $gen; then
		ktap_print_msg "$_lm_desc"
		[ "$_lm_mode" = pc ] && check_knob
		# shellcheck disable=SC2086 # a word list
		run_mode "$_lm_mode" $_lm_labels
		_lm_ok=0
		rbn_unload && _lm_ok=1
		[ $_lm_ok = 1 ] || ktap_print_msg "$rbn_err"
		ktap_test_result $_lm_ok "unload ($_lm_mode)"
	else
		ktap_print_msg "$rbn_err"
		[ "$_lm_mode" = pc ] &&
			ktap_test_fail "inject: a bad events=N is refused (EINVAL), events=3 is taken (module not loaded)"
		for _l in $_lm_labels; do
			ktap_test_fail "$_lm_mode: inject $_l (module not loaded)"
		done
		ktap_test_fail "unload ($_lm_mode)"
	fi
}

labels_ok=1
: >"$t/hits"

desc="producer/consumer, 1 MiB per CPU, reader running: every label but"
desc="$desc page_drop and those of the head page push (page_full, head_*,"
load_mode pc "$desc page_head, page_new_head)"
load_mode pcfull "producer/consumer, 16 KiB per CPU, no reader: page_drop on a full buffer" \
	buffer_size_kb=16
load_mode ow "overwrite, $ow_kb KiB per CPU, no reader while armed: every label but page_free" \
	overwrite=1 buffer_size_kb="$ow_kb"

# ---- every label on every CPU, in some mode --------------------------------

ktap_print_msg "hits of each label's window per CPU ($online), by mode" \
	"(pc: producer/consumer, its page_drop on a full buffer; ow: overwrite;" \
	"-: not reachable in the mode):"
ok=$labels_ok
ktap_print_msg "$(printf '%-17s %-12s %-12s' label pc ow)"
min=
# shellcheck disable=SC2046 # a word list
for l in $(labels_but $labels_noirq) $scen_extra; do
	pc=$(awk -v l="$l" '$1 == l && ($2 == "pc" || $2 == "pcfull") {
		$1 = $2 = ""; sub(/^ +/, ""); print }' "$t/hits")
	ow=$(awk -v l="$l" '$1 == l && $2 == "ow" { $1 = $2 = ""; sub(/^ +/, ""); print }' "$t/hits")
	# the most hits of each CPU over the modes: every one must be >= 1
	best=$(echo "${pc:-} | ${ow:-}" | awk -F'|' -v ncpu="$nr_online" '{
		split($1, a, " "); split($2, b, " ")
		for (i = 1; i <= ncpu; i++)
			printf "%s%d", (i > 1 ? " " : ""), (a[i] + 0 > b[i] + 0 ? a[i] : b[i]) + 0
	}')
	if ! all_hit "$best"; then
		ktap_print_msg "$l: not hit on every CPU in any mode ($best)"
		ok=0
	fi
	for v in ${pc:-} ${ow:-}; do
		if [ -z "$min" ] || [ "$v" -lt "$min" ]; then
			min=$v
		fi
	done
	ktap_print_msg "$(printf '%-17s %-12s %-12s' "$l" "${pc:--}" "${ow:--}")"
done
ktap_print_msg "fewest hits of a label's window on a CPU in a mode that reaches it: ${min:-none}"
ktap_test_result $ok "each of the $nr_all labels hit by a real interrupt on every CPU (windows: pc $nr_pc + page_drop, ow $nr_ow)"

ktap_finished
