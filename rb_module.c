// SPDX-License-Identifier: GPL-2.0
/*
 * rbnest module glue: one per-CPU ring buffer.
 *
 * The module owns a single struct rbn_buffer sized by its parameters; the
 * ring buffer itself lives in rb_core.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/limits.h>
#include <linux/module.h>
#include <linux/moduleparam.h>

#include "rb_core.h"

static unsigned long buffer_size_kb = 1024;
module_param(buffer_size_kb, ulong, 0444);
MODULE_PARM_DESC(buffer_size_kb, "Ring buffer size per CPU in KiB (default 1024)");

static unsigned int subbuf_order;
module_param(subbuf_order, uint, 0444);
MODULE_PARM_DESC(subbuf_order, "Sub-buffer size is PAGE_SIZE << subbuf_order (default 0)");

static bool overwrite;
module_param(overwrite, bool, 0444);
MODULE_PARM_DESC(overwrite, "Overwrite the oldest events when full (default: drop new events)");

static struct rbn_buffer *rbn_buf;

static int __init rbnest_init(void)
{
	struct rbn_config cfg = {
		.overwrite	= overwrite,
		.clock		= NULL,	/* the core's default, local_clock() */
		.nr_cpus	= 0,	/* every possible CPU */
	};
	struct rbn_buffer *buf;

	if (!buffer_size_kb || buffer_size_kb > ULONG_MAX / 1024) {
		pr_err("buffer_size_kb=%lu is out of range\n", buffer_size_kb);
		return -EINVAL;
	}
	if (subbuf_order > RBN_MAX_ORDER) {
		pr_err("subbuf_order=%u is out of range (0..%d)\n",
		       subbuf_order, RBN_MAX_ORDER);
		return -EINVAL;
	}
	cfg.size = buffer_size_kb * 1024;
	cfg.order = subbuf_order;

	buf = rbn_alloc(&cfg);
	if (IS_ERR(buf)) {
		pr_err("cannot allocate the ring buffer: %ld\n", PTR_ERR(buf));
		return PTR_ERR(buf);
	}
	rbn_buf = buf;

	pr_info("%d CPUs, %lu sub-buffers of %u bytes per CPU%s\n",
		rbn_nr_cpus(buf), rbn_nr_subbufs(buf), rbn_subbuf_size(buf),
		overwrite ? ", overwrite" : "");
	return 0;
}

static void __exit rbnest_exit(void)
{
	rbn_free(rbn_buf);
	rbn_buf = NULL;
}

module_init(rbnest_init);
module_exit(rbnest_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Per-CPU lockless ring buffer with exact nested timestamps");
