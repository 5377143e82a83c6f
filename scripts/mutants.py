#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
mutants.py - mutation testing of rb_core.c against the userspace tests.

Usage: mutants.py [options] [NAME...]

Each mutant of the list (scripts/mutants.list) is a small named change of
rb_core.c that stands for a bug: one or more exact texts to find, each of
which must occur exactly once in rb_core.c, and their replacements. The
list is checked against the working tree's rb_core.c first: a text that
occurs 0 or more than once, or a list entry that is malformed, stops the
run before anything is built, so the list stays in step with the core.

The working tree (without the build directory and .git) is copied to
OUT/base/src and its userspace tests are built there (the -O2 "user"
variant, "make tests-user"). The tests are run once unmutated: the
baseline, which gives each test's running time (tests run fastest first),
its timeout (MUTANT_TIMEOUT_FACTOR times its baseline time, at least
MUTANT_TIMEOUT_MIN seconds) and its own results, against which a mutant's
results are judged.

Each mutant gets a copy of the base tree (objects included, so that only
rb_core.c is compiled again), has its edits applied, is built, and runs
the tests, fastest first, until one kills it. A test kills a mutant when,
compared with the baseline:
  - a test case that passed reports "not ok",
  - it prints a "# FAIL" diagnostic and printed none unmutated (the tests
    print one before the failing result line; MUTANT_EARLY=0 waits for
    the result line instead),
  - the core warns ("rbnest: WARNING") where it did not,
  - it crashes (killed by a signal) or runs past its timeout,
  - it exits non-zero where it exited zero, or reports fewer results
    than its plan.
A test is stopped as soon as it has killed. A mutant that does not build
is an error of the list, not a kill. A test ended by SIGTERM, SIGINT or
SIGHUP was stopped from outside (no test sends itself those): it is run
once more, and if that happens again the mutant is not judged.

Output: KTAP. Case 1 is the baseline (not ok when a test fails unmutated:
the cases that fail then cannot kill); then one case per mutant: "ok"
when a test killed it, or when it survived and the list says why it is
equivalent; "not ok" when it survived, did not build, or was killed
although the list calls it equivalent. Only where test_stress kills it in
one of its precondition cases, which check what a run saw (writers
interrupted inside the write path, nested four deep there) rather than
what the core did, must such a kill happen twice in a row: those depend
on timing, and one run on a loaded machine can miss them; a kill not seen
again is shown with the survivor. Any other kill of a mutant listed as
equivalent counts at once: it refutes the list's argument. Then the
table, "killed N of M" and the closing "N passed, N failed, 0 skipped"
line of the project's runners. The exit status is non-zero when any case
failed.

Environment (the options override it):
  MUTANTS                names of the mutants to run (default: all)
  MUTANT_JOBS            mutants at once (default: nproc)
  MUTANT_TESTS           test programs to run (default: every
                         selftests/user/test_*.c)
  MUTANT_ENV             the tests' environment, VAR=value words (default:
                         the quick sizes of make check's ASan run)
  MUTANT_TIMEOUT_FACTOR  per-test timeout, times the baseline time (4)
  MUTANT_TIMEOUT_MIN     ... but at least this many seconds (120)
  MUTANT_EARLY           1: a new "# FAIL" diagnostic kills (default 1)
  MUTANT_KEEP            1: keep each mutant's scratch tree

--report makes it a measurement: every judged mutant is an ok case, and
the summary counts the mutants caught by a check of the tests (a case
that failed, or a FAIL diagnostic), those killed otherwise (a warning of
the core, a crash, a hang) and the survivors. make mutants-validator
runs it on test_nest's validate families judged by the run-time
validator alone (RBN_NEST_VALIDATOR_ONLY=1).
"""

import argparse
import concurrent.futures
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time

DEFAULT_ENV = "RBN_NEST_QUICK=1 RBN_STRESS_SECONDS=30 RBN_STRESS_EVENTS=2000000"
CORE = "rb_core.c"
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_]*$")
RESULT_RE = re.compile(rb"^(not )?ok ([0-9]+)\b(.*)$")
PLAN_RE = re.compile(rb"^1\.\.([0-9]+)\s*$")
SKIP_RE = re.compile(rb"#\s*[Ss][Kk][Ii][Pp]")
FAIL_RE = re.compile(rb"^#\s*FAIL\b")
WARN = b"rbnest: WARNING"
LOG_LIMIT = 16 << 20
# test_stress's precondition cases: they check that a run saw writers
# interrupted inside the write path, and nested four deep there, not what
# the core did; a loaded machine can miss one in the time a run gets.
PRECONDITION_TEST = "test_stress"
PRECONDITION_RE = re.compile(r"^case [0-9]+ [a-z-]+: writers (interrupted|"
                             r"nested four deep) inside the write path$")
# No test sends itself these: a test ended by one was stopped from outside
# (a user, a job control). It is run again once; its result is not a kill.
OUTSIDE_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

print_lock = threading.Lock()


def say(*lines):
    with print_lock:
        for line in lines:
            print(line)
        sys.stdout.flush()


def die(msg):
    sys.stderr.write("mutants: %s\n" % msg)
    sys.exit(2)


# ---- the list --------------------------------------------------------------

class Mutant:
    def __init__(self, name, line):
        self.name = name
        self.line = line
        self.what = None
        self.equivalent = None
        self.edits = []		# [find, replace]


def parse_list(path):
    """Parse the mutant list; every problem is collected, then reported."""
    mutants, errors = [], []
    cur = None
    block = None		# (edit, index) that "|" lines append to
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for n, line in enumerate(lines, 1):
        where = "%s:%d" % (path, n)
        if line.startswith("|"):
            if block is None:
                errors.append("%s: text line outside find:/replace:" % where)
                continue
            edit, i = block
            edit[i] = (edit[i] or "") + line[1:] + "\n"
            continue
        block = None
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = re.match(r"^(name|what|equivalent|find|replace):(?: (.*))?$", line)
        if not m:
            errors.append("%s: not a list line: %r" % (where, line))
            continue
        key, val = m.group(1), m.group(2)
        if key == "name":
            if not val or not NAME_RE.match(val):
                errors.append("%s: bad mutant name %r" % (where, val))
            cur = Mutant(val or "?", n)
            mutants.append(cur)
            continue
        if cur is None:
            errors.append("%s: %s: before the first name:" % (where, key))
            continue
        if key in ("what", "equivalent"):
            if not val or not val.strip():
                errors.append("%s: %s: needs a text" % (where, key))
            elif getattr(cur, key) is not None:
                errors.append("%s: second %s: for %s" % (where, key, cur.name))
            else:
                setattr(cur, key, val.strip())
        elif key == "find":
            cur.edits.append([val, None])
            if val is None:
                block = (cur.edits[-1], 0)
        else:
            if not cur.edits or cur.edits[-1][1] is not None:
                errors.append("%s: replace: without its find:" % where)
                continue
            # An empty "replace:" deletes the text found.
            cur.edits[-1][1] = val if val is not None else ""
            if val is None:
                block = (cur.edits[-1], 1)
    seen = set()
    for m in mutants:
        where = "%s:%d: %s" % (path, m.line, m.name)
        if m.name in seen:
            errors.append("%s: name used twice" % where)
        seen.add(m.name)
        if not m.what:
            errors.append("%s: no what:" % where)
        if not m.edits:
            errors.append("%s: no find:" % where)
        for find, repl in m.edits:
            if not find:
                errors.append("%s: empty find:" % where)
            if repl is None:
                errors.append("%s: find: without replace:" % where)
    return mutants, errors


def apply_edits(text, mutant):
    """The core with the mutant's edits, or raise ValueError."""
    for i, (find, repl) in enumerate(mutant.edits, 1):
        count = text.count(find)
        if count != 1:
            first = find.strip().split("\n")[0]
            raise ValueError("edit %d: text found %d times in %s (must be "
                             "once): %r" % (i, count, CORE, first))
        text = text.replace(find, repl, 1)
    return text


# ---- running a test ---------------------------------------------------------

class Run:
    """One run of a test program, its output scanned as it comes."""

    def __init__(self):
        self.rc = None
        self.secs = 0.0
        self.timed_out = False
        self.plan = None
        self.cases = {}		# number -> (ok, name)
        self.warnings = 0
        self.fails = 0
        self.kill = None	# why it killed the mutant
        self.interrupted = False	# stopped from outside


def run_test(path, cwd, env, timeout, log, base=None, early=True):
    """Run a test; with @base (the baseline's Run), stop at the first kill."""
    r = Run()
    start = time.monotonic()
    proc = subprocess.Popen([path], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    buf = b""
    written = 0
    deadline = start + timeout

    def scan(line):
        m = RESULT_RE.match(line)
        if m and not SKIP_RE.search(m.group(3)):
            nr, ok = int(m.group(2)), m.group(1) is None
            r.cases[nr] = (ok, m.group(3).decode(errors="replace").strip())
            if (base is not None and not ok and
                    base.cases.get(nr, (False,))[0]):
                return "case %d %s" % (nr, r.cases[nr][1])
        elif m:
            r.cases[int(m.group(2))] = (True, "skip")
        m = PLAN_RE.match(line)
        if m and r.plan is None:
            r.plan = int(m.group(1))
        if WARN in line:
            r.warnings += 1
            if base is not None and not base.warnings:
                # Not the core's own words: the runner that runs us
                # counts every "rbnest: WARNING" line it sees as one.
                text = line.decode(errors="replace")
                text = text[text.find(WARN.decode()) + len(WARN):]
                return "the core warned %s" % text.strip()
        if FAIL_RE.match(line):
            r.fails += 1
            if base is not None and early and not base.fails:
                return "diagnostic: %s" % line.decode(errors="replace").strip()[:160]
        return None

    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                r.timed_out = True
                break
            if not sel.select(min(left, 1.0)):
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            if written < LOG_LIMIT:
                log.write(chunk)
                log.flush()
                written += len(chunk)
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                why = scan(line)
                if why and not r.kill:
                    r.kill = why
            if r.kill:
                break
        if buf and not r.kill:
            r.kill = scan(buf)
    finally:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait()
        sel.close()
        proc.stdout.close()
    r.rc = proc.returncode
    r.secs = time.monotonic() - start
    log.flush()
    if r.kill:
        return r
    if not r.timed_out and -r.rc in OUTSIDE_SIGNALS:
        r.interrupted = True
    elif r.timed_out:
        r.kill = "timeout after %ds" % timeout
    elif r.rc < 0:
        try:
            sig = signal.Signals(-r.rc).name
        except ValueError:
            sig = "signal %d" % -r.rc
        r.kill = "crash (%s)" % sig
    elif base is not None:
        results = len(r.cases)
        if r.rc != 0 and base.rc == 0:
            r.kill = "exit status %d" % r.rc
        elif base.plan is not None and (r.plan is None or r.plan != results) \
                and base.plan == len(base.cases):
            r.kill = "%d results of a plan of %s" % (results, r.plan)
    return r


def run_test_twice(path, cwd, env, timeout, log, base=None, early=True):
    """run_test(), once more if the first run was stopped from outside."""
    for attempt in (1, 2):
        r = run_test(path, cwd, env, timeout, log, base, early)
        if not r.interrupted:
            break
        log.write(("# ---- stopped from outside (signal %d)%s\n" %
                   (-r.rc, ", running it again" if attempt == 1 else
                    "")).encode())
        log.flush()
    return r


def baseline_problems(r):
    """What is wrong with a test run unmutated, or an empty list."""
    why = []
    if r.timed_out:
        why.append("timed out")
    elif r.interrupted:
        why.append("stopped from outside twice (signal %d)" % -r.rc)
    elif r.rc is not None and r.rc < 0:
        why.append("killed by signal %d" % -r.rc)
    elif r.rc:
        why.append("exit status %d" % r.rc)
    bad = sorted(n for n, (ok, _) in r.cases.items() if not ok)
    if bad:
        why.append("cases %s not ok" % " ".join(map(str, bad)))
    if r.plan is None:
        why.append("no plan")
    elif r.plan != len(r.cases):
        why.append("%d results of a plan of %d" % (len(r.cases), r.plan))
    if r.warnings:
        why.append("%d core warning(s)" % r.warnings)
    return why


# ---- trees -----------------------------------------------------------------

def clean_env():
    """The environment for make: nothing of a calling make's options."""
    env = dict(os.environ)
    for k in ("MAKEFLAGS", "MAKEOVERRIDES", "MFLAGS", "MAKELEVEL", "MAKE_TERMOUT",
              "MAKE_TERMERR"):
        env.pop(k, None)
    return env


def copy_tree(src, dst, exclude):
    """Copy the source tree @src to @dst, leaving out the @exclude paths."""
    src = os.path.realpath(src)
    excl = {os.path.realpath(e) for e in exclude}

    def ignore(d, names):
        d = os.path.realpath(d)
        return [n for n in names if os.path.join(d, n) in excl or
                (d == src and n == ".git")]
    shutil.copytree(src, dst, symlinks=True, ignore=ignore)


def make(tree, jobs, log):
    cmd = ["make", "--no-print-directory", "-C", tree, "BUILD=build",
           "-j%d" % jobs, "tests-user"]
    log.write(("$ %s\n" % " ".join(cmd)).encode())
    log.flush()
    return subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT,
                          stdin=subprocess.DEVNULL, env=clean_env()).returncode


# ---- one mutant -------------------------------------------------------------

class Result:
    def __init__(self, mutant):
        self.mutant = mutant
        self.status = None	# "killed", "survived", "error"
        self.by = None
        self.why = None
        self.secs = 0.0
        self.flaky = []	# kills of an equivalent mutant not seen again


def run_mutant(m, text, opts, tests, base_runs, env):
    res = Result(m)
    start = time.monotonic()
    work = os.path.join(opts.out, "work", m.name)
    tree = os.path.join(work, "src")
    logpath = os.path.join(opts.out, "logs", m.name + ".log")
    shutil.rmtree(work, ignore_errors=True)
    try:
        with open(logpath, "wb") as log:
            shutil.copytree(os.path.join(opts.out, "base", "src"), tree,
                            symlinks=True)
            core = os.path.join(tree, CORE)
            with open(core, "w", encoding="utf-8") as f:
                f.write(text)
            # A build stopped from outside fails too: one more try.
            if make(tree, 1, log) and make(tree, 1, log):
                res.status, res.why = "error", "does not build (see %s)" % logpath
                return res
            res.status = "survived"
            for t in tests:
                log.write(("\n# ---- %s\n" % t).encode())
                log.flush()
                b = base_runs[t]
                timeout = max(opts.timeout_min, opts.timeout_factor * b.secs)
                r = run_test_twice(os.path.join(tree, "build", "user", t),
                                   tree, env, timeout, log, base=b,
                                   early=opts.early)
                log.write(("# ---- %s: %s in %.1fs\n" %
                           (t, r.kill or ("stopped from outside" if
                                          r.interrupted else "passed"),
                            r.secs)).encode())
                if r.interrupted:
                    res.status = "error"
                    res.why = "%s stopped from outside twice (see %s)" % (
                        t, logpath)
                    break
                if (r.kill and m.equivalent is not None and
                        t == PRECONDITION_TEST and
                        PRECONDITION_RE.match(r.kill)):
                    # The list argues this mutant equivalent, and the
                    # kill is a precondition of the stress that a loaded
                    # machine can miss (how deep signals nest): it must
                    # happen again. Any other kill refutes the argument.
                    r2 = run_test_twice(os.path.join(tree, "build", "user",
                                                     t),
                                        tree, env, timeout, log, base=b,
                                        early=opts.early)
                    log.write(("# ---- %s again: %s in %.1fs\n" %
                               (t, r2.kill or "passed", r2.secs)).encode())
                    if not r2.kill and not r2.interrupted:
                        res.flaky.append("%s (%s, not again)" % (t, r.kill))
                        continue
                if r.kill:
                    res.status, res.by, res.why = "killed", t, r.kill
                    break
    finally:
        res.secs = time.monotonic() - start
        if not opts.keep:
            shutil.rmtree(work, ignore_errors=True)
    return res


def fmt_secs(s):
    s = int(round(s))
    if s >= 3600:
        return "%dh%02dm%02ds" % (s // 3600, s % 3600 // 60, s % 60)
    if s >= 60:
        return "%dm%02ds" % (s // 60, s % 60)
    return "%ds" % s


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root_default = os.path.dirname(here)
    e = os.environ.get
    ap = argparse.ArgumentParser(
        description="Mutation testing of rb_core.c (see the script's header).")
    ap.add_argument("names", nargs="*", help="mutants to run (default: all)")
    ap.add_argument("--root", default=root_default, help="the source tree")
    ap.add_argument("--list", default=os.path.join(here, "mutants.list"))
    ap.add_argument("--out", default=None,
                    help="scratch directory (default: ROOT/build/mutants)")
    ap.add_argument("--jobs", type=int, default=int(e("MUTANT_JOBS") or 0) or
                    os.cpu_count() or 1)
    ap.add_argument("--tests", default=e("MUTANT_TESTS") or "")
    ap.add_argument("--env", default=e("MUTANT_ENV") or DEFAULT_ENV)
    ap.add_argument("--timeout-factor", type=float,
                    default=float(e("MUTANT_TIMEOUT_FACTOR") or 4))
    ap.add_argument("--timeout-min", type=float,
                    default=float(e("MUTANT_TIMEOUT_MIN") or 120))
    ap.add_argument("--no-early", dest="early", action="store_false",
                    default=(e("MUTANT_EARLY") or "1") != "0")
    ap.add_argument("--keep", action="store_true",
                    default=(e("MUTANT_KEEP") or "0") != "0")
    ap.add_argument("--check", action="store_true",
                    help="only check the list against the core")
    ap.add_argument("--report", action="store_true",
                    help="a measurement, not a gate: count what the tests "
                    "catch by a check of their own, what is killed "
                    "otherwise and what survives; fail only on errors")
    opts = ap.parse_args()
    opts.root = os.path.abspath(opts.root)
    opts.out = os.path.abspath(opts.out or os.path.join(opts.root, "build", "mutants"))
    opts.jobs = max(1, opts.jobs)
    t0 = time.monotonic()

    # The list, checked as a whole against the working tree's core.
    mutants, errors = parse_list(opts.list)
    with open(os.path.join(opts.root, CORE), encoding="utf-8") as f:
        core = f.read()
    texts = {}
    for m in mutants:
        try:
            texts[m.name] = apply_edits(core, m)
            if texts[m.name] == core:
                errors.append("%s: the edits change nothing" % m.name)
        except ValueError as ex:
            errors.append("%s:%d: %s: %s" % (opts.list, m.line, m.name, ex))
    if errors:
        for err in errors:
            sys.stderr.write("mutants: %s\n" % err)
        die("%d error(s) in %s; nothing run" % (len(errors), opts.list))
    names = opts.names or (e("MUTANTS") or "").split()
    if names:
        known = {m.name for m in mutants}
        unknown = [n for n in names if n not in known]
        if unknown:
            die("no such mutant: %s" % " ".join(unknown))
        mutants = [m for m in mutants if m.name in names]
    if opts.check:
        print("%d mutants, every text found once in %s" % (len(mutants), CORE))
        return 0

    tests = opts.tests.split()
    if not tests:
        tdir = os.path.join(opts.root, "selftests", "user")
        tests = sorted(f[:-2] for f in os.listdir(tdir)
                       if f.startswith("test_") and f.endswith(".c"))
    env = clean_env()
    for w in opts.env.split():
        k, sep, v = w.partition("=")
        if not sep:
            die("MUTANT_ENV: not VAR=value: %r" % w)
        env[k] = v

    # The base tree: a copy of the working tree, built.
    shutil.rmtree(opts.out, ignore_errors=True)
    os.makedirs(os.path.join(opts.out, "logs"))
    base = os.path.join(opts.out, "base", "src")
    copy_tree(opts.root, base, [opts.out, os.path.join(opts.root, "build")])
    say("KTAP version 1", "1..%d" % (len(mutants) + 1),
        "# %d mutants of %s, %d at once; tests: %s; %s" %
        (len(mutants), CORE, opts.jobs, " ".join(tests), opts.env))
    with open(os.path.join(opts.out, "logs", "base-build.log"), "wb") as log:
        if make(base, opts.jobs, log):
            die("the unmutated tree does not build (%s)" % log.name)

    # The baseline: every test unmutated, for times and results.
    base_runs = {}
    base_bad = []
    with open(os.path.join(opts.out, "logs", "baseline.log"), "wb") as log:
        for t in tests:
            path = os.path.join(base, "build", "user", t)
            if not os.path.exists(path):
                die("%s was not built" % path)
            log.write(("\n# ---- %s\n" % t).encode())
            log.flush()
            r = run_test_twice(path, base, env, 3 * 3600, log)
            base_runs[t] = r
            why = baseline_problems(r)
            say("# baseline %s: %.1fs%s" % (t, r.secs,
                                             ", FAILS: " + "; ".join(why) if why else ""))
            if why:
                base_bad.append("%s (%s)" % (t, "; ".join(why)))
    tests.sort(key=lambda t: base_runs[t].secs)
    t_base = time.monotonic() - t0
    if base_bad:
        say("not ok 1 baseline # fails unmutated, its failing cases cannot "
            "kill: " + ", ".join(base_bad))
    else:
        say("ok 1 baseline # every test passes unmutated (%s)" % fmt_secs(t_base))

    # The mutants, MUTANT_JOBS at once; results in the list's order.
    results = {}
    done = [0]

    def one(m):
        r = run_mutant(m, texts[m.name], opts, tests, base_runs, env)
        with print_lock:
            done[0] += 1
            print("# [%d/%d] %s: %s (%s)" % (
                done[0], len(mutants), m.name,
                "killed by %s: %s" % (r.by, r.why) if r.status == "killed"
                else r.status.upper() if r.status == "survived" else r.why,
                fmt_secs(r.secs)))
            sys.stdout.flush()
        return r

    with concurrent.futures.ThreadPoolExecutor(max_workers=opts.jobs) as ex:
        futs = [ex.submit(one, m) for m in mutants]
        for m, f in zip(mutants, futs):
            results[m.name] = f.result()

    passed = 0 if base_bad else 1
    failed = 1 if base_bad else 0
    killed = survived = errors = 0
    caught = []
    table = []
    for i, m in enumerate(mutants, 2):
        r = results[m.name]
        if r.status == "killed":
            killed += 1
            desc = "killed by %s (%s)" % (r.by, r.why)
            ok = m.equivalent is None
            if not ok:
                desc += " but listed as equivalent"
        elif r.status == "survived":
            survived += 1
            ok = m.equivalent is not None
            desc = "SURVIVED" + (" (equivalent: %s)" % m.equivalent if ok else
                                 ": " + m.what)
            if r.flaky:
                desc += "; a kill not seen again: " + ", ".join(r.flaky)
        else:
            errors += 1
            ok = False
            desc = ("list error: " if r.why.startswith("does not build")
                    else "not judged: ") + r.why
        if r.status == "killed" and r.why.startswith(("case ", "diagnostic")):
            caught.append(m.name)
        if opts.report:
            ok = r.status in ("killed", "survived")
        passed += ok
        failed += not ok
        say("%s %d %s # %s" % ("ok" if ok else "not ok", i, m.name, desc))
        table.append("#   %-34s %s" % (m.name + ":", "killed by " + r.by
                                        if r.status == "killed" else
                                        "SURVIVED" if r.status == "survived"
                                        else "ERROR (%s)" % r.why))
    total = time.monotonic() - t0
    say("# results:", *table)
    equiv = sum(1 for m in mutants if m.equivalent is not None and
                results[m.name].status == "survived")
    if opts.report:
        say("# caught by a check of the tests (a failed case or a FAIL "
            "diagnostic): %d of %d; killed otherwise (the core warned, "
            "crashed, hung): %d; survived: %d" %
            (len(caught), len(mutants), killed - len(caught), survived),
            "# survived: " + " ".join(m.name for m in mutants
                                      if results[m.name].status == "survived"))
    say("# killed %d of %d (%d survived, %d of them listed as equivalent; "
        "%d not judged: did not build or stopped from outside)" %
        (killed, len(mutants), survived, equiv, errors),
        "# time: %s (baseline %s), %d at once" % (fmt_secs(total),
                                                  fmt_secs(t_base), opts.jobs),
        "%d passed, %d failed, 0 skipped" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
