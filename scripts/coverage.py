#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# coverage.py - coverage of rb_core.c by the userspace tests, as KTAP.
#
# Run after the test programs of the coverage build (build/cov) have run;
# they leave the .gcda counters next to the objects. Reports the line and
# branch coverage of rb_core.c and fails if any branch of a write-path
# function was never taken. The write-path functions are named in
# rb_core.c by one or more comment lines of the form
#
#	/* rbn-write-path: fn1 fn2 ... */
#
# or lines " * rbn-write-path: fn1 fn2 ..." inside a block comment.
#
# Branches on a line that uses RBN_WARN_ON() are not required to be taken
# both ways (the warning fires only when the core is broken), nor are
# those on a line carrying the comment "rbn-cov-ignore"; both are counted
# and shown.
#
# Usage: coverage.py [--build DIR] [--source FILE]

import argparse
import json
import os
import re
import subprocess
import sys

# "/* rbn-write-path: a b */" on one line, or " * rbn-write-path: a b" as
# lines of a block comment (the names may then go on over several lines,
# each starting with the tag).
MARKER = re.compile(r'^\s*(?:/\*|\*)\s*rbn-write-path:\s*([\w\s]*?)\s*(?:\*/)?\s*$')
ATTRIBUTES = {'__attribute__', '__aligned', '__section', '__printf',
              '__must_hold', '__acquires', '__releases', 'alignof',
              '__alignof__', 'typeof', '__typeof__'}
IGNORE = re.compile(r'RBN_WARN_ON\s*\(|rbn-cov-ignore')


class Ktap:
    def __init__(self, plan):
        self.nr = 0
        self.failed = 0
        print('KTAP version 1')
        print('1..%d' % plan)
        sys.stdout.flush()

    @staticmethod
    def diag(msg):
        for line in msg.splitlines() or ['']:
            print('# ' + line)
        sys.stdout.flush()

    def result(self, ok, name):
        self.nr += 1
        if not ok:
            self.failed += 1
        print('%s %d %s' % ('ok' if ok else 'not ok', self.nr, name))
        sys.stdout.flush()

    def skip_rest(self, names, why):
        for name in names:
            self.nr += 1
            self.failed += 1
            print('not ok %d %s # %s' % (self.nr, name, why))


def pct(part, whole):
    return 100.0 * part / whole if whole else 100.0


def run_gcov(objdir, source):
    """Return gcov's JSON record of @source, or raise RuntimeError."""
    cmd = ['gcov', '--json-format', '--stdout', '--branch-probabilities',
           '--object-directory', objdir, source]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError('%s failed: %s' % (' '.join(cmd),
                                               proc.stderr.strip()))
    want = os.path.normpath(source)
    for doc in proc.stdout.splitlines():
        doc = doc.strip()
        if not doc:
            continue
        for rec in json.loads(doc).get('files', []):
            if os.path.normpath(rec['file']) == want:
                return rec
    raise RuntimeError('gcov reported nothing for %s' % source)


def function_ranges(src_lines):
    """Map each function defined in kernel style to (first, last) line.

    A definition is a line at column 0 holding "name(", followed by a "{"
    alone at column 0 and closed by the next "}" at column 0.
    """
    ranges = {}
    name = None
    start = None
    for nr, line in enumerate(src_lines, 1):
        if start is None:
            found = None
            if re.match(r'[A-Za-z_]', line) and \
                    not line.rstrip().endswith(';'):
                for m in re.finditer(r'\b([A-Za-z_]\w*)\s*\(', line):
                    if m.group(1) not in ATTRIBUTES:
                        found = m.group(1)
                        break
            if found:
                name = found
                first = nr
            elif line.startswith('{') and name:
                start = first
            elif line.strip() == '' or line.startswith('}'):
                name = None
        elif line.startswith('}'):
            ranges[name] = (start, nr)
            name = None
            start = None
    return ranges


def main():
    ap = argparse.ArgumentParser(description='coverage of rb_core.c as KTAP')
    ap.add_argument('--build', default='build/cov',
                    help='coverage build directory (default build/cov)')
    ap.add_argument('--source', default='rb_core.c')
    args = ap.parse_args()

    ktap = Ktap(2)
    objdir = os.path.join(args.build, 'obj')
    gcda = os.path.join(objdir,
                        os.path.splitext(os.path.basename(args.source))[0]
                        + '.gcda')
    if not os.path.exists(gcda):
        ktap.diag('%s missing: did the coverage tests run?' % gcda)
        ktap.result(False, 'coverage_report')
        ktap.skip_rest(['write_path_branches_taken'], 'no coverage data')
        return 1
    try:
        rec = run_gcov(objdir, args.source)
    except (RuntimeError, OSError, ValueError) as e:
        ktap.diag(str(e))
        ktap.result(False, 'coverage_report')
        ktap.skip_rest(['write_path_branches_taken'], 'no coverage data')
        return 1

    with open(args.source, encoding='utf-8', errors='replace') as f:
        src = f.read().splitlines()

    lines = rec.get('lines', [])
    line_total = len(lines)
    line_hit = sum(1 for ln in lines if ln['count'] > 0)
    br_total = sum(len(ln['branches']) for ln in lines)
    br_hit = sum(1 for ln in lines for b in ln['branches'] if b['count'] > 0)
    funcs = rec.get('functions', [])
    fn_hit = sum(1 for fn in funcs if fn['execution_count'] > 0)

    summary = ('%s: lines %d/%d (%.1f%%), branches %d/%d (%.1f%%), '
               'functions %d/%d'
               % (args.source, line_hit, line_total, pct(line_hit, line_total),
                  br_hit, br_total, pct(br_hit, br_total), fn_hit, len(funcs)))
    ktap.diag(summary)
    for fn in sorted(funcs, key=lambda fn: fn['start_line']):
        if fn['execution_count'] == 0:
            ktap.diag('never called: %s() at line %d'
                      % (fn['name'], fn['start_line']))
    try:
        os.makedirs(args.build, exist_ok=True)
        with open(os.path.join(args.build, 'coverage.txt'), 'w') as f:
            f.write(summary + '\n')
    except OSError:
        pass
    ktap.result(True, 'coverage_report')

    # The write path: every branch taken.
    names = []
    for line in src:
        m = MARKER.search(line)
        if m:
            names += m.group(1).split()
    if not names:
        ktap.diag('%s has no "/* rbn-write-path: fn1 fn2 ... */" comment '
                  'line naming the write-path functions' % args.source)
        ktap.result(False, 'write_path_branches_taken')
        return 1

    ranges = function_ranges(src)
    for fn in funcs:
        ranges[fn['name']] = (fn['start_line'], fn['end_line'])
    unknown = [n for n in names if n not in ranges]
    owner = {}
    for n in names:
        if n in ranges:
            first, last = ranges[n]
            for nr in range(first, last + 1):
                owner.setdefault(nr, n)

    by_line = {}
    for ln in lines:
        by_line.setdefault(ln['line_number'], []).extend(ln['branches'])

    checked = 0
    excluded = 0
    untaken = []
    per_fn = {n: [0, 0] for n in names}
    for nr in sorted(by_line):
        fn = owner.get(nr)
        branches = by_line[nr]
        if fn is None or not branches:
            continue
        text = src[nr - 1] if nr <= len(src) else ''
        if IGNORE.search(text):
            excluded += len(branches)
            continue
        checked += len(branches)
        per_fn[fn][1] += len(branches)
        for i, b in enumerate(branches):
            if b['count'] > 0:
                per_fn[fn][0] += 1
            else:
                untaken.append((nr, fn, i, len(branches), text.strip()))

    ktap.diag('write path: %s' % ' '.join(names))
    for n in names:
        if n in ranges:
            hit, tot = per_fn[n]
            ktap.diag('  %-28s lines %d-%d, branches %d/%d'
                      % (n + '()', ranges[n][0], ranges[n][1], hit, tot))
    ktap.diag('%d branches checked, %d on RBN_WARN_ON/rbn-cov-ignore lines '
              'excluded' % (checked, excluded))
    for n in unknown:
        ktap.diag('write-path function %s() not found in %s'
                  % (n, args.source))
    for nr, fn, i, tot, text in untaken:
        ktap.diag('untaken: %s:%d %s() branch %d of %d: %s'
                  % (args.source, nr, fn, i + 1, tot, text))
    ok = not untaken and not unknown and checked > 0
    if checked == 0 and not unknown:
        ktap.diag('no branch found in the write-path functions')
    ktap.result(ok, 'write_path_branches_taken')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
