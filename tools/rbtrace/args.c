// SPDX-License-Identifier: GPL-2.0
/*
 * args.c - strict numbers for rbtrace's options, and the check of
 * standard output at exit (see args.h).
 *
 * strtoul() and strtod() take what an option must not: a sign ("-5" is
 * a huge unsigned number), leading blanks, "nan", "inf", hexadecimal,
 * exponents; so each number is scanned here digit by digit, with its
 * overflow checked.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "args.h"

static int rbt_digits(const char **p, unsigned long long *v, const char **why)
{
	const char *s = *p;

	*v = 0;
	if (*s < '0' || *s > '9') {
		*why = *s ? "not a decimal number" : "empty";
		return -1;
	}
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned int d = *s - '0';

		if (*v > (~0ULL - d) / 10) {
			*why = "too large";
			return -1;
		}
		*v = *v * 10 + d;
	}
	*p = s;
	return 0;
}

int rbt_parse_uint(const char *s, unsigned long long max,
		   unsigned long long *v, const char **why)
{
	static char buf[64];

	if (rbt_digits(&s, v, why))
		return -1;
	if (*s) {
		*why = "not a decimal number (trailing characters)";
		return -1;
	}
	if (*v > max) {
		snprintf(buf, sizeof(buf), "above %llu", max);
		*why = buf;
		return -1;
	}
	return 0;
}

int rbt_parse_size(const char *s, unsigned long long *v, const char **why)
{
	unsigned int shift = 0;

	if (rbt_digits(&s, v, why))
		return -1;
	switch (*s) {
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	case '\0':
		break;
	default:
		*why = "not a number of bytes with an optional K, M or G";
		return -1;
	}
	if (shift && s[1]) {
		*why = "characters after the K, M or G suffix";
		return -1;
	}
	if (*v > ~0ULL >> shift) {
		*why = "too large (more than 2^64 - 1 bytes)";
		return -1;
	}
	*v <<= shift;
	if (!*v) {
		*why = "zero bytes";
		return -1;
	}
	return 0;
}

int rbt_parse_seconds(const char *s, double *v, const char **why)
{
	unsigned long long ip, fp = 0;
	double scale = 1;
	const char *f;

	if (rbt_digits(&s, &ip, why)) {
		if (*s == '.')
			*why = "not a decimal number (a digit before the '.')";
		return -1;
	}
	if (*s == '.') {
		f = ++s;
		if (rbt_digits(&s, &fp, why))
			return -1;
		/* digits past the nanosecond do not count */
		for (; f < s; f++)
			scale *= 10;
	}
	if (*s) {
		*why = "not a number of seconds (digits and one '.')";
		return -1;
	}
	if (ip > RBT_MAX_SECONDS) {
		*why = "more than a year";
		return -1;
	}
	*v = ip + fp / scale;
	if (*v <= 0 || *v > RBT_MAX_SECONDS) {
		*why = *v <= 0 ? "not above 0" : "more than a year";
		return -1;
	}
	return 0;
}

int rbt_close_stdout(const char *prog)
{
	int err = 0;

	if (fflush(stdout) || ferror(stdout))
		err = errno ? errno : EIO;
	if (fclose(stdout) && !err)
		err = errno ? errno : EIO;
	if (!err)
		return 0;
	fprintf(stderr, "%s: standard output: write error: %s\n", prog,
		strerror(err));
	return -1;
}
