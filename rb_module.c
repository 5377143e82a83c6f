// SPDX-License-Identifier: GPL-2.0
/*
 * rbnest module glue: one per-CPU ring buffer, its parameters and the
 * debugfs control files under /sys/kernel/debug/rbnest/.
 *
 * The ring buffer itself lives in rb_core.c, its readers in rb_pipe.c, the
 * writers in rb_writers.c. This file owns the buffer's life time and the
 * files that change its configuration; every change that needs the
 * writers stopped goes through one mutex and the core's quiesce.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/init.h>
#include <linux/kernel.h>
#include <linux/limits.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/trace_clock.h>
#include <linux/uaccess.h>

#include "rb_module.h"

/* Largest buffer_size_kb accepted: 1 GiB per CPU. */
#define RBN_MAX_SIZE_KB		((unsigned long)SZ_1M)

static unsigned long buffer_size_kb = 1024;
module_param(buffer_size_kb, ulong, 0444);
MODULE_PARM_DESC(buffer_size_kb, "Ring buffer size per CPU in KiB (default 1024)");

static unsigned int subbuf_order;
module_param(subbuf_order, uint, 0444);
MODULE_PARM_DESC(subbuf_order, "Sub-buffer size is PAGE_SIZE << subbuf_order (default 0)");

static bool overwrite;
module_param(overwrite, bool, 0444);
MODULE_PARM_DESC(overwrite, "Overwrite the oldest events when full (default: drop new events)");

static char *clock_param = "local";
module_param_named(trace_clock, clock_param, charp, 0444);
MODULE_PARM_DESC(trace_clock, "Time source: local (default), global, mono or boot");

static bool validate_param;
module_param_named(validate, validate_param, bool, 0444);
MODULE_PARM_DESC(validate, "Check every event's time at its outermost commit from the start (default off; the validate file switches it)");

static char *ts_mode_param = "delta";
module_param_named(timestamp_mode, ts_mode_param, charp, 0444);
MODULE_PARM_DESC(timestamp_mode, "Time stamps: delta (default), or absolute (a full stamp on every event)");

static char *sources = "";
module_param(sources, charp, 0444);
MODULE_PARM_DESC(sources, "Writers to start at load: comma separated names, \"all\", or none (default)");

unsigned int rbn_buffer_percent = 50;
module_param_named(buffer_percent, rbn_buffer_percent, uint, 0444);
MODULE_PARM_DESC(buffer_percent, "Fill level in percent that wakes a blocked trace_pipe_raw reader (default 50)");

struct rbn_buffer *rbn_buf;

static struct dentry *rbn_root;
static struct dentry **rbn_cpu_dirs;

/*
 * Serialises the control files: tracing_on, clock, size, reset, and
 * everything about the snapshot's spare buffer (rbn_spare and its users).
 */
static DEFINE_MUTEX(rbn_ctl_mutex);

/*
 * Set once the load cannot fail any more. The files exist a little
 * before: a load fails when one of them could not be created, and the
 * loader frees a module whose init failed whatever its reference count,
 * so a file opened in between would outlive the module. Until then every
 * open fails (rbn_files_ready()).
 */
static bool rbn_files_live;

/* The first error of the debugfs tree's creation (rbn_debugfs_check()). */
static int rbn_debugfs_err;
static bool rbn_tracing_on = true;
/* buffer_size_kb as last set: the ring holds at least this much data. */
static unsigned long rbn_size_kb;

/* ------------------------------------------------------------------ */
/* Clocks                                                             */
/* ------------------------------------------------------------------ */

enum rbn_clock_id {
	RBN_CLOCK_LOCAL,
	RBN_CLOCK_GLOBAL,
	RBN_CLOCK_MONO,
	RBN_CLOCK_BOOT,
	RBN_NR_CLOCKS
};

static const char * const rbn_clock_names[RBN_NR_CLOCKS] = {
	[RBN_CLOCK_LOCAL]	= "local",
	[RBN_CLOCK_GLOBAL]	= "global",
	[RBN_CLOCK_MONO]	= "mono",
	[RBN_CLOCK_BOOT]	= "boot",
};

static int rbn_clock_id;

/*
 * The buffer's clock. It is switched only with the writers stopped and the
 * buffer reset (__rbn_buffer_reset()), so a writer never mixes two clocks; the
 * READ_ONCE() keeps the compiler from caching it across events. Each of
 * these is NMI safe: local_clock(), the fast timekeeping accessors and
 * trace_clock_global() are what ftrace offers in NMI context too.
 */
static u64 rbn_module_clock(void)
{
	switch (READ_ONCE(rbn_clock_id)) {
	case RBN_CLOCK_GLOBAL:
		return trace_clock_global();
	case RBN_CLOCK_MONO:
		return ktime_get_mono_fast_ns();
	case RBN_CLOCK_BOOT:
		return ktime_get_boot_fast_ns();
	default:
		return local_clock();
	}
}

static int rbn_clock_lookup(const char *name)
{
	int i;

	for (i = 0; i < RBN_NR_CLOCKS; i++)
		if (sysfs_streq(name, rbn_clock_names[i]))
			return i;
	return -EINVAL;
}

/* The time-stamp modes, as the timestamp_mode file names them. */
static const char * const rbn_ts_mode_names[] = { "delta", "absolute" };

static int rbn_ts_mode_lookup(const char *name)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(rbn_ts_mode_names); i++)
		if (sysfs_streq(name, rbn_ts_mode_names[i]))
			return i;
	return -EINVAL;
}

/*
 * Empty the buffer with the writers stopped: recording off, then a grace
 * period waits for writers inside the write path (they run with
 * preemption off). The sequence numbers restart with the buffer, so that
 * a reader never mistakes a reset for lost events. @clock, when not
 * negative, is switched in the same window: no event is stamped by the
 * old clock after the reset, and deltas between two clocks mean nothing.
 * @abs, when not negative, switches the time-stamp mode there too, so that
 * a recording has one mode. Caller holds rbn_ctl_mutex.
 */
static void __rbn_buffer_reset(int clock, int abs)
{
	lockdep_assert_held(&rbn_ctl_mutex);
	rbn_record_disable(rbn_buf);
	synchronize_rcu();
	if (clock >= 0)
		WRITE_ONCE(rbn_clock_id, clock);
	/* The grace period above waited for the writers of every CPU. */
	rbn_reset_stopped(rbn_buf);
	rbn_pipe_reset_done();
	/* Empty and no writer in it: the core cannot refuse. */
	if (abs >= 0)
		WARN_ON_ONCE(rbn_set_time_stamp_abs(rbn_buf, abs));
	rbn_writers_reset_seq();
	rbn_record_enable(rbn_buf);
	rbn_pipe_wake_all();
}

/**
 * rbn_tracing_is_on - the tracing_on file's value
 *
 * Readers stop waiting when it is 0. The core's recording switch is not
 * the same thing: it also goes off for a moment while the buffer is
 * reset, the clock switched or the write-path hook patched in.
 *
 * Return: true when tracing is on.
 */
bool rbn_tracing_is_on(void)
{
	return READ_ONCE(rbn_tracing_on);
}

/**
 * rbn_buffer_reset - drop every event of every CPU
 *
 * Restarts the sequence numbers and the counters; may sleep.
 */
void rbn_buffer_reset(void)
{
	mutex_lock(&rbn_ctl_mutex);
	__rbn_buffer_reset(-1, -1);
	mutex_unlock(&rbn_ctl_mutex);
}

/* ------------------------------------------------------------------ */
/* Small text files                                                   */
/* ------------------------------------------------------------------ */

/*
 * Every writable control file takes one short value. Anything longer than
 * this is refused before it is parsed.
 */
#define RBN_CTL_MAX	64

/**
 * rbn_files_ready - may a file of the module be opened?
 *
 * Every open handler of the module calls it first and fails with -ENODEV
 * while it returns false: from the creation of the files until the load
 * is complete.
 *
 * Return: true once the load is complete.
 */
bool rbn_files_ready(void)
{
	/* Pairs with the smp_store_release() at the end of rbnest_init(). */
	return smp_load_acquire(&rbn_files_live);
}

static int rbn_simple_open(struct inode *inode, struct file *file)
{
	if (!rbn_files_ready())
		return -ENODEV;
	return simple_open(inode, file);
}

/**
 * rbn_debugfs_check - note a file or directory debugfs could not create
 * @d:	what a debugfs_create_*() call returned
 *
 * The debugfs tree is the module's whole interface: a load that cannot
 * create all of it fails (rbnest_init()), instead of going on without a
 * file, as a debugfs user usually does. Called during init only.
 *
 * Return: @d.
 */
struct dentry *rbn_debugfs_check(struct dentry *d)
{
	if (IS_ERR(d) && !rbn_debugfs_err)
		rbn_debugfs_err = PTR_ERR(d);
	return d;
}

static ssize_t rbn_copy_value(char *buf, const char __user *ubuf, size_t cnt)
{
	if (!cnt || cnt >= RBN_CTL_MAX)
		return -EINVAL;
	if (copy_from_user(buf, ubuf, cnt))
		return -EFAULT;
	buf[cnt] = '\0';
	return cnt;
}

static __printf(4, 5)
ssize_t rbn_read_text(char __user *ubuf, size_t cnt, loff_t *ppos,
		      const char *fmt, ...)
{
	char buf[RBN_CTL_MAX];
	va_list args;
	int len;

	va_start(args, fmt);
	len = vscnprintf(buf, sizeof(buf), fmt, args);
	va_end(args);
	return simple_read_from_buffer(ubuf, cnt, ppos, buf, len);
}

/* Parse an unsigned decimal value with an optional trailing newline. */
static int rbn_parse_ulong(const char __user *ubuf, size_t cnt,
			   unsigned long *val)
{
	char buf[RBN_CTL_MAX];
	ssize_t ret;

	ret = rbn_copy_value(buf, ubuf, cnt);
	if (ret < 0)
		return ret;
	/* kstrtoul() takes one trailing newline; -ERANGE is just bad input. */
	return kstrtoul(buf, 10, val) ? -EINVAL : 0;
}

/* buffer_size_kb, tracing_on, buffer_percent */

/**
 * struct rbn_int_file - a control file of one unsigned decimal
 * @name:	its name in the module's directory
 * @min:	smallest value accepted
 * @max:	largest value accepted
 * @get:	its value
 * @set:	apply a value in @min..@max: 0 or the write's error
 *
 * One read and one write for all of them. Not DEFINE_DEBUGFS_ATTRIBUTE:
 * simple_attr parses before its setter runs, takes hex and octal, cuts
 * the input at 23 bytes and says ERANGE for a number too big, where
 * these files say EINVAL for anything but a decimal in range.
 */
struct rbn_int_file {
	const char *name;
	unsigned long min;
	unsigned long max;
	unsigned long (*get)(void);
	int (*set)(unsigned long val);
};

static ssize_t rbn_int_read(struct file *file, char __user *ubuf,
			    size_t cnt, loff_t *ppos)
{
	const struct rbn_int_file *f = file->private_data;

	return rbn_read_text(ubuf, cnt, ppos, "%lu\n", f->get());
}

static ssize_t rbn_int_write(struct file *file, const char __user *ubuf,
			     size_t cnt, loff_t *ppos)
{
	const struct rbn_int_file *f = file->private_data;
	unsigned long val;
	int ret;

	ret = rbn_parse_ulong(ubuf, cnt, &val);
	if (ret)
		return ret;
	if (val < f->min || val > f->max)
		return -EINVAL;
	ret = f->set(val);
	if (ret)
		return ret;
	*ppos += cnt;
	return cnt;
}

static const struct file_operations rbn_int_fops = {
	.owner	= THIS_MODULE,
	.open	= rbn_simple_open,
	.read	= rbn_int_read,
	.write	= rbn_int_write,
	.llseek	= default_llseek,
};

/*
 * buffer_size_kb reads, as in tracefs, the size asked for. The ring rounds
 * it up to whole sub-buffers of data (rbn_nr_subbufs() * data size).
 */
static unsigned long rbn_size_get(void)
{
	return READ_ONCE(rbn_size_kb);
}

static int rbn_size_set(unsigned long kb)
{
	int ret;

	mutex_lock(&rbn_ctl_mutex);
	/* The core keeps the buffer unchanged when it fails. */
	ret = rbn_resize(rbn_buf, kb * 1024);
	if (!ret)
		WRITE_ONCE(rbn_size_kb, kb);
	mutex_unlock(&rbn_ctl_mutex);
	return ret;
}

static unsigned long rbn_on_get(void)
{
	return READ_ONCE(rbn_tracing_on);
}

static int rbn_on_set(unsigned long val)
{
	mutex_lock(&rbn_ctl_mutex);
	if (val && !rbn_tracing_on)
		rbn_record_enable(rbn_buf);
	else if (!val && rbn_tracing_on)
		rbn_record_disable(rbn_buf);
	WRITE_ONCE(rbn_tracing_on, val);
	mutex_unlock(&rbn_ctl_mutex);
	/* Blocked readers return what there is once tracing stops. */
	if (!val)
		rbn_pipe_wake_all();
	return 0;
}

static unsigned long rbn_percent_get(void)
{
	return READ_ONCE(rbn_buffer_percent);
}

static int rbn_percent_set(unsigned long val)
{
	WRITE_ONCE(rbn_buffer_percent, val);
	/* A lower watermark may already be met. */
	rbn_pipe_wake_all();
	return 0;
}

static unsigned long rbn_validate_get(void)
{
	return rbn_validating(rbn_buf);
}

/* The static key is switched in here: text patching, task context. */
static int rbn_validate_set(unsigned long val)
{
	int ret;

	mutex_lock(&rbn_ctl_mutex);
	ret = rbn_set_validate(rbn_buf, val);
	mutex_unlock(&rbn_ctl_mutex);
	return ret;
}

static struct rbn_int_file rbn_int_files[] = {
	{ "buffer_size_kb", 1, RBN_MAX_SIZE_KB, rbn_size_get, rbn_size_set },
	{ "tracing_on", 0, 1, rbn_on_get, rbn_on_set },
	{ "buffer_percent", 0, 100, rbn_percent_get, rbn_percent_set },
	{ "validate", 0, 1, rbn_validate_get, rbn_validate_set },
};

/* trace_clock */

static int rbn_clock_show(struct seq_file *m, void *v)
{
	int i, cur = READ_ONCE(rbn_clock_id);

	for (i = 0; i < RBN_NR_CLOCKS; i++)
		seq_printf(m, i == cur ? "%s[%s]" : "%s%s", i ? " " : "",
			   rbn_clock_names[i]);
	seq_putc(m, '\n');
	return 0;
}

static int rbn_clock_open(struct inode *inode, struct file *file)
{
	if (!rbn_files_ready())
		return -ENODEV;
	return single_open(file, rbn_clock_show, NULL);
}

static ssize_t rbn_clock_write(struct file *file, const char __user *ubuf,
			       size_t cnt, loff_t *ppos)
{
	char buf[RBN_CTL_MAX];
	ssize_t ret;
	int id;

	ret = rbn_copy_value(buf, ubuf, cnt);
	if (ret < 0)
		return ret;
	id = rbn_clock_lookup(buf);
	if (id < 0)
		return id;

	mutex_lock(&rbn_ctl_mutex);
	if (id != rbn_clock_id)
		__rbn_buffer_reset(id, -1);
	mutex_unlock(&rbn_ctl_mutex);
	*ppos += cnt;
	return cnt;
}

static const struct file_operations rbn_clock_fops = {
	.owner		= THIS_MODULE,
	.open		= rbn_clock_open,
	.read		= seq_read,
	.write		= rbn_clock_write,
	.llseek		= seq_lseek,
	.release	= single_release,
};

/* timestamp_mode: "delta" or "absolute"; a change empties the buffer. */

static int rbn_ts_mode_show(struct seq_file *m, void *v)
{
	int cur = rbn_time_stamp_abs(rbn_buf);

	seq_printf(m, cur ? "%s [%s]\n" : "[%s] %s\n",
		   rbn_ts_mode_names[0], rbn_ts_mode_names[1]);
	return 0;
}

static int rbn_ts_mode_open(struct inode *inode, struct file *file)
{
	if (!rbn_files_ready())
		return -ENODEV;
	return single_open(file, rbn_ts_mode_show, NULL);
}

static ssize_t rbn_ts_mode_write(struct file *file, const char __user *ubuf,
				 size_t cnt, loff_t *ppos)
{
	char buf[RBN_CTL_MAX];
	ssize_t ret;
	int abs;

	ret = rbn_copy_value(buf, ubuf, cnt);
	if (ret < 0)
		return ret;
	abs = rbn_ts_mode_lookup(buf);
	if (abs < 0)
		return abs;

	mutex_lock(&rbn_ctl_mutex);
	if (abs != rbn_time_stamp_abs(rbn_buf))
		__rbn_buffer_reset(-1, abs);
	mutex_unlock(&rbn_ctl_mutex);
	*ppos += cnt;
	return cnt;
}

static const struct file_operations rbn_ts_mode_fops = {
	.owner		= THIS_MODULE,
	.open		= rbn_ts_mode_open,
	.read		= seq_read,
	.write		= rbn_ts_mode_write,
	.llseek		= seq_lseek,
	.release	= single_release,
};

/* reset */

static ssize_t rbn_reset_write(struct file *file, const char __user *ubuf,
			       size_t cnt, loff_t *ppos)
{
	if (!cnt)
		return -EINVAL;
	rbn_buffer_reset();
	*ppos += cnt;
	return cnt;
}

static const struct file_operations rbn_reset_fops = {
	.owner	= THIS_MODULE,
	.open	= rbn_simple_open,
	.write	= rbn_reset_write,
	.llseek	= noop_llseek,
};

/* ------------------------------------------------------------------ */
/* snapshot: the spare buffer                                         */
/* ------------------------------------------------------------------ */

/*
 * The snapshot, as ftrace's "snapshot" file and its max buffer: a spare
 * buffer of the live one's sub-buffer size, number of sub-buffers, clock,
 * time-stamp mode and overwrite setting, to which no writer ever writes.
 *
 *   echo 1 > snapshot   allocate the spare if there is none, or
 *                       allocate a new one if the live buffer was resized
 *                       or switched clock or time-stamp mode since (the
 *                       old one is freed once the new one is there: a
 *                       failed allocation changes nothing); else clear
 *                       it. Then swap every CPU's ring between the two
 *                       (rbn_swap(): on each CPU in turn, by an IPI).
 *                       The spare holds what the live buffer held, and
 *                       the live buffer goes on with empty rings.
 *   echo 0 > snapshot   free the spare
 *   echo 2 > snapshot   clear the spare; nothing without one
 *   anything else       EINVAL, nothing changes
 *
 * Where rbnest differs from ftrace: ftrace does not clear the max buffer
 * before its swap, so after "echo 1" its live buffer holds the previous
 * snapshot's events and goes on writing behind them; rbnest's live buffer
 * starts empty, and an event is either in the snapshot or was read from
 * the live buffer, never both. ftrace clears the snapshot for any value
 * but 0 and 1; rbnest takes 2 only. ftrace swaps the whole buffers with
 * interrupts off on one CPU; rbnest swaps each CPU's ring on that CPU, so
 * the CPUs are not swapped at one instant (see rbn_swap()). And rbnest
 * refuses (EBUSY) every write while a snapshot file (snapshot, a
 * snapshot_raw) is open for reading, where ftrace lets a swap go on under
 * its readers: the spare is never cleared, swapped or freed under one,
 * and a reader's page from rbn_alloc_read_page() always goes back to the
 * buffer it came from. "echo 1" is also refused while "trace" is open for
 * reading: its iterators hold the live buffer's rings, which a swap would
 * move into the spare.
 *
 * rbn_swap() returns -EBUSY when a writer stayed inside its commit on a
 * CPU for all of its tries: the CPUs before that one are swapped, the
 * others are not. The write fails with EBUSY (and the log says so once in
 * a while); "echo 1" again takes a whole snapshot, from a cleared spare.
 *
 * Writers. A writer reads its CPU's ring from rbn_buf before it takes its
 * recursion bit, and looks again once it holds it: one that the swap's
 * IPI interrupted in between finds the ring moved and writes in the new
 * one, but it has set and cleared its bit in the ring that went to the
 * spare. It runs with preemption off, so a grace period waits for it:
 * the spare is cleared with rbn_reset(), which waits for one, and freed
 * after synchronize_rcu(). The swap itself runs in the IPI, in hard
 * interrupt context; everything here runs in task context under
 * rbn_ctl_mutex, which no writer and no reader waits for.
 */

/* The spare buffer, or NULL. Under rbn_ctl_mutex. */
static struct rbn_buffer *rbn_spare;
/* The clock rbn_spare was allocated for. */
static int rbn_spare_clock;
/* Snapshot files open for reading: they hold rbn_spare as it is. */
static unsigned int rbn_snapshot_users;
/* "trace" files open for reading: they hold rbn_buf's rings in place. */
static unsigned int rbn_trace_iters;

/* The spare can take the live buffer's rings: same geometry, clock, mode. */
static bool rbn_spare_fits(struct rbn_buffer *spare)
{
	return rbn_subbuf_size(spare) == rbn_subbuf_size(rbn_buf) &&
	       rbn_nr_subbufs(spare) == rbn_nr_subbufs(rbn_buf) &&
	       rbn_time_stamp_abs(spare) == rbn_time_stamp_abs(rbn_buf) &&
	       rbn_spare_clock == rbn_clock_id;
}

/* A new, empty spare for the live buffer as it is now, or an ERR_PTR(). */
static struct rbn_buffer *rbn_spare_alloc(void)
{
	struct rbn_config cfg = {
		.size		= rbn_size(rbn_buf),
		.order		= subbuf_order,
		.overwrite	= overwrite,
		.clock		= rbn_module_clock,
		.nr_cpus	= rbn_nr_cpus(rbn_buf),
		.abs_ts		= rbn_time_stamp_abs(rbn_buf),
	};
	u64 pages = (u64)(rbn_nr_subbufs(rbn_buf) + 1) << subbuf_order;

	lockdep_assert_held(&rbn_ctl_mutex);
	/* As at load: more than the memory available fails at once. */
	if (pages * rbn_nr_cpus(rbn_buf) > si_mem_available())
		return ERR_PTR(-ENOMEM);
	return rbn_alloc(&cfg);
}

static void __rbn_spare_free(void)
{
	lockdep_assert_held(&rbn_ctl_mutex);
	if (!rbn_spare)
		return;
	/*
	 * A writer that found its ring moved by the last swap is gone, and
	 * so is a trace_pipe reader formatting an event of that ring.
	 */
	synchronize_rcu();
	rbn_pipe_flush_readers();
	rbn_free(rbn_spare);
	rbn_spare = NULL;
}

/* echo 2, and echo 1 before its swap: empty the spare. */
static void __rbn_spare_clear(void)
{
	lockdep_assert_held(&rbn_ctl_mutex);
	/* No trace_pipe reader still formats an event of the spare's rings. */
	rbn_pipe_flush_readers();
	/* Nothing writes to it; its grace period covers stragglers. */
	rbn_reset(rbn_spare);
}

/* echo 1: a spare that fits, cleared, swapped with the live buffer. */
static int __rbn_snapshot_take(void)
{
	struct rbn_buffer *spare = rbn_spare;
	int ret;

	lockdep_assert_held(&rbn_ctl_mutex);
	if (spare && rbn_spare_fits(spare)) {
		__rbn_spare_clear();
	} else {
		spare = rbn_spare_alloc();
		if (IS_ERR(spare))
			return PTR_ERR(spare);
		__rbn_spare_free();
		rbn_spare = spare;
		rbn_spare_clock = rbn_clock_id;
	}
	ret = rbn_swap(rbn_buf, spare);
	if (ret == -EBUSY)
		pr_warn_ratelimited("snapshot: a writer stayed in its commit, CPUs before it swapped\n");
	else if (ret)
		pr_warn_ratelimited("snapshot: swap failed: %d\n", ret);
	return ret;
}

/**
 * rbn_snapshot_get - hold the spare buffer for a snapshot file's reader
 *
 * Until rbn_snapshot_put(), every write to "snapshot" fails with -EBUSY:
 * the spare is not freed, cleared, replaced or swapped. Open files hold
 * the module, so no unload comes in between either. May sleep.
 *
 * Return: the spare, or NULL when there is none (the file then reads
 * empty, whatever "echo 1" does meanwhile: it is refused).
 */
struct rbn_buffer *rbn_snapshot_get(void)
{
	struct rbn_buffer *spare;

	mutex_lock(&rbn_ctl_mutex);
	rbn_snapshot_users++;
	spare = rbn_spare;
	mutex_unlock(&rbn_ctl_mutex);
	return spare;
}

/**
 * rbn_snapshot_put - a reader is done with the spare of rbn_snapshot_get()
 */
void rbn_snapshot_put(void)
{
	mutex_lock(&rbn_ctl_mutex);
	if (!WARN_ON_ONCE(!rbn_snapshot_users))
		rbn_snapshot_users--;
	mutex_unlock(&rbn_ctl_mutex);
}

/**
 * rbn_trace_iter_get - a "trace" reader is about to iterate over rbn_buf
 *
 * Until rbn_trace_iter_put(), "echo 1 > snapshot" fails with -EBUSY: the
 * core's iterators hold a CPU's ring, and give recording back to the
 * buffer that ring is in when they finish. May sleep.
 */
void rbn_trace_iter_get(void)
{
	mutex_lock(&rbn_ctl_mutex);
	rbn_trace_iters++;
	mutex_unlock(&rbn_ctl_mutex);
}

/**
 * rbn_trace_iter_put - the iterators of rbn_trace_iter_get() are finished
 */
void rbn_trace_iter_put(void)
{
	mutex_lock(&rbn_ctl_mutex);
	if (!WARN_ON_ONCE(!rbn_trace_iters))
		rbn_trace_iters--;
	mutex_unlock(&rbn_ctl_mutex);
}

/**
 * rbn_snapshot_write - a write to the "snapshot" file
 * @file:	the file
 * @ubuf:	"0", "1" or "2", an optional newline after it
 * @cnt:	its length
 * @ppos:	the file position
 *
 * Return: @cnt; -EINVAL for anything but 0, 1 or 2 (nothing changes);
 * -EBUSY while a snapshot file is open for reading, for 1 also while
 * "trace" is, or when rbn_swap() gave up on a CPU (the CPUs before it are
 * swapped); -ENOMEM when the spare cannot be allocated (nothing changes).
 */
ssize_t rbn_snapshot_write(struct file *file, const char __user *ubuf,
			   size_t cnt, loff_t *ppos)
{
	unsigned long val;
	int ret;

	ret = rbn_parse_ulong(ubuf, cnt, &val);
	if (ret)
		return ret;
	if (val > 2)
		return -EINVAL;

	mutex_lock(&rbn_ctl_mutex);
	if (rbn_snapshot_users || (val == 1 && rbn_trace_iters))
		ret = -EBUSY;
	else if (val == 1)
		ret = __rbn_snapshot_take();
	else if (val == 0)
		__rbn_spare_free();
	else if (rbn_spare)
		__rbn_spare_clear();
	mutex_unlock(&rbn_ctl_mutex);
	if (ret)
		return ret;
	*ppos += cnt;
	return cnt;
}

/* header_page, header_event, events/rbnest/sample/format */

static int rbn_header_page_show(struct seq_file *m, void *v)
{
	struct rbn_page *p = NULL;

	/* As ring_buffer_print_page_header(): from the structure. */
	seq_printf(m, RBN_HEADER_PAGE_FMT,
		   (unsigned int)offsetof(struct rbn_page, time_stamp),
		   (unsigned int)sizeof(p->time_stamp),
		   (unsigned int)is_signed_type(u64),
		   (unsigned int)offsetof(struct rbn_page, commit),
		   (unsigned int)sizeof(p->commit),
		   (unsigned int)is_signed_type(long),
		   (unsigned int)offsetof(struct rbn_page, commit), 1U,
		   (unsigned int)is_signed_type(long),
		   (unsigned int)offsetof(struct rbn_page, data),
		   rbn_subbuf_size(rbn_buf) - (unsigned int)RBN_PAGE_HDR_SIZE,
		   (unsigned int)is_signed_type(char));
	return 0;
}

static int rbn_header_page_open(struct inode *inode, struct file *file)
{
	if (!rbn_files_ready())
		return -ENODEV;
	return single_open(file, rbn_header_page_show, NULL);
}

static const struct file_operations rbn_header_page_fops = {
	.owner		= THIS_MODULE,
	.open		= rbn_header_page_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= single_release,
};

static ssize_t rbn_const_read(struct file *file, char __user *ubuf,
			      size_t cnt, loff_t *ppos)
{
	const char *text = file->private_data;

	return simple_read_from_buffer(ubuf, cnt, ppos, text, strlen(text));
}

static const struct file_operations rbn_const_fops = {
	.owner	= THIS_MODULE,
	.open	= rbn_simple_open,
	.read	= rbn_const_read,
	.llseek	= default_llseek,
};

/* per_cpu/cpuN/stats */

static int rbn_stats_show(struct seq_file *m, void *v)
{
	long cpu = (long)m->private;
	struct rbn_cpu_stats st;
	int ret;

	ret = rbn_cpu_stats(rbn_buf, cpu, &st);
	if (ret)
		return ret;
#define RBN_STAT(name)	seq_printf(m, "%s: %llu\n", #name, (u64)st.name)
	RBN_STAT(entries);
	RBN_STAT(written);
	RBN_STAT(overrun);
	RBN_STAT(commit_overrun);
	RBN_STAT(dropped);
	RBN_STAT(read);
	RBN_STAT(bytes);
	RBN_STAT(oldest_ts);
	RBN_STAT(now_ts);
	RBN_STAT(ts_fast);
	RBN_STAT(ts_abs);
	RBN_STAT(ts_slow);
	RBN_STAT(ts_zero);
	RBN_STAT(ts_extend);
	RBN_STAT(max_depth);
	RBN_STAT(recursion);
	RBN_STAT(pages_touched);
	RBN_STAT(ts_clock_back);
	RBN_STAT(discarded);
	RBN_STAT(validate_checked);
	RBN_STAT(validate_fail);
	RBN_STAT(validate_skipped);
#undef RBN_STAT
	return 0;
}

static int rbn_stats_open(struct inode *inode, struct file *file)
{
	if (!rbn_files_ready())
		return -ENODEV;
	return single_open(file, rbn_stats_show, inode->i_private);
}

static const struct file_operations rbn_stats_fops = {
	.owner		= THIS_MODULE,
	.open		= rbn_stats_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= single_release,
};

/**
 * rbn_debugfs_cpu_dir - the per_cpu/cpuN directory of a CPU
 * @cpu:	the CPU
 *
 * Return: the directory's dentry, or NULL for a CPU without a buffer.
 */
struct dentry *rbn_debugfs_cpu_dir(int cpu)
{
	if (cpu < 0 || cpu >= rbn_nr_cpus(rbn_buf))
		return NULL;
	return rbn_cpu_dirs[cpu];
}

/*
 * The whole tree, once nothing else of the load can fail: it fails only
 * when a file or directory could not be created (the first error), and
 * no file can be opened before the load is complete (rbn_files_ready()).
 */
static int rbn_debugfs_create_files(void)
{
	struct dentry *per_cpu, *dir;
	char name[16];
	long cpu;
	int i;

	for (i = 0; i < ARRAY_SIZE(rbn_int_files); i++)
		rbn_debugfs_check(debugfs_create_file(rbn_int_files[i].name,
						      RBN_MODE_RW, rbn_root,
						      &rbn_int_files[i],
						      &rbn_int_fops));
	rbn_debugfs_check(debugfs_create_file("trace_clock", RBN_MODE_RW,
					      rbn_root, NULL,
					      &rbn_clock_fops));
	rbn_debugfs_check(debugfs_create_file("timestamp_mode", RBN_MODE_RW,
					      rbn_root, NULL,
					      &rbn_ts_mode_fops));
	rbn_debugfs_check(debugfs_create_file("reset", RBN_MODE_WO, rbn_root,
					      NULL, &rbn_reset_fops));
	rbn_debugfs_check(debugfs_create_file("header_page", RBN_MODE_RO,
					      rbn_root, NULL,
					      &rbn_header_page_fops));
	rbn_debugfs_check(debugfs_create_file("header_event", RBN_MODE_RO,
					      rbn_root,
					      (void *)RBN_HEADER_EVENT,
					      &rbn_const_fops));

	/* A directory that failed makes the files under it fail too. */
	dir = debugfs_create_dir("events", rbn_root);
	dir = debugfs_create_dir("rbnest", dir);
	dir = debugfs_create_dir("sample", dir);
	rbn_debugfs_check(debugfs_create_file("format", RBN_MODE_RO, dir,
					      (void *)RBN_SAMPLE_FORMAT,
					      &rbn_const_fops));

	per_cpu = debugfs_create_dir("per_cpu", rbn_root);
	for (cpu = 0; cpu < rbn_nr_cpus(rbn_buf); cpu++) {
		snprintf(name, sizeof(name), "cpu%ld", cpu);
		rbn_cpu_dirs[cpu] = debugfs_create_dir(name, per_cpu);
		rbn_debugfs_check(debugfs_create_file("stats", RBN_MODE_RO,
						      rbn_cpu_dirs[cpu],
						      (void *)cpu,
						      &rbn_stats_fops));
	}

	rbn_pipe_create_files(rbn_root);
	rbn_inject_create_files(rbn_root);
	rbn_bench_create_files(rbn_root);
	rbn_writers_create_files(rbn_root);
	return rbn_debugfs_err;
}

/* ------------------------------------------------------------------ */
/* Load and unload                                                    */
/* ------------------------------------------------------------------ */

static int __init rbnest_init(void)
{
	struct rbn_config cfg = {
		.overwrite	= overwrite,
		.clock		= rbn_module_clock,
		.nr_cpus	= 0,	/* every possible CPU */
	};
	struct rbn_buffer *buf;
	int ret;

	if (!buffer_size_kb || buffer_size_kb > RBN_MAX_SIZE_KB) {
		pr_err("buffer_size_kb=%lu is out of range (1..%lu)\n",
		       buffer_size_kb, RBN_MAX_SIZE_KB);
		return -EINVAL;
	}
	if (subbuf_order > RBN_MAX_ORDER) {
		pr_err("subbuf_order=%u is out of range (0..%d)\n",
		       subbuf_order, RBN_MAX_ORDER);
		return -EINVAL;
	}
	if (rbn_buffer_percent > 100) {
		pr_err("buffer_percent=%u is out of range (0..100)\n",
		       rbn_buffer_percent);
		return -EINVAL;
	}
	ret = rbn_clock_lookup(clock_param ? clock_param : "");
	if (ret < 0) {
		pr_err("trace_clock=%s is not one of local, global, mono, boot\n",
		       clock_param);
		return ret;
	}
	rbn_clock_id = ret;
	ret = rbn_ts_mode_lookup(ts_mode_param ? ts_mode_param : "");
	if (ret < 0) {
		pr_err("timestamp_mode=%s is not one of delta, absolute\n",
		       ts_mode_param);
		return ret;
	}
	cfg.abs_ts = ret;
	cfg.validate = validate_param;
	cfg.size = buffer_size_kb * 1024;
	cfg.order = subbuf_order;
	/*
	 * As tracefs: more than the memory available fails at once, instead
	 * of taking the last free pages and leaving the OOM killer to run
	 * for everybody else.
	 */
	if ((u64)buffer_size_kb * nr_cpu_ids / (PAGE_SIZE / SZ_1K) >
	    si_mem_available()) {
		pr_err("buffer_size_kb=%lu on %u CPUs is more than the memory available\n",
		       buffer_size_kb, nr_cpu_ids);
		return -ENOMEM;
	}

	/*
	 * Everything that can fail comes first, the files last; and no file
	 * can be opened before the end (rbn_files_ready()).
	 */
	buf = rbn_alloc(&cfg);
	if (IS_ERR(buf)) {
		pr_err("cannot allocate the ring buffer: %ld\n", PTR_ERR(buf));
		return PTR_ERR(buf);
	}
	rbn_buf = buf;
	rbn_size_kb = buffer_size_kb;

	ret = rbn_cmdlines_init();
	if (ret)
		goto err_free_buffer;
	rbn_cpu_dirs = kcalloc(rbn_nr_cpus(buf), sizeof(*rbn_cpu_dirs),
			       GFP_KERNEL);
	if (!rbn_cpu_dirs) {
		ret = -ENOMEM;
		goto err_free_cmdlines;
	}
	ret = rbn_pipe_init();
	if (ret)
		goto err_free_cpu_dirs;
	ret = rbn_inject_init();
	if (ret)
		goto err_exit_pipe;
	/* From here on events arrive. */
	ret = rbn_writers_init(sources ? sources : "");
	if (ret)
		goto err_exit_inject;
	rbn_root = debugfs_create_dir(KBUILD_MODNAME, NULL);
	if (IS_ERR(rbn_root)) {
		ret = PTR_ERR(rbn_root);
		pr_err("cannot create the debugfs directory: %d\n", ret);
		goto err_exit_writers;
	}
	ret = rbn_debugfs_create_files();
	if (ret) {
		pr_err("cannot create the debugfs files: %d\n", ret);
		goto err_remove_files;
	}
	/* Every file is there: they may be opened from now on. */
	smp_store_release(&rbn_files_live, true);

	pr_info("%d CPUs, %lu sub-buffers of %u bytes per CPU, clock %s%s\n",
		rbn_nr_cpus(buf), rbn_nr_subbufs(buf), rbn_subbuf_size(buf),
		rbn_clock_names[rbn_clock_id], overwrite ? ", overwrite" : "");
#ifdef RBN_TESTONLY
	pr_warn("test-only build: its paths corrupt events on request\n");
#endif
	return 0;

err_remove_files:
	/*
	 * No open succeeded, and debugfs_remove_recursive() waits for an
	 * open that is still on its way to fail.
	 */
	rbn_pipe_remove_files();
	debugfs_remove_recursive(rbn_root);
err_exit_writers:
	rbn_root = NULL;
	rbn_writers_exit();
err_exit_inject:
	rbn_inject_exit();
err_exit_pipe:
	rbn_pipe_exit();
err_free_cpu_dirs:
	kfree(rbn_cpu_dirs);
	rbn_cpu_dirs = NULL;
err_free_cmdlines:
	rbn_cmdlines_free();
err_free_buffer:
	rbn_free(rbn_buf);
	rbn_buf = NULL;
	return ret;
}

static void __exit rbnest_exit(void)
{
	/*
	 * The load in reverse. The files first: no file is open (each open
	 * file holds the module), and once they are gone none can be opened
	 * while the rest is torn down. Then the writers: rbn_writers_exit()
	 * unregisters every probe and waits until none is still inside the
	 * buffer. Pages a pipe still holds have left the ring: they are the
	 * pipe's, and rbn_free() does not see them.
	 */
	rbn_pipe_remove_files();
	debugfs_remove_recursive(rbn_root);
	rbn_root = NULL;
	rbn_writers_exit();
	rbn_bench_exit();
	rbn_inject_exit();
	rbn_pipe_exit();
	kfree(rbn_cpu_dirs);
	rbn_cpu_dirs = NULL;
	rbn_cmdlines_free();
	/* No file holds it, no writer is left to straggle in its rings. */
	rbn_free(rbn_spare);
	rbn_spare = NULL;
	rbn_free(rbn_buf);
	rbn_buf = NULL;
}

module_init(rbnest_init);
module_exit(rbnest_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Per-CPU lockless ring buffer with exact nested timestamps");
