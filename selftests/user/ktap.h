/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktap.h - minimal KTAP output for the userspace tests of rbnest.
 *
 * Each test program prints "KTAP version 1", a plan, then one result line
 * per test case. Diagnostics ("# ...") before a result say what was
 * checked, with counts. selftests/user/run.sh adds the results of all
 * programs up into the closing "N passed, N failed, N skipped" line.
 */
#ifndef _RBN_KTAP_H
#define _RBN_KTAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static int ktap_nr, ktap_nr_fail, ktap_nr_skip;

static inline void ktap_start(int plan)
{
	printf("KTAP version 1\n1..%d\n", plan);
	fflush(stdout);
}

#ifndef __printf
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#endif

static inline void __printf(1, 2)
ktap_print(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static inline void ktap_result(bool ok, const char *name)
{
	ktap_nr++;
	if (!ok)
		ktap_nr_fail++;
	printf("%s %d %s\n", ok ? "ok" : "not ok", ktap_nr, name);
	fflush(stdout);
}

static inline void ktap_skip(const char *name, const char *why)
{
	ktap_nr++;
	ktap_nr_skip++;
	printf("ok %d %s # SKIP %s\n", ktap_nr, name, why);
	fflush(stdout);
}

/* Exit status of the program: 0 when every test case passed. */
static inline int ktap_finish(void)
{
	printf("# Totals: pass:%d fail:%d skip:%d\n",
	       ktap_nr - ktap_nr_fail - ktap_nr_skip, ktap_nr_fail,
	       ktap_nr_skip);
	fflush(stdout);
	return ktap_nr_fail ? 1 : 0;
}

#endif /* _RBN_KTAP_H */
