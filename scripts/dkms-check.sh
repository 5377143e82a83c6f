#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dkms-check.sh - the install targets of the Makefile, for real: make
# install into a staging directory (INSTALL_MOD_PATH, then DESTDIR) and
# make uninstall there, then make dkms-install (DKMS add, build and
# install into the kernel's module tree and /usr/src) and make
# dkms-uninstall, against the headers of a kernel that is installed but
# not running. KTAP, one result per check; exits non-zero on a failure.
#
# Usage: scripts/dkms-check.sh [KERNEL]
#
# KERNEL is what scripts/vm-kernel.sh takes (default 6.1, Debian's
# kernel of make check's VM, whose headers scripts/deps.sh installs).
# Needs root (or password-less sudo) and dkms. It leaves the machine as
# it found it: /usr/src, /var/lib/dkms (DKMS's signing key included,
# when DKMS made it for this run) and /lib/modules/ABI are put back, and
# the last check compares them with what they were. It refuses to run
# (Bail out!) when rbnest is in DKMS or /usr/src already, or when KERNEL
# is the running kernel.

set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/build/dkms-check
KERNEL=${1:-6.1}
PLAN=12
n=0
failed=0
SUDO=()

ok() {
	n=$((n + 1))
	echo "ok $n $1"
}

not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n $1"
}

skip() {
	n=$((n + 1))
	echo "ok $n $1 # SKIP $2"
}

bail() {
	echo "Bail out! $*"
	exit 1
}

# Make with nothing of a calling make's command line.
mk() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory "$@"
}

# The state of the places the DKMS part writes to, one path a line.
state() {
	{
		find "/lib/modules/$ABI" -xdev
		find /var/lib/dkms -xdev
		find /usr/src -maxdepth 1 -name 'rbnest-*'
	} 2>/dev/null | sort
}

# Check a module file $1 built for $ABI: prints what is wrong, if
# anything.
check_ko() {
	local ko=$1 vermagic name
	[ -f "$ko" ] || { echo "no file $ko"; return; }
	name=$(modinfo -F name "$ko" 2>/dev/null)
	vermagic=$(modinfo -F vermagic "$ko" 2>/dev/null)
	[ "$name" = rbnest ] || echo "name '$name', not rbnest"
	[ "${vermagic%% *}" = "$ABI" ] ||
		echo "vermagic '$vermagic', not for $ABI"
}

# Put back what the DKMS part changed, whatever state it stopped in.
cleanup() {
	local v p
	[ -n "${DKMS_STARTED:-}" ] || return 0
	for v in $("${SUDO[@]}" dkms status -m rbnest 2>/dev/null |
		sed -n 's|^rbnest[/,] *\([^,:]*\)[,:].*|\1|p' | sort -u); do
		"${SUDO[@]}" dkms remove -m rbnest -v "$v" --all >/dev/null 2>&1
	done
	"${SUDO[@]}" rm -rf /usr/src/rbnest-*
	# depmod's files and DKMS's directories (updates/dkms) that were
	# not there before; DKMS's key when DKMS made it for this run.
	while read -r p; do
		case $p in
		"/lib/modules/$ABI"/modules.* | /var/lib/dkms/mok.*)
			"${SUDO[@]}" rm -f "$p" ;;
		esac
	done < <(comm -13 "$OUT/state.before" <(state))
	comm -13 "$OUT/state.before" <(state) | sort -r | while read -r p; do
		[ -d "$p" ] && "${SUDO[@]}" rmdir "$p" 2>/dev/null
	done
	DKMS_STARTED=
}

echo "KTAP version 1"
echo "1..$PLAN"

if [ "$(id -u)" -ne 0 ]; then
	sudo -n true 2>/dev/null || bail "needs root or password-less sudo"
	SUDO=(sudo -n)
fi
command -v dkms >/dev/null 2>&1 || bail "dkms not installed (scripts/deps.sh)"
ABI=$(bash "$ROOT/scripts/vm-kernel.sh" abi "$KERNEL") ||
	bail "no kernel $KERNEL"
KDIR=$(bash "$ROOT/scripts/vm-kernel.sh" headers "$ABI") ||
	bail "no headers of $ABI"
[ "$ABI" != "$(uname -r)" ] ||
	bail "$ABI is the running kernel: this test installs into its module tree"
[ -z "$("${SUDO[@]}" dkms status -m rbnest)" ] ||
	bail "rbnest is in DKMS already (make dkms-uninstall first)"
! compgen -G '/usr/src/rbnest-*' >/dev/null ||
	bail "/usr/src/rbnest-* exists already (make dkms-uninstall first)"
echo "# kernel $KERNEL: $ABI, headers $KDIR; running $(uname -r)"

rm -rf "$OUT"
mkdir -p "$OUT"
start=$(date +%s)

# ---- make install into a staging directory --------------------------------

# A copy of the tree's Makefile and module sources: the module it builds
# for $ABI does not replace the tree's own.
src=$OUT/src
mkdir -p "$src/port"
(cd "$ROOT" && cp -R Makefile Kbuild dkms.conf ./*.c port/kernel "$src/" &&
	mv "$src/kernel" "$src/port/kernel")
for f in "$ROOT"/*.h; do
	[ "${f##*/}" = rbn_kcompat.h ] || cp "$f" "$src/"
done
ls -R "/lib/modules/$ABI" >"$OUT/modules.before" 2>&1

stage=$OUT/stage-modpath
if ! mk -C "$src" install KDIR="$KDIR" INSTALL_MOD_PATH="$stage" \
	>"$OUT/install.log" 2>&1; then
	tail -n 20 "$OUT/install.log" | sed 's/^/# /'
	not_ok "make install INSTALL_MOD_PATH=DIR # failed, see $OUT/install.log"
else
	what=$(check_ko "$stage/lib/modules/$ABI/extra/rbnest.ko")
	# Nothing else in the staging directory, no depmod outside it.
	others=$(find "$stage" -type f ! -path "*/extra/rbnest.ko")
	ls -R "/lib/modules/$ABI" >"$OUT/modules.after" 2>&1
	cmp -s "$OUT/modules.before" "$OUT/modules.after" ||
		what+=" /lib/modules/$ABI changed"
	[ -z "$others" ] || what+=" other files: $others"
	if [ -z "$what" ]; then
		ok "make install INSTALL_MOD_PATH=DIR KDIR=... puts rbnest.ko for $ABI in DIR/lib/modules/$ABI/extra, nothing else"
	else
		not_ok "make install INSTALL_MOD_PATH=DIR # $what"
	fi
fi

stage=$OUT/stage-destdir
if ! mk -C "$src" install KDIR="$KDIR" KVER="$ABI" DESTDIR="$stage" \
	>"$OUT/install-destdir.log" 2>&1; then
	tail -n 20 "$OUT/install-destdir.log" | sed 's/^/# /'
	not_ok "make install DESTDIR=DIR # failed, see $OUT/install-destdir.log"
else
	what=$(check_ko "$stage/lib/modules/$ABI/extra/rbnest.ko")
	if [ -z "$what" ]; then
		ok "make install DESTDIR=DIR KVER=$ABI does the same"
	else
		not_ok "make install DESTDIR=DIR # $what"
	fi
fi

if mk -C "$src" uninstall KDIR="$KDIR" DESTDIR="$stage" \
	>"$OUT/uninstall.log" 2>&1 &&
   [ -d "$stage/lib/modules/$ABI/extra" ] &&
   [ -z "$(find "$stage" -name 'rbnest.ko*')" ]; then
	ok "make uninstall DESTDIR=DIR removes it"
else
	tail -n 20 "$OUT/uninstall.log" | sed 's/^/# /'
	not_ok "make uninstall DESTDIR=DIR # rbnest.ko still there or make failed"
fi

# A build against a kernel directory that is not one fails, and says so.
if mk -C "$src" module KDIR="$OUT/nowhere" >"$OUT/nokdir.log" 2>&1; then
	not_ok "make module KDIR=missing # succeeded"
elif grep -q 'is not a kernel build directory' "$OUT/nokdir.log"; then
	ok "make module KDIR=missing fails with a clear message"
else
	sed 's/^/# /' "$OUT/nokdir.log"
	not_ok "make module KDIR=missing # failed without the message"
fi

# Without KDIR, the headers of KVER (the running kernel by default) or
# a message that says which package has them; never other headers.
if mk -C "$src" module KVER=0.0-rbnest-none >"$OUT/nokver.log" 2>&1; then
	not_ok "make module without headers # succeeded"
elif grep -q 'apt-get install linux-headers-0.0-rbnest-none' "$OUT/nokver.log"; then
	ok "make module without the kernel's headers names their package"
else
	sed 's/^/# /' "$OUT/nokver.log"
	not_ok "make module without headers # failed without naming the package"
fi

# ---- DKMS -----------------------------------------------------------------

state >"$OUT/state.before"
DKMS_STARTED=1
trap cleanup EXIT

if ! "${SUDO[@]}" env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
	make --no-print-directory -C "$ROOT" dkms-install KVER="$ABI" \
	KDIR="$KDIR" >"$OUT/dkms-install.log" 2>&1; then
	tail -n 30 "$OUT/dkms-install.log" | sed 's/^/# /'
	for f in /var/lib/dkms/rbnest/*/build/make.log; do
		[ -f "$f" ] && tail -n 20 "$f" | sed 's/^/# make.log: /'
	done
	not_ok "make dkms-install KVER=$ABI # failed, see $OUT/dkms-install.log"
else
	st=$("${SUDO[@]}" dkms status -m rbnest)
	echo "$st" | sed 's/^/# dkms status: /'
	ver=$(echo "$st" | sed -n "s|^rbnest/\([^,]*\), $ABI, [^:]*: installed.*|\1|p")
	if [ -n "$ver" ] && [ "$(echo "$st" | wc -l)" -eq 1 ]; then
		ok "make dkms-install: dkms status says rbnest/$ver installed for $ABI"
	else
		not_ok "make dkms-install # dkms status is not one 'installed' line for $ABI"
	fi
fi
ver=${ver:-none}
secs=$(($(date +%s) - start))
echo "# $secs s so far"

# /usr/src holds the module's sources and the filled-in dkms.conf, no
# more: no Makefile, tests or tools.
want="Kbuild dkms.conf port port/kernel port/kernel/rb_port.h port/kernel/rbn_probe.c"
for f in "$ROOT"/rb_*.c "$ROOT"/rb_*.h "$ROOT"/rbn_*.h; do
	[ "${f##*/}" = rbn_kcompat.h ] || want+=" ${f##*/}"
done
want=$(echo "$want" | tr ' ' '\n' | sort | tr '\n' ' ')
have=$(cd "/usr/src/rbnest-$ver" 2>/dev/null && find . -mindepth 1 |
	sed 's|^\./||' | sort | tr '\n' ' ')
if [ "$have" = "$want" ] &&
   grep -qx "PACKAGE_VERSION=\"$ver\"" "/usr/src/rbnest-$ver/dkms.conf"; then
	ok "/usr/src/rbnest-$ver holds the module's sources and dkms.conf of version $ver, nothing else"
else
	echo "# want: $want"
	echo "# have: $have"
	not_ok "/usr/src/rbnest-$ver # not the module's sources, or no version in dkms.conf"
fi

# The module DKMS installed, found through depmod's modules.dep of $ABI.
ko=$(modinfo -k "$ABI" -n rbnest 2>/dev/null)
echo "# installed: ${ko:-none}"
what=$(check_ko "${ko:-none}")
case $ko in
"/lib/modules/$ABI/updates/dkms/rbnest.ko" | "/lib/modules/$ABI/extra/rbnest.ko") ;;
*) what+=" not in /lib/modules/$ABI/updates/dkms or extra" ;;
esac
if [ -z "$what" ]; then
	ok "the installed rbnest.ko is found by modinfo -k $ABI (depmod ran), its vermagic is $ABI"
else
	not_ok "the installed rbnest.ko # $what"
fi

# The normal build, not the test-only one (Kbuild's RBN_TESTONLY adds
# the validate_corrupt parameter).
parms=$(modinfo -F parm "${ko:-none}" 2>/dev/null | cut -d: -f1 | tr '\n' ' ')
if [[ " $parms" == *" sources "* ]] && [[ " $parms" != *" validate_corrupt "* ]]; then
	ok "it is the normal build, not the test-only one (no validate_corrupt)"
else
	not_ok "it is the normal build # parameters: $parms"
fi

# DKMS signs the module when it has sign-file (Debian: with its own
# key, /var/lib/dkms/mok.key, made on first use).
if ! grep -q '^Signing module' "$OUT/dkms-install.log"; then
	skip "DKMS signed the module" "DKMS did not sign on this system"
elif [ -n "$(modinfo -F signer "${ko:-none}" 2>/dev/null)" ]; then
	ok "DKMS signed the module (signer: $(modinfo -F signer "$ko"))"
else
	not_ok "DKMS signed the module # no signature in $ko"
fi

# make dkms-uninstall, then everything back as it was.
if "${SUDO[@]}" env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
	make --no-print-directory -C "$ROOT" dkms-uninstall \
	>"$OUT/dkms-uninstall.log" 2>&1 &&
   [ -z "$("${SUDO[@]}" dkms status -m rbnest)" ] &&
   ! compgen -G '/usr/src/rbnest-*' >/dev/null &&
   [ -z "$(find "/lib/modules/$ABI" -name 'rbnest.ko*')" ]; then
	ok "make dkms-uninstall: not in dkms status, /usr/src or /lib/modules/$ABI"
else
	tail -n 20 "$OUT/dkms-uninstall.log" | sed 's/^/# /'
	not_ok "make dkms-uninstall # rbnest left in DKMS, /usr/src or /lib/modules/$ABI"
fi
cleanup
if diff "$OUT/state.before" <(state) >"$OUT/state.diff"; then
	ok "/lib/modules/$ABI, /var/lib/dkms and /usr/src are as they were"
else
	sed 's/^/# /' "$OUT/state.diff"
	not_ok "/lib/modules/$ABI, /var/lib/dkms and /usr/src are as they were"
fi

echo "# $(($(date +%s) - start)) s"
[ "$n" -eq "$PLAN" ] || echo "# $n results, $PLAN planned"
[ "$failed" -eq 0 ] && [ "$n" -eq "$PLAN" ]
