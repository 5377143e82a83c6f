/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rbtrace: record, check and report rbnest recordings.
 *
 * A recording (REC) is a directory holding the format files the module
 * publishes (header_page, header_event, events/rbnest/sample/format, and
 * optionally trace_clock) and one cpuN.raw file per CPU: whole sub-buffer
 * images, one after the other.
 */
#ifndef _RBTRACE_H
#define _RBTRACE_H

/* Exit statuses of every sub-command. */
#define RBT_EXIT_OK		0	/* all checks passed */
#define RBT_EXIT_VIOLATION	1	/* an invariant does not hold */
#define RBT_EXIT_INPUT		2	/* bad input or bad usage */

#endif /* _RBTRACE_H */
