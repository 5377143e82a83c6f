#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test_snapshot.sh - snapshots (echo 1 > snapshot) under full nested load.
#
# "echo 1 > snapshot" clears the spare buffer (allocated on first use) and
# swaps every CPU's ring between it and the live buffer: the spare holds
# what the live buffer held, the live buffer goes on empty. Every source
# writes (task, hrtimer, tasklet, irq_work, self-NMI, the tracepoints and
# a kprobe on vfs_read; the task writers at a tenth of their time) in
# producer/consumer mode while snapshots are taken one after the other,
# some right after the drain of the one before, some after a pause, so
# that each CPU's writer is anywhere in its sub-buffer, and nested writers
# anywhere in their write path, when the IPI swaps its ring. After each
# snapshot every CPU's per_cpu/cpuN/snapshot_raw is drained into a
# recording, by splice() (rbtrace record -c on a directory whose
# trace_pipe_raw files are the snapshot_raw ones) for half of the CPUs and
# by read() (dd) for the others, alternating from one snapshot to the next.
# RBN_SNAPSHOTS snapshots (default 40, 20 with RBN_QUICK=1), half in each
# phase, and each phase at least half of RBN_SNAPSHOT_SECONDS (default 20,
# 10 with RBN_QUICK=1) long.
#
#  1. before the first snapshot: "snapshot" says it is not allocated,
#     every snapshot_raw reads end of file at once (read and splice),
#     echo 0 and echo 2 succeed and allocate nothing;
#  Phase 1, nobody reads the live buffer: the snapshots follow each other.
#  2. every snapshot passes "rbtrace check" (time never goes back, no
#     sequence gap: the swap waits until no writer of the CPU is between
#     its reserve and its commit); events per snapshot and those written
#     at depth >= 2 are printed;
#  3. every snapshot's "entries-in-buffer" in the snapshot file's header
#     equals the events drained from its snapshot_raw files, and the
#     snapshot file's text lists the same (CPU, seq) as the pages, for
#     the first two snapshots;
#  4. the snapshots and the drain of the live buffer at the end hold every
#     sequence number of every CPU exactly once, 0 to the last, and as
#     many events as the sources wrote; the live drain passes rbtrace
#     check, and the live buffer's stats are exact (written == read,
#     nothing left, no overrun);
#  Phase 2, after a reset: rbtrace record reads the live buffer all along.
#  5. every snapshot passes rbtrace check; a sequence gap is allowed only
#     where the numbers missing were read from the live buffer (a writer
#     nested into the last event of a sub-buffer the live reader took
#     wrote on the next sub-buffer with a smaller number), and is counted;
#  6. the live recording and all the snapshots together hold every
#     sequence number of every CPU exactly once, 0 to the last, and as
#     many events as the sources wrote since the reset; per source
#     attempts == events + discarded + refused; the live buffer's stats
#     are exact (written == read, nothing left, no overrun);
#  7. a trace_pipe_raw reader blocked on its watermark stays blocked across
#     snapshots (a snapshot is not a reset; each one followed by a wake of
#     every reader), and tracing_on=0 ends it;
#  8. bad values (3, -1, abc, an empty line, 1x, 64 bytes) are refused with
#     EINVAL and change nothing: the snapshot's text and the live
#     buffer's counters stay as they were;
#  9. while a snapshot_raw or the snapshot file is open for reading, echo
#     0, 1 and 2 fail with EBUSY, and echo 1 while "trace" is (echo 2
#     works then); nothing changes; after they are closed echo 2 empties
#     the spare and echo 0 frees it;
# 10. after a resize, a trace_clock and a timestamp_mode change, echo 1
#     takes a snapshot of the new geometry, clock and mode (a new spare),
#     which passes rbtrace check;
# 11. with a spare allocated and a snapshot_raw open, rmmod is refused (the
#     file holds the module); once it is closed rmmod succeeds.

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

rbn_require rbtrace

ktap_print_header
ktap_set_plan 11

secs=${RBN_SNAPSHOT_SECONDS:-$(rbn_secs 20)}
count=${RBN_SNAPSHOTS:-$(rbn_secs 40)}
per_phase=$(((count + 1) / 2))
phase_secs=$(((secs + 1) / 2))
kb=${RBN_SNAPSHOT_BUFFER_KB:-256}
t0=$(date +%s)
t=$rbn_tmp

# ---- helpers ---------------------------------------------------------------

# snap_write VALUE: one write(2) of VALUE and a newline to snapshot; 0 on
# success, else 1 with the errno text in rbn_err
snap_write()
{
	rbn_write snapshot "$1"
}

# snap_header FILE: the snapshot file's header into FILE; prints
# "ENTRIES WRITTEN", or "none" when it says it is not allocated
snap_header()
{
	head -n 24 "$rbn_dir/snapshot" >"$1" 2>&1
	if grep -q 'Snapshot is not allocated' "$1"; then
		echo none
		return
	fi
	sed -n 's|^# entries-in-buffer/entries-written: \([0-9]*\)/\([0-9]*\) .*|\1 \2|p' "$1"
}

# A module directory for rbtrace record whose trace_pipe_raw files are the
# snapshot_raw files.
sdir=$t/sdir
make_sdir()
{
	rm -rf "$sdir"
	mkdir -p "$sdir/per_cpu"
	for _f in header_page header_event trace_clock events; do
		ln -s "$rbn_dir/$_f" "$sdir/$_f"
	done
	for _c in $(rbn_cpus); do
		mkdir -p "$sdir/per_cpu/cpu$_c"
		ln -s "$rbn_dir/per_cpu/cpu$_c/snapshot_raw" \
			"$sdir/per_cpu/cpu$_c/trace_pipe_raw"
	done
}

# drain OUT K: every CPU's snapshot_raw into OUT/cpuN.raw, by splice for
# the CPUs with (CPU + K) even, by read() for the others; 0 when every
# reader ended at end of file
nsplice=0
nread=0
drain()
{
	rbn_copy_formats "$1"
	_dr_ok=0
	for _c in $(rbn_cpus); do
		if [ $(((_c + $2) % 2)) -eq 0 ]; then
			# a recording of its own (record refuses to add to
			# one), its CPU file moved into OUT
			timeout -s KILL 120 "$RBTRACE" record -d "$sdir" \
				-o "$1.cpu$_c" -c "$_c" >"$1.rec$_c.log" 2>&1 &&
				mv "$1.cpu$_c/cpu$_c.raw" "$1/" || {
				ktap_print_msg "$1: rbtrace record -c $_c: $(tail -n 1 "$1.rec$_c.log")"
				_dr_ok=1
			}
			nsplice=$((nsplice + 1))
		else
			timeout -s KILL 120 dd if="$rbn_dir/per_cpu/cpu$_c/snapshot_raw" \
				of="$1/cpu$_c.raw" bs="$sub" 2>"$1.dd$_c.err" || {
				ktap_print_msg "$1: dd of cpu$_c: $(rbn_errtext "$1.dd$_c.err")"
				_dr_ok=1
			}
			nread=$((nread + 1))
		fi
	done
	return $_dr_ok
}

# last_fill FILE: the bytes of events in the last sub-buffer of FILE, or
# nothing for an empty file
last_fill()
{
	_lf_size=$(stat -c %s "$1")
	[ "$_lf_size" -ge "$sub" ] || return
	_lf_w=$(od -A n -t u4 -j $((_lf_size - sub + 8)) -N 4 "$1" | tr -d ' ')
	echo $((_lf_w & 0x3fffffff))
}

# keys REC: "CPU SEQ" of every event of a recording, sorted as rbn_keys
# sorts them (sed: much faster than rbn_keys' awk on a million lines)
keys()
{
	"$RBTRACE" report "$1" 2>"$1.report.err" |
		sed -n 's/.* sample: *seq=\([0-9]*\) cpu=\([0-9]*\) .*/\2 \1/p' |
		sort -n -k1,1 -k2,2
}

# union FILE...: the keys files together: per CPU every seq from 0 on
# exactly once? Prints a "# " line per CPU and "total N dups N gaps N"
# as the last line.
union()
{
	cat "$@" | sort -n -k1,1 -k2,2 | awk '
		function flush() {
			if (!started)
				return
			printf "# cpu%s: %d events, seq 0..%d, %d duplicates, %d missing%s\n",
			       cur, n, want - 1, d, g,
			       fg != "" ? " (first missing " fg ")" : ""
			tn += n; td += d; tg += g
		}
		!started || $1 != cur {
			flush(); started = 1; cur = $1
			want = 0; n = 0; d = 0; g = 0; fg = ""
		}
		{
			n++
			if ($2 < want) {
				d++
			} else {
				if ($2 > want) {
					g += $2 - want
					if (fg == "")
						fg = want
				}
				want = $2 + 1
			}
		}
		END { flush(); printf "total %d dups %d gaps %d\n", tn, td, tg }'
}

# src_sums: "ATTEMPTS EVENTS DISCARDED REFUSED BAD" summed over the sources;
# BAD counts the sources whose attempts != events + discarded + refused
src_sums()
{
	awk 'NF {
		a = e = d = r = 0
		for (i = 3; i <= NF; i++) {
			p = index($i, "=")
			if (!p) continue
			k = substr($i, 1, p - 1); v = substr($i, p + 1)
			if (k == "attempts") a = v
			else if (k == "events") e = v
			else if (k == "discarded") d = v
			else if (k == "refused") r = v
		}
		sa += a; se += e; sd += d; sr += r
		if (a != e + d + r) bad++
	} END { printf "%d %d %d %d %d\n", sa, se, sd, sr, bad }' "$rbn_dir/sources"
}

# depth2 CHECKFILE: events at depth >= 2 in rbtrace check's depth table
depth2()
{
	awk '$1 == "depth" { tab = 1; next }
	     tab && ($1 == "task" || $1 == "softirq" || $1 == "hardirq" || $1 == "nmi") {
		for (i = 3; i <= NF; i++) s += $i
		next
	     }
	     { tab = 0 }
	     END { print s + 0 }' "$1"
}

# live_exact: per CPU the live buffer's written == read + overrun, overrun
# 0 and nothing left; prints a line per CPU
live_exact()
{
	_le_ok=0
	for _c in $(rbn_cpus); do
		_w=$(rbn_stat "$_c" written)
		_r=$(rbn_stat "$_c" read)
		_o=$(rbn_stat "$_c" overrun)
		_e=$(rbn_stat "$_c" entries)
		_d=$(rbn_stat "$_c" dropped)
		ktap_print_msg "live cpu$_c (the ring swapped in last): written $_w, read $_r, overrun $_o, entries $_e, dropped $_d"
		[ "$_w" -eq $((_r + _o)) ] && [ "$_o" -eq 0 ] && [ "$_e" -eq 0 ] ||
			_le_ok=1
	done
	return $_le_ok
}

# take_snapshots P: snapshots under load until per_phase were taken and
# phase_secs passed; each drained into $t/pP-K. "K ENTRIES PARTIAL
# SWAPPED" lines in $t/pP.taken: the header's entries, the CPUs whose last
# sub-buffer was partly filled, "all" or "part" (EBUSY: some CPUs)
take_snapshots()
{
	_p=$1
	: >"$t/p$_p.taken"
	_k=0
	_start=$(date +%s)
	_i=0
	while [ $_k -lt "$per_phase" ] ||
	      [ $(($(date +%s) - _start)) -lt "$phase_secs" ]; do
		_k=$((_k + 1))
		_o=$t/p$_p-$_k
		_swapped=all
		if ! snap_write 1; then
			case $rbn_err in
			*busy*)
				# some CPUs swapped: drained as any other
				ebusy=$((ebusy + 1))
				_swapped=part
				ktap_print_msg "snapshot $_p.$_k: echo 1: $rbn_err (drained anyway)"
				;;
			*)
				ktap_print_msg "snapshot $_p.$_k: echo 1: $rbn_err"
				return 1
				;;
			esac
		fi
		_hdr=$(snap_header "$_o.head")
		if [ $_k -le 2 ]; then
			rbn_keys <"$rbn_dir/snapshot" >"$_o.tkeys"
		fi
		drain "$_o" "$_k" || _hdr="drain-failed"
		_partial=0
		for _c in $(rbn_cpus); do
			_fill=$(last_fill "$_o/cpu$_c.raw")
			[ -n "$_fill" ] && [ "$_fill" -lt $((sub - 16 - 48)) ] &&
				_partial=$((_partial + 1))
		done
		echo "$_k ${_hdr%% *} $_partial $_swapped" >>"$t/p$_p.taken"
		# the pause before the next one: none, short or longer
		case $((_i % 4)) in
		1) sleep 0.2 ;;
		3) sleep 0.7 ;;
		esac
		_i=$((_i + 1))
	done
	return 0
}

# check_snapshots P: rbtrace check of every snapshot of phase P (after the
# load, to keep the phase short); "K CHECK_RC EVENTS ENTRIES DEPTH2
# PARTIAL SWAPPED" lines in $t/pP.table
check_snapshots()
{
	: >"$t/p$1.table"
	while read -r _k _hdr _partial _swapped; do
		_o=$t/p$1-$_k
		"$RBTRACE" check "$_o" >"$_o.check" 2>&1
		_rc=$?
		_ev=$(rbn_check_events "$_o")
		echo "$_k $_rc ${_ev:-0} $_hdr $(depth2 "$_o.check") $_partial $_swapped" \
			>>"$t/p$1.table"
	done <"$t/p$1.taken"
}

# table_summary P: the events per snapshot, min / mean / max
table_summary()
{
	awk '{ n++; s += $3; if (n == 1 || $3 < mn) mn = $3; if ($3 > mx) mx = $3
	       d += $5; if ($6 > 0) p++ }
	     END { if (n) printf "%d snapshots, events per snapshot min %d mean %d max %d (%d in all, %d at depth >= 2); %d with a CPU whose last sub-buffer was partly filled\n",
		   n, mn, s / n, mx, s, d, p }' "$1"
}

ebusy=0

# ---- 1: no spare yet
# Every event of phase 2 is listed and sorted in the guest: the load
# generator's hrtimer every 1 ms instead of 200 us, its task writers at
# 0.2% of their time (2 us of every 1000), some 20000 events a second.
if ! rbn_load buffer_size_kb="$kb" gen_period_us=1000 gen_task_busy_us=2 \
	    gen_task_idle_us=998 sources=; then
	ktap_print_msg "$rbn_err"
	while [ "$KTAP_TESTNO" -lt 11 ]; do
		ktap_test_fail "module not loaded"
	done
	ktap_finished
fi
sub=$(rbn_subbuf_size)
sub=${sub:-4096}
make_sdir
ok=1
h=$(snap_header "$t/head0")
ktap_print_msg "snapshot before any echo 1: '$h' ($(sed -n 3p "$t/head0"))"
[ "$h" = none ] || ok=0
for c in $(rbn_cpus); do
	n=$(dd if="$rbn_dir/per_cpu/cpu$c/snapshot_raw" bs="$sub" 2>/dev/null | wc -c)
	[ "$n" -eq 0 ] || { ktap_print_msg "cpu$c snapshot_raw read $n bytes"; ok=0; }
done
timeout -s KILL 30 "$RBTRACE" record -d "$sdir" -o "$t/none" >"$t/none.log" 2>&1 ||
	ok=0
sed 's/^/# /' "$t/none.log"
grep -q ' 0 bytes,' "$t/none.log" || ok=0
for v in 0 2; do
	snap_write $v || { ktap_print_msg "echo $v > snapshot: $rbn_err"; ok=0; }
done
[ "$(snap_header "$t/head0")" = none ] || ok=0
ktap_print_msg "at $(($(date +%s) - t0)) s"
ktap_test_result $ok "no spare: snapshot not allocated, snapshot_raw at end of file (read, splice), echo 0 and 2 allocate nothing"

if ! rbn_write kprobe_events "p:rbn_snap vfs_read"; then
	ktap_print_msg "no kprobe on vfs_read ($rbn_err): the kprobes source does not write"
fi

# ---- Phase 1: snapshots one after the other, no live reader
ktap_print_msg "phase 1: all sources, at least $per_phase snapshots over $phase_secs s, nobody reads the live buffer"
rbn_set sources all || ktap_print_msg "$rbn_err"
ktap_print_msg "sources on: $(rbn_sources_state | awk '$2 == "on" { print $1 }' | tr '\n' ' ')"
take_snapshots 1
p1_rc=$?
rbn_quiesce
check_snapshots 1
rbn_stat_table written read entries dropped overrun max_depth
# what the live buffer got after the last swap
rbn_record "$t/p1-live" >/dev/null
src_sums >"$t/src1"
read -r _ e1 _ r1 bad1 <"$t/src1"
ktap_print_msg "sources: attempts events discarded refused bad-sources: $(cat "$t/src1")"

# ---- 2: rbtrace check of every snapshot
ok=1
[ $p1_rc -eq 0 ] || ok=0
ktap_print_msg "phase 1: $(table_summary "$t/p1.table"); echo 1 refused with EBUSY $ebusy times"
while read -r k rc ev _; do
	if [ "$rc" != 0 ] || [ "$ev" -eq 0 ]; then
		ktap_print_msg "snapshot 1.$k: rbtrace check exit $rc, $ev events"
		grep -m 5 VIOLATION "$t/p1-$k.check" | sed 's/^/# /'
		ok=0
	fi
done <"$t/p1.table"
sed 's/^/# /' "$t/p1-1.check" | head -n 14
n1=$(wc -l <"$t/p1.table")
[ "$n1" -ge "$per_phase" ] || ok=0
ktap_print_msg "at $(($(date +%s) - t0)) s"
ktap_test_result $ok "phase 1: each of $n1 snapshots under full load passes rbtrace check"

# ---- 3: header entries == events drained; text == pages
ok=1
while read -r k rc ev hdr _; do
	if [ "$hdr" != "$ev" ]; then
		ktap_print_msg "snapshot 1.$k: header says $hdr entries, $ev events drained"
		ok=0
	fi
done <"$t/p1.table"
for k in 1 2; do
	[ -f "$t/p1-$k.tkeys" ] || { ok=0; continue; }
	keys "$t/p1-$k" >"$t/p1-$k.keys"
	a=$(wc -l <"$t/p1-$k.tkeys")
	b=$(wc -l <"$t/p1-$k.keys")
	if cmp -s "$t/p1-$k.tkeys" "$t/p1-$k.keys"; then
		ktap_print_msg "snapshot 1.$k: the snapshot file's text and the pages hold the same $a (CPU, seq)"
	else
		ktap_print_msg "snapshot 1.$k: text $a events, pages $b: they differ"
		ok=0
	fi
done
ktap_print_msg "at $(($(date +%s) - t0)) s"
ktap_test_result $ok "phase 1: header entries == events drained; text == pages (first two)"

# ---- 4: chain accounting
ok=1
if ! "$RBTRACE" check "$t/p1-live" >"$t/p1-live.check" 2>&1 ||
   ! grep -q ': OK$' "$t/p1-live.check"; then
	ktap_print_msg "rbtrace check of the live drain failed"
	grep -m 5 VIOLATION "$t/p1-live.check" | sed 's/^/# /'
	ok=0
fi
ktap_print_msg "live drain after the last snapshot: $(rbn_check_events "$t/p1-live") events"
keys "$t/p1-live" >"$t/p1-live.keys"
k=0
while [ $k -lt "$n1" ]; do
	k=$((k + 1))
	[ -f "$t/p1-$k.keys" ] || keys "$t/p1-$k" >"$t/p1-$k.keys"
done
union "$t"/p1-*.keys >"$t/p1.union"
grep '^#' "$t/p1.union"
tail -n 1 "$t/p1.union" >"$t/p1.total"
read -r _ u_total _ u_dups _ u_gaps <"$t/p1.total"
ktap_print_msg "phase 1: $u_total events in the snapshots and the live drain ($u_dups duplicates, $u_gaps missing); the sources wrote $e1 (refused $r1)"
[ "$u_dups" -eq 0 ] && [ "$u_gaps" -eq 0 ] && [ "$u_total" -eq "$e1" ] &&
	[ "$bad1" -eq 0 ] || ok=0
live_exact || ok=0
ktap_print_msg "at $(($(date +%s) - t0)) s"
ktap_test_result $ok "phase 1: every event written is in exactly one snapshot or the live drain"

# ---- Phase 2: the same with a reader of the live buffer
rbn_set tracing_on 1 || ktap_print_msg "$rbn_err"
rbn_set reset 1 || ktap_print_msg "$rbn_err"
ebusy=0
ktap_print_msg "phase 2: after a reset, all sources, rbtrace record splicing the live buffer, at least $per_phase snapshots over $phase_secs s"
rbn_record_start "$t/p2-live"
rbn_set sources all || ktap_print_msg "$rbn_err"
take_snapshots 2
p2_rc=$?
rbn_quiesce
rbn_record_stop
rec_rc=$?
check_snapshots 2
rbn_stat_table written read entries dropped overrun max_depth
src_sums >"$t/src2"
read -r _ e2 _ r2 bad2 <"$t/src2"
ktap_print_msg "sources: attempts events discarded refused bad-sources: $(cat "$t/src2")"

# ---- 5: rbtrace check of every snapshot; start gaps read by the live reader
ok=1
[ $p2_rc -eq 0 ] || ok=0
ktap_print_msg "phase 2: $(table_summary "$t/p2.table"); echo 1 refused with EBUSY $ebusy times"
keys "$t/p2-live" >"$t/p2-live.keys"
n2=0
covered=0
while read -r k rc ev hdr _; do
	n2=$((n2 + 1))
	keys "$t/p2-$k" >"$t/p2-$k.keys"
	[ "$hdr" = "$ev" ] || {
		ktap_print_msg "snapshot 2.$k: header says $hdr entries, $ev events drained"
		ok=0
	}
	[ "$rc" = 0 ] && [ "$ev" -gt 0 ] && continue
	if [ "$rc" = 1 ] && ! grep VIOLATION "$t/p2-$k.check" |
	   grep -qv 'events missing before seq'; then
		# the numbers missing inside the snapshot, per CPU
		awk '!started || $1 != c { started = 1; c = $1; last = $2; next }
		     { for (s = last + 1; s < $2; s++) print c, s; last = $2 }' \
			"$t/p2-$k.keys" >"$t/p2-$k.missing"
		m=$(wc -l <"$t/p2-$k.missing")
		f=$(grep -cxFf "$t/p2-$k.missing" "$t/p2-live.keys")
		if [ "$m" -gt 0 ] && [ "$f" -eq "$m" ]; then
			ktap_print_msg "snapshot 2.$k: $m sequence numbers missing, all read from the live buffer: $(tr '\n' ',' <"$t/p2-$k.missing")"
			covered=$((covered + 1))
			continue
		fi
		ktap_print_msg "snapshot 2.$k: $m missing, $f of them read from the live buffer"
	fi
	ktap_print_msg "snapshot 2.$k: rbtrace check exit $rc, $ev events"
	grep -m 5 VIOLATION "$t/p2-$k.check" | sed 's/^/# /'
	ok=0
done <"$t/p2.table"
[ "$n2" -ge "$per_phase" ] || ok=0
ktap_print_msg "snapshots with a gap the live reader covered: $covered"
ktap_print_msg "at $(($(date +%s) - t0)) s"
ktap_test_result $ok "phase 2: each of $n2 snapshots taken under a live reader passes rbtrace check"

# ---- 6: union of the live recording and the snapshots
ok=1
[ $rec_rc -eq 0 ] || ok=0
union "$t"/p2-*.keys >"$t/p2.union"
grep '^#' "$t/p2.union"
tail -n 1 "$t/p2.union" >"$t/p2.total"
read -r _ u_total _ u_dups _ u_gaps <"$t/p2.total"
live_n=$(wc -l <"$t/p2-live.keys")
ktap_print_msg "phase 2: $u_total events in the live recording ($live_n) and the snapshots ($((u_total - live_n))), $u_dups duplicates, $u_gaps missing; the sources wrote $((e2 - e1)) since the reset (refused $((r2 - r1)))"
[ "$u_dups" -eq 0 ] && [ "$u_gaps" -eq 0 ] && [ "$u_total" -eq $((e2 - e1)) ] &&
	[ "$bad2" -eq 0 ] || ok=0
[ "$live_n" -gt 0 ] && [ "$u_total" -gt "$live_n" ] || ok=0
live_exact || ok=0
ktap_print_msg "at $(($(date +%s) - t0)) s"
ktap_test_result $ok "phase 2: every event written is read once, from the live buffer or from a snapshot"

# ---- 7: a blocked reader is not ended by snapshots
ok=1
rbn_set tracing_on 1
rbn_set buffer_percent 100
dd if="$rbn_dir/per_cpu/cpu0/trace_pipe_raw" of="$t/blk" bs="$sub" count=1 \
	2>"$t/blk.err" &
dd_pid=$!
rbn_bg_add $dd_pid
rbn_wait_blocked $dd_pid "$rbn_wait_raw" || ok=0
i=0
while [ $i -lt 3 ] && [ $ok = 1 ]; do
	i=$((i + 1))
	snap_write 1 || { ktap_print_msg "echo 1: $rbn_err"; ok=0; }
	# every reader wakes and looks again
	rbn_set buffer_percent 100
	sleep 0.3
	rbn_wait_blocked $dd_pid "$rbn_wait_raw" 10 || ok=0
done
rbn_set tracing_on 0
w=0
while kill -0 $dd_pid 2>/dev/null && [ $w -lt 10 ]; do
	sleep 1
	w=$((w + 1))
done
if kill -0 $dd_pid 2>/dev/null; then
	ktap_print_msg "dd still blocked after tracing_on=0"
	ok=0
else
	wait $dd_pid
	rbn_bg_done $dd_pid
	ktap_print_msg "tracing_on=0 ended the read: $(stat -c %s "$t/blk") bytes"
fi
rbn_set buffer_percent 50
ktap_print_msg "at $(($(date +%s) - t0)) s"
ktap_test_result $ok "a blocked trace_pipe_raw reader stays blocked across snapshots, tracing_on=0 ends it"

# ---- 8: bad values change nothing
# A spare with hrtimer events, the live buffer with more, nothing writing.
rbn_set tracing_on 1
rbn_set sources hrtimer
sleep 1
snap_write 1 || ktap_print_msg "echo 1: $rbn_err"
sleep 1
rbn_set sources -all
sleep 1
state()
{
	md5sum <"$rbn_dir/snapshot" | cut -d ' ' -f 1
	for _c in $(rbn_cpus); do
		echo "cpu$_c $(rbn_stat "$_c" written) $(rbn_stat "$_c" entries)"
	done
}
state >"$t/state0"
ok=1
h=$(snap_header "$t/head8")
ktap_print_msg "spare: $h (entries written); live: $(sed 1d "$t/state0" | tr '\n' ' ')"
[ "${h%% *}" -gt 0 ] 2>/dev/null || ok=0
rbn_payload_long 64 1
for b in 3 -1 abc "" 1x " 1" 10 payload64; do
	if [ "$b" = payload64 ]; then
		rbn_write_file snapshot "$t/payload"
	else
		rbn_write snapshot "$b"
	fi
	rc=$?
	ktap_print_msg "echo '$b' > snapshot: $([ $rc -eq 0 ] && echo accepted || echo "$rbn_err")"
	[ $rc -ne 0 ] || ok=0
	case $rbn_err in
	*"Invalid argument"*) ;;
	*) ok=0 ;;
	esac
done
state >"$t/state1"
cmp -s "$t/state0" "$t/state1" || {
	ktap_print_msg "changed: $(diff "$t/state0" "$t/state1" | tr '\n' ' ')"
	ok=0
}
ktap_print_msg "at $(($(date +%s) - t0)) s"
ktap_test_result $ok "bad values refused with EINVAL, the spare and the live buffer unchanged"

# ---- 9: EBUSY while a snapshot file or trace is open for reading
ok=1
# busy_all FILE VALUES: with FILE open for reading, each echo VALUE fails
# with EBUSY
busy_all()
{
	exec 3<"$rbn_dir/$1"
	for _v in $2; do
		if snap_write "$_v"; then
			ktap_print_msg "$1 open: echo $_v accepted"
			ok=0
		else
			case $rbn_err in
			*busy*) ktap_print_msg "$1 open: echo $_v: $rbn_err" ;;
			*) ktap_print_msg "$1 open: echo $_v: $rbn_err (want EBUSY)"; ok=0 ;;
			esac
		fi
	done
	exec 3<&-
}
busy_all per_cpu/cpu0/snapshot_raw "0 1 2"
busy_all snapshot "0 1 2"
exec 3<"$rbn_dir/trace"
if snap_write 1; then
	ktap_print_msg "trace open: echo 1 accepted"
	ok=0
else
	ktap_print_msg "trace open: echo 1: $rbn_err"
	case $rbn_err in *busy*) ;; *) ok=0 ;; esac
fi
exec 3<&-
state >"$t/state2"
cmp -s "$t/state0" "$t/state2" || {
	ktap_print_msg "changed: $(diff "$t/state0" "$t/state2" | tr '\n' ' ')"
	ok=0
}
exec 3<"$rbn_dir/trace"
snap_write 2 || { ktap_print_msg "trace open: echo 2: $rbn_err"; ok=0; }
exec 3<&-
h=$(snap_header "$t/head9")
n=0
for c in $(rbn_cpus); do
	n=$((n + $(dd if="$rbn_dir/per_cpu/cpu$c/snapshot_raw" bs="$sub" 2>/dev/null | wc -c)))
done
ktap_print_msg "after echo 2: snapshot '$h', snapshot_raw $n bytes"
[ "$h" = "0 0" ] && [ "$n" -eq 0 ] || ok=0
snap_write 0 || { ktap_print_msg "echo 0: $rbn_err"; ok=0; }
h=$(snap_header "$t/head9")
ktap_print_msg "after echo 0: snapshot '$h'"
[ "$h" = none ] || ok=0
ktap_print_msg "at $(($(date +%s) - t0)) s"
ktap_test_result $ok "EBUSY while snapshot_raw, snapshot or (for 1) trace is open; then echo 2 clears, echo 0 frees"

# ---- 10: a new spare after resize, clock and mode changes
ok=1
# one_snap NAME: hrtimer events, echo 1, drain, rbtrace check
one_snap()
{
	rbn_set sources hrtimer
	sleep 1
	rbn_set sources -all
	sleep 0.5
	if ! snap_write 1; then
		ktap_print_msg "$1: echo 1: $rbn_err"
		ok=0
		return
	fi
	drain "$t/x-$1" 0 || ok=0
	"$RBTRACE" check "$t/x-$1" >"$t/x-$1.check" 2>&1
	_rc=$?
	_ev=$(rbn_check_events "$t/x-$1")
	_pages=0
	for _c in $(rbn_cpus); do
		_pages=$((_pages + $(stat -c %s "$t/x-$1/cpu$_c.raw") / sub))
	done
	ktap_print_msg "$1: snapshot of $_ev events in $_pages sub-buffers, rbtrace check exit $_rc; clock '$(rbn_clock)', mode '$(rbn_get timestamp_mode)', buffer_size_kb $(rbn_get buffer_size_kb)"
	if [ $_rc -ne 0 ] || [ "${_ev:-0}" -eq 0 ]; then
		grep -m 5 VIOLATION "$t/x-$1.check" | sed 's/^/# /'
		ok=0
	fi
}
one_snap before
rbn_set buffer_size_kb $((kb / 2)) || { ktap_print_msg "$rbn_err"; ok=0; }
one_snap resized
rbn_set trace_clock mono || { ktap_print_msg "$rbn_err"; ok=0; }
one_snap mono
rbn_set timestamp_mode absolute || { ktap_print_msg "$rbn_err"; ok=0; }
one_snap absolute
ktap_print_msg "at $(($(date +%s) - t0)) s"
ktap_test_result $ok "echo 1 after a resize, a clock and a mode change: a snapshot of the new buffer passes rbtrace check"

# ---- 11: rmmod with a spare and a snapshot_raw open
ok=1
rbn_set sources hrtimer
sleep 1
rbn_set sources -all
snap_write 1 || { ktap_print_msg "echo 1: $rbn_err"; ok=0; }
sh -c 'exec 3<"$1"; exec sleep 60' sh "$rbn_dir/per_cpu/cpu0/snapshot_raw" &
holder=$!
rbn_bg_add $holder
sleep 1
timeout -s KILL 30 rmmod "$rbn_name" >"$t/rmmod.err" 2>&1
rc=$?
if [ $rc -eq 0 ]; then
	ktap_print_msg "rmmod succeeded with snapshot_raw open"
	ok=0
else
	ktap_print_msg "rmmod with snapshot_raw open: $(tail -n 1 "$t/rmmod.err")"
	if ! rbn_loaded || [ ! -d "$rbn_dir" ]; then
		ktap_print_msg "module or directory gone"
		ok=0
	fi
fi
kill $holder 2>/dev/null
wait $holder 2>/dev/null
rbn_bg_done $holder
if rbn_unload; then
	ktap_print_msg "rmmod after the file was closed: done, with the spare allocated"
else
	ktap_print_msg "$rbn_err"
	ok=0
fi
ktap_print_msg "at $(($(date +%s) - t0)) s"
ktap_test_result $ok "rmmod refused while snapshot_raw is open, done once it is closed (spare allocated)"

ktap_finished
