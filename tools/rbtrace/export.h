/* SPDX-License-Identifier: GPL-2.0 */
/*
 * export.h - write an rbnest recording as a trace-cmd data file
 */
#ifndef _RBTRACE_EXPORT_H
#define _RBTRACE_EXPORT_H

/**
 * struct rbtrace_export_stats - what an export wrote
 * @nr_cpus:	per-CPU data sections (cpu0.raw .. cpuN.raw)
 * @nr_events:	event formats written (all systems)
 * @pages:	sub-buffers copied
 * @records:	data records found in them
 * @abs_fixed:	absolute time stamps written as time extends because their
 *		59 bits needed a carry that kbuffer does not make
 * @pages_folded: pages with missed events whose leading time extends or
 *		stamps were folded into the page's time stamp, so that
 *		kbuffer reports their missed-events count
 * @nr_pids:	distinct task pids (other than 0) in the records
 * @page_size:	sub-buffer size, the file's page size
 */
struct rbtrace_export_stats {
	unsigned int nr_cpus;
	unsigned int nr_events;
	unsigned long long pages;
	unsigned long long records;
	unsigned long long abs_fixed;
	unsigned long long pages_folded;
	unsigned int nr_pids;
	unsigned int page_size;
};

int rbtrace_export(const char *rec_dir, const char *out_path);
int rbtrace_export_stats(const char *rec_dir, const char *out_path,
			 struct rbtrace_export_stats *stats);

#endif /* _RBTRACE_EXPORT_H */
