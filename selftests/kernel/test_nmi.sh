#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# test_nmi.sh - the self-NMI source stops and unloads without an NMI
# left to the kernel's "unknown NMI" path.
#
# The generator's hrtimer sends an NMI to its own CPU; a handler that is
# gone when it arrives, or that does not claim it, leaves the kernel to
# print "Uhhuh. NMI received for unknown reason" (or "Dazed and confused")
# and, with kernel.unknown_nmi_panic, to panic. In the VM (RBN_VM=1) the
# test sets kernel.unknown_nmi_panic=1, so that such an NMI ends the run.
#
# Each round loads the module with the nmi and hrtimer sources at the
# highest rate (gen_period_us=20, gen_nmi_every=1), lets it run, and then
# either unloads at once (odd rounds) or first switches the nmi source off
# and then unloads (even rounds).
#
#  A. Every round: load, NMIs handled (its count printed), unload.
#  B. No "NMI received for unknown reason", "Dazed and confused", no
#     WARNING, BUG, Oops in the kernel log since the start of this test.
#
# RBN_NMI_ROUNDS: rounds (default 40, 20 with RBN_QUICK=1).

# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/ktap_helpers.sh"

rbn_require insmod rmmod

t=$rbn_tmp
rounds=${RBN_NMI_ROUNDS:-40}
[ "${RBN_QUICK:-0}" = 1 ] && [ -z "${RBN_NMI_ROUNDS:-}" ] && rounds=20

if ! rbn_load sources=; then
	ktap_print_header
	ktap_skip_all "$rbn_test: $rbn_err"
	exit "$KSFT_SKIP"
fi
if [ "$(rbn_source_field nmi state)" != off ] ||
   grep -q '^nmi .*unavailable' "$rbn_dir/sources"; then
	ktap_print_header
	ktap_skip_all "$rbn_test: no nmi source on this machine"
	exit "$KSFT_SKIP"
fi
rbn_unload

ktap_print_header
ktap_set_plan 2

panic_file=/proc/sys/kernel/unknown_nmi_panic
panic0=
if [ "${RBN_VM:-0}" = 1 ] && [ -w $panic_file ]; then
	panic0=$(cat $panic_file)
	echo 1 >$panic_file
	ktap_print_msg "kernel.unknown_nmi_panic=$(cat $panic_file): an unknown NMI panics the VM"
fi

rbn_dmesg_mark "test_nmi begin"
ok=1
done_rounds=0
total=0
min=
i=0
while [ $i -lt "$rounds" ]; do
	i=$((i + 1))
	if ! rbn_load sources=nmi,hrtimer gen_period_us=20 gen_nmi_every=1; then
		ktap_print_msg "round $i: $rbn_err"
		ok=0
		break
	fi
	sleep 0.3
	if [ $((i % 2)) = 0 ]; then
		rbn_set sources -nmi || ktap_print_msg "round $i: $rbn_err"
	fi
	n=$(rbn_source_field nmi events)
	if ! rbn_unload; then
		ktap_print_msg "round $i: $rbn_err"
		ok=0
		break
	fi
	n=${n:-0}
	total=$((total + n))
	[ -z "$min" ] || [ "$n" -lt "$min" ] && min=$n
	[ "$n" -gt 0 ] || {
		ktap_print_msg "round $i: no NMI handled"
		ok=0
	}
	done_rounds=$i
done
ktap_print_msg "$done_rounds of $rounds rounds;" \
	"NMIs handled: $total in all, at least ${min:-0} a round"
[ "$done_rounds" -eq "$rounds" ] || ok=0
ktap_test_result $ok "A: $rounds rounds of load, NMIs at the highest rate, unload"

rbn_dmesg_after "test_nmi begin" >"$t/dmesg"
{
	rbn_dmesg_reports "$t/dmesg"
	grep -E "NMI received for unknown reason|Dazed and confused|Uhhuh" "$t/dmesg"
} | sort -u >"$t/bad"
bad=$(grep -c . "$t/bad")
head -n 20 "$t/bad" | sed 's/^/# dmesg: /'
ktap_print_msg "kernel log: $(grep -c . "$t/dmesg") lines since the start, $bad bad"
ok=1
[ "$bad" -eq 0 ] || ok=0
ktap_test_result $ok "B: no unknown NMI, kernel log clean"

[ -n "$panic0" ] && echo "$panic0" >$panic_file
ktap_finished
