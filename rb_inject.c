// SPDX-License-Identifier: GPL-2.0
/*
 * The write-path hook and the "inject" file.
 *
 * rb_core.c calls RBN_HOOK() at every label of its write path (enum
 * rbn_label): between any two accesses to state that nested writers share.
 * In the module the hook is a static key, off unless someone installed a
 * hook function: the inject file below, or the benchmark.
 *
 * Writing a label name to "inject" arms it on every CPU. The next event on
 * a CPU whose write path reaches that label, in a context an interrupt can
 * still nest into (interrupts on), raises a hard irq_work on its own CPU
 * and waits, right at the label, until the interrupt has written its
 * events (one, or the "events=N" of the arming). The nested events come
 * from a real interrupt on the real kernel: the same thing a device
 * interrupt at that instruction would do, only on demand. Each arming is
 * used once per CPU; the file counts what happened, and how many of the
 * interrupts' events were discarded (discard_every applies to them too):
 * those never reach a reader.
 *
 * An interrupt that writes more events than a sub-buffer holds moves the
 * tail on while the writer it interrupted has not committed: the outer
 * commit then walks across pages; one that writes a ring's worth laps
 * that writer's commit, and its own events are dropped as commit overruns.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/bitops.h>
#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/irq_work.h>
#include <linux/jump_label.h>
#include <linux/kstrtox.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched/clock.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "rb_module.h"

DEFINE_STATIC_KEY_FALSE(rbn_hook_key);

static rbn_hook_fn rbn_hook_func;
static void *rbn_hook_arg;
/* Serialises hook installation and the inject file's writers. */
static DEFINE_MUTEX(rbn_hook_mutex);

/*
 * Turn the jump sites of the write path on or off. Writers may run
 * through them meanwhile, in any context: that is what the kernel's text
 * patching is for. A writer that still takes the old branch after the
 * key went off only calls rbn_hook_call(), which finds no function.
 */
static void rbn_hook_key_set(bool on)
{
	if (on)
		static_branch_enable(&rbn_hook_key);
	else
		static_branch_disable(&rbn_hook_key);
}

/**
 * rbn_hook_call - the write path reached a label while a hook is installed
 * @buffer:	the buffer being written
 * @cpu:	its CPU (the current one)
 * @label:	enum rbn_label
 *
 * Runs inside the write path with preemption disabled, in any context.
 */
void rbn_hook_call(struct rbn_buffer *buffer, int cpu, int label)
{
	/* Paired with smp_store_release() in rbn_hook_install(). */
	rbn_hook_fn fn = smp_load_acquire(&rbn_hook_func);

	if (fn)
		fn(buffer, cpu, label, READ_ONCE(rbn_hook_arg));
}

/**
 * rbn_hook_install - call a function at every label of the write path
 * @fn:		the function
 * @arg:	its last argument
 *
 * Return: 0, or -EBUSY when another hook is installed.
 */
int rbn_hook_install(rbn_hook_fn fn, void *arg)
{
	int ret = 0;

	mutex_lock(&rbn_hook_mutex);
	if (rbn_hook_func) {
		ret = -EBUSY;
	} else {
		WRITE_ONCE(rbn_hook_arg, arg);
		/* @arg is visible before @fn; see rbn_hook_call(). */
		smp_store_release(&rbn_hook_func, fn);
		rbn_hook_key_set(true);
	}
	mutex_unlock(&rbn_hook_mutex);
	return ret;
}

static void __rbn_hook_remove(void)
{
	lockdep_assert_held(&rbn_hook_mutex);
	if (!rbn_hook_func)
		return;
	rbn_hook_key_set(false);
	WRITE_ONCE(rbn_hook_func, NULL);
	/* Writers run with preemption off: a grace period waits for them. */
	synchronize_rcu();
	WRITE_ONCE(rbn_hook_arg, NULL);
}

/**
 * rbn_hook_remove - remove the installed hook
 *
 * Returns when no writer can still be inside the hook function.
 */
void rbn_hook_remove(void)
{
	mutex_lock(&rbn_hook_mutex);
	__rbn_hook_remove();
	mutex_unlock(&rbn_hook_mutex);
}

/* ------------------------------------------------------------------ */
/* inject                                                             */
/* ------------------------------------------------------------------ */

/*
 * How long a label waits for its own interrupt before giving up. The
 * self-IPI is taken as soon as the writer spins with interrupts on, in a
 * few microseconds; the bound only matters when it is lost, and keeps the
 * writer (preemption off) and a reader of its CPU waiting on the head page
 * (interrupts off) short.
 */
#define RBN_INJECT_WAIT_NS	(1 * NSEC_PER_MSEC)

/*
 * Most events one interrupt writes: a ring of the test's size and then
 * some, a few milliseconds with interrupts off even under emulation.
 */
#define RBN_INJECT_EVENTS_MAX	4096

/* Events each interrupt writes, set by every arming (rbn_hook_mutex). */
static unsigned int rbn_inject_events = 1;

/**
 * struct rbn_inject_cpu - inject state of one CPU
 * @armed:	labels armed on this CPU (bit per enum rbn_label)
 * @work:	the interrupt that writes the nested event
 * @label:	label the pending interrupt was raised at
 * @done:	set by the interrupt once its event is written
 * @hits:	nested events written at each label
 * @late:	interrupts that came after the wait gave up
 * @discarded:	events of the interrupts that were discarded, not committed
 */
struct rbn_inject_cpu {
	DECLARE_BITMAP(armed, RBN_NR_LABELS);
	struct irq_work work;
	int label;
	int done;
	u64 hits[RBN_NR_LABELS];
	u64 late;
	u64 discarded;
};

static DEFINE_PER_CPU(struct rbn_inject_cpu, rbn_inject_cpus);

static void rbn_inject_irq(struct irq_work *work)
{
	struct rbn_inject_cpu *ic = container_of(work, struct rbn_inject_cpu,
						 work);
	unsigned int i, n = READ_ONCE(rbn_inject_events);

	for (i = 0; i < n; i++) {
		if (rbn_emit(RBN_SRC_INJECT, ic->label))
			ic->discarded++;
	}
	/* Paired with smp_load_acquire() in rbn_inject_hook(). */
	smp_store_release(&ic->done, 1);
}

static void rbn_inject_hook(struct rbn_buffer *buffer, int cpu, int label,
			    void *arg)
{
	struct rbn_inject_cpu *ic;
	u64 deadline;

	/*
	 * Only a writer that an interrupt can nest into: interrupts on, so
	 * task or softirq context. Writers in interrupts leave the arming
	 * for the next event.
	 */
	if (buffer != rbn_buf || irqs_disabled() || in_hardirq() || in_nmi())
		return;
	ic = this_cpu_ptr(&rbn_inject_cpus);
	if (!test_bit(label, ic->armed) || !test_and_clear_bit(label, ic->armed))
		return;

	ic->label = label;
	WRITE_ONCE(ic->done, 0);
	/*
	 * irq_work_queue() raises a self-IPI on this CPU. Interrupts are on,
	 * so it is taken right here, at the label, with this writer's state
	 * exactly as the label describes it; the nested event goes through
	 * the whole write path in hard interrupt context.
	 */
	if (!irq_work_queue(&ic->work))
		return;
	deadline = local_clock() + RBN_INJECT_WAIT_NS;
	/* Paired with smp_store_release() in rbn_inject_irq(). */
	while (!smp_load_acquire(&ic->done)) {
		if (local_clock() > deadline) {
			ic->late++;
			return;
		}
		cpu_relax();
	}
	ic->hits[label]++;
}

static int rbn_inject_show(struct seq_file *m, void *v)
{
	int label, cpu;

	for (label = 0; label < RBN_NR_LABELS; label++) {
		unsigned int armed = 0;
		u64 hits = 0;

		for_each_possible_cpu(cpu) {
			struct rbn_inject_cpu *ic = per_cpu_ptr(&rbn_inject_cpus, cpu);

			armed += test_bit(label, ic->armed);
			hits += READ_ONCE(ic->hits[label]);
		}
		seq_printf(m, "%s armed=%u hits=%llu", rbn_label_name(label),
			   armed, hits);
		for_each_possible_cpu(cpu)
			seq_printf(m, " cpu%d=%llu", cpu,
				   READ_ONCE(per_cpu_ptr(&rbn_inject_cpus, cpu)->hits[label]));
		seq_putc(m, '\n');
	}
	for_each_possible_cpu(cpu)
		seq_printf(m, "late cpu%d=%llu\n", cpu,
			   READ_ONCE(per_cpu_ptr(&rbn_inject_cpus, cpu)->late));
	for_each_possible_cpu(cpu)
		seq_printf(m, "discarded cpu%d=%llu\n", cpu,
			   READ_ONCE(per_cpu_ptr(&rbn_inject_cpus, cpu)->discarded));
	seq_printf(m, "events %u\n", READ_ONCE(rbn_inject_events));
	return 0;
}

static int rbn_inject_open(struct inode *inode, struct file *file)
{
	if (!rbn_files_ready())
		return -ENODEV;
	return single_open(file, rbn_inject_show, NULL);
}

static int rbn_label_lookup(const char *name)
{
	int i;

	for (i = 0; i < RBN_NR_LABELS; i++)
		if (!strcasecmp(name, rbn_label_name(i)))
			return i;
	return -EINVAL;
}

static void rbn_inject_disarm(void)
{
	int cpu, label;

	lockdep_assert_held(&rbn_hook_mutex);
	/* Atomic, like the writers' test_and_clear_bit() of their own bits. */
	for_each_possible_cpu(cpu)
		for (label = 0; label < RBN_NR_LABELS; label++)
			clear_bit(label, per_cpu_ptr(&rbn_inject_cpus, cpu)->armed);
	if (rbn_hook_func == rbn_inject_hook)
		__rbn_hook_remove();
	/* An interrupt raised before the hook went away may still be queued. */
	for_each_possible_cpu(cpu)
		irq_work_sync(&per_cpu_ptr(&rbn_inject_cpus, cpu)->work);
}

#define RBN_INJECT_MAX	256

/*
 * "off" disarms; otherwise every word (separated by spaces, commas or
 * newlines) must be a label name or "events=N", at least one a label: all
 * the labels are armed on every CPU, and every interrupt from now on
 * writes N events (1 without "events="). Nothing changes when one word is
 * bad.
 */
static ssize_t rbn_inject_write(struct file *file, const char __user *ubuf,
				size_t cnt, loff_t *ppos)
{
	DECLARE_BITMAP(mask, RBN_NR_LABELS);
	unsigned int events = 1;
	char *buf, *p, *word;
	int cpu, label;
	ssize_t ret;

	if (!cnt || cnt >= RBN_INJECT_MAX)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, cnt);
	if (IS_ERR(buf))
		return PTR_ERR(buf);

	mutex_lock(&rbn_hook_mutex);
	p = strim(buf);
	if (!strcasecmp(p, "off")) {
		rbn_inject_disarm();
		ret = cnt;
		goto out_unlock;
	}
	bitmap_zero(mask, RBN_NR_LABELS);
	while ((word = strsep(&p, " ,\t\n"))) {
		if (!*word)
			continue;
		if (!strncasecmp(word, "events=", 7)) {
			if (kstrtouint(word + 7, 10, &events) || !events ||
			    events > RBN_INJECT_EVENTS_MAX) {
				ret = -EINVAL;
				goto out_unlock;
			}
			continue;
		}
		label = rbn_label_lookup(word);
		if (label < 0) {
			ret = -EINVAL;
			goto out_unlock;
		}
		__set_bit(label, mask);
	}
	if (bitmap_empty(mask, RBN_NR_LABELS)) {
		ret = -EINVAL;
		goto out_unlock;
	}
	if (rbn_hook_func && rbn_hook_func != rbn_inject_hook) {
		ret = -EBUSY;	/* the benchmark runs */
		goto out_unlock;
	}
	/* Before the arming: an interrupt of it writes this many. */
	WRITE_ONCE(rbn_inject_events, events);
	for_each_possible_cpu(cpu) {
		struct rbn_inject_cpu *ic = per_cpu_ptr(&rbn_inject_cpus, cpu);
		int bit;

		for_each_set_bit(bit, mask, RBN_NR_LABELS)
			set_bit(bit, ic->armed);
	}
	if (!rbn_hook_func) {
		/* Arming above is visible before the hook; see rbn_hook_call(). */
		smp_store_release(&rbn_hook_func, rbn_inject_hook);
		rbn_hook_key_set(true);
	}
	ret = cnt;
out_unlock:
	mutex_unlock(&rbn_hook_mutex);
	kfree(buf);
	if (ret > 0)
		*ppos += ret;
	return ret;
}

static const struct file_operations rbn_inject_fops = {
	.owner		= THIS_MODULE,
	.open		= rbn_inject_open,
	.read		= seq_read,
	.write		= rbn_inject_write,
	.llseek		= seq_lseek,
	.release	= single_release,
};

/**
 * rbn_inject_init - set up the inject interrupts
 *
 * Return: 0.
 */
int rbn_inject_init(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct rbn_inject_cpu *ic = per_cpu_ptr(&rbn_inject_cpus, cpu);

		ic->work = IRQ_WORK_INIT_HARD(rbn_inject_irq);
	}
	return 0;
}

/**
 * rbn_inject_create_files - create the inject file
 * @root:	rbnest's debugfs directory
 */
void rbn_inject_create_files(struct dentry *root)
{
	rbn_debugfs_check(debugfs_create_file("inject", RBN_MODE_RW, root, NULL,
					      &rbn_inject_fops));
}

/**
 * rbn_inject_exit - disarm and remove the hook
 *
 * The writers are stopped already; this waits for a pending interrupt.
 */
void rbn_inject_exit(void)
{
	mutex_lock(&rbn_hook_mutex);
	rbn_inject_disarm();
	mutex_unlock(&rbn_hook_mutex);
}
