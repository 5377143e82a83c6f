#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# test_dmesg_re.sh - the kernel selftests' log check knows every report.
#
# rbn_dmesg_bad_re (selftests/kernel/ktap_helpers.sh) is what run.sh,
# test_dmesg.sh and the tests' own log checks look for in the kernel log.
# Each report line below is in the format the kernel's checkers print it
# (6.1 and 6.12: lockdep, KASAN, KFENCE, KCSAN, UBSAN, debug objects, list
# debugging, the lockup, RCU stall and hung-task detectors, kmemleak) and
# must match; each clean line, from the boot and the selftests of the
# debug kernels (their checkers announcing themselves, rbnest's own
# messages), must not. A KCSAN report of a data race of the kernel itself
# (no rbnest frame) is listed apart, not counted; one with an rbnest
# frame, or cut short, is counted (rbn_dmesg_reports). Output is KTAP.

set -uo pipefail

dir=$(cd "$(dirname "$0")/../kernel" && pwd)
# shellcheck source=../kernel/ktap_helpers.sh
. "$dir/ktap_helpers.sh"

reports=(
	'[   12.345678] WARNING: CPU: 1 PID: 123 at kernel/trace/rbnest/rb_core.c:100 rbn_commit+0x10/0x20 [rbnest]'
	'[   12.345678] ------------[ cut here ]------------'
	'[   12.345678] kernel BUG at mm/slub.c:4321!'
	'[   12.345678] BUG: unable to handle page fault for address: ffffc90000a3f000'
	'[   12.345678] Oops: 0000 [#1] PREEMPT SMP KASAN NOPTI'
	'[   12.345678] general protection fault, probably for non-canonical address 0xdffffc0000000001: 0000 [#1] PREEMPT SMP KASAN'
	'[   12.345678] RIP: 0010:rbn_reserve+0x42/0x300 [rbnest]'
	'[   12.345678] Kernel panic - not syncing: Fatal exception in interrupt'
	'[   12.345678] WARNING: possible circular locking dependency detected'
	'[   12.345678] WARNING: possible recursive locking detected'
	'[   12.345678] WARNING: inconsistent lock state'
	'[   12.345678] [ BUG: Invalid wait context ]'
	'[   12.345678] WARNING: suspicious RCU usage'
	'[   12.345678] INFO: lockdep is turned off.'
	'[   12.345678] DEBUG_LOCKS_WARN_ON(lock->magic != lock)'
	'[   12.345678] BUG: sleeping function called from invalid context at kernel/locking/spinlock_rt.c:48'
	'[   12.345678] BUG: KASAN: slab-out-of-bounds in rbn_read_page+0x1a4/0x3e0 [rbnest]'
	'[   12.345678] BUG: KASAN: use-after-free in rbn_free_buffer+0x20/0x90 [rbnest]'
	'[   12.345678] BUG: KFENCE: out-of-bounds read in rbn_read_page+0x1a4/0x3e0 [rbnest]'
	'[   12.345678] BUG: KCSAN: data-race in rbn_commit / rbn_read_page'
	'[   12.345678] UBSAN: shift-out-of-bounds in /build/rbnest/rb_core.c:512:20'
	'[   12.345678] UBSAN: array-index-out-of-bounds in rb_core.c:88:9'
	'[   12.345678] ODEBUG: free active (active state 0) object: 00000000c5ae8e0d object type: hrtimer hint: rbn_gen_hrtimer+0x0/0x80 [rbnest]'
	'[   12.345678] list_add corruption. prev->next should be next (ffff888003c0b7d0), but was 0000000000000000.'
	'[   12.345678] list_del corruption, ffff888003c0b7d0->next is LIST_POISON1 (dead000000000100)'
	'[   12.345678] watchdog: BUG: soft lockup - CPU#1 stuck for 26s! [rbn_gen/1:123]'
	'[   12.345678] watchdog: Watchdog detected hard LOCKUP on cpu 1'
	'[   12.345678] rcu: INFO: rcu_preempt self-detected stall on CPU'
	'[   12.345678] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:'
	'[   12.345678] INFO: task cat:321 blocked for more than 122 seconds.'
	'[   12.345678] BUG: workqueue lockup - pool cpus=1 node=0 flags=0x0 nice=0 stuck for 31s!'
	'[   12.345678] kmemleak: 3 new suspected memory leaks (see /sys/kernel/debug/kmemleak)'
	'[   12.345678] BUG: Bad page state in process insmod  pfn:0a3f0'
	'[   12.345678] ODEBUG: Out of memory. ODEBUG disabled'
)

clean=(
	'[    0.000000] Linux version 6.1.119-debug (root@localhost) (gcc (Debian 12.2.0-14) 12.2.0) #1 SMP PREEMPT_DYNAMIC'
	'[    0.000000] Lock dependency validator: Copyright (c) 2006 Red Hat, Inc., Ingo Molnar'
	'[    0.000000] ... MAX_LOCKDEP_SUBCLASSES:  8'
	'[    0.000000] kasan: KernelAddressSanitizer initialized (generic)'
	'[    0.000000] kfence: initialized - using 2097152 bytes for 255 objects at 0x(____ptrval____)-0x(____ptrval____)'
	'[    0.000000] kmemleak: Kernel memory leak detector disabled'
	'[    0.123456] kmemleak: Kernel memory leak detector initialized (mem pool available: 63000)'
	'[    0.123456] kcsan: enabled early'
	'[    0.123456] kcsan: strict mode configured'
	'[    0.123456] ODEBUG: selftest passed'
	'[    0.123456] NMI watchdog: Perf NMI watchdog permanently disabled'
	'[    0.123456] watchdog: Delayed init of the lockup detector failed: -19'
	'[    0.123456] rcu: Preemptible hierarchical RCU implementation.'
	'[    0.123456] Running RCU self tests'
	'[    1.234567] rbnest: loaded: 2 CPUs, 64 KiB per CPU, sources task,hrtimer,softirq,irq_work,nmi'
	'[    1.234567] rbnest: nmi: self-NMIs through the local APIC'
	'[    1.234567] rbnest: unloaded: 123456 events written, 0 dropped'
	'[    1.234567] rbnest-selftest: run.sh runs test_lockup'
	'[    1.234567] rbnest-selftest: test_lockup load'
	'[    1.234567] insmod (321): drop_caches: 3'
	'[    1.234567] random: crng init done'
	'[    1.234567] clocksource: Switched to clocksource tsc'
	'[    1.234567] FAULT_INJECTION: forcing a failure.'
	'[    2.100724] rcu: 	RCU lockdep checking is enabled.'
	'[   32.705635] insmod: page allocation failure: order:0, mode:0xcc0(GFP_KERNEL), nodemask=(null),cpuset=/,mems_allowed=0'
	'[   32.705635]  ? lockdep_hardirqs_on_prepare+0x17b/0x420'
	'[   32.715156]  ? lockdep_hardirqs_on+0x79/0x100'
	'[   32.722548] RIP: 0033:0x7fd9639da829'
	'[   32.722548]  kasan_save_stack+0x22/0x50'
	'[    1.234567] name failslab, interval 1, probability 0, space 0, times 1'
)

# KCSAN reports, whole, with $1 the function that made the read and $2
# its caller: a race of the kernel itself is not counted, even with
# rbnest as the caller of the kernel function that races; one in which
# rbnest's own code makes an access is.
kcsan_block() {
	cat <<EOF2
[    8.855990] ==================================================================
[    8.856854] BUG: KCSAN: data-race in ktime_get_mono_fast_ns / timekeeping_update
[    8.857359] 
[    8.857554] write to 0xffffffff81c9d948 of 56 bytes by interrupt on cpu 0:
[    8.858010]  timekeeping_update+0x1a9/0x490
[    8.859234]  tick_do_update_jiffies64+0x14b/0x1a0
[    8.866400] read to 0xffffffff81c9d964 of 4 bytes by task 317 on cpu 1:
[    8.866781]  $1
[    8.867076]  $2
[    8.869369] Reported by Kernel Concurrency Sanitizer on:
[    8.869502] CPU: 1 PID: 317 Comm: rbnest_task/1 Tainted: G           O       6.1.192-kcsan #1
[    8.870118] ==================================================================
EOF2
}
kcsan_cases=4

echo "KTAP version 1"
echo "1..$((${#reports[@]} + ${#clean[@]} + kcsan_cases))"
n=0
nr_fail=0
for l in "${reports[@]}"; do
	n=$((n + 1))
	if printf '%s\n' "$l" | grep -qE "$rbn_dmesg_bad_re"; then
		echo "ok $n report found: ${l#*] }"
	else
		nr_fail=$((nr_fail + 1))
		echo "not ok $n report missed: ${l#*] }"
	fi
done
for l in "${clean[@]}"; do
	n=$((n + 1))
	if printf '%s\n' "$l" | grep -qE "$rbn_dmesg_bad_re"; then
		nr_fail=$((nr_fail + 1))
		echo "not ok $n clean line taken for a report: ${l#*] }"
	else
		echo "ok $n clean line: ${l#*] }"
	fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kfast="ktime_get_mono_fast_ns+0xb2/0xf0"
kcsan_block "$kfast" "do_exit+0x4e6/0x1080" >"$tmp/kernel"
kcsan_block "$kfast" "rbn_module_clock+0x38/0x50 [rbnest]" >"$tmp/caller"
kcsan_block "rbn_reserve+0x305/0x1920 [rbnest]" "rbn_task_fn+0x1a3/0x420 [rbnest]" \
	>"$tmp/rbnest"
{ kcsan_block "$kfast" "do_exit+0x4e6/0x1080"; echo '[    9.1] kcsan: a report cut short'; } |
	head -n 8 >"$tmp/cut"
for c in kernel caller rbnest cut; do
	n=$((n + 1))
	: >"$tmp/races.$c"
	got=$(rbn_dmesg_reports "$tmp/$c" "$tmp/races.$c" | wc -l)
	races=$(wc -l <"$tmp/races.$c")
	case $c:$got:$races in
	kernel:0:1 | caller:0:1 | rbnest:1:0 | cut:1:0)
		echo "ok $n KCSAN report ($c): $got counted, $races listed as the kernel's"
		;;
	*)
		nr_fail=$((nr_fail + 1))
		echo "not ok $n KCSAN report ($c): $got counted, $races listed as the kernel's"
		;;
	esac
done

echo "# ${#reports[@]} report lines, ${#clean[@]} clean lines, $kcsan_cases KCSAN reports, $nr_fail wrong"
echo "# $((n - nr_fail)) passed, $nr_fail failed"
[ $nr_fail -eq 0 ]
