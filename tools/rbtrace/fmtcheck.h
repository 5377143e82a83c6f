/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A guard in front of tep_parse_format(): libtraceevent 1.7 crashes on
 * some print formats (a division by zero in "A / B" with B = 0, a "?"
 * without ":"). rbnest's events print fields only, so anything else in
 * the arguments of "print fmt:" is refused before libtraceevent sees it.
 */
#ifndef _RBTRACE_FMTCHECK_H
#define _RBTRACE_FMTCHECK_H

#include <ctype.h>
#include <stdbool.h>
#include <string.h>

/*
 * Whether the "print fmt:" line of @fmt (@len bytes) is a quoted string
 * followed only by ", REC->field" arguments. A format without the line
 * is left to libtraceevent to refuse.
 */
static inline bool rbt_print_fmt_ok(const char *fmt, size_t len)
{
	static const char key[] = "print fmt:";
	const char *p = NULL, *end = fmt + len;
	const char *q;

	for (q = fmt; q + sizeof(key) - 1 <= end; q++) {
		if ((q == fmt || q[-1] == '\n') &&
		    !memcmp(q, key, sizeof(key) - 1)) {
			p = q + sizeof(key) - 1;
			break;
		}
	}
	if (!p)
		return true;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p >= end || *p++ != '"')
		return false;
	/* the format string itself */
	while (p < end && *p != '"') {
		if (*p == '\\')
			p++;
		p++;
	}
	if (p >= end)
		return false;
	p++;
	/* then only ", REC->name" */
	for (;;) {
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p >= end || *p == '\n' || *p == '\0')
			return true;
		if (*p++ != ',')
			return false;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (end - p < 6 || memcmp(p, "REC->", 5))
			return false;
		p += 5;
		if (!isalpha((unsigned char)*p) && *p != '_')
			return false;
		while (p < end && (isalnum((unsigned char)*p) || *p == '_'))
			p++;
	}
}

#endif /* _RBTRACE_FMTCHECK_H */
