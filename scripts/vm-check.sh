#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# vm-check.sh - run the kernel selftests (selftests/kernel/run.sh) in the
# VM on each kernel given, and add their results up.
#
# Usage: scripts/vm-check.sh [--ktap] [--background | --wait] KERNEL...
#
# --background starts each kernel's run and returns; a later --wait with
# the same kernels waits for them and reports as a plain run does (the
# runs' state is in build/vm/check-bg/KERNEL).
#
# Each kernel's /out and console log go to build/vm/check/KERNEL. The
# runner's last "N passed, N failed, N skipped" line is added to the
# totals; a run that fails without such a line (no boot, panic, timeout)
# counts as one failure. The last line is the totals; the exit status is
# non-zero when anything failed.
#
# --ktap: for a test runner that counts top-level KTAP results (make
# check's selftests/user/run.sh): the VM's console is shown indented, and
# afterwards every test case of every kernel is listed as one flat KTAP
# result line ("ok 12 6.1 test_read: ..."), with a plan.
#
# Environment: VM_JOBS (kernels run at the same time, default 1: with
# more, each console is shown when its run is over), VM_CPUS (default 2),
# VM_TIMEOUT (seconds per kernel, default vm.sh's), VM_ARGS (more
# scripts/vm.sh options); RBN_QUICK,
# RBN_TEST_TIMEOUT, RBN_KEEP, RBN_MIN_EVENTS, RBN_NMI_ROUNDS,
# RBN_FAULT_ORDERS and RBN_SNAPSHOTS are passed on to the runner in the
# guest. On a debug kernel of scripts/debug-kernel.sh, RBN_MIN_EVENTS is
# RBN_MIN_EVENTS_DEBUG (default 150000), RBN_NMI_ROUNDS is
# RBN_NMI_ROUNDS_DEBUG (default 8) and RBN_SNAPSHOTS is
# RBN_SNAPSHOTS_DEBUG (default 8) unless set.

set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNNER=selftests/kernel/run.sh
BG_DIR=$ROOT/build/vm/check-bg
TOTALS_RE='^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped'

pass=0 fail=0 skip=0
summary=()
ktap=0
flat=()

# Boot kernel $1 and run the tests; the console goes to $2, the exit
# status to $3.
run_kernel() {
	local k=$1 log=$2 rcfile=$3 out=$ROOT/build/vm/check/$1 rc=0
	local args=(--kernel "$k" --cpus "${VM_CPUS:-2}" --out "$out")
	[ -n "${VM_TIMEOUT:-}" ] && args+=(--timeout "$VM_TIMEOUT")
	# shellcheck disable=SC2206 # VM_ARGS is a list of options
	args+=(${VM_ARGS:-})
	local knobs=(RBN_VM=1) v
	# test_validate needs the test-only build vm-kernel.sh makes next
	# to the module: missing, that is a failure, not a skip.
	case " ${VM_ARGS:-} " in
	*" --ko "*) ;;
	*) knobs+=(RBN_REQUIRE_TESTONLY=1) ;;
	esac
	for v in RBN_QUICK RBN_TEST_TIMEOUT RBN_KEEP RBN_MIN_EVENTS \
		RBN_NMI_ROUNDS RBN_FAULT_ORDERS RBN_SNAPSHOTS; do
		[ -n "${!v:-}" ] && knobs+=("$v=${!v}")
	done
	# KASAN, lockdep and KCSAN slow every write down several times:
	# test_nesting's event count is for a production kernel, a
	# load/unload round of test_nmi takes 10 s there, and each of
	# test_snapshot's snapshots 15 s (checked, and half of them read
	# through the snapshot file's text).
	if bash "$ROOT/scripts/debug-kernel.sh" is-debug "$k"; then
		[ -n "${RBN_MIN_EVENTS:-}" ] ||
			knobs+=("RBN_MIN_EVENTS=${RBN_MIN_EVENTS_DEBUG:-150000}")
		[ -n "${RBN_NMI_ROUNDS:-}" ] ||
			knobs+=("RBN_NMI_ROUNDS=${RBN_NMI_ROUNDS_DEBUG:-8}")
		[ -n "${RBN_SNAPSHOTS:-}" ] ||
			knobs+=("RBN_SNAPSHOTS=${RBN_SNAPSHOTS_DEBUG:-8}")
	fi
	rm -rf "$out"
	# The runner's knobs reach the guest through env(1) in the command.
	bash "$ROOT/scripts/vm.sh" "${args[@]}" -- env "${knobs[@]}" \
		sh "$RUNNER" >>"$log" 2>&1 || rc=$?
	echo $rc >"$rcfile"
}

# Add the results of kernel $1 (run by run_kernel, status $2) to the
# totals.
collect_kernel() {
	local k=$1 rc=$2 out=$ROOT/build/vm/check/$1 line p f s
	line=$(tr -d '\r' <"$out/vm-console.log" 2>/dev/null |
		grep -E "$TOTALS_RE" | tail -n 1) || true
	if [ -z "$line" ]; then
		p=0 f=1 s=0
	else
		read -r p _ f _ s _ <<<"${line//,/}"
		# A failing run whose tests all passed still failed (4: all
		# skipped, as in kselftest).
		[ "$rc" -ne 0 ] && [ "$rc" -ne 4 ] && [ "$f" -eq 0 ] && f=1
	fi
	pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
	summary+=("$k: $p passed, $f failed, $s skipped (exit $rc)")
	[ $ktap = 1 ] && flatten "$k" "$out/vm-console.log" "$p" "$f" "$s"
	return 0
}

# The test cases of kernel $1's console log $2 as flat result lines, in
# $flat; $3 $4 $5 are the runner's totals. Each script's cases are the
# lines indented once under its "# ---- NAME" header; a script's own
# result line with a reason ("not ok 3 test_x # timed out") is one more
# failure, as the runner counts it; a script skipped as a whole is one
# skipped case. Anything that does not add up to the totals is a failure.
flatten() {
	local k=$1 log=$2 line p=0 f=0 s=0
	local -a lines=()

	if [ -f "$log" ]; then
		mapfile -t lines < <(tr -d '\r' <"$log" | awk -v k="$k" '
			/^# ---- / { name = $3; next }
			name != "" && /^    (not )?ok [0-9]+ / {
				res = $1 == "ok" ? "ok" : "not ok"
				sub(/^    (not )?ok [0-9]+ /, "")
				print res " " k " " name ": " $0
				next
			}
			/^not ok [0-9]+ [^ ]+ # / {
				sub(/^not ok [0-9]+ [^ ]+ # /, "")
				print "not ok " k " " name ": " $0
				next
			}
			/^ok [0-9]+ [^ ]+ # SKIP/ {
				sub(/^ok [0-9]+ [^ ]+ # SKIP */, "")
				print "ok " k " " name " # SKIP " $0
			}')
	fi
	for line in "${lines[@]}"; do
		case $line in
		"not ok "*) f=$((f + 1)) ;;
		*"# SKIP"*) s=$((s + 1)) ;;
		*) p=$((p + 1)) ;;
		esac
		flat+=("$line")
	done
	if [ "$p $f $s" != "$3 $4 $5" ]; then
		flat+=("not ok $k: the console shows $p passed, $f failed, $s skipped; the runner said $3, $4, $5")
	fi
}

# The console log $1, indented when the output is KTAP.
show() {
	if [ $ktap = 1 ]; then
		sed 's/^/    /' "$1"
	else
		cat "$1"
	fi
}

print_flat() {
	local i=0 line
	echo "KTAP version 1"
	echo "1..${#flat[@]}"
	for line in "${flat[@]}"; do
		i=$((i + 1))
		case $line in
		"not ok "*) echo "not ok $i ${line#not ok }" ;;
		*) echo "ok $i ${line#ok }" ;;
		esac
	done
}

# --background: start each kernel's run and return at once.
start_background() {
	local k bg
	for k in "$@"; do
		bg=$BG_DIR/$k
		rm -rf "$bg"
		mkdir -p "$bg"
		run_kernel "$k" "$bg/console.log" "$bg/rc" </dev/null >/dev/null 2>&1 &
		echo $! >"$bg/pid"
		echo "# vm-check: kernel $k started in the background (pid $!)"
	done
}

# --wait: wait for the runs --background started, then as usual.
wait_background() {
	local k bg pid
	for k in "$@"; do
		bg=$BG_DIR/$k
		echo "# ==== kernel $k (run in the background)"
		if ! pid=$(cat "$bg/pid" 2>/dev/null); then
			echo "# vm-check: kernel $k was not started (--background)"
			collect_kernel "$k" 1
			continue
		fi
		while [ ! -f "$bg/rc" ] && kill -0 "$pid" 2>/dev/null; do
			sleep 5
		done
		show "$bg/console.log"
		collect_kernel "$k" "$(cat "$bg/rc" 2>/dev/null || echo 1)"
	done
}

main() {
	local k mode=
	if [ "${1:-}" = --ktap ]; then
		ktap=1
		shift
	fi
	case ${1:-} in
	--background | --wait)
		mode=$1
		shift
		;;
	esac
	[ $# -gt 0 ] || { echo "usage: vm-check.sh [--ktap] [--background|--wait] KERNEL..." >&2 && exit 1; }
	if [ ! -f "$ROOT/$RUNNER" ]; then
		echo "vm-check: no $RUNNER yet, nothing to run"
		exit 0
	fi
	if [ "$mode" = --background ]; then
		start_background "$@"
		exit 0
	fi
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	if [ "$mode" = --wait ]; then
		wait_background "$@"
	elif [ "${VM_JOBS:-1}" -gt 1 ]; then
		# Each VM runs on one host thread: several kernels at once,
		# each console shown once its run is over.
		echo "# ==== kernels $*, ${VM_JOBS} at a time"
		local running=0
		for k in "$@"; do
			if [ $running -ge "$VM_JOBS" ]; then
				wait -n
				running=$((running - 1))
			fi
			run_kernel "$k" "$tmp/$k.log" "$tmp/$k.rc" &
			running=$((running + 1))
		done
		wait
		for k in "$@"; do
			echo "# ==== kernel $k"
			show "$tmp/$k.log"
			collect_kernel "$k" "$(cat "$tmp/$k.rc" 2>/dev/null || echo 1)"
		done
	else
		for k in "$@"; do
			echo "# ==== kernel $k"
			# there before tail opens it
			: >"$tmp/$k.log"
			run_kernel "$k" "$tmp/$k.log" "$tmp/$k.rc" &
			# the console as it comes
			tail -n +1 -f --pid=$! "$tmp/$k.log" 2>/dev/null | show /dev/stdin
			wait
			collect_kernel "$k" "$(cat "$tmp/$k.rc")"
		done
	fi
	[ $ktap = 1 ] && print_flat
	echo "# ==== results"
	printf '# %s\n' "${summary[@]}"
	echo "$pass passed, $fail failed, $skip skipped"
	[ "$fail" -eq 0 ]
}

main "$@"
