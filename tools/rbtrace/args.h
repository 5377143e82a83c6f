/* SPDX-License-Identifier: GPL-2.0 */
/*
 * args.h - the numbers of rbtrace's options, parsed strictly, its version,
 * and the check of standard output at exit.
 */
#ifndef _RBTRACE_ARGS_H
#define _RBTRACE_ARGS_H

/* The Makefile passes "git describe"; without it, this. */
#ifndef RBTRACE_VERSION
#define RBTRACE_VERSION		"0.12"
#endif

/* The largest time limit or interval: one year. */
#define RBT_MAX_SECONDS		(365.0 * 24 * 3600)

/*
 * Each returns 0 with the value in *@v, or NULL-terminated reason text in
 * *@why and -1: @s must be decimal digits only (no sign, no blank), an
 * optional suffix where said, and nothing after.
 *
 * rbt_parse_uint():	 0 .. @max
 * rbt_parse_size():	 1 .. 2^64 - 1 bytes, suffix K, M or G (binary)
 * rbt_parse_seconds():	 a decimal fraction (digits, one '.'), above 0 and
 *			 at most RBT_MAX_SECONDS: no nan, inf, exponent or
 *			 hexadecimal
 */
int rbt_parse_uint(const char *s, unsigned long long max,
		   unsigned long long *v, const char **why);
int rbt_parse_size(const char *s, unsigned long long *v, const char **why);
int rbt_parse_seconds(const char *s, double *v, const char **why);

/*
 * Flush and close standard output; on an error (a full disk, a closed
 * pipe) print it on stderr. Return: 0, or -1.
 */
int rbt_close_stdout(const char *prog);

#endif /* _RBTRACE_ARGS_H */
