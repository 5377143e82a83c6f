#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_recordings.sh - check, report and export on broken copies of a good
# recording, and the numbers and outputs of rbtrace's command line.
#
# Usage: test_recordings.sh RBTRACE RBGEN
#
# RBGEN writes two good recordings of the userspace core with a manifest
# (producer/consumer and overwrite mode). Each row of the first table
# breaks a copy of one in one way and says, for each of check, report and
# export, the exit status wanted and a fragment its output (stdout and
# stderr) must hold: the three commands take and refuse the same
# recordings (only check compares the events read with the module's
# counters, as it alone checks the other invariants). Each row of the
# second table is a command line with the exit status and message
# wanted. One TAP line per command of a row; a count at the end.

set -uo pipefail

rbtrace=${1:-}
rbgen=${2:-}

echo "KTAP version 1"
if [ ! -x "$rbtrace" ] || [ ! -x "$rbgen" ]; then
	echo "1..1"
	echo "not ok 1 rbtrace '$rbtrace' or rbgen '$rbgen' is not built"
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for mode in nest overwrite; do
	if ! "$rbgen" $mode "$tmp/$mode" >"$tmp/gen.$mode" 2>&1; then
		echo "1..1"
		sed 's/^/# /' "$tmp/gen.$mode"
		echo "not ok 1 rbgen $mode"
		exit 1
	fi
done

# ---- breakages: each function breaks the copy REC ----------------------

man_set() {	# REC KEY VALUE: the line "KEY: ..." becomes "KEY: VALUE"
	sed -i "s|^$2: .*|$2: $3|" "$1/manifest"
}

stat_set() {	# REC WHEN CPU NAME VALUE: one counter of a stats line
	sed -i "/^$2.stats.cpu$3: /s/ $4=[0-9]*/ $4=$5/" "$1/manifest"
}

no_events() {	# every page of every CPU file emptied (commit 0)
	python3 - "$1"/cpu*.raw <<'EOF'
import sys
for path in sys.argv[1:]:
    d = bytearray(open(path, 'rb').read())
    for p in range(0, len(d), 4096):
        d[p + 8:p + 4096] = bytes(4096 - 8)
    open(path, 'wb').write(d)
EOF
}

brk_good() { :; }
brk_no_manifest() { rm "$1/manifest"; }
brk_missing_cpu() { rm "$1/cpu1.raw"; }
brk_shorter() { truncate -s -4096 "$1/cpu0.raw"; }
brk_longer() { tail -c 4096 "$1/cpu0.raw" >>"$1/cpu0.raw"; }
brk_partial() { truncate -s -100 "$1/cpu1.raw"; }
brk_extra_cpu() { cp "$1/cpu1.raw" "$1/cpu2.raw"; }
brk_cpu_dir() { mkdir "$1/cpu3.raw"; }
brk_no_events() { no_events "$1"; }
brk_no_events_none() { no_events "$1"; man_set "$1" sources none; }
brk_no_events_off() { no_events "$1"; man_set "$1" tracing_on 0; }
brk_no_events_plain() { no_events "$1"; rm "$1/manifest"; }
brk_no_end() { sed -i '/^end: /d' "$1/manifest"; }
brk_read_off() {
	r=$(sed -n 's/^end.stats.cpu0: .* read=\([0-9]*\).*/\1/p' "$1/manifest")
	stat_set "$1" end 0 read $((r + 5))
}
brk_read_short() {
	r=$(sed -n 's/^end.stats.cpu1: .* read=\([0-9]*\).*/\1/p' "$1/manifest")
	stat_set "$1" end 1 read $((r - 3))
}
brk_lost_off() { man_set "$1" cpu0.lost 7; }
brk_overrun_low() { stat_set "$1" end 0 overrun 1; }
brk_overrun_none() {
	stat_set "$1" end 0 overrun 0
	man_set "$1" cpu0.lost 0
}
brk_reset() { stat_set "$1" start 0 read 999999999; }
brk_no_stats() { sed -i '/^start.stats.cpu1: /d' "$1/manifest"; }
brk_garbage() { echo hello >"$1/manifest"; }
brk_newer() { man_set "$1" rbtrace-manifest 2; }
brk_bad_number() { man_set "$1" cpu0.bytes 12x; }
brk_unlisted() { echo "cpu5.bytes: 0" >>"$1/manifest"; }
brk_subbuf() { man_set "$1" subbuf_size 8192; }
brk_bad_format() {
	sed -i 's/^format:/formt:/' "$1/events/rbnest/sample/format"
}
brk_no_format() { rm "$1/events/rbnest/sample/format"; }
brk_no_header_page() { rm "$1/header_page"; }
brk_bad_header_page() { sed -i 's/field: u64 timestamp;/field: u64 stamp;/' "$1/header_page"; }
brk_empty_dir() { rm -rf "$1" && mkdir "$1"; }
brk_not_dir() { rm -rf "$1" && echo x >"$1"; }
brk_no_dir() { rm -rf "$1"; }

# NAME BASE CHECK REPORT EXPORT: each of the last three is STATUS:FRAGMENT
# (the fragment may be empty: only the status is wanted)
table() {
	cat <<'ROWS'
good		nest	0:: OK$			0: cpu=			0:2 CPUs,
no_manifest	nest	0:has no manifest	0:has no manifest		0:has no manifest
missing_cpu	nest	1:cpu1.raw: missing	1:cpu1.raw: missing		1:cpu1.raw: missing
shorter		nest	1:shorter than rbtrace	1:shorter than rbtrace		1:shorter than rbtrace
longer		nest	1:longer than rbtrace	1:longer than rbtrace		1:longer than rbtrace
partial		nest	2:cpu1.raw: truncated	2:cpu1.raw: truncated		2:cpu1.raw: truncated
extra_cpu	nest	1:cpu2.raw: not in the manifest	1:cpu2.raw: not in the manifest	1:cpu2.raw: not in the manifest
cpu_dir		nest	2:cpu3.raw: not a regular	2:cpu3.raw: not a regular	2:cpu3.raw: not a regular
no_events	nest	1:holds no event	1:holds no event		1:holds no event
no_events_none	nest	1:no source was on	1:no source was on		1:no source was on
no_events_off	nest	1:tracing was off	1:tracing was off		1:tracing was off
no_events_plain	nest	1:no cpuN.raw file has one	1:no cpuN.raw file has one	1:no cpuN.raw file has one
no_end		nest	1:did not finish	1:did not finish		1:did not finish
read_off	nest	1:5 missing: taken by another reader	0: cpu=	0:2 CPUs,
read_short	nest	1:3 too many	0: cpu=			0:2 CPUs,
lost_off	nest	1:saw 7 lost events	0: cpu=			0:2 CPUs,
overrun_low	overwrite	1:more than the module ever overwrote	0: cpu=	0:2 CPUs,
overrun_none	overwrite	1:but the module overwrote none	0: cpu=	0:2 CPUs,
reset		nest	0:counters went back	0: cpu=			0:2 CPUs,
no_stats	nest	0:no stats of the module at the start	0: cpu=	0:2 CPUs,
garbage		nest	2:manifest: line 1: not "rbtrace-manifest	2:manifest: line 1: not "rbtrace-manifest	2:manifest: line 1: not "rbtrace-manifest
newer		nest	2:reads format 1 only	2:reads format 1 only		2:reads format 1 only
bad_number	nest	2:cpu0.bytes '12x'	2:cpu0.bytes '12x'		2:cpu0.bytes '12x'
unlisted	nest	2:CPU 5 is not in	2:CPU 5 is not in		2:CPU 5 is not in
subbuf		nest	1:not the header_page of this	1:not the header_page of this	1:not the header_page of this
bad_format	nest	2:format: line 3: not "format:"	2:format: line 3: not "format:"	2:format: line 3: not "format:"
no_format	nest	2:not a whole recording	2:not a whole recording		2:not a whole recording
no_header_page	nest	2:not a recording (no header_page)	2:not a recording (no header_page)	2:not a recording (no header_page)
bad_header_page	nest	2:header_page: line 1:	2:header_page: line 1:		2:header_page: line 1:
empty_dir	nest	2:not a recording (no header_page)	2:not a recording (no header_page)	2:not a recording (no header_page)
not_dir		nest	2:not a directory	2:not a directory		2:not a directory
no_dir		nest	2:No such file or directory: give	2:No such file or directory: give	2:No such file or directory: give
ROWS
}

# ---- the command lines: STATUS, FRAGMENT, ARGS (FAKE: a module directory
# made of files, REC: a copy of the good recording, OUT: a new directory)
cli_table() {
	cat <<'ROWS'
2	bad time 'nan': not a decimal number	record -d FAKE -o OUT -t nan
2	bad time 'inf': not a decimal number	record -d FAKE -o OUT -t inf
2	bad time '-5': not a decimal number	record -d FAKE -o OUT -t -5
2	bad time '1e3': not a number of seconds	record -d FAKE -o OUT -t 1e3
2	bad time '0': not above 0	record -d FAKE -o OUT -t 0
2	bad time '0x10': not a number of seconds	record -d FAKE -o OUT -t 0x10
2	bad time '1.5s': not a number of seconds	record -d FAKE -o OUT -t 1.5s
2	bad time '99999999': more than a year	record -d FAKE -o OUT -t 99999999
2	bad size '-5': not a decimal number	record -d FAKE -o OUT -s -5
2	bad size '17179869185G': too large	record -d FAKE -o OUT -s 17179869185G
2	bad size '18446744073709551616': too large	record -d FAKE -o OUT -s 18446744073709551616
2	bad size '10Q': not a number of bytes	record -d FAKE -o OUT -s 10Q
2	bad size '5KB': characters after the K	record -d FAKE -o OUT -s 5KB
2	bad size '0': zero bytes	record -d FAKE -o OUT -s 0
2	bad size ' 5': not a decimal number	record -d FAKE -o OUT -s  5
2	bad CPU '-1': not a decimal number	record -d FAKE -o OUT -c -1
2	bad CPU '1x': not a decimal number (trailing	record -d FAKE -o OUT -c 1x
2	bad CPU '99999': above 1023	record -d FAKE -o OUT -c 99999
2	bad CPU list 'nan': not a decimal number	report -c nan REC
2	bad CPU list '+1': not a decimal number	report --cpu +1 REC
2	bad CPU list '99999999999999999999': too large	report -c 99999999999999999999 REC
2	bad interval 'inf': not a decimal number	stream -d FAKE -i inf
2	bad interval '-1': not a decimal number	stream -d FAKE -i -1
2	-o -: a recording is a directory	record -d FAKE -o -
2	already holds a recording: give another directory, or --force	record -d FAKE -o REC
0	2 CPUs, 70 pages	record -d FAKE -o REC --force
2	not part of a recording: not emptied	record -d FAKE -o FOREIGN --force
2	is rbnest.ko loaded and debugfs mounted at /sys/kernel/debug?	record -d NODIR -o OUT
2	is rbnest.ko loaded and debugfs mounted at /sys/kernel/debug?	stream -d NODIR
2	standard output: write error: No space left on device	report REC >FULL
2	standard output: write error: No space left on device	check REC >FULL
2	standard output: write error	export REC -o - >FULL
2	write error	export REC -o FULL
0	rbtrace 	--version
ROWS
}

nr_rows=$(table | wc -l)
nr_cli=$(cli_table | wc -l)
# three per row, the command lines, and three about what the good ones did
echo "1..$((nr_rows * 3 + nr_cli + 4))"
n=0
fails=0

result() {	# OK|FAIL DESCRIPTION
	n=$((n + 1))
	if [ "$1" = ok ]; then
		echo "ok $n $2"
	else
		fails=$((fails + 1))
		echo "not ok $n $2"
	fi
}

# run OUTFILE ARGS...: rbtrace with stdout and stderr into OUTFILE
run() {
	_o=$1
	shift
	"$rbtrace" "$@" >"$_o" 2>&1
}

while IFS=$'\t' read -r -a f; do
	# tabs in a row may come in runs: drop the empty fields
	row=()
	for x in "${f[@]}"; do
		[ -n "$x" ] && row+=("$x")
	done
	name=${row[0]} base=${row[1]}
	rec=$tmp/rec-$name
	rm -rf "$rec"
	cp -r "$tmp/$base" "$rec"
	"brk_$name" "$rec"
	i=2
	for cmd in check report export; do
		want=${row[$i]}
		st=${want%%:*}
		frag=${want#*:}
		i=$((i + 1))
		out=$tmp/out.$name.$cmd
		case $cmd in
		export) run "$out" export "$rec" -o "$tmp/$name.dat" ;;
		*) run "$out" $cmd "$rec" ;;
		esac
		rc=$?
		ok=ok
		[ $rc -eq "$st" ] || ok=fail
		if [ -n "$frag" ]; then
			# a fragment ending in '$' ends a line
			if [ "${frag%\$}" != "$frag" ]; then
				grep -q -- "${frag%\$}\$" "$out" || ok=fail
			else
				grep -qF -- "$frag" "$out" || ok=fail
			fi
		fi
		if [ $ok != ok ]; then
			echo "# $name: rbtrace $cmd: exit $rc, wanted $st and '$frag'; it said:"
			grep -v '^ *[0-9]' "$out" | grep -v ' sample: ' |
				head -n 5 | sed 's/^/#   /'
		fi
		result $ok "$name: $cmd exits $st${frag:+ saying '$frag'}"
	done
done < <(table)

# The good recording: check compared each CPU's events with the counters;
# report printed one line per event; export wrote them all.
ok=ok
grep -q '^manifest: cpu 0: [0-9]* events read = 0 in the buffer at the start + [0-9]* written - 0 overwritten - 0 left at the end$' \
	"$tmp/out.good.check" || ok=fail
result $ok "good: check compares the events read with the module's counters"
ev=$(sed -n 's/^events: //p' "$tmp/out.good.check")
lines=$(grep -c ' sample: ' "$tmp/out.good.report")
recs=$(sed -n 's/.*, \([0-9]*\) records$/\1/p' "$tmp/out.good.export")
echo "# good: check $ev events, report $lines lines, export $recs records"
[ -n "$ev" ] && [ "$lines" = "$ev" ] && [ "$recs" = "$ev" ] && ok=ok || ok=fail
result $ok "good: check, report and export see the same events"
# without a manifest: the warning is the only difference
ok=ok
grep -v 'has no manifest' "$tmp/out.no_manifest.report" |
	cmp -s - "$tmp/out.good.report" || ok=fail
result $ok "no_manifest: report prints what it prints with one"

# ---- command lines ---------------------------------------------------------

fake=$tmp/fake
for cpu in 0 1; do
	mkdir -p "$fake/per_cpu/cpu$cpu"
	cp "$tmp/overwrite/cpu$cpu.raw" "$fake/per_cpu/cpu$cpu/trace_pipe_raw"
done
cp -r "$tmp/overwrite/events" "$tmp/overwrite/header_page" \
	"$tmp/overwrite/header_event" "$fake/"
mkdir -p "$tmp/foreign"
cp -r "$tmp/nest/." "$tmp/foreign/"
echo "my notes" >"$tmp/foreign/notes.txt"

while IFS=$'\t' read -r st frag args; do
	rm -rf "$tmp/cli-rec" "$tmp/cli-out"
	cp -r "$tmp/nest" "$tmp/cli-rec"
	redir=
	case $args in
	*' >FULL') redir=/dev/full; args=${args% >FULL} ;;
	esac
	args=${args//FAKE/$fake}
	args=${args//REC/$tmp/cli-rec}
	args=${args//OUT/$tmp/cli-out}
	args=${args//FOREIGN/$tmp/foreign}
	args=${args//NODIR/$tmp/no-such-dir}
	args=${args//FULL//dev/full}
	# "-s  5": an argument with a blank in front
	read -r -a argv <<<"$args"
	[ "$args" != "${args/-s  5/}" ] && argv=(record -d "$fake" -o "$tmp/cli-out" -s " 5")
	out=$tmp/out.cli
	if [ -n "$redir" ]; then
		"$rbtrace" "${argv[@]}" >"$redir" 2>"$out"
	else
		"$rbtrace" "${argv[@]}" >"$out" 2>&1
	fi
	rc=$?
	ok=ok
	[ $rc -eq "$st" ] && grep -qF -- "$frag" "$out" || ok=fail
	# --force: the recording replaced, and it checks
	if [ $ok = ok ] && [ "${argv[*]}" != "${argv[*]/--force/}" ] && [ $st = 0 ]; then
		if [ -e "$tmp/cli-rec/cpu0.raw" ] &&
		   "$rbtrace" check -q "$tmp/cli-rec" >"$tmp/out.force" 2>&1 &&
		   cmp -s "$tmp/cli-rec/cpu1.raw" "$tmp/overwrite/cpu1.raw"; then
			:
		else
			echo "# --force: the recording in the directory is not the new one"
			sed 's/^/#   /' "$tmp/out.force"
			ok=fail
		fi
	fi
	# a refused --force leaves the directory as it was
	case $args in
	*foreign*) diff -r -x notes.txt "$tmp/nest" "$tmp/foreign" >/dev/null ||
		{ echo "# --force removed files it refused"; ok=fail; } ;;
	esac
	if [ $ok != ok ]; then
		echo "# rbtrace $args: exit $rc, wanted $st and '$frag'; it said:"
		head -n 5 "$out" | sed 's/^/#   /'
	fi
	result $ok "rbtrace $args: exit $st, '$frag'"
done < <(cli_table)

# export -o -: the same bytes as into a file, the summary on stderr
ok=ok
"$rbtrace" export "$tmp/nest" -o - >"$tmp/stdout.dat" 2>"$tmp/stdout.err" || ok=fail
"$rbtrace" export "$tmp/nest" -o "$tmp/file.dat" >/dev/null 2>&1 || ok=fail
cmp -s "$tmp/stdout.dat" "$tmp/file.dat" || ok=fail
grep -q '^standard output: 2 CPUs' "$tmp/stdout.err" || ok=fail
echo "# export -o -: $(wc -c <"$tmp/stdout.dat") bytes, $(cat "$tmp/stdout.err")"
result $ok "export -o -: the trace-cmd file on standard output"

echo "# $n test cases, $fails failed ($nr_rows recordings x 3 commands, $nr_cli command lines)"
[ $fails -eq 0 ]
