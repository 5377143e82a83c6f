// SPDX-License-Identifier: GPL-2.0
/*
 * Compile probes of the kernel API that changed under rbnest.
 *
 * Kbuild compiles this file once per probe, with the module's own flags
 * plus -Werror and -DRBN_PROBE_<NAME>, and writes rbn_kcompat.h: a
 * "#define RBN_RB_<NAME> 1" for each probe that compiled. A probe tests
 * the call as rb_bench.c makes it, so that a backport of a change is
 * found whatever version the kernel calls itself. RBN_PROBE_BASE must
 * always compile: when it does not, the probing itself is broken and the
 * build stops.
 *
 * This file is never linked into the module.
 */
#include <linux/mm.h>
#include <linux/ring_buffer.h>

#ifdef RBN_PROBE_BASE
int rbn_probe(struct trace_buffer *buffer);
int rbn_probe(struct trace_buffer *buffer)
{
	return ring_buffer_empty_cpu(buffer, 0);
}
#endif

/* v6.3: ring_buffer_unlock_commit() lost its unused event argument. */
#ifdef RBN_PROBE_COMMIT_NO_EVENT
int rbn_probe(struct trace_buffer *buffer);
int rbn_probe(struct trace_buffer *buffer)
{
	return ring_buffer_unlock_commit(buffer);
}
#endif

/*
 * v6.8 (sub-buffer orders): ring_buffer_read_page() takes a struct
 * buffer_data_read_page instead of a bare page.
 */
#ifdef RBN_PROBE_READ_PAGE_STRUCT
int rbn_probe(struct trace_buffer *buffer, struct buffer_data_read_page *page);
int rbn_probe(struct trace_buffer *buffer, struct buffer_data_read_page *page)
{
	return ring_buffer_read_page(buffer, page, PAGE_SIZE, 0, 0);
}
#endif

/*
 * 6.12.y stable (Debian 12's 6.12.118 has it):
 * ring_buffer_alloc_read_page() returns an error code and hands the page
 * back through its third argument.
 */
#ifdef RBN_PROBE_ALLOC_READ_PAGE_INT
int rbn_probe(struct trace_buffer *buffer,
	      struct buffer_data_read_page **page);
int rbn_probe(struct trace_buffer *buffer,
	      struct buffer_data_read_page **page)
{
	return ring_buffer_alloc_read_page(buffer, 0, page);
}
#endif
