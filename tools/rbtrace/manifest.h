/* SPDX-License-Identifier: GPL-2.0 */
/*
 * manifest.h - what a recording says it holds, and the checks of a
 * recording as a whole that check, report and export share.
 *
 * "rbtrace record" writes REC/manifest, one "key: value" per line (see
 * manifest.c and the README): the CPUs recorded, each CPU file's bytes and
 * pages, the kernel release, the module's parameters and settings, the
 * sources on, the start and end times, and each CPU's stats file at the
 * start and at the end.
 */
#ifndef _RBTRACE_MANIFEST_H
#define _RBTRACE_MANIFEST_H

#include <stdbool.h>

/* The file name, in the recording directory. */
#define RBT_MANIFEST		"manifest"
/* The format written by this rbtrace ("rbtrace-manifest: 1"). */
#define RBT_MANIFEST_FORMAT	1

/**
 * struct rbt_cpu_counts - what "rbtrace check" read of one CPU's file
 * @present:	the CPU's cpuN.raw was read
 * @events:	data events decoded (paddings, time extends and stamps are
 *		not events)
 * @pages:	sub-buffers read
 * @bytes:	bytes read (@pages times the sub-buffer size)
 * @missed_pages: pages with the missed-events flag
 * @missed_sum:	the missed-events counts stored on those pages, added up
 * @missed_unknown: pages with the flag but no room for the count
 *
 * Whoever decodes the pages fills one per CPU, CPU numbers as indexes,
 * and hands them to rbt_manifest_check() once every page was read: the
 * streaming check keeps these running totals as it goes.
 */
struct rbt_cpu_counts {
	bool present;
	unsigned long long events;
	unsigned long long pages;
	unsigned long long bytes;
	unsigned long long missed_pages;
	unsigned long long missed_sum;
	unsigned long long missed_unknown;
};

/**
 * struct rbt_manifest_out - where rbt_manifest_check() reports
 * @violation:	a relation that does not hold (counted as a violation)
 * @note:	what was compared, or why not (shown unless quiet)
 * @arg:	handed to both
 */
struct rbt_manifest_out {
	void (*violation)(void *arg, const char *msg);
	void (*note)(void *arg, const char *msg);
	void *arg;
};

/*
 * The checks of a recording as a whole, before its pages are decoded:
 * the same for check, report and export (@cmd names the command in
 * messages). REC must be a directory with header_page; its manifest, when
 * there is one, must parse, list every cpuN.raw there is with the size it
 * has, and have an end; and the recording must hold at least one event.
 * Messages go to stderr. Return: 0, RBT_EXIT_VIOLATION (the recording is
 * not what its manifest says, or holds no event) or RBT_EXIT_INPUT (not
 * a recording, a manifest or header_page that does not parse).
 */
int rbt_rec_verify(const char *cmd, const char *dir);

/*
 * "rbtrace check": the events read of each CPU (@cpu[0..@nr_cpus-1])
 * against the module's counters in the manifest that rbt_rec_verify()
 * read last. Return: the number of violations reported.
 */
unsigned long rbt_manifest_check(const struct rbt_cpu_counts *cpu,
				 int nr_cpus,
				 const struct rbt_manifest_out *out);

/*
 * "rbtrace record": the module directory @moddir is one (its header_page
 * readable), else a message with what to do, and -1.
 */
int rbt_module_dir_check(const char *cmd, const char *moddir);

/*
 * "rbtrace record -o @out": create @out, or refuse a directory that
 * already holds a recording (a manifest, header_page, or a cpuN.raw that
 * is a regular file) unless @force; with @force, remove the files of a
 * recording first, and refuse a directory that holds anything else.
 * Return: 0, or -1 after a message.
 */
int rbt_rec_prepare_dir(const char *out, bool force);

/*
 * The manifest of a recording into @out: rbt_manifest_begin() before the
 * first page is read (after the CPU files are open), rbt_manifest_end()
 * once every reader is closed. @cpus lists the @nr CPUs recorded.
 * Return: 0, or -1 after a message.
 */
int rbt_manifest_begin(const char *out, const char *moddir, const int *cpus,
		       int nr, unsigned int subbuf);
int rbt_manifest_end(const char *out, const char *moddir, const int *cpus,
		     int nr, const unsigned long long *bytes,
		     const unsigned long long *lost, unsigned int subbuf,
		     const char *stopped);

#endif /* _RBTRACE_MANIFEST_H */
