/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel side of the rbnest port.
 *
 * rb_core.c uses the kernel API directly; this header only names the few
 * things that differ between the kernel and the userspace test build.
 */
#ifndef _RBN_PORT_KERNEL_H
#define _RBN_PORT_KERNEL_H

#include <linux/atomic.h>
#include <linux/bug.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/err.h>
#include <linux/gfp.h>
#include <linux/jump_label.h>
#include <linux/mm.h>
#include <linux/preempt.h>
#include <linux/printk.h>
#include <linux/rcupdate.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/topology.h>
#include <linux/types.h>
#include <asm/local.h>
#include <asm/local64.h>

static inline void *rbn_port_zalloc(size_t size, int cpu)
{
	return kzalloc_node(size, GFP_KERNEL, cpu_to_node(cpu));
}

static inline void rbn_port_free(void *p)
{
	kfree(p);
}

static inline void *rbn_port_alloc_pages(unsigned int order, int cpu)
{
	struct page *page;

	page = alloc_pages_node(cpu_to_node(cpu),
				GFP_KERNEL | __GFP_ZERO | __GFP_NORETRY, order);
	return page ? page_address(page) : NULL;
}

static inline void rbn_port_free_pages(void *p, unsigned int order)
{
	free_pages((unsigned long)p, order);
}

static inline u64 rbn_port_local_clock(void)
{
	return local_clock();
}

#define RBN_PORT_DEFAULT_CLOCK	rbn_port_local_clock
#define RBN_PORT_HAS_DEFAULT_CLOCK	1

#define RBN_NR_CPUS_MAX		NR_CPUS

static inline int rbn_port_nr_cpus(void)
{
	return nr_cpu_ids;
}

static inline int rbn_port_cpu(void)
{
	return raw_smp_processor_id();
}

/*
 * Run @fn(@arg) on @cpu with interrupts off and wait for it; on a CPU
 * that is not online (no writer runs there and, with CPU hotplug held
 * off, none can start) run it here. Task context only.
 */
static inline void rbn_port_on_cpu(int cpu, smp_call_func_t fn, void *arg)
{
	unsigned long flags;

	cpus_read_lock();
	if (!cpu_online(cpu) || smp_call_function_single(cpu, fn, arg, 1)) {
		/* As an IPI would run it: the labels' hook expects it. */
		local_irq_save(flags);
		fn(arg);
		local_irq_restore(flags);
	}
	cpus_read_unlock();
}

/*
 * A writer in NMI context needs NMI-safe cmpxchg on local_t and local64_t,
 * as the kernel's own ring buffer does (ring_buffer_lock_reserve()): not
 * where the architecture does not say so, nor with the spinlock-based
 * generic atomic64, nor on x86-32 without cmpxchg8b, where local64_t's
 * cmpxchg disables interrupts, which does not keep an NMI out. There the
 * write path refuses writers in NMI context and the module offers no NMI
 * source.
 */
#if defined(CONFIG_ARCH_HAVE_NMI_SAFE_CMPXCHG) &&			\
	!defined(CONFIG_GENERIC_ATOMIC64) &&				\
	!(defined(CONFIG_X86_32) && !defined(CONFIG_X86_CMPXCHG64) &&	\
	  !defined(CONFIG_X86_CX8))
#define RBN_PORT_NMI_SAFE	1
#else
#define RBN_PORT_NMI_SAFE	0
#endif

/* True when the write path must refuse this writer (see above). */
static inline bool rbn_port_write_refused(void)
{
	return !RBN_PORT_NMI_SAFE && in_nmi();
}

/* 0 normal, 1 softirq, 2 hardirq, 3 NMI. */
static inline int rbn_port_context_level(void)
{
	return interrupt_context_level();
}

#define rbn_port_preempt_disable()	preempt_disable_notrace()
#define rbn_port_preempt_enable()	preempt_enable_notrace()

#define rbn_port_cpu_relax()	cpu_relax()

#define rbn_reader_lock_t		raw_spinlock_t
#define rbn_reader_lock_init(l)		raw_spin_lock_init(l)
#define rbn_reader_lock(l, flags)	raw_spin_lock_irqsave((l), (flags))
#define rbn_reader_unlock(l, flags)	raw_spin_unlock_irqrestore((l), (flags))

/* Writers run with preemption disabled: a grace period waits for them. */
static inline void rbn_port_synchronize_writers(void)
{
	synchronize_rcu();
}

#define RBN_WARN_ON(cond)	WARN_ON_ONCE(cond)

/*
 * The write-path hook: a static key that is off unless the module's inject
 * file or its benchmark installed a hook (rb_inject.c). When off, each label
 * costs one patched-out jump.
 */
struct rbn_buffer;
DECLARE_STATIC_KEY_FALSE(rbn_hook_key);
void rbn_hook_call(struct rbn_buffer *buffer, int cpu, int label);

#define RBN_HOOK(buffer, cpu, label)					\
	do {								\
		if (static_branch_unlikely(&rbn_hook_key))		\
			rbn_hook_call((buffer), (cpu), (label));	\
	} while (0)

/*
 * The run-time validator (rbn_set_validate()): a static key, on while any
 * buffer validates, so that the write path pays one patched-out jump per
 * commit when none does. Its reports go to the kernel log.
 */
DECLARE_STATIC_KEY_FALSE(rbn_validate_key);
#define RBN_PORT_DEFINE_VALIDATE_KEY	DEFINE_STATIC_KEY_FALSE(rbn_validate_key)
#define rbn_port_validating()		static_branch_unlikely(&rbn_validate_key)
#define rbn_port_validate_get()		static_branch_inc(&rbn_validate_key)
#define rbn_port_validate_put()		static_branch_dec(&rbn_validate_key)
#define rbn_port_report(fmt, ...)	pr_err(fmt, ##__VA_ARGS__)
#define rbn_port_report_ratelimited(fmt, ...)				\
	pr_err_ratelimited(fmt, ##__VA_ARGS__)

/*
 * The reader's page swap runs with interrupts off under the reader lock:
 * the writers that meet it run on the buffer's own CPU while the reader
 * runs on another, or in an NMI on the reader's CPU. Its labels are for
 * the userspace enumeration, which runs a writer at each of them; the
 * kernel's inject file arms the write path's labels only.
 */
#define RBN_READER_HOOK(buffer, cpu, label)	do { } while (0)

#endif /* _RBN_PORT_KERNEL_H */
