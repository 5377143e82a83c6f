#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_plot.sh - "rbtrace plot" as a user sees it.
#
# Usage: test_plot.sh RBTRACE RBGEN
#
# RBGEN writes recordings of the userspace core with nested writers
# (modes nest and clockback). "rbtrace plot" draws them; the SVG is read
# back with python3's xml.etree and compared with what "rbtrace report"
# and "rbtrace check" say of the same recording: a lane per CPU and
# context, one mark per event of the window (per CPU and context), the
# connectors between nested events and the writers they interrupted
# (found again here from report's event order, by the rules of plot.h),
# the legend, and the histograms against check's totals. The picture is
# rendered to PNG with rsvg-convert (librsvg2-bin, installed by
# scripts/deps.sh: missing, the test fails). Bad input: an unknown
# option, a window that ends before it starts, a time that is not one,
# a window without events, an output path that cannot be written, a CPU
# not in the recording: exit 2 with a message, and no file left.
# Output is KTAP.

set -uo pipefail

rbtrace=${1:-}
rbgen=${2:-}
nr_tests=15

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

# svgcheck.py WHAT SVG REPORT CHECK [ARGS]: compares the picture with
# rbtrace report's events (REPORT, "report -l" output) and rbtrace
# check's table (CHECK); prints what it compared, exits 1 on a mismatch.
cat >"$tmp/svgcheck.py" <<'EOF'
import re, struct, sys
import xml.etree.ElementTree as ET

NS = '{http://www.w3.org/2000/svg}'
what, svg, report, check = sys.argv[1:5]
args = sys.argv[5:]
root = ET.parse(svg).getroot()
els = list(root.iter())


def cls(e):
    return e.get('class', '').split()


def of(c):
    return [e for e in els if c in cls(e)]


# ctx and flags as numbers (a format before names) or as the names of
# the format's __print_symbolic() and __print_flags() (rbn_events.h)
# "report -l -t": "COMM-PID CPUFLAGS SEC.NSEC: sample: FIELDS" (the flags
# never start with a digit)
LINE = re.compile(r'-\d+\s+(\d+)\S*\s+(\d+)\.(\d{9}): sample:\s+seq=(\d+) '
                  r'cpu=\d+ ctx=(\w+) depth=(\d+) src=\w+ flags=([\w|]+)')
CTX = ('task', 'softirq', 'hardirq', 'nmi')
FLAGS = dict(fast=0x01, abs=0x02, slow=0x04, zero=0x08, extend=0x10,
             start=0x20, clock_back=0x40)


def ctx_of(v):
    return int(v) if v.isdigit() else CTX.index(v)


def flags_of(v):
    if v[0].isdigit():
        return int(v, 0)
    return sum(FLAGS[f] if f in FLAGS else int(f, 0) for f in v.split('|'))


evs = []
for l in open(report):
    # report's first line, and its lines for lost events
    if l.startswith('cpus=') or l.startswith('CPU:'):
        continue
    m = LINE.search(l)
    if not m:
        sys.exit('report line not understood: ' + l)
    cpu, s, ns, seq, ctx, depth, flags = m.groups()
    evs.append(dict(cpu=int(cpu), ts=int(s) * 10**9 + int(ns), seq=int(seq),
                    ctx=ctx_of(ctx), depth=int(depth), flags=flags_of(flags)))

# check's table: per CPU rows, then the depth table
tab, cd, tot = {}, {}, {}
lines = open(check).read().splitlines()
for l in lines:
    w = l.split()
    if len(w) >= 10 and w[0].isdigit():
        tab[int(w[0])] = dict(events=int(w[2]), zero=int(w[3]), abs=int(w[4]),
                              extend=int(w[5]))
    elif w and w[0] in ('task', 'softirq', 'hardirq', 'nmi') and \
            all(x.isdigit() for x in w[1:]):
        ctx = ('task', 'softirq', 'hardirq', 'nmi').index(w[0])
        for d, n in enumerate(w[1:], 1):
            cd[(ctx, d)] = int(n)
    elif l.startswith('events: '):
        tot['events'] = int(w[1])
    elif l.startswith('clock-back: '):
        tot['clock-back'] = int(w[1])
nr_cpus = len(tab)
max_depth = max(d for (c, d), n in cd.items() if n)
fail = []


def expect(cond, msg):
    if not cond:
        fail.append(msg)


lo, hi = int(root.get('data-from-ns')), int(root.get('data-to-ns'))
only = int(args[1]) if len(args) > 1 and args[0] == 'cpu' else -1
start = min(e['ts'] for e in evs)
expect(int(root.get('data-start-ns')) == start, 'start %s, report %d' %
       (root.get('data-start-ns'), start))
inw = [e for e in evs if lo <= e['ts'] <= hi and only in (-1, e['cpu'])]
marks = of('mark')

if what == 'lanes':
    lanes = sorted((int(e.get('data-cpu')), int(e.get('data-ctx')))
                   for e in of('lane'))
    cpus = [only] if only >= 0 else range(nr_cpus)
    want = sorted((c, x) for c in cpus for x in range(4))
    print('%d lanes, %d CPUs x 4 contexts' % (len(lanes), len(cpus)))
    expect(lanes == want, 'lanes %s' % lanes)
elif what == 'marks':
    if len(args) >= 2 and args[0] == 'window':
        a, b = int(args[1]), int(args[2])
        expect((lo, hi) == (start + a, start + b),
               'window %d..%d, asked %d..%d' % (lo, hi, start + a, start + b))
    got, want = {}, {}
    for m in marks:
        k = (int(m.get('data-cpu')), int(m.get('data-ctx')))
        got[k] = got.get(k, 0) + 1
    for e in inw:
        k = (e['cpu'], e['ctx'])
        want[k] = want.get(k, 0) + 1
    print('window %d..%d ns: %d marks, report %d events; by cpu, ctx: %s' %
          (lo, hi, len(marks), len(inw), sorted(got.items())))
    expect(len(marks) == len(inw) and got == want,
           'marks %s, report %s' % (sorted(got.items()), sorted(want.items())))
    expect(int(root.get('data-window-events')) == len(inw), 'data-window-events')
    seqs = sorted((int(m.get('data-cpu')), int(m.get('data-seq')),
                   int(m.get('data-ts'))) for m in marks)
    expect(seqs == sorted((e['cpu'], e['seq'], e['ts']) for e in inw),
           'marks are not the events of the window')
    if 'deepest' in args:
        deep = [m for m in marks if int(m.get('data-depth')) == max_depth]
        print('%d marks of the deepest depth %d' % (len(deep), max_depth))
        expect(deep, 'no mark of depth %d in the default window' % max_depth)
elif what == 'conns':
    # the writer each nested event of the window interrupted, from the
    # events of its CPU in buffer order (plot.h)
    want = {}
    for cpu in set(e['cpu'] for e in inw):
        l = [e for e in evs if e['cpu'] == cpu]
        for i, e in enumerate(l):
            d = e['depth']
            if not lo <= e['ts'] <= hi or d < 2:
                continue
            p = n = None
            for j in range(i - 1, -1, -1):
                if l[j]['depth'] <= d - 1:
                    p = j if l[j]['depth'] == d - 1 else None
                    break
            last = True
            for j in range(i + 1, len(l)):
                if l[j]['depth'] == d:
                    last = False
                if l[j]['depth'] <= d - 1:
                    n = j if l[j]['depth'] == d - 1 else None
                    break
            if n is not None and l[n]['flags'] & 4 and last:
                want[(cpu, e['seq'])] = ('next', l[n]['seq'])
            elif p is not None:
                want[(cpu, e['seq'])] = ('prev', l[p]['seq'])
            elif n is not None:
                want[(cpu, e['seq'])] = ('next', l[n]['seq'])
    got = {(int(c.get('data-cpu')), int(c.get('data-seq'))):
           (c.get('data-kind'), int(c.get('data-to-seq'))) for c in of('conn')}
    kinds = [k for k, s in want.values()]
    print('%d connectors (%d to a writer that reserved before, %d after); '
          '%d nested marks' % (len(got), kinds.count('prev'), kinds.count('next'),
                               sum(1 for e in inw if e['depth'] >= 2)))
    expect(len(of('conn')) == len(got), 'two connectors for one event')
    expect(got == want, 'connectors differ: %s' %
           sorted(set(got.items()) ^ set(want.items()))[:6])
    expect(want, 'no nested event in the window')
elif what == 'legend':
    keys = sorted(e.get('data-key') for e in of('legend'))
    need = sorted(['fast', 'slow', 'absolute', 'zero-delta', 'extend',
                   'clock-back', 'page-start', 'span', 'span-before', 'conn',
                   'conn-next'])
    print('legend: %s' % ' '.join(keys))
    expect(keys == need, 'legend %s' % keys)
    expect(any('title' in cls(e) and 'rbtrace plot' in ''.join(e.itertext())
               for e in els), 'no title')
    expect(len([e for e in els if 'tick' in cls(e)]) >= 3, 'fewer than 3 ticks')
elif what == 'hist':
    bars = of('bar')
    path = {b.get('data-key'): int(b.get('data-count')) for b in bars
            if b.get('data-hist') == 'paths'}
    dep = {(int(b.get('data-ctx')), int(b.get('data-depth'))):
           int(b.get('data-count')) for b in bars
           if b.get('data-hist') == 'depth' and b.get('data-ctx')}
    s = lambda k: sum(t[k] for t in tab.values())
    print('paths %s; check: events %d zero %d abs %d extend %d clock-back %d'
          % (sorted(path.items()), tot['events'], s('zero'), s('abs'),
             s('extend'), tot['clock-back']))
    expect(path['fast'] + path['slow'] == tot['events'], 'fast + slow')
    expect(path['zero-delta'] == s('zero'), 'zero delta')
    expect(path['absolute'] == s('abs'), 'absolute')
    expect(path['extend'] == s('extend'), 'extend')
    expect(path['clock-back'] == tot['clock-back'], 'clock back')
    expect(int(root.get('data-events')) == tot['events'], 'data-events')
    print('depth x context bars: %d, sum %d' % (len(dep), sum(dep.values())))
    expect(dep == cd, 'depth bars %s, check %s' % (sorted(dep.items()),
                                                   sorted(cd.items())))
elif what == 'png':
    png = args[0]
    d = open(png, 'rb').read()
    expect(d[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG')
    w, h = struct.unpack('>II', d[16:24])
    print('%s: %d bytes, %dx%d; svg %sx%s' % (png.split('/')[-1], len(d), w, h,
                                              root.get('width'), root.get('height')))
    expect(len(d) > 20000, 'PNG of %d bytes' % len(d))
    expect((w, h) == (int(root.get('width')), int(float(root.get('height')))),
           'PNG size')
    expect(w >= 1000 and h >= 400, 'PNG too small')
for f in fail:
    print('MISMATCH: ' + f)
sys.exit(1 if fail else 0)
EOF

svgcheck() {
	python3 "$tmp/svgcheck.py" "$@" 2>&1
}

# ---- recordings ----------------------------------------------------------

ok=ok
for mode in nest clockback; do
	"$rbgen" $mode "$tmp/$mode" >"$tmp/$mode.gen" 2>&1 || ok=fail
	"$rbtrace" check "$tmp/$mode" >"$tmp/$mode.check" 2>&1 || ok=fail
	"$rbtrace" report -l -t "$tmp/$mode" >"$tmp/$mode.report" 2>&1 || ok=fail
	grep -E '^(events|clock-back):' "$tmp/$mode.check" | sed "s/^/$mode /" | diag
done
result $ok "rbgen recordings (nest, clockback) pass rbtrace check"

# ---- the default window --------------------------------------------------

ok=ok
"$rbtrace" plot "$tmp/nest" -o "$tmp/nest.svg" >"$tmp/out" 2>&1 || ok=fail
diag <"$tmp/out"
python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' \
	"$tmp/nest.svg" 2>&1 | diag
[ "${PIPESTATUS[0]}" -eq 0 ] || ok=fail
result $ok "plot: default window, the SVG parses"

R=("$tmp/nest.svg" "$tmp/nest.report" "$tmp/nest.check")
ok=ok
svgcheck lanes "${R[@]}" >"$tmp/out" || ok=fail
diag <"$tmp/out"
result $ok "plot: a lane per CPU and context"

ok=ok
svgcheck marks "${R[@]}" deepest >"$tmp/out" || ok=fail
diag <"$tmp/out"
result $ok "plot: a mark per event of the default window, which holds the deepest nesting"

ok=ok
svgcheck conns "${R[@]}" >"$tmp/out" || ok=fail
diag <"$tmp/out"
result $ok "plot: each nested event connected to the writer it interrupted"

ok=ok
svgcheck legend "${R[@]}" >"$tmp/out" || ok=fail
diag <"$tmp/out"
result $ok "plot: title, time ticks, legend of every mark and line"

ok=ok
svgcheck hist "${R[@]}" >"$tmp/out" || ok=fail
diag <"$tmp/out"
result $ok "plot: histograms of paths and depths equal rbtrace check's totals"

ok=ok
if ! command -v rsvg-convert >/dev/null 2>&1; then
	echo "# rsvg-convert missing: scripts/deps.sh installs librsvg2-bin"
	ok=fail
else
	rsvg-convert "$tmp/nest.svg" -o "$tmp/nest.png" 2>&1 | diag
	[ "${PIPESTATUS[0]}" -eq 0 ] || ok=fail
	svgcheck png "${R[@]}" "$tmp/nest.png" >"$tmp/out" || ok=fail
	diag <"$tmp/out"
fi
result $ok "plot: rsvg-convert renders it to a PNG of its size"

# ---- chosen windows ------------------------------------------------------

# 20 us from the 2000th event of the recording, in us and in seconds
read -r from_ns to_ns < <(python3 - "$tmp/nest.report" <<'EOF'
import re, sys
ts = [int(m.group(1)) * 10**9 + int(m.group(2)) for m in
      (re.search(r' (\d+)\.(\d{9}): ', l) for l in open(sys.argv[1])) if m]
a = (ts[2000] - min(ts)) // 1000 * 1000 - 3000
print(a, a + 20000)
EOF
)
sec() {
	printf '%d.%09d' $(($1 / 1000000000)) $(($1 % 1000000000))
}
ok=ok
"$rbtrace" plot "$tmp/nest" --from $((from_ns / 1000))us \
	--to $((to_ns / 1000))us -o "$tmp/us.svg" 2>&1 | diag || ok=fail
"$rbtrace" plot "$tmp/nest" -f "$(sec $from_ns)" -t "$(sec $to_ns)" \
	-o "$tmp/sec.svg" 2>&1 | diag || ok=fail
cmp -s "$tmp/us.svg" "$tmp/sec.svg" || { echo "# us and s windows differ"; ok=fail; }
svgcheck marks "$tmp/us.svg" "$tmp/nest.report" "$tmp/nest.check" window \
	"$from_ns" "$to_ns" >"$tmp/out" || ok=fail
diag <"$tmp/out"
svgcheck conns "$tmp/us.svg" "$tmp/nest.report" "$tmp/nest.check" >"$tmp/out" ||
	ok=fail
diag <"$tmp/out"
result $ok "plot --from/--to (us, s): the marks and connectors of that window"

ok=ok
"$rbtrace" plot "$tmp/nest" --cpu 1 -f "${from_ns}ns" -t "${to_ns}ns" \
	-o "$tmp/cpu1.svg" 2>&1 | diag || ok=fail
for what in lanes marks; do
	svgcheck $what "$tmp/cpu1.svg" "$tmp/nest.report" "$tmp/nest.check" \
		cpu 1 >"$tmp/out" || ok=fail
	diag <"$tmp/out"
done
result $ok "plot --cpu 1: its lanes and marks only"

ok=ok
"$rbtrace" plot "$tmp/clockback" -o "$tmp/cb.svg" 2>&1 | diag || ok=fail
for what in marks conns hist; do
	svgcheck $what "$tmp/cb.svg" "$tmp/clockback.report" \
		"$tmp/clockback.check" >"$tmp/out" || ok=fail
	diag <"$tmp/out"
done
result $ok "plot of a clock stepping back: marks, connectors, histograms"

# ---- bad input -----------------------------------------------------------

# expect_bad NAME PATTERN ARGS...: exit 2, PATTERN on stderr, no output file
expect_bad() {
	local name=$1 pat=$2 st

	shift 2
	rm -f "$tmp/bad.svg"
	"$rbtrace" plot "$@" >"$tmp/out" 2>"$tmp/err"
	st=$?
	sed "s/^/$name: exit $st: /" "$tmp/err" | head -n 2 | diag
	[ $st -eq 2 ] && grep -q -- "$pat" "$tmp/err" && [ ! -s "$tmp/out" ] &&
		[ ! -e "$tmp/bad.svg" ]
}

ok=ok
expect_bad option '^usage: rbtrace plot' "$tmp/nest" --frobnicate \
	-o "$tmp/bad.svg" || ok=fail
expect_bad no-output '^usage: rbtrace plot' "$tmp/nest" || ok=fail
expect_bad two-recs '^usage: rbtrace plot' "$tmp/nest" "$tmp/nest" \
	-o "$tmp/bad.svg" || ok=fail
"$rbtrace" plot --help >"$tmp/out" 2>&1 && grep -q '^usage: rbtrace plot' \
	"$tmp/out" || ok=fail
result $ok "plot: unknown option, no -o, two recordings: usage, exit 2; --help"

ok=ok
expect_bad from-after-to 'not before' "$tmp/nest" --from 5us --to 2us \
	-o "$tmp/bad.svg" || ok=fail
expect_bad from-is-to 'not before' "$tmp/nest" --from 5us --to 5000 \
	-o "$tmp/bad.svg" || ok=fail
for t in nan inf -5 1e3 5parsecs 0x10 '' 1..2 99999999999999999999; do
	expect_bad "time '$t'" "bad time '$t'" "$tmp/nest" --from "$t" \
		-o "$tmp/bad.svg" || ok=fail
done
result $ok "plot: a window ending before it starts, times that are not: exit 2"

ok=ok
expect_bad empty 'no events in the window' "$tmp/nest" --from 100000s \
	-o "$tmp/bad.svg" || ok=fail
expect_bad empty-cpu 'no events of CPU 1 in the window' "$tmp/nest" \
	--cpu 1 --from 100000s -o "$tmp/bad.svg" || ok=fail
expect_bad no-cpu 'no CPU 7' "$tmp/nest" --cpu 7 -o "$tmp/bad.svg" || ok=fail
expect_bad bad-cpu "bad CPU 'x'" "$tmp/nest" --cpu x -o "$tmp/bad.svg" ||
	ok=fail
result $ok "plot: a window without events, a CPU not recorded: exit 2"

ok=ok
expect_bad no-dir "$tmp/none/x.svg: No such file" "$tmp/nest" \
	-o "$tmp/none/x.svg" || ok=fail
mkdir -p "$tmp/adir"
expect_bad is-dir "$tmp/adir: Is a directory" "$tmp/nest" -o "$tmp/adir" ||
	ok=fail
if [ -w /dev/full ]; then
	expect_bad full "/dev/full: No space left" "$tmp/nest" -o /dev/full ||
		ok=fail
fi
result $ok "plot: an output that cannot be written: exit 2, named"

echo "# plot: $nr test cases, $nr_fail failed"
[ $nr -eq $nr_tests ] || echo "# planned $nr_tests"
[ $nr_fail -eq 0 ]
