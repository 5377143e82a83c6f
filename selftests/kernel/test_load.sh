#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test_load.sh - load and unload rbnest.ko; its debugfs files, their modes
# and default values; module parameters; bad parameters refused cleanly.

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

rbn_require insmod rmmod

ktap_print_header
ktap_set_plan 14

# The files of the README and their modes (per_cpu files are checked per CPU).
spec_files="trace:600 trace_pipe:400 buffer_size_kb:600 tracing_on:600
trace_clock:600 timestamp_mode:600 buffer_percent:600 reset:200 header_page:400
header_event:400 events/rbnest/sample/format:400 sources:600
kprobe_events:600 inject:600 bench:600 validate:600 snapshot:600
saved_cmdlines:400"
cpu_files="trace_pipe_raw:400 snapshot_raw:400 stats:400"

# ---- 1: load with the defaults
ok=0
if rbn_load; then
	ok=1
	ktap_print_msg "loaded $RBNEST_KO"
else
	ktap_print_msg "$rbn_err"
fi
ktap_test_result $ok "load with default parameters"
if [ $ok = 0 ]; then
	for t in "files and modes" "per_cpu directories" "root only" \
		 "default values" "unload"; do
		ktap_test_fail "$t (module not loaded)"
	done
fi

if [ $ok = 1 ]; then
	# ---- 2: every file with its mode
	ok=1
	nfiles=0
	for fm in $spec_files; do
		f=${fm%%:*}
		want=${fm##*:}
		nfiles=$((nfiles + 1))
		if [ ! -e "$rbn_dir/$f" ]; then
			ktap_print_msg "missing: $f"
			ok=0
			continue
		fi
		got=$(stat -c %a "$rbn_dir/$f")
		if [ "$got" != "$want" ]; then
			ktap_print_msg "$f: mode $got, want $want"
			ok=0
		fi
	done
	for cpu in $(rbn_cpus); do
		for fm in $cpu_files; do
			f=per_cpu/cpu$cpu/${fm%%:*}
			want=${fm##*:}
			nfiles=$((nfiles + 1))
			if [ ! -e "$rbn_dir/$f" ]; then
				ktap_print_msg "missing: $f"
				ok=0
				continue
			fi
			got=$(stat -c %a "$rbn_dir/$f")
			if [ "$got" != "$want" ]; then
				ktap_print_msg "$f: mode $got, want $want"
				ok=0
			fi
		done
	done
	ktap_print_msg "$nfiles files of the README checked"
	ktap_test_result $ok "every file of the README present with its mode"

	# ---- 3: a per_cpu directory for every online CPU
	ok=1
	online=$(rbn_online_cpus | tr '\n' ' ')
	dirs=$(rbn_cpus | tr '\n' ' ')
	for cpu in $online; do
		[ -d "$rbn_dir/per_cpu/cpu$cpu" ] || {
			ktap_print_msg "no per_cpu/cpu$cpu"
			ok=0
		}
	done
	[ -n "$dirs" ] || ok=0
	ktap_print_msg "online CPUs: $online; per_cpu directories: $dirs"
	ktap_test_result $ok "a per_cpu directory for every online CPU"

	# ---- 4: root only: no group or other permission bits on any file
	ok=1
	n=0
	bad=0
	find "$rbn_dir" -type f >"$rbn_tmp/files"
	while read -r f; do
		n=$((n + 1))
		m=$(stat -c %a "$f")
		case $m in
		?00) ;;
		*)
			ktap_print_msg "$f: mode $m"
			bad=$((bad + 1))
			ok=0
			;;
		esac
	done <"$rbn_tmp/files"
	[ $n -gt 0 ] || ok=0
	ktap_print_msg "$n files, $bad with group/other bits"
	ktap_test_result $ok "root only: no group/other bits"

	# ---- 5: default values
	ok=1
	v=$(rbn_get buffer_size_kb)
	ktap_print_msg "buffer_size_kb: '$v' (want 1024)"
	[ "$v" = 1024 ] || ok=0
	v=$(rbn_get tracing_on)
	ktap_print_msg "tracing_on: '$v' (want 1)"
	[ "$v" = 1 ] || ok=0
	v=$(rbn_get trace_clock)
	ktap_print_msg "trace_clock: '$v' (want [local] and mono boot global)"
	[ "$(rbn_clock)" = local ] || ok=0
	for c in mono boot global; do
		echo " $v " | grep -q " $c " || ok=0
	done
	v=$(rbn_get timestamp_mode)
	ktap_print_msg "timestamp_mode: '$v' (want '[delta] absolute')"
	[ "$v" = "[delta] absolute" ] || ok=0
	v=$(rbn_get buffer_percent)
	ktap_print_msg "buffer_percent: '$v' (want 50)"
	[ "$v" = 50 ] || ok=0
	v=$(rbn_get validate)
	ktap_print_msg "validate: '$v' (want 0)"
	[ "$v" = 0 ] || ok=0
	non=$(rbn_sources_state | awk '$2 != "off"' | wc -l)
	ns=$(rbn_sources_state | wc -l)
	ktap_print_msg "sources: $ns, $non not off (want 0)"
	[ "$ns" -gt 0 ] && [ "$non" -eq 0 ] || ok=0
	for s in task hrtimer softirq irq_work nmi tp_irq tp_softirq tp_hrtimer \
		 tp_nmi tp_sched kprobes; do
		[ -n "$(rbn_source_field $s state)" ] || {
			ktap_print_msg "source $s not listed"
			ok=0
		}
	done
	armed=$(awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^armed=[1-9]/) n++ }
		     END { print n + 0 }' "$rbn_dir/inject")
	nl=$(grep -c 'armed=' "$rbn_dir/inject")
	# enum rbn_label has 70 (LABELS.md); test_inject checks the names
	ktap_print_msg "inject: $nl labels, $armed armed (want 70, 0)"
	[ "$nl" -eq 70 ] && [ "$armed" -eq 0 ] || ok=0
	nk=$(grep -c . "$rbn_dir/kprobe_events")
	ktap_print_msg "kprobe_events: $nk lines (want 0)"
	[ "$nk" -eq 0 ] || ok=0
	sub=$(rbn_subbuf_size)
	ktap_print_msg "header_page: sub-buffer of ${sub:-?} bytes"
	case $sub in
	4096 | 8192 | 16384 | 65536) ;;
	*) ok=0 ;;
	esac
	# Printed from the structure now, as tracefs prints its own: with
	# the default sub-buffer it must be the kernel's header_page byte for
	# byte where tracefs is there; else, on x86_64, the text of old (the
	# signedness of char is the kernel's: unsigned since 6.2).
	kfile=
	for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
		if [ -r "$d/events/header_page" ]; then
			kfile=$d/events/header_page
			break
		fi
	done
	if [ -n "$kfile" ] && [ "$sub" = 4096 ]; then
		if cmp -s "$kfile" "$rbn_dir/header_page"; then
			ktap_print_msg "header_page: the kernel's own ($kfile), byte for byte"
		else
			ktap_print_msg "header_page differs from the kernel's own ($kfile):"
			diff "$kfile" "$rbn_dir/header_page" | sed 's/^/# /'
			ok=0
		fi
	elif [ "$(uname -m)" = x86_64 ] && [ -n "$sub" ]; then
		for cs in 0 1; do
			{
				printf '\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n'
				printf '\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n'
				printf '\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n'
				printf '\tfield: char data;\toffset:16;\tsize:%u;\tsigned:%u;\n' \
					$((sub - 16)) $cs
			} >"$rbn_tmp/header_page.want$cs"
		done
		if cmp -s "$rbn_tmp/header_page.want0" "$rbn_dir/header_page" ||
		   cmp -s "$rbn_tmp/header_page.want1" "$rbn_dir/header_page"; then
			ktap_print_msg "header_page: the x86_64 text, byte for byte"
		else
			ktap_print_msg "header_page differs from the x86_64 text:"
			sed 's/^/# /' "$rbn_dir/header_page"
			ok=0
		fi
	fi
	fmt=$rbn_dir/events/rbnest/sample/format
	if ! grep -q '^name: sample$' "$fmt" || ! grep -q '^ID: 1$' "$fmt" ||
	   ! grep -q 'field:unsigned long long seq;' "$fmt"; then
		ktap_print_msg "format does not describe rbnest:sample"
		ok=0
	fi
	if ! grep -q 'time_stamp : type == 31' "$rbn_dir/header_event"; then
		ktap_print_msg "header_event is not RBN_HEADER_EVENT"
		ok=0
	fi
	for cpu in $(rbn_cpus); do
		for f in entries written overrun commit_overrun dropped read \
			 bytes oldest_ts now_ts ts_fast ts_abs ts_slow ts_zero \
			 ts_extend max_depth recursion pages_touched ts_clock_back \
			 discarded; do
			v=$(rbn_stat "$cpu" $f)
			case $v in
			'' | *[!0-9]*)
				ktap_print_msg "cpu$cpu stats: no number for $f"
				ok=0
				;;
			esac
		done
	done
	ktap_print_msg "stats: written $(rbn_stat_sum written) entries $(rbn_stat_sum entries) (sources off)"
	ktap_test_result $ok "default values read back"
	base_sub=$sub

	# ---- 6: unload
	ok=0
	if rbn_unload; then
		ok=1
		[ -d /sys/module/"$rbn_name" ] && {
			ktap_print_msg "/sys/module/$rbn_name still there"
			ok=0
		}
	else
		ktap_print_msg "$rbn_err"
	fi
	ktap_print_msg "after rmmod: $rbn_dir $([ -d "$rbn_dir" ] && echo present || echo absent)"
	ktap_test_result $ok "unload: no directory left"
fi

# ---- 7..12: bad parameters fail and leave nothing behind
for p in buffer_size_kb=0 subbuf_order=9 trace_clock=bogus sources=bogus \
	 timestamp_mode=bogus cmdlines_size=2000; do
	ok=1
	rbn_unload >/dev/null 2>&1
	if insmod "$RBNEST_KO" "$p" >"$rbn_tmp/insmod.err" 2>&1; then
		ktap_print_msg "insmod $p succeeded"
		ok=0
	else
		ktap_print_msg "insmod $p: $(tail -n 1 "$rbn_tmp/insmod.err")"
	fi
	if rbn_loaded || [ -d "$rbn_dir" ] || [ -d /sys/module/"$rbn_name" ]; then
		ktap_print_msg "left behind: $(rbn_loaded && echo 'module ')$([ -d "$rbn_dir" ] && echo "$rbn_dir")"
		ok=0
		rbn_unload >/dev/null 2>&1
	fi
	ktap_test_result $ok "bad parameter $p: load fails, nothing left"
done

# ---- 13: parameters at load time show in the files
ok=1
if rbn_load buffer_size_kb=256 subbuf_order=1 overwrite=1 trace_clock=mono \
	    sources=task buffer_percent=10 timestamp_mode=absolute; then
	v=$(rbn_get buffer_size_kb)
	ktap_print_msg "buffer_size_kb=256: reads '$v'"
	[ "$v" = 256 ] || ok=0
	v=$(rbn_clock)
	ktap_print_msg "trace_clock=mono: current '$v'"
	[ "$v" = mono ] || ok=0
	v=$(rbn_get timestamp_mode)
	ktap_print_msg "timestamp_mode=absolute: reads '$v'"
	[ "$v" = "delta [absolute]" ] || ok=0
	v=$(rbn_get buffer_percent)
	ktap_print_msg "buffer_percent=10: reads '$v'"
	[ "$v" = 10 ] || ok=0
	on=$(rbn_sources_state | awk '$2 == "on" { print $1 }' | tr '\n' ' ')
	ktap_print_msg "sources=task: on: $on"
	[ "$on" = "task " ] || ok=0
	sub=$(rbn_subbuf_size)
	ktap_print_msg "subbuf_order=1: sub-buffer of ${sub:-?} bytes (order 0: ${base_sub:-?})"
	if [ -n "${base_sub:-}" ]; then
		[ "${sub:-0}" -eq $((2 * base_sub)) ] || ok=0
	else
		[ -n "$sub" ] || ok=0
	fi
	if [ -r /sys/module/"$rbn_name"/parameters/overwrite ]; then
		v=$(cat /sys/module/"$rbn_name"/parameters/overwrite)
		ktap_print_msg "parameters/overwrite: '$v'"
		[ "$v" = Y ] || ok=0
	fi
	sleep 1
	w=$(rbn_stat_sum written)
	ktap_print_msg "task source on for 1 s: $w events written"
	[ "$w" -gt 0 ] || ok=0
else
	ktap_print_msg "$rbn_err"
	ok=0
fi
ktap_test_result $ok "parameters at load time read back"

# ---- 14: unload with a writer running
ok=0
if rbn_unload; then
	ok=1
else
	ktap_print_msg "$rbn_err"
fi
ktap_test_result $ok "unload with the task source on"

ktap_finished
