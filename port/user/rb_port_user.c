// SPDX-License-Identifier: GPL-2.0
/*
 * rb_port_user.c - state behind the userspace port of rbnest.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rb_port.h"

__thread int rbn_user_cpu;
__thread int rbn_user_context;
int rbn_user_nr_cpus = 4;
unsigned long rbn_user_warnings;
unsigned long rbn_user_relax_count;
bool rbn_user_nmi_unsafe;

rbn_test_hook_fn rbn_user_hook;
void *rbn_user_hook_arg;

/**
 * rbn_test_set_hook - call @fn at every label of the write path
 * @fn:		the hook, or NULL to remove it
 * @arg:	passed to @fn
 */
void rbn_test_set_hook(rbn_test_hook_fn fn, void *arg)
{
	rbn_user_hook_arg = arg;
	__atomic_store_n(&rbn_user_hook, fn, __ATOMIC_RELEASE);
}

rbn_test_hook_fn rbn_user_reader_hook;
void *rbn_user_reader_hook_arg;

/**
 * rbn_test_set_reader_hook - call @fn at every label of the reader's swap
 * @fn:		the hook, or NULL to remove it
 * @arg:	passed to @fn
 */
void rbn_test_set_reader_hook(rbn_test_hook_fn fn, void *arg)
{
	rbn_user_reader_hook_arg = arg;
	__atomic_store_n(&rbn_user_reader_hook, fn, __ATOMIC_RELEASE);
}

unsigned long rbn_user_reports;
bool rbn_user_report_print;
char rbn_user_mismatches[4096];

/**
 * rbn_port_report - a line of the run-time validator's report (pr_err())
 * @fmt:	printf format
 *
 * Counted in rbn_user_reports; the mismatch lines are appended to
 * rbn_user_mismatches (as far as it holds them; a test empties it);
 * printed on stderr only when rbn_user_report_print is set (mutants make
 * millions of them).
 */
void rbn_port_report(const char *fmt, ...)
{
	va_list ap;

	__atomic_add_fetch(&rbn_user_reports, 1, __ATOMIC_RELAXED);
	/* A mismatch's line (not the dump's): kept for the tests to read. */
	if (strstr(fmt, ": at ")) {
		size_t used = strlen(rbn_user_mismatches);

		va_start(ap, fmt);
		vsnprintf(rbn_user_mismatches + used,
			  sizeof(rbn_user_mismatches) - used, fmt, ap);
		va_end(ap);
	}
	if (!rbn_user_report_print)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "rbnest: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

/**
 * rbn_port_warn - report a broken invariant of the core (WARN_ON_ONCE)
 * @file:	source file
 * @line:	source line
 * @cond:	the condition that held
 *
 * Tests check rbn_user_warnings: any warning fails the suite.
 */
void rbn_port_warn(const char *file, int line, const char *cond)
{
	__atomic_add_fetch(&rbn_user_warnings, 1, __ATOMIC_RELAXED);
	fprintf(stderr, "rbnest: WARNING at %s:%d: %s\n", file, line, cond);
}
