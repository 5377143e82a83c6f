#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_rbtrace.sh - tools/rbtrace on recordings written by the real core.
#
# Usage: test_rbtrace.sh RBTRACE RBGEN
#
# RBGEN writes recordings from the userspace build of rb_core.c (nested
# writers injected at every label, clock jumps, a clock across 2^59,
# overwrite mode with loss, writers nested by POSIX timer signals). "rbtrace
# check" must pass on them, and fail,
# naming the file, CPU, page and offset, on copies corrupted on purpose:
# a time moved backwards, an event cut out of a page, a missed-events
# count removed; bad input (a truncated file, a commit past the page, a
# length past the commit, a broken format file, a missing CPU file) must
# exit 2 with the file named; randomly mutated pages must never crash it.
# "rbtrace report" must print one line per event, and byte for byte what
# trace-cmd report prints of the export (options, task names from
# saved_cmdlines, dropped-events lines). check's summary: a legend for
# every column, violations on stderr, --json. check, report and export
# must stay within a fixed memory budget on a recording 70 times larger
# (/usr/bin/time). "rbtrace record" is run
# on a module directory made of files and of FIFOs. "rbtrace stream" must
# find on a module directory made of a recording's files what check finds
# in the recording, and the same violations. Output is KTAP.
#
# RBT_MUTATIONS: mutated copies of each of two recordings (default 40);
# make check's ASan run makes 10, the fuzz smoke mutating pages far more.

set -uo pipefail

rbtrace=${1:-}
rbgen=${2:-}
nr_tests=43

echo "KTAP version 1"
echo "1..$nr_tests"
if [ ! -x "$rbtrace" ] || [ ! -x "$rbgen" ]; then
	echo "# rbtrace '$rbtrace' or rbgen '$rbgen' is not built"
	for i in $(seq 1 $nr_tests); do
		echo "not ok $i not built"
	done
	exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nr=0
nr_fail=0

result() {
	nr=$((nr + 1))
	if [ "$1" = ok ]; then
		echo "ok $nr $2"
	else
		nr_fail=$((nr_fail + 1))
		echo "not ok $nr $2"
	fi
}

diag() {
	sed 's/^/# /'
}

# Page surgery on a copy of a recording: corrupt.py MODE FILE [ARGS].
# Prints the page (and offset) it changed.
cat >"$tmp/corrupt.py" <<'EOF'
import struct, sys

PAGE = 4096
mode, path = sys.argv[1], sys.argv[2]
d = bytearray(open(path, 'rb').read())
npages = len(d) // PAGE


def entries(p):
    """(offset, type_len, delta, length) of every entry of page p"""
    base = p * PAGE + 16
    commit = struct.unpack_from('<Q', d, p * PAGE + 8)[0] & ((1 << 30) - 1)
    off, out = 0, []
    while off < commit:
        h = struct.unpack_from('<I', d, base + off)[0]
        t, delta = h & 31, h >> 5
        if t == 29 and not delta:
            break
        if t in (30, 31):
            n = 8
        elif t in (0, 29):
            n = struct.unpack_from('<I', d, base + off + 4)[0] + 4
        else:
            n = t * 4 + 4
        out.append((off, t, delta, n))
        off += n
    return out, commit


def put_hdr(p, off, t, delta):
    struct.pack_into('<I', d, p * PAGE + 16 + off, (delta << 5) | t)


if mode == 'backwards':
    # a page whose first entry is a plain event: move its stamp to 5 ms
    # before the stamp of the page before it, so before every event of
    # that page (the clock of the recordings jumps by seconds, so a fixed
    # step back could still land after the last of them)
    for p in range(3, npages):
        ev, commit = entries(p)
        prev = struct.unpack_from('<Q', d, (p - 1) * PAGE)[0]
        if ev and 1 <= ev[0][1] <= 28 and prev > 5000000:
            struct.pack_into('<Q', d, p * PAGE, prev - 5000000)
            print(p, ev[0][0])
            break
    else:
        sys.exit('no page to corrupt')
elif mode == 'cut':
    # cut a plain event out of the middle of a page; its delta goes to
    # the event after it, so the times of the others do not change
    done = False
    for p in range(2, npages):
        ev, commit = entries(p)
        for i in range(2, len(ev) - 2):
            a, b, c = ev[i - 1], ev[i], ev[i + 1]
            if not all(1 <= x[1] <= 28 for x in (a, b, c)):
                continue
            if b[2] + c[2] >= 1 << 27:
                continue
            base = p * PAGE + 16
            put_hdr(p, c[0], c[1], b[2] + c[2])
            d[base + b[0]:base + commit - b[3]] = \
                d[base + c[0]:base + commit]
            d[base + commit - b[3]:base + commit] = bytes(b[3])
            cw = struct.unpack_from('<Q', d, p * PAGE + 8)[0]
            struct.pack_into('<Q', d, p * PAGE + 8, cw - b[3])
            print(p, b[0])
            done = True
            break
        if done:
            break
    else:
        sys.exit('no event to cut')
elif mode == 'unmiss':
    # clear the missed-events flags and count of a page whose neighbours
    # have no flag
    def flags(p):
        return struct.unpack_from('<Q', d, p * PAGE + 8)[0] >> 30 & 3
    for p in range(1, npages - 1):
        if flags(p) == 3 and not flags(p - 1) and not flags(p + 1):
            cw = struct.unpack_from('<Q', d, p * PAGE + 8)[0]
            commit = cw & ((1 << 30) - 1)
            struct.pack_into('<Q', d, p * PAGE + 8, commit)
            struct.pack_into('<Q', d, p * PAGE + 16 + commit, 0)
            print(p)
            break
    else:
        sys.exit('no page with a stored count between plain pages')
elif mode == 'unflag':
    # clear RBN_EV_CLOCK_BACK (0x40) in the flags byte of the payload
    # (offset 31) of the first plain event that has it
    done = False
    for p in range(npages):
        ev, commit = entries(p)
        for off, t, delta, n in ev:
            at = p * PAGE + 16 + off + 4 + 31
            if 1 <= t <= 28 and n >= 40 and d[at] & 0x40:
                d[at] &= ~0x40
                print(p, off)
                done = True
                break
        if done:
            break
    else:
        sys.exit('no clock-back event')
elif mode == 'commit':
    p = int(sys.argv[3])
    struct.pack_into('<Q', d, p * PAGE + 8, 5000)
    print(p)
elif mode == 'length':
    # the first plain event of page p becomes a type 0 event running past
    p = int(sys.argv[3])
    ev, commit = entries(p)
    off = [e for e in ev if 1 <= e[1] <= 28][0][0]
    put_hdr(p, off, 0, 0)
    struct.pack_into('<I', d, p * PAGE + 16 + off + 4, 40000)
    print(p, off)
else:
    sys.exit('unknown mode ' + mode)
open(path, 'wb').write(d)
EOF

corrupt() {
	python3 "$tmp/corrupt.py" "$@"
}

# events: N from "rbtrace check"
events_of() {
	sed -n 's/^events: \([0-9]*\)$/\1/p' "$1"
}

# ---- recordings of the real core pass ------------------------------------

for mode in nest nest59 clockback discard absolute overwrite signals; do
	rec=$tmp/$mode
	if ! "$rbgen" $mode "$rec" >"$tmp/gen.$mode" 2>&1; then
		diag <"$tmp/gen.$mode"
		result fail "check: $mode recording"
		continue
	fi
	diag <"$tmp/gen.$mode"
	"$rbtrace" check "$rec" >"$tmp/check.$mode" 2>&1
	rc=$?
	diag <"$tmp/check.$mode"
	ok=fail
	[ $rc -eq 0 ] && grep -q ': OK$' "$tmp/check.$mode" && ok=ok
	# the loss of overwrite mode must be seen as counted gaps
	if [ $mode = overwrite ] &&
	   ! awk '$1 ~ /^[0-9]+$/ && $9 > 0 { f = 1 } END { exit !f }' \
		"$tmp/check.$mode"; then
		echo "# no seq gaps in the overwrite recording"
		ok=fail
	fi
	# a clock that steps back gives counted clock-back events, and only
	# such a clock does
	cb=$(sed -n 's/^clock-back: \([0-9]*\).*/\1/p' "$tmp/check.$mode")
	case $mode in
	clockback) [ "${cb:-0}" -gt 0 ] || ok=fail ;;
	*) [ "$cb" = 0 ] || ok=fail ;;
	esac
	# discarded events: counted by the core, none of them read, and
	# nothing missing between the sequence numbers of those written
	if [ $mode = discard ] || [ $mode = absolute ]; then
		d=$(awk '{ for (i = 1; i < NF; i++) if ($i == "discarded:") s += $(i + 1) } END { print s + 0 }' "$tmp/gen.$mode")
		w=$(awk '{ for (i = 1; i < NF; i++) if ($i == "written:") s += $(i + 1) } END { print s + 0 }' "$tmp/gen.$mode")
		e=$(events_of "$tmp/check.$mode")
		echo "# $mode: rbgen committed $w events and discarded $d; check read ${e:-?}"
		[ "$d" -gt 0 ] && [ "$e" = "$w" ] || ok=fail
	fi
	result $ok "check: $mode recording (exit $rc)"
done

# ---- report --------------------------------------------------------------

ok=ok
for mode in nest nest59 clockback discard absolute overwrite signals; do
	want=$(events_of "$tmp/check.$mode")
	got=$("$rbtrace" report "$tmp/$mode" | grep -c ' sample: *seq=')
	echo "# report $mode: $got lines, check counted ${want:-?} events"
	[ -n "$want" ] && [ "$got" = "$want" ] || ok=fail
done
result $ok "report: one line per event"

ok=ok
"$rbtrace" report -l -t --ts-diff --cpu 1 "$tmp/nest" >"$tmp/rep.l" || ok=fail
head -n 3 "$tmp/rep.l" | diag
# -l: "COMM-PID CPU FLAGS SEC.NSEC: (+DELTA) sample: ..."
n1=$(awk '$2 ~ /^1[.dX]/' "$tmp/rep.l" | grep -c ' sample: ')
nall=$(grep -c ' sample: ' "$tmp/rep.l")
want1=$(awk '$1 == 1 { print $3 }' "$tmp/check.nest")
echo "# report --cpu 1: $nall lines, $n1 on CPU 1, check counted $want1"
[ "$n1" = "$nall" ] && [ "$n1" = "$want1" ] || ok=fail
# task, softirq, hardirq (irqs off), NMI (irqs off, no letter)
for f in '1\.\.\.\.\.' '1\.\.s1\.' '1d\.h2\.' '1d\.\.4\.'; do
	grep -q " $f " "$tmp/rep.l" || { echo "# no flags $f"; ok=fail; }
done
grep -q ': (+[0-9]*) *sample: ' "$tmp/rep.l" || ok=fail
# the time column (nanoseconds) never goes backwards
awk '$3 ~ /^[0-9]+\.[0-9]+:$/ { split($3, a, "[.:]")
       if (length(a[2]) != 9) bad = 1
       # a 1 in front keeps the nanoseconds decimal
       s = a[1] + 0; ns = ("1" a[2]) + 0
       if (n++ && (s < ps || (s == ps && ns < pns))) bad = 1
       ps = s; pns = ns }
     END { exit bad || !n }' "$tmp/rep.l" || { echo "# time goes back"; ok=fail; }
result $ok "report -l -t --ts-diff --cpu 1: flags, deltas, one CPU"

# ---- export to trace-cmd ---------------------------------------------------

# "CPU TIME SEQ" per event, sorted, from a report of either tool
keys() {
	sed -n 's/.*\[0*\([0-9][0-9]*\)\][^:]* \([0-9][0-9]*\.[0-9]*\): .*seq=\([0-9]*\).*/\1 \2 \3/p' |
		sort
}

if ! command -v trace-cmd >/dev/null 2>&1; then
	for c in "export: trace-cmd report reads every event" \
		 "export: trace-cmd --ts-check has no warning" \
		 "export: trace-cmd shows nested events with real deltas" \
		 "export: trace-cmd prints ctx, src, flags and tp by name" \
		 "report: byte for byte what trace-cmd report prints of the export"; do
		nr=$((nr + 1))
		echo "ok $nr $c # SKIP trace-cmd not installed"
	done
else
	ok=ok
	okts=ok
	for mode in nest nest59 discard absolute overwrite signals; do
		dat=$tmp/$mode.dat
		if ! "$rbtrace" export "$tmp/$mode" -o "$dat" 2>"$tmp/err"; then
			diag <"$tmp/err"
			ok=fail
			okts=fail
			continue
		fi
		trace-cmd report -t "$dat" >"$tmp/tc.$mode" 2>"$tmp/tc.err"
		cat "$tmp/tc.err" >>"$tmp/tc.allerr"
		want=$(events_of "$tmp/check.$mode")
		got=$(grep -c ' sample: ' "$tmp/tc.$mode")
		bad=$(grep -c 'UNKNOWN EVENT\|FAILED TO PARSE' "$tmp/tc.$mode")
		"$rbtrace" report -t "$tmp/$mode" | keys >"$tmp/k.rb"
		keys <"$tmp/tc.$mode" >"$tmp/k.tc"
		same=$(comm -3 "$tmp/k.rb" "$tmp/k.tc" | wc -l)
		echo "# export $mode: trace-cmd shows $got events (check counted ${want:-?}), $bad unparsed, $same records differ from rbtrace report in cpu/time/seq"
		[ -n "$want" ] && [ "$got" = "$want" ] && [ "$bad" -eq 0 ] &&
			[ "$same" -eq 0 ] && [ -s "$tmp/k.tc" ] || ok=fail
		trace-cmd report --ts-check "$dat" >/dev/null 2>"$tmp/tsc.err"
		if grep -q 'went backwards' "$tmp/tsc.err"; then
			head -n 3 "$tmp/tsc.err" | diag
			okts=fail
		fi
		echo "# export $mode: --ts-check warnings: $(grep -c 'went backwards' "$tmp/tsc.err")"
	done
	result $ok "export: trace-cmd report reads every event"
	result $okts "export: trace-cmd --ts-check has no warning"

	# The view of the article: nested (depth > 1) events with their own,
	# non-zero deltas, and the irq/softirq context flags.
	ok=fail
	if [ -s "$tmp/nest.dat" ]; then
		trace-cmd report --debug -l -t --ts-diff "$tmp/nest.dat" \
			>"$tmp/tc.view" 2>/dev/null
		nested=$(grep -E '\(\+[1-9][0-9]*\).* depth=[2-4]' "$tmp/tc.view" | wc -l)
		zero=$(grep -E '\(\+0\).* depth=[2-4]' "$tmp/tc.view" | wc -l)
		# -l prints CPU and flags together: "  1d.h2."
		hard=$(grep -cE ' [0-9]+d\.h' "$tmp/tc.view")
		soft=$(grep -cE ' [0-9]+\.\.s' "$tmp/tc.view")
		grep -E 'depth=[2-4]' "$tmp/tc.view" | head -n 4 | diag
		echo "# trace-cmd --ts-diff: $nested nested events with a non-zero delta, $zero with (+0); $hard lines hardirq, $soft softirq"
		[ "$nested" -gt 0 ] && [ "$hard" -gt 0 ] && [ "$soft" -gt 0 ] && ok=ok
	fi
	result $ok "export: trace-cmd shows nested events with real deltas"

	# The format's __print_symbolic() and __print_flags(): every sample
	# line of the nest recording names its fields, each context shows,
	# and trace-cmd said nothing on stderr for any recording.
	ok=fail
	if [ -s "$tmp/tc.nest" ]; then
		re=' ctx=(task|softirq|hardirq|nmi) depth=[0-9]+ src=test flags=(fast|abs|slow|zero|extend|start|clock_back)(\|(fast|abs|slow|zero|extend|start|clock_back))* tp=none arg=[0-9]+$'
		lines=$(grep -c ' sample: ' "$tmp/tc.nest")
		named=$(grep -cE "$re" "$tmp/tc.nest")
		ctxs=$(grep -oE ' ctx=[a-z]+ ' "$tmp/tc.nest" | sort -u | wc -l)
		abs=$(grep -cE ' flags=([a-z_]+\|)*abs[ |]' "$tmp/tc.nest")
		errs=$(wc -l <"$tmp/tc.allerr")
		grep ' sample: ' "$tmp/tc.nest" | grep -vE "$re" | head -n 3 | diag
		head -n 3 "$tmp/tc.allerr" | diag
		echo "# trace-cmd report: $named of $lines sample lines with every field named, $ctxs contexts, $abs with abs among the flags; $errs lines on stderr"
		[ "$lines" -gt 0 ] && [ "$named" = "$lines" ] && [ "$ctxs" = 4 ] &&
			[ "$abs" -gt 0 ] && [ "$errs" = 0 ] && ok=ok
	fi
	result $ok "export: trace-cmd prints ctx, src, flags and tp by name"

	# rbtrace report prints what trace-cmd report prints of the export,
	# byte for byte, with the options both have: task names (from
	# saved_cmdlines, "<...>" for a pid it lacks, "<idle>" for 0),
	# latency flags, times, deltas, dropped-events lines, CPU lists,
	# raw fields and the irq filters.
	ok=ok
	rm -rf "$tmp/cmdl"
	cp -r "$tmp/nest" "$tmp/cmdl"
	printf '100 task-a\n7 other task\n' >"$tmp/cmdl/saved_cmdlines"
	"$rbtrace" export "$tmp/cmdl" -o "$tmp/cmdl.dat" >/dev/null || ok=fail
	n=0
	for mode in nest overwrite signals cmdl; do
		for opts in "" "-l" "-t" "--ts-diff" "-l -t --ts-diff --cpu 1" \
			    "-R" "-I" "-S" "--cpu 0,1"; do
			# shellcheck disable=SC2086
			"$rbtrace" report $opts "$tmp/$mode" >"$tmp/r.rb" 2>&1
			# shellcheck disable=SC2086
			trace-cmd report $opts "$tmp/$mode.dat" >"$tmp/r.tc" 2>&1
			n=$((n + 1))
			if ! cmp -s "$tmp/r.rb" "$tmp/r.tc"; then
				echo "# report $opts $mode: differs from trace-cmd:"
				diff "$tmp/r.rb" "$tmp/r.tc" | head -n 4 | diag
				ok=fail
			fi
		done
	done
	"$rbtrace" report "$tmp/overwrite" >"$tmp/r.rb"
	drop=$(grep -c '^CPU:[01] \[[0-9]* EVENTS DROPPED\]$' "$tmp/r.rb")
	unk=$(grep -c '^CPU:[01] \[EVENTS DROPPED\]$' "$tmp/r.rb")
	"$rbtrace" report "$tmp/cmdl" >"$tmp/r.rb"
	named=$(grep -c '^ *task-a-100 ' "$tmp/r.rb")
	unnamed=$(grep -c '^ *<\.\.\.>-101 ' "$tmp/r.rb")
	idle=$(grep -c '^ *<idle>-0 ' "$tmp/r.rb")
	echo "# $n reports compared; overwrite: $drop counted and $unk uncounted drops; saved_cmdlines: $named task-a-100, $unnamed <...>-101, $idle <idle>-0"
	[ "$drop" -gt 0 ] && [ "$unk" -gt 0 ] && [ "$named" -gt 0 ] &&
		[ "$unnamed" -gt 0 ] && [ "$idle" -gt 0 ] || ok=fail
	result $ok "report: byte for byte what trace-cmd report prints of the export"
fi

# ---- a recording made before the names -------------------------------------

# Its format had one 8-byte arg and numbers only (the same payload
# layout): check, report and export must still read it, and report print
# its numbers.
ok=ok
old=$tmp/oldfmt
rm -rf "$old"
cp -r "$tmp/nest" "$old"
python3 - "$old/events/rbnest/sample/format" <<'PY' || ok=fail
import re, sys
path = sys.argv[1]
s = open(path).read()
s = re.sub(r'\tfield:unsigned int arg;.*\n\tfield:unsigned int tp;.*\n',
           '\tfield:unsigned long long arg;\toffset:32;\tsize:8;\tsigned:0;\n', s)
s = re.sub(r'print fmt: .*\n',
           'print fmt: "seq=%llu cpu=%u ctx=%u depth=%u src=%u flags=%#x arg=%llu", '
           'REC->seq, REC->cpu, REC->context, REC->depth, REC->source, '
           'REC->flags, REC->arg\n', s)
open(path, 'w').write(s)
PY
"$rbtrace" check -q "$old" >/dev/null 2>"$tmp/err" || ok=fail
diag <"$tmp/err"
"$rbtrace" report "$old" 2>"$tmp/err" >"$tmp/old.rep" || ok=fail
diag <"$tmp/err"
"$rbtrace" export "$old" -o "$tmp/old.dat" 2>"$tmp/err" || ok=fail
diag <"$tmp/err"
n=$(grep -c ' sample: ' "$tmp/old.rep")
num=$(grep -cE ' ctx=[0-3] depth=[0-9]+ src=0 flags=0x[0-9a-f]+ arg=[0-9]+$' "$tmp/old.rep")
echo "# the format before names: report printed $n events, $num with ctx, src, flags as numbers"
[ "$n" -gt 0 ] && [ "$n" = "$num" ] || ok=fail
result $ok "check, report, export read a recording with the format before names"


# A saved_cmdlines that is not "PID COMM" lines: exit 2, line named.
ok=ok
rm -rf "$tmp/cmdl2"
cp -r "$tmp/nest" "$tmp/cmdl2"
printf '100 task-a\nnot a pid\n' >"$tmp/cmdl2/saved_cmdlines"
"$rbtrace" report "$tmp/cmdl2" >/dev/null 2>"$tmp/err"
rc=$?
diag <"$tmp/err"
[ $rc -eq 2 ] && grep -q 'saved_cmdlines: line 2: ' "$tmp/err" || ok=fail
"$rbtrace" export "$tmp/cmdl2" -o "$tmp/cmdl2.dat" >/dev/null 2>"$tmp/err"
rc=$?
diag <"$tmp/err"
[ $rc -eq 2 ] && grep -q 'saved_cmdlines: line 2: ' "$tmp/err" &&
	[ ! -e "$tmp/cmdl2.dat" ] || ok=fail
printf '100 task-a\n' >"$tmp/cmdl2/saved_cmdlines"
"$rbtrace" report "$tmp/cmdl2" >"$tmp/out" || ok=fail
grep -q '^ *task-a-100 ' "$tmp/out" || ok=fail
result $ok "report, export: saved_cmdlines names the tasks; a bad one exits 2"

# ---- formats libtraceevent cannot take safely ------------------------------

# A division in the print fmt crashes libtraceevent 1.7's parser, and
# tep_data_type() reads common_type without bounds: both are refused
# with exit 2 by check, report and export before libtraceevent sees them.
ok=ok
fmt=events/rbnest/sample/format
for hostile in div common_type; do
	bad=$tmp/hostile-$hostile
	rm -rf "$bad"
	cp -r "$tmp/nest" "$bad"
	case $hostile in
	div)	sed -i 's|REC->arg$|REC->arg / 0|' "$bad/$fmt" ;;
	common_type)
		sed -i 's|common_type;\toffset:0;|common_type;\toffset:60000;|' "$bad/$fmt" ;;
	esac
	cmp -s "$tmp/nest/$fmt" "$bad/$fmt" && { echo "# $hostile: format not changed"; ok=fail; }
	for cmd in check report "export -o $tmp/hostile.dat"; do
		"$rbtrace" $cmd "$bad" >/dev/null 2>"$tmp/err"
		rc=$?
		echo "# $hostile: rbtrace ${cmd%% *}: exit $rc: $(head -n 1 "$tmp/err")"
		[ $rc -eq 2 ] && grep -q "$fmt" "$tmp/err" || ok=fail
	done
done
result $ok "check, report, export: hostile formats refused with exit 2"

# Mangled field lines, with the real print fmt: libtraceevent 1.7 calls
# strcmp() on a NULL token when a '[' is followed by a byte that is not
# printable, a NUL or the end of the text (SIGSEGV), and divides by zero
# in a print fmt it finds behind "print<TAB> fmt:" (SIGFPE); the others it
# takes silently. Each must exit 2 naming the file and the line, from
# check, report and export alike.
cat >"$tmp/mangle.py" <<'PY'
import sys

path, case = sys.argv[1], sys.argv[2]
s = open(path, 'rb').read()
cases = {
    # a stray '[' and a non-ASCII byte in a field name
    'stray': (b'common_pid;', b'common_p[\x9aid;'),
    # a line cut short after a torn byte, merged with the next field line
    'merged': (b'char context;\toffset:28;\tsize:1;\tsigned:0;\n',
               b'char cont[\xff'),
    # a NUL where the array length would be
    'nul': (b'long long seq;', b'long long seq[\0;'),
    # a tab inside "print fmt:", then a modulo by zero
    'print-tab': (b'print fmt:', b'print\t fmt:'),
    'offset-number': (b'offset:16;', b'offset:16x;'),
    'outside': (b'source;\toffset:30;', b'source;\toffset:5000;'),
    'overlap': (b'depth;\toffset:29;', b'depth;\toffset:28;'),
    'twice': (b'char source;', b'char depth;'),
    'size': (b'seq;\toffset:8;\tsize:8;', b'seq;\toffset:8;\tsize:4;'),
    'name': (b'unsigned int cpu;', b'unsigned int c-pu;'),
}
if case == 'cut':
    # the file cut short just after a '['
    s = s[:s.index(b'seq;')] + b'seq['
else:
    a, b = cases[case]
    if a not in s:
        sys.exit('%s: %r not in the format' % (case, a))
    s = s.replace(a, b, 1)
    if case == 'print-tab':
        s = s.replace(b'REC->arg\n', b'REC->arg % 0\n')
open(path, 'wb').write(s)
PY
ok=ok
nr_case=0
while read -r case cmds line want; do
	bad=$tmp/mangled-$case
	rm -rf "$bad"
	cp -r "$tmp/nest" "$bad"
	python3 "$tmp/mangle.py" "$bad/$fmt" "$case" || { ok=fail; continue; }
	run=(check report "export -o $tmp/mangled.dat")
	# the sizes rbtrace reads: export takes any self-consistent format
	[ "$cmds" = cr ] && run=(check report)
	for cmd in "${run[@]}"; do
		"$rbtrace" $cmd "$bad" >/dev/null 2>"$tmp/err"
		rc=$?
		msg=$(head -n 1 "$tmp/err" | tr -cd '[:print:]')
		echo "# $case: rbtrace ${cmd%% *}: exit $rc: $msg"
		if [ $rc -ne 2 ] || ! grep -qF "$fmt: line $line: " "$tmp/err" ||
		   ! grep -qF "$want" "$tmp/err"; then
			echo "# $case: wanted exit 2 and \"line $line: ...$want\""
			ok=fail
		fi
	done
	nr_case=$((nr_case + 1))
done <<'CASES'
stray all 7 byte 0x9a in column 21 is not printable ASCII
merged all 12 byte 0xff in column 27 is not printable ASCII
cut all 9 the text ends inside a field line
nul all 9 0x00
print-tab all 19 not "print fmt: " after the fields
offset-number all 10 field ts: not "offset:N;
outside all 14 field source: offset 5000 + size 1 is past the largest event (4080 bytes)
overlap all 13 field depth overlaps field context (line 12)
twice all 14 field depth: the name is used twice (line 13)
size cr 9 field seq has size 4, not 8
name all 11 field name "c-pu" is not a C identifier
CASES
echo "# $nr_case mangled formats"
[ $nr_case -eq 11 ] || ok=fail
result $ok "check, report, export: mangled field lines refused with exit 2, file and line named"

# ---- violations ------------------------------------------------------------

# expect_violation NAME REC PATTERN: exit 1 and PATTERN in the output
expect_violation() {
	"$rbtrace" check -q "$2" >"$tmp/out" 2>&1
	rc=$?
	grep VIOLATION "$tmp/out" | head -n 3 | diag
	if [ $rc -eq 1 ] && grep -q "$3" "$tmp/out"; then
		result ok "$1"
	else
		echo "# exit $rc, wanted 1 and '$3'"
		result fail "$1"
	fi
}

# expect_input NAME REC PATTERN: exit 2 and PATTERN on stderr
expect_input() {
	"$rbtrace" check -q "$2" >/dev/null 2>"$tmp/err"
	rc=$?
	diag <"$tmp/err"
	if [ $rc -eq 2 ] && grep -q "$3" "$tmp/err"; then
		result ok "$1"
	else
		echo "# exit $rc, wanted 2 and '$3'"
		result fail "$1"
	fi
}

copy() {
	rm -rf "$tmp/bad"
	cp -r "$tmp/$1" "$tmp/bad"
}

copy nest
read -r pg off < <(corrupt backwards "$tmp/bad/cpu0.raw")
echo "# page stamp of cpu0 page $pg moved to 5 ms before the page before it"
expect_violation "check: time moved backwards" "$tmp/bad" \
	"cpu0.raw: cpu 0 page $pg offset $off: time went backwards"

copy nest
read -r pg off < <(corrupt cut "$tmp/bad/cpu1.raw")
echo "# event at cpu1 page $pg offset $off cut out, commit reduced"
expect_violation "check: event removed without a missed count" "$tmp/bad" \
	"cpu1.raw: cpu 1 page $pg offset [0-9]*: 1 events missing before seq"

copy clockback
read -r pg off < <(corrupt unflag "$tmp/bad/cpu0.raw")
echo "# clock-back flag of the event at cpu0 page $pg offset $off cleared"
expect_violation "check: clock-back event without its flag" "$tmp/bad" \
	"cpu0.raw: cpu 0 page $pg offset $off: rebuilt time"

copy overwrite
read -r pg < <(corrupt unmiss "$tmp/bad/cpu0.raw")
echo "# missed-events count of cpu0 page $pg removed"
expect_violation "check: missed count removed" "$tmp/bad" \
	"cpu0.raw: cpu 0 page $pg offset [0-9]*: [0-9]* events missing"

# ---- bad input ---------------------------------------------------------------

copy nest
size=$(stat -c %s "$tmp/bad/cpu1.raw")
truncate -s $((size - 100)) "$tmp/bad/cpu1.raw"
expect_input "check: truncated cpu file" "$tmp/bad" \
	"cpu1.raw: truncated: page [0-9]* at offset [0-9]*"

copy nest
corrupt commit "$tmp/bad/cpu0.raw" 2 >/dev/null
expect_input "check: commit past the page" "$tmp/bad" \
	"cpu0.raw: page 2 (offset 8200): commit 0x1388 larger than the page data size 4080"

copy nest
read -r pg off < <(corrupt length "$tmp/bad/cpu1.raw" 4)
expect_input "check: event length past the commit" "$tmp/bad" \
	"cpu1.raw: page 4 offset $off (file offset [0-9]*): event length 40000 runs past"

copy nest
sed -i 's/offset:8;/offset:8:/' "$tmp/bad/events/rbnest/sample/format"
sed -i 's/^format:/formt:/' "$tmp/bad/events/rbnest/sample/format"
expect_input "check: format file that does not parse" "$tmp/bad" \
	'events/rbnest/sample/format: line 3: not "format:"'

# (without the manifest: with one, test_recordings.sh wants exit 1)
copy nest
rm "$tmp/bad/cpu0.raw" "$tmp/bad/manifest"
expect_input "check: missing CPU file" "$tmp/bad" "cpu0.raw: missing"

# ---- record ------------------------------------------------------------------

# A module directory made of files: trace_pipe_raw is a copy of cpuN.raw.
fake=$tmp/fake
for cpu in 0 1; do
	mkdir -p "$fake/per_cpu/cpu$cpu"
	cp "$tmp/overwrite/cpu$cpu.raw" "$fake/per_cpu/cpu$cpu/trace_pipe_raw"
done
cp -r "$tmp/overwrite/events" "$tmp/overwrite/header_page" \
	"$tmp/overwrite/header_event" "$tmp/overwrite/trace_clock" "$fake/"

ok=ok
"$rbtrace" record -d "$fake" -o "$tmp/rec1" >"$tmp/out" 2>"$tmp/err" || ok=fail
diag <"$tmp/out"
[ -s "$tmp/err" ] && { diag <"$tmp/err"; ok=fail; }	# no progress off a tty
diff -r -x manifest "$tmp/overwrite" "$tmp/rec1" >/dev/null || { echo "# recording differs"; ok=fail; }
lost=$(awk '$1 ~ /^[0-9]+$/ { sub(/\+\?/, "", $8); n += $8 } END { print n }' \
	"$tmp/check.overwrite")
grep -q ", $lost events lost$" "$tmp/out" || { echo "# check counted $lost lost"; ok=fail; }
"$rbtrace" check -q "$tmp/rec1" >"$tmp/out" 2>&1 || ok=fail
result $ok "record: whole files spliced, format files copied, lost counted"

ok=ok
"$rbtrace" record -d "$fake" -o "$tmp/rec2" -s 20K >"$tmp/out" 2>&1 || ok=fail
diag <"$tmp/out"
grep -q ': 2 CPUs, 6 pages, 24576 bytes' "$tmp/out" || ok=fail
"$rbtrace" check -q "$tmp/rec2" >"$tmp/out" 2>&1 || ok=fail
diag <"$tmp/out"
result $ok "record -s 20K: stops at the size"

# On a terminal (script(1) gives one), a progress line is drawn with \r.
if command -v script >/dev/null 2>&1; then
	script -qec "$rbtrace record -d $fake -o $tmp/rec3" /dev/null \
		>"$tmp/out" 2>&1 </dev/null
	tr '\r' '\n' <"$tmp/out" | grep 'events lost' | tail -n 2 | diag
	# the final summary's loss count, which the progress line must reach
	lost=$(tr '\r' '\n' <"$tmp/out" |
		sed -n 's/.*: 2 CPUs, 70 pages, 286720 bytes, \([0-9][0-9]*\) events lost.*/\1/p' |
		tail -n 1)
	if [ -n "$lost" ] &&
	   grep -q $'\r.*: 70 pages, 286720 bytes, '"$lost"' events lost' "$tmp/out"; then
		result ok "record: progress line on a terminal"
	else
		result fail "record: progress line on a terminal"
	fi
else
	nr=$((nr + 1))
	echo "ok $nr record: progress line on a terminal # SKIP no script(1)"
fi

# FIFOs that stay open: only the time limit or SIGINT stops the recording.
ok=ok
for sig in time int; do
	ff=$tmp/fifo-$sig
	for cpu in 0 1; do
		mkdir -p "$ff/per_cpu/cpu$cpu"
		mkfifo "$ff/per_cpu/cpu$cpu/trace_pipe_raw"
	done
	cp -r "$fake/events" "$fake/header_page" "$fake/header_event" "$ff/"
	exec 3<>"$ff/per_cpu/cpu0/trace_pipe_raw" 4<>"$ff/per_cpu/cpu1/trace_pipe_raw"
	head -c 8192 "$tmp/nest/cpu0.raw" >&3
	head -c 4096 "$tmp/nest/cpu1.raw" >&4
	if [ $sig = time ]; then
		timeout 20 "$rbtrace" record -d "$ff" -o "$tmp/rec-$sig" -t 0.5 \
			>"$tmp/out" 2>&1
		rc=$?
	else
		"$rbtrace" record -d "$ff" -o "$tmp/rec-$sig" >"$tmp/out" 2>&1 &
		pid=$!
		sleep 0.5
		kill -INT $pid
		wait $pid
		rc=$?
	fi
	exec 3>&- 4>&-
	diag <"$tmp/out"
	[ $rc -eq 0 ] || ok=fail
	grep -q ': 2 CPUs, 3 pages, 12288 bytes' "$tmp/out" || ok=fail
	cmp -s "$tmp/rec-$sig/cpu0.raw" <(head -c 8192 "$tmp/nest/cpu0.raw") || ok=fail
done
result $ok "record from pipes: stops at -t and at SIGINT"

# record -c CPU: that CPU's file only; -r: read() instead of splice().
ok=ok
for how in "" -r; do
	rm -rf "$tmp/rec-c"
	"$rbtrace" record -d "$fake" -o "$tmp/rec-c" -c 1 $how >"$tmp/out" 2>&1 || ok=fail
	diag <"$tmp/out"
	[ -e "$tmp/rec-c/cpu0.raw" ] && { echo "# record -c 1 $how wrote cpu0.raw"; ok=fail; }
	cmp -s "$tmp/rec-c/cpu1.raw" "$tmp/overwrite/cpu1.raw" ||
		{ echo "# record -c 1 $how: cpu1.raw differs"; ok=fail; }
	grep -q ': cpu 1, [0-9]* pages' "$tmp/out" || ok=fail
done
"$rbtrace" record -d "$fake" -o "$tmp/rec-c" -c 2 >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q 'cpu2/trace_pipe_raw' "$tmp/err" || ok=fail
result $ok "record -c 1 (splice and -r read): that CPU only; -c 2 exits 2"

# ---- stream ------------------------------------------------------------------

# fake_dir REC DIR: a module directory whose trace_pipe_raw files are the
# recording's cpuN.raw
fake_dir() {
	rm -rf "$2"
	for f in "$1"/cpu*.raw; do
		c=${f##*/cpu}
		c=${c%.raw}
		mkdir -p "$2/per_cpu/cpu$c"
		cp "$f" "$2/per_cpu/cpu$c/trace_pipe_raw"
	done
	cp -r "$1/events" "$1/header_page" "$1/header_event" "$2/"
}

# the per-CPU table columns both commands print: events zero abs extend
# padding missed seq-gaps
table_of() {
	awk '$1 ~ /^[0-9]+$/ && NF >= 10 { print $1, $3, $4, $5, $6, $7, $8, $9, $10 }' "$1"
}

# Every recording of the core: stream finds what check finds, page by page
# without keeping them.
ok=ok
for mode in nest nest59 clockback discard absolute overwrite signals; do
	fake_dir "$tmp/$mode" "$tmp/sd"
	"$rbtrace" stream -q -d "$tmp/sd" >"$tmp/stream.$mode" 2>&1
	rc=$?
	if [ $rc -ne 0 ] || ! grep -q ': OK$' "$tmp/stream.$mode"; then
		diag <"$tmp/stream.$mode"
		ok=fail
	fi
	if ! diff <(table_of "$tmp/check.$mode") <(table_of "$tmp/stream.$mode") \
		>"$tmp/diff"; then
		echo "# stream $mode: its table differs from check's:"
		diag <"$tmp/diff"
		ok=fail
	fi
	echo "# stream $mode: $(grep '^events:' "$tmp/stream.$mode"), as check"
done
diag <"$tmp/stream.signals"
result $ok "stream: every recording of the core passes, with check's counts"

# expect_stream NAME REC PATTERN: stream exits 1 with PATTERN
expect_stream() {
	fake_dir "$2" "$tmp/sd"
	"$rbtrace" stream -q -d "$tmp/sd" >"$tmp/out" 2>&1
	rc=$?
	grep VIOLATION "$tmp/out" | head -n 3 | diag
	if [ $rc -eq 1 ] && grep -q "$3" "$tmp/out"; then
		result ok "$1"
	else
		echo "# exit $rc, wanted 1 and '$3'"
		result fail "$1"
	fi
}

copy nest
read -r pg off < <(corrupt backwards "$tmp/bad/cpu0.raw")
expect_stream "stream: time moved backwards" "$tmp/bad" \
	"cpu0/trace_pipe_raw: cpu 0 page $pg offset $off: time went backwards"

copy nest
read -r pg off < <(corrupt cut "$tmp/bad/cpu1.raw")
expect_stream "stream: event removed without a missed count" "$tmp/bad" \
	"cpu1/trace_pipe_raw: cpu 1 page [0-9]* offset [0-9]*: 1 events missing before seq"

copy clockback
read -r pg off < <(corrupt unflag "$tmp/bad/cpu0.raw")
expect_stream "stream: clock-back event without its flag" "$tmp/bad" \
	"cpu0/trace_pipe_raw: cpu 0 page $pg offset $off: rebuilt time"

copy overwrite
read -r pg < <(corrupt unmiss "$tmp/bad/cpu0.raw")
expect_stream "stream: missed count removed" "$tmp/bad" \
	"cpu0/trace_pipe_raw: cpu 0 page $pg offset [0-9]*: [0-9]* events missing"

# A page read twice: the same sequence numbers again.
copy nest
head -c 4096 "$tmp/nest/cpu0.raw" >>"$tmp/bad/cpu0.raw"
expect_stream "stream: a page read twice" "$tmp/bad" \
	"cpu0/trace_pipe_raw: cpu 0 page [0-9]* offset 0: duplicate seq 0"

# ---- the summary of check ----------------------------------------------------

# The table on stdout, a legend (-v) for each of its columns, the time span
# of every CPU; the violations on stderr, the verdict on stdout.
ok=ok
"$rbtrace" check -v "$tmp/nest" >"$tmp/out" 2>"$tmp/err" || ok=fail
[ -s "$tmp/err" ] && { diag <"$tmp/err"; ok=fail; }
for col in $(awk '$1 == "cpu" && $2 == "pages" { $1 = ""; print; exit }' "$tmp/out"); do
	grep -q "^  $col  " "$tmp/out" || { echo "# no legend for $col"; ok=fail; }
done
awk '$1 ~ /^[0-9]+$/ && NF == 14 { n++; d = $13 - $12 - $14
	if ($12 + 0 > $13 + 0 || d > 1e-6 || d < -1e-6) bad = 1 }
     END { exit bad || n != 2 }' "$tmp/out" || { echo "# first/last/span wrong"; ok=fail; }
[ "$(grep -c '^events: ' "$tmp/out")" = 1 ] || ok=fail
copy nest
corrupt backwards "$tmp/bad/cpu0.raw" >/dev/null
"$rbtrace" check "$tmp/bad" >"$tmp/out" 2>"$tmp/err"
rc=$?
grep -q 'VIOLATION' "$tmp/out" && { echo "# a violation on stdout"; ok=fail; }
grep -q '^VIOLATION: .*time went backwards' "$tmp/err" || ok=fail
grep -q 'FAILED: [0-9]* violations$' "$tmp/out" || ok=fail
echo "# exit $rc; stdout: $(tail -n 1 "$tmp/out"); stderr: $(grep -c VIOLATION "$tmp/err") violations"
[ $rc -eq 1 ] || ok=fail
result $ok "check: legend for every column, time spans, violations on stderr"

# --json: one valid object, with the counts of the text summary.
ok=ok
for rec in nest overwrite bad; do
	"$rbtrace" check --json "$tmp/$rec" >"$tmp/j" 2>/dev/null
	rc=$?
	"$rbtrace" check "$tmp/$rec" >"$tmp/t" 2>/dev/null
	python3 -m json.tool "$tmp/j" >/dev/null || { echo "# $rec: not JSON"; ok=fail; }
	python3 - "$tmp/j" "$tmp/t" $rc <<'PY' || ok=fail
import json, re, sys
j = json.load(open(sys.argv[1]))
t = open(sys.argv[2]).read()
rc = int(sys.argv[3])
ev = int(re.search(r'^events: (\d+)$', t, re.M).group(1))
rows = [l.split() for l in t.splitlines() if re.match(r'^\d+ ', l)]
errs = []
if j['totals']['events'] != ev or sum(c['events'] for c in j['cpus']) != ev:
    errs.append('events')
if len(rows) != len(j['cpus']):
    errs.append('rows')
for c, r in zip(j['cpus'], rows):
    if [c['cpu'], c['pages'], c['events'], c['seq_gaps']] != \
       [int(r[0]), int(r[1]), int(r[2]), int(r[8])]:
        errs.append('cpu %d row' % c['cpu'])
if (j['verdict'] == 'OK') != (rc == 0) or (j['violations'] > 0) != (rc == 1):
    errs.append('verdict')
print('# %s: %d events, %d CPUs, %d violations, %s%s' % (
    sys.argv[1].split('/')[-1], ev, len(j['cpus']), j['violations'],
    j['verdict'], ' WRONG: ' + ', '.join(errs) if errs else ''))
sys.exit(1 if errs else 0)
PY
done
result $ok "check --json: valid JSON, the counts of the table, the verdict"

# ---- memory --------------------------------------------------------------------

# check, report and export read one page at a time: on a recording about
# 70 times larger than nest, their peak RSS stays within a fixed budget
# above what they need for nest (report: its first 200000 lines, as it
# prints at libtraceevent's pace). The ASan build keeps a small quarantine.
# peak RSS in KB of CMD... (its stdout: the first LINES lines, all if 0),
# as /usr/bin/time measures it (not a fork of this shell or of python,
# whose own RSS a child keeps as its peak across exec)
peak_kb() {
	local lines=$1
	shift
	if [ "$lines" -gt 0 ]; then
		ASAN_OPTIONS="${ASAN_OPTIONS:-}:quarantine_size_mb=1" \
			/usr/bin/time -f %M -o "$tmp/peak" "$@" 2>/dev/null |
			head -n "$lines" >/dev/null
	else
		ASAN_OPTIONS="${ASAN_OPTIONS:-}:quarantine_size_mb=1" \
			/usr/bin/time -f %M -o "$tmp/peak" "$@" >/dev/null 2>&1
	fi
	tail -n 1 "$tmp/peak"
}

budget_kb=${RBT_RSS_BUDGET_KB:-16384}
ok=ok
if [ ! -x /usr/bin/time ]; then
	nr=$((nr + 1))
	echo "ok $nr check, report, export: peak RSS bounded on a recording 70 times larger # SKIP no /usr/bin/time"
else
if ! "$rbgen" nest "$tmp/big" 400000 >"$tmp/gen.big" 2>&1; then
	diag <"$tmp/gen.big"
	ok=fail
fi
big_mb=$(du -sm "$tmp/big" | cut -f1)
for cmd in "check" "report" "export -o $tmp/x.dat"; do
	lines=0
	[ "$cmd" = report ] && lines=200000
	# shellcheck disable=SC2086
	small=$(peak_kb $lines "$rbtrace" $cmd "$tmp/nest")
	start=$(date +%s)
	# shellcheck disable=SC2086
	large=$(peak_kb $lines "$rbtrace" $cmd "$tmp/big")
	secs=$(($(date +%s) - start))
	echo "# ${cmd%% *}: peak RSS ${small:-?} KB on nest (2 MB), ${large:-?} KB on a recording of $big_mb MB (${secs} s); budget +$budget_kb KB"
	case "$small$large" in
	*[!0-9]*|"") ok=fail ;;
	*) [ "$large" -le $((small + budget_kb)) ] || ok=fail ;;
	esac
done
rm -rf "$tmp/big" "$tmp/x.dat"
result $ok "check, report, export: peak RSS bounded on a recording 70 times larger"
fi

# ---- mutations -----------------------------------------------------------------

# Random byte changes in page headers, event headers and payloads: check and
# report must end with 0, 1 or 2 and no sanitizer report, never crash.
cat >"$tmp/mutate.py" <<'EOF'
import collections, random, shutil, subprocess, sys

rbtrace, src, work, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
random.seed(20261203)
codes = collections.Counter()
for run in range(runs):
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(src, work)
    path = '%s/cpu%d.raw' % (work, random.randint(0, 1))
    d = bytearray(open(path, 'rb').read())
    for _ in range(random.randint(1, 6)):
        page = random.randrange(len(d) // 4096) * 4096
        where = random.choice(('commit', 'event', 'any'))
        if where == 'commit':
            off = page + 8 + random.randrange(4)
        elif where == 'event':
            off = page + 16 + 4 * random.randrange(1020)
        else:
            off = page + random.randrange(4096)
        d[off] = random.randrange(256)
    open(path, 'wb').write(d)
    for cmd in (['check', '-q'], ['report', '-l']):
        p = subprocess.run([rbtrace] + cmd + [work], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
        codes[p.returncode] += 1
        err = p.stderr.decode(errors='replace')
        if p.returncode not in (0, 1, 2) or 'Sanitizer' in err or \
           'runtime error' in err:
            print('# run %d: %s exit %d' % (run, cmd[0], p.returncode))
            print('\n'.join('# ' + l for l in err.splitlines()[-20:]))
            sys.exit(1)
print('# %d mutated recordings: exit 0: %d, 1: %d, 2: %d' %
      (runs, codes[0], codes[1], codes[2]))
EOF
ok=ok
mutations=${RBT_MUTATIONS:-40}
case $mutations in
''|*[!0-9]*|0) echo "# RBT_MUTATIONS=$mutations: not a count"; ok=fail ;;
esac
for mode in nest59 overwrite; do
	[ $ok = ok ] || break
	python3 "$tmp/mutate.py" "$rbtrace" "$tmp/$mode" "$tmp/mut" "$mutations" || ok=fail
done
result $ok "check, report: mutated pages end with exit 0, 1 or 2"

# ---- usage -------------------------------------------------------------------

ok=ok
for cmd in check report record stream; do
	"$rbtrace" $cmd --help >"$tmp/out" 2>&1 || ok=fail
	grep -q "^usage: rbtrace $cmd" "$tmp/out" || ok=fail
	"$rbtrace" $cmd --no-such-option >"$tmp/out" 2>"$tmp/err"
	[ $? -eq 2 ] && [ ! -s "$tmp/out" ] &&
		grep -q "^usage: rbtrace $cmd" "$tmp/err" || ok=fail
done
"$rbtrace" frobnicate >/dev/null 2>&1
[ $? -eq 2 ] || ok=fail
"$rbtrace" record -d "$tmp/no-such-dir" -o "$tmp/rec" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q 'no-such-dir/header_page' "$tmp/err" || ok=fail
diag <"$tmp/err"
result $ok "usage: --help, unknown options exit 2, missing directory"

echo "# rbtrace: $nr test cases, $nr_fail failed"
[ $nr -eq $nr_tests ] || echo "# planned $nr_tests"
[ $nr_fail -eq 0 ]
