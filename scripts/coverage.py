#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# coverage.py - coverage of rb_core.c by the userspace tests, as KTAP.
#
# Run after the test programs of the coverage build (build/cov) have run;
# they leave the .gcda counters next to the objects. Shows the line and
# branch coverage of rb_core.c as a whole, and has two test cases on its
# write path (reserve and commit): every line of code of a write-path
# function ran (write_path_lines_executed), and every branch of one was
# taken (write_path_branches_taken); each not-ok names the lines. The
# write-path functions are named in rb_core.c by one or more comment
# lines of the form
#
#	/* rbn-write-path: fn1 fn2 ... */
#
# or lines " * rbn-write-path: fn1 fn2 ..." inside a block comment.
#
# Branches on a line that uses RBN_WARN_ON() are not required to be taken
# both ways (the warning fires only when the core is broken), nor are
# those on a line carrying the comment "rbn-cov-ignore"; both are counted
# and shown. When such a line holds the condition of an "if", the
# statement or block the condition guards need not run either (the lines
# after a warning, or after a race the tests cannot force); those lines
# are counted and shown too.
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


def code_only(src_lines):
    """The source as one string with comments and literals blanked out.

    Every character of a comment, string or character literal becomes a
    blank (newlines stay), so that offsets and line numbers are those of
    the source and parentheses and braces can be matched.
    """
    text = '\n'.join(src_lines) + '\n'
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
        elif text[i] in '"\'':
            j = i + 1
            while j < n and text[j] != text[i] and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            j += 1
        else:
            i += 1
            continue
        for k in range(i, min(j, n)):
            if out[k] != '\n':
                out[k] = ' '
        i = j
    return ''.join(out)


def guarded_lines(code, nr):
    """Lines of the statement that the "if" on line @nr guards.

    @code is the output of code_only(). Returns the set of line numbers
    from the one after the condition to the end of the guarded statement
    (its block's closing brace, or the ";" of a single statement); empty
    if line @nr holds no "if (".
    """
    starts = [0]
    for m in re.finditer('\n', code):
        starts.append(m.end())
    if nr > len(starts) - 1:
        return set()
    begin, end = starts[nr - 1], starts[nr]
    m = re.search(r'\bif\s*\(', code[begin:end])
    if m is None:
        return set()
    i = begin + m.end()
    depth = 1
    while i < len(code) and depth:
        depth += {'(': 1, ')': -1}.get(code[i], 0)
        i += 1
    cond_end = i
    while i < len(code) and code[i].isspace():
        i += 1
    if i < len(code) and code[i] == '{':
        depth = 0
        while i < len(code):
            depth += {'{': 1, '}': -1}.get(code[i], 0)
            i += 1
            if not depth:
                break
    else:
        depth = 0
        while i < len(code):
            depth += {'(': 1, ')': -1, '{': 1, '}': -1}.get(code[i], 0)
            i += 1
            if not depth and code[i - 1] == ';':
                break
    first = code.count('\n', 0, cond_end) + 1
    last = code.count('\n', 0, i - 1) + 1
    # the line the condition ends on runs (the test), the rest need not
    return set(range(first + 1, last + 1))


def main():
    ap = argparse.ArgumentParser(description='coverage of rb_core.c as KTAP')
    ap.add_argument('--build', default='build/cov',
                    help='coverage build directory (default build/cov)')
    ap.add_argument('--source', default='rb_core.c')
    args = ap.parse_args()

    cases = ['write_path_lines_executed', 'write_path_branches_taken']
    ktap = Ktap(len(cases))
    objdir = os.path.join(args.build, 'obj')
    gcda = os.path.join(objdir,
                        os.path.splitext(os.path.basename(args.source))[0]
                        + '.gcda')
    if not os.path.exists(gcda):
        ktap.skip_rest(cases, '%s missing: did the coverage tests run?'
                       % gcda)
        return 1
    try:
        rec = run_gcov(objdir, args.source)
    except (RuntimeError, OSError, ValueError) as e:
        ktap.diag(str(e))
        ktap.skip_rest(cases, 'no coverage data')
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

    # The write path: its functions and the lines of each.
    names = []
    for line in src:
        m = MARKER.search(line)
        if m:
            names += m.group(1).split()
    if not names:
        ktap.skip_rest(cases, '%s has no "/* rbn-write-path: fn1 fn2 ... */"'
                       ' comment line naming the write-path functions'
                       % args.source)
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
        by_line.setdefault(ln['line_number'], []).append(ln)

    def text_of(nr):
        return src[nr - 1] if nr <= len(src) else ''

    # Lines excused from running: those an "if" on an excused line guards.
    code = code_only(src)
    guarded = {}
    for nr in sorted(owner):
        if IGNORE.search(text_of(nr)):
            for g in guarded_lines(code, nr):
                guarded.setdefault(g, nr)

    ktap.diag('write path: %s' % ' '.join(names))
    for n in unknown:
        ktap.diag('write-path function %s() not found in %s'
                  % (n, args.source))

    # Lines of code (those gcov counts) that never ran, and branches never
    # taken, per function.
    lines_checked = 0
    excused = []
    unrun = []
    br_checked = 0
    br_excluded = 0
    untaken = []
    per_fn = {n: [0, 0, 0, 0] for n in names}
    for nr in sorted(by_line):
        fn = owner.get(nr)
        if fn is None:
            continue
        text = text_of(nr)
        count = sum(ln['count'] for ln in by_line[nr])
        if nr in guarded:
            excused.append((nr, fn, count, guarded[nr]))
        else:
            lines_checked += 1
            per_fn[fn][1] += 1
            if count > 0:
                per_fn[fn][0] += 1
            else:
                unrun.append((nr, fn, text.strip()))
        branches = [b for ln in by_line[nr] for b in ln['branches']]
        if IGNORE.search(text):
            br_excluded += len(branches)
            continue
        br_checked += len(branches)
        per_fn[fn][3] += len(branches)
        for i, b in enumerate(branches):
            if b['count'] > 0:
                per_fn[fn][2] += 1
            else:
                untaken.append((nr, fn, i, len(branches), text.strip()))

    for n in names:
        if n in ranges:
            lhit, ltot, bhit, btot = per_fn[n]
            ktap.diag('  %-28s lines %d-%d: lines run %d/%d, branches %d/%d'
                      % (n + '()', ranges[n][0], ranges[n][1], lhit, ltot,
                         bhit, btot))

    # ---- every line of code ran ----
    ktap.diag('%d lines of code checked; %d guarded by a condition on an '
              'RBN_WARN_ON/rbn-cov-ignore line excused (%d of them ran)'
              % (lines_checked, len(excused),
                 sum(1 for e in excused if e[2])))
    for nr, fn, count, by in excused:
        ktap.diag('excused: %s:%d %s() (guarded by line %d), ran %d times: %s'
                  % (args.source, nr, fn, by, count, text_of(nr).strip()))
    for nr, fn, text in unrun:
        ktap.diag('not run: %s:%d %s(): %s' % (args.source, nr, fn, text))
    ok_lines = not unrun and not unknown and lines_checked > 0
    if lines_checked == 0 and not unknown:
        ktap.diag('no line of code found in the write-path functions')
    ktap.result(ok_lines, 'write_path_lines_executed')

    # ---- every branch taken ----
    ktap.diag('%d branches checked, %d on RBN_WARN_ON/rbn-cov-ignore lines '
              'excluded' % (br_checked, br_excluded))
    for nr, fn, i, tot, text in untaken:
        ktap.diag('untaken: %s:%d %s() branch %d of %d: %s'
                  % (args.source, nr, fn, i + 1, tot, text))
    ok = not untaken and not unknown and br_checked > 0
    if br_checked == 0 and not unknown:
        ktap.diag('no branch found in the write-path functions')
    ktap.result(ok, 'write_path_branches_taken')
    return 0 if ok and ok_lines else 1


if __name__ == '__main__':
    sys.exit(main())
