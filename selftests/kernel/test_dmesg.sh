#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test_dmesg.sh - the kernel log has no warning after the tests (run last).
#
# Looks at the kernel log from the last "rbnest-selftest: run.sh start"
# line on that run.sh writes to /dev/kmsg (all of the log when there is none)
# for the reports of rbn_dmesg_reports (ktap_helpers.sh: WARNING, BUG,
# Oops, lockdep, sleeping function called from invalid context, KASAN,
# UBSAN, KFENCE, KCSAN, debug objects, list corruption, lockups, RCU
# stalls, hung tasks, kmemleak) and prints the lines it found. A KCSAN
# report of a data race of the kernel itself (neither access made by
# rbnest's code) is listed and not counted. Also: the module is not left loaded; on a
# kernel with lockdep, lockdep is still validating (it
# turns itself off after its first report, so a report before the mark,
# at boot, would leave everything after it unchecked); on a kernel with
# kmemleak, a scan made now that the module is unloaded finds no leak
# (run.sh cleared the earlier suspects when it started). The lockdep,
# atomic-sleep, KASAN, UBSAN, KFENCE, KCSAN and kmemleak reports can only
# come from the debug kernels of scripts/debug-kernel.sh (make
# check-debug); Debian's kernels have none of these checkers.

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

if [ "$(id -u 2>/dev/null)" != 0 ]; then
	ktap_print_header
	ktap_skip_all "$rbn_test: not root"
	exit "$KSFT_SKIP"
fi
if ! dmesg >/dev/null 2>&1; then
	ktap_print_header
	ktap_skip_all "$rbn_test: cannot read the kernel log"
	exit "$KSFT_SKIP"
fi

ktap_print_header
ktap_set_plan 4

mark="rbnest-selftest: run.sh start"
log=$(mktemp "${RBN_TMPDIR:-${TMPDIR:-/tmp}}/rbnest-dmesg.XXXXXX")
if dmesg 2>/dev/null | grep -q "$mark"; then
	ktap_print_msg "kernel log from the last '$mark' on"
else
	ktap_print_msg "no '$mark' line: the whole kernel log"
fi
rbn_dmesg_after "$mark" >"$log"
lines=$(wc -l <"$log")
rbn_dmesg_reports "$log" "$log.races" >"$log.bad"
bad=$(wc -l <"$log.bad")
head -n 40 "$log.bad" | sed 's/^/# dmesg: /'
# the context of the first one
if [ "$bad" -gt 0 ]; then
	first=$(grep -n -m 1 -F "$(head -n 1 "$log.bad")" "$log" | cut -d: -f1)
	sed -n "$((first > 5 ? first - 5 : 1)),$((first + 30))p" "$log" |
		sed 's/^/# context: /'
fi
ktap_print_msg "$lines lines checked, $bad matching /$rbn_dmesg_bad_re/"
if [ -s "$log.races" ]; then
	ktap_print_msg "KCSAN reports of data races of the kernel itself (neither access made by rbnest), not counted:"
	sed 's/^\[[^]]*\] *//' "$log.races" | sort | uniq -c | sed 's/^/#   /'
fi
ok=0
[ "$lines" -gt 0 ] && [ "$bad" -eq 0 ] && ok=1
ktap_test_result $ok "no kernel warning in the log"
rm -f "$log" "$log.bad" "$log.races"

ok=1
if rbn_loaded; then
	ktap_print_msg "$rbn_name is still loaded"
	ok=0
fi
[ -d "$rbn_dir" ] && ok=0
ktap_test_result $ok "no module left loaded"

if [ -r /proc/lockdep_stats ]; then
	locks=$(sed -n 's/^ *debug_locks: *//p' /proc/lockdep_stats)
	ktap_print_msg "lockdep: debug_locks=${locks:-?}"
	ok=0
	[ "$locks" = 1 ] && ok=1
	ktap_test_result $ok "lockdep still validating"
else
	ktap_test_skip "lockdep still validating" "no lockdep in this kernel"
fi

# KCSAN (6.1-kcsan): what it watched during the run, as evidence that it
# was looking (a data race it reports fails the log check above).
if [ -r "$rbn_debugfs/kcsan" ]; then
	ktap_print_msg "kcsan: $(grep -E '^(enabled|used_watchpoints|setup_watchpoints|data_races|assert_failures|no_capacity|report_races|races_unknown_origin):' \
		"$rbn_debugfs/kcsan" | tr '\n' ' ')"
fi

if rbn_kmemleak_scan; then
	ktap_print_msg "kmemleak: $rbn_leaks unreferenced objects after two scans"
	ok=0
	[ "$rbn_leaks" -eq 0 ] && ok=1
	ktap_test_result $ok "kmemleak finds no leak"
else
	ktap_test_skip "kmemleak finds no leak" "no kmemleak in this kernel"
fi

ktap_finished
