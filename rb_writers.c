// SPDX-License-Identifier: GPL-2.0
/*
 * rbnest writers: every event the module writes goes through rbn_emit().
 *
 * The sources, switched with the "sources" file or the "sources" module
 * parameter:
 *
 *   task		per-CPU kthreads writing bursts in task context, with a
 *			bounded duty cycle (gen_task_busy_us on, gen_task_idle_us
 *			off) at the lowest priority
 *   hrtimer		a per-CPU hrtimer expiring in hard interrupt context
 *			(also on PREEMPT_RT) every gen_period_us
 *   softirq		a per-CPU tasklet the hrtimer schedules
 *   irq_work		a per-CPU hard irq_work the hrtimer queues
 *   nmi		a self-NMI the hrtimer sends every gen_nmi_every
 *			expiries (x86; this and tp_nmi only where cmpxchg is
 *			NMI safe, RBN_PORT_NMI_SAFE)
 *   tp_irq		irq_handler_entry, irq_handler_exit
 *   tp_softirq		softirq_entry, softirq_exit
 *   tp_hrtimer		hrtimer_expire_entry
 *   tp_local_timer	local_timer_entry (x86)
 *   tp_nmi		nmi_handler
 *   tp_sched		sched_switch
 *   kprobes		the kprobes of the "kprobe_events" file
 *
 * softirq, irq_work and nmi are raised by the generator's hrtimer: it runs
 * while any of hrtimer, softirq, irq_work, nmi is on, and writes its own
 * event only when hrtimer is on.
 *
 * The arg field of an event: the per-CPU count of that source's runs for
 * the generator (its low 32 bits), the kprobe's slot (its line in
 * kprobe_events when they were added to an empty list) for kprobes, and
 * for tracepoints a value of the tracepoint: the irq for irq_handler_*,
 * the vector for softirq_* and local_timer_entry, 0 for
 * hrtimer_expire_entry, handled for nmi_handler and the next task's pid
 * for sched_switch; their tp field names the tracepoint (enum rbn_tp_id).
 *
 * The tasks the writers ran in are named in the "saved_cmdlines" file, as
 * ftrace's saved_cmdlines names them (see "Task names" below).
 *
 * Tracepoints are looked up by name (their symbols are not exported to
 * modules); one that this kernel lacks makes its source unavailable, never
 * a load failure. The generator follows CPU hotplug: the task writers are
 * smpboot threads (parked while their CPU is offline) and the hrtimers
 * live in a dynamic CPU hotplug state.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/bitops.h>
#include <linux/build_bug.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/irq_work.h>
#include <linux/jiffies.h>
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/kthread.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/smpboot.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>

/* Only for the prototypes of the probes, checked at build time. */
#include <trace/events/irq.h>
#include <trace/events/nmi.h>
#include <trace/events/sched.h>
#include <trace/events/timer.h>

#ifdef CONFIG_X86_LOCAL_APIC
#include <asm/apic.h>
#include <asm/irq_vectors.h>
#include <asm/nmi.h>
#include <asm/trace/irq_vectors.h>
#define RBN_HAVE_NMI	1
#else
#define RBN_HAVE_NMI	0
#endif

#include "rb_module.h"

/* ------------------------------------------------------------------ */
/* Parameters                                                         */
/* ------------------------------------------------------------------ */

#define RBN_PERIOD_MIN_US	20U
#define RBN_PERIOD_MAX_US	1000000U
#define RBN_BUSY_MIN_US		1U
#define RBN_BUSY_MAX_US		100000U
#define RBN_IDLE_MIN_US		10U
#define RBN_IDLE_MAX_US		10000000U
#define RBN_NMI_EVERY_MAX	1000000U

static unsigned int gen_period_us = 200;
module_param(gen_period_us, uint, 0644);
MODULE_PARM_DESC(gen_period_us, "Generator hrtimer period in us, 20..1000000 (default 200); read when the hrtimer starts");

static unsigned int gen_task_busy_us = 500;
module_param(gen_task_busy_us, uint, 0644);
MODULE_PARM_DESC(gen_task_busy_us, "Task writers: us of writing per burst, 1..100000 (default 500); read when the task source starts");

static unsigned int gen_task_idle_us = 500;
module_param(gen_task_idle_us, uint, 0644);
MODULE_PARM_DESC(gen_task_idle_us, "Task writers: us of sleep after each burst, 10..10000000 (default 500); read when the task source starts");

static unsigned int gen_nmi_every = 4;
module_param(gen_nmi_every, uint, 0644);
MODULE_PARM_DESC(gen_nmi_every, "Send a self-NMI every N generator hrtimer expiries, 1..1000000 (default 4); read when the nmi source starts");

#define RBN_DISCARD_EVERY_MAX	1000000U

/* 0, or every Nth event reserved on a CPU is discarded (rbn_write_sample()). */
static unsigned int discard_every;

/*
 * Only a value in 0..RBN_DISCARD_EVERY_MAX is taken, at load as on a
 * write to the parameter's sysfs file; anything else is -EINVAL and keeps
 * the value. Writers read it at every event.
 */
static int rbn_discard_every_set(const char *val,
				 const struct kernel_param *kp)
{
	unsigned int n;

	if (kstrtouint(val, 0, &n) || n > RBN_DISCARD_EVERY_MAX)
		return -EINVAL;
	WRITE_ONCE(*(unsigned int *)kp->arg, n);
	return 0;
}

static const struct kernel_param_ops rbn_discard_every_ops = {
	.set	= rbn_discard_every_set,
	.get	= param_get_uint,
};

module_param_cb(discard_every, &rbn_discard_every_ops, &discard_every, 0644);
MODULE_PARM_DESC(discard_every, "Discard every Nth event reserved on a CPU instead of committing it, by every writer at every depth, 0..1000000 (default 0: never); read at every event");

#ifdef RBN_TESTONLY
/*
 * Test-only (built with "make module RBN_TESTONLY=y", never otherwise):
 * validate_corrupt=N makes the next N samples with an exact time (no zero
 * delta) get their header's time delta changed by one between reserve
 * and commit, as a broken write path would store it. The run-time
 * validator must count each of them in validate_fail. Reads what is
 * left of N.
 */
static atomic_t rbn_corrupt_left = ATOMIC_INIT(0);

static int rbn_corrupt_set(const char *val, const struct kernel_param *kp)
{
	unsigned int n;

	if (kstrtouint(val, 0, &n) || n > INT_MAX)
		return -EINVAL;
	atomic_set(&rbn_corrupt_left, n);
	return 0;
}

static int rbn_corrupt_get(char *buffer, const struct kernel_param *kp)
{
	return sysfs_emit(buffer, "%d\n", atomic_read(&rbn_corrupt_left));
}

static const struct kernel_param_ops rbn_corrupt_ops = {
	.set	= rbn_corrupt_set,
	.get	= rbn_corrupt_get,
};

module_param_cb(validate_corrupt, &rbn_corrupt_ops, NULL, 0644);
MODULE_PARM_DESC(validate_corrupt, "Test-only build: change the stored time of the next N samples by one (default 0)");

static __always_inline void rbn_corrupt(struct rbn_buffer *buf,
					struct rbn_event *event)
{
	if (atomic_read(&rbn_corrupt_left) > 0 &&
	    !(rbn_event_flags(buf, event) & RBN_EV_ZERO_DELTA) &&
	    atomic_dec_if_positive(&rbn_corrupt_left) >= 0)
		event->time_delta ^= 1;
}
#else
static __always_inline void rbn_corrupt(struct rbn_buffer *buf,
					struct rbn_event *event)
{
}
#endif

/* ------------------------------------------------------------------ */
/* Sources                                                            */
/* ------------------------------------------------------------------ */

enum rbn_wsrc {
	RBN_W_TASK,
	RBN_W_HRTIMER,
	RBN_W_SOFTIRQ,
	RBN_W_IRQ_WORK,
	RBN_W_NMI,
	RBN_W_TP_IRQ,
	RBN_W_TP_SOFTIRQ,
	RBN_W_TP_HRTIMER,
	RBN_W_TP_LOCAL_TIMER,
	RBN_W_TP_NMI,
	RBN_W_TP_SCHED,
	RBN_W_KPROBES,
	RBN_NR_WSRC,
	RBN_W_NONE = RBN_NR_WSRC,	/* rbn_emit() from other files */
};

/* The sources that need the generator's hrtimer. */
#define RBN_W_TIMER_MASK	(BIT(RBN_W_HRTIMER) | BIT(RBN_W_SOFTIRQ) | \
				 BIT(RBN_W_IRQ_WORK) | BIT(RBN_W_NMI))

/* The tracepoints are enum rbn_tp_id of rbn_events.h, from 1 on. */
#define RBN_TP_FIRST	(RBN_TP_NONE + 1)

/**
 * struct rbn_src - a switchable source of events
 * @name:	its name in the sources file
 * @tp_first:	first of its tracepoints (tracepoint sources)
 * @nr_tps:	number of its tracepoints, 0 for the other sources
 */
struct rbn_src {
	const char *name;
	u8 tp_first;
	u8 nr_tps;
};

static const struct rbn_src rbn_srcs[RBN_NR_WSRC] = {
	[RBN_W_TASK]		= { "task" },
	[RBN_W_HRTIMER]		= { "hrtimer" },
	[RBN_W_SOFTIRQ]		= { "softirq" },
	[RBN_W_IRQ_WORK]	= { "irq_work" },
	[RBN_W_NMI]		= { "nmi" },
	[RBN_W_TP_IRQ]		= { "tp_irq", RBN_TP_IRQ_ENTRY, 2 },
	[RBN_W_TP_SOFTIRQ]	= { "tp_softirq", RBN_TP_SOFTIRQ_ENTRY, 2 },
	[RBN_W_TP_HRTIMER]	= { "tp_hrtimer", RBN_TP_HRTIMER_ENTRY, 1 },
	[RBN_W_TP_LOCAL_TIMER]	= { "tp_local_timer",
				    RBN_TP_LOCAL_TIMER_ENTRY, 1 },
	[RBN_W_TP_NMI]		= { "tp_nmi", RBN_TP_NMI_HANDLER, 1 },
	[RBN_W_TP_SCHED]	= { "tp_sched", RBN_TP_SCHED_SWITCH, 1 },
	[RBN_W_KPROBES]		= { "kprobes" },
};

/*
 * Serialises the sources file, kprobe_events, the module parameter and
 * unload: starting, stopping, adding and removing. Never taken by a writer
 * or by a CPU hotplug callback.
 */
static DEFINE_MUTEX(rbn_writers_mutex);

/* Sources on, sources this kernel has (rbn_writers_mutex). */
static unsigned long rbn_src_on;
static unsigned long rbn_src_avail;

/* Set once unload began: the sources stay off. */
static bool rbn_writers_dead;

/*
 * Per CPU and source: @attempts counts the calls to rbn_reserve(); each
 * ends in one of @events (committed), @discarded (reserved, then given to
 * rbn_discard(): discard_every) and @refused (rbn_reserve() returned
 * NULL), counted once the writer is done with the buffer. So, once no
 * writer of the source is running, attempts == events + discarded +
 * refused, exactly; while one runs, attempts may be ahead by the writes in
 * progress. The core counts a refusal as dropped (full, bad length),
 * commit_overrun or recursion, or not at all (recording off, an NMI where
 * cmpxchg is not NMI safe), a discard in its discarded count and a commit
 * in written. @discarded_nested are the discards of writers that ran
 * inside another rbnest writer of the CPU (depth 2 or more).
 */
struct rbn_src_counts {
	u64 attempts[RBN_NR_WSRC];
	u64 events[RBN_NR_WSRC];
	u64 discarded[RBN_NR_WSRC];
	u64 discarded_nested[RBN_NR_WSRC];
	u64 refused[RBN_NR_WSRC];
};

static DEFINE_PER_CPU(struct rbn_src_counts, rbn_src_counts);

/* rbnest writers in progress on each CPU (nested ones included). */
static DEFINE_PER_CPU(unsigned int, rbn_depth);

/* Sequence number of the events of each CPU. */
static DEFINE_PER_CPU(u64, rbn_seq);

/* Events reserved on each CPU while discard_every was set. */
static DEFINE_PER_CPU(unsigned long, rbn_reserved);

/* The seq field of a sample that is discarded: it takes no number. */
#define RBN_SEQ_DISCARDED	U64_MAX

/* ------------------------------------------------------------------ */
/* Task names                                                         */
/* ------------------------------------------------------------------ */

/*
 * The pid of an event is named by the "saved_cmdlines" file, as ftrace's
 * saved_cmdlines names the pids of its events (trace_save_cmdline()):
 * a fixed table of cmdlines_size entries, allocated at load, that holds
 * the last tasks the writers ran in, pid and comm, the oldest entry going
 * to a new task. The idle tasks (pid 0) are not saved: tools name them
 * "<idle>".
 *
 * An entry is found from its pid by a map of the pid's low 15 bits (the
 * default pid_max) to the entry, so a save costs the same whatever
 * cmdlines_size is. Of two pids with the same low 15 bits only the one
 * saved last is in the table (the other one's entry is emptied, and the
 * new one takes the oldest entry), as in ftrace's map.
 *
 * A writer saves its task after its event, in any context. The table's
 * lock is an arch spinlock, held with interrupts off for a few stores
 * only: no critical section scans the table. A writer only tries it,
 * RBN_CMD_TRIES times outside NMI and once in NMI context (where the
 * holder may be the context it interrupted), and when it cannot take it
 * saves nothing: its CPU's cache (below) is left as it was, so its next
 * event tries again. A writer that runs inside the locked section of its
 * own CPU (a kprobe or an NMI there) does not try at all (rbn_cmd_busy).
 * Nothing waits without bound and nothing sleeps, on PREEMPT_RT either
 * (softirqs run in tasks there, the generator's hrtimers in hard
 * interrupt context). The saved_cmdlines file, in task context, waits for
 * the lock, one entry at a time.
 *
 * Each entry has a generation, changed under the lock by every write of
 * it. Per CPU the pid, comm, entry and generation of the task saved last
 * are kept, and a writer whose task is that one, with the same comm,
 * while the entry's generation is still the one it saved, touches no
 * shared line. Any other CPU's write of the entry since (the same task
 * moved there and renamed, or another task given the entry) changes the
 * generation, and the next event saves again. Interrupts keep the task
 * they interrupted as current, so nested writers mostly take that path;
 * a task switch costs one save on the next event, and so does a task's
 * move to another CPU. The cache is written under the lock too, so that
 * an interrupt's save never leaves it half of one save and half of
 * another.
 *
 * The file copies each entry under the lock, so a comm is never read
 * half-written by a writer of the table. A task's comm that changes while
 * a writer copies it (set_task_comm()) may be read half-changed, as
 * ftrace reads it; the next event of the task saves it again, its cached
 * comm differing.
 */

#define RBN_CMDLINES_MIN	16U
#define RBN_CMDLINES_MAX	1024U
/* The map: entry + 1 (0: none) of each value of a pid's low 15 bits. */
#define RBN_CMD_MAP_SIZE	32768U
/* Tries of the table's lock outside NMI context. */
#define RBN_CMD_TRIES		64

static unsigned int cmdlines_size = 128;
module_param(cmdlines_size, uint, 0444);
MODULE_PARM_DESC(cmdlines_size, "Entries of saved_cmdlines, the last tasks the writers ran in, 16..1024 (default 128)");

/**
 * struct rbn_cmdlines - the tasks the writers ran in
 * @lock:	held with interrupts off, for a few stores; writers only try
 *		it; the saved_cmdlines file takes it for one entry at a time
 * @nr:		entries (cmdlines_size)
 * @next:	the entry the next new task takes: the oldest one
 * @map:	entry + 1 of a pid's low 15 bits, 0 for none
 * @pids:	pid of each entry, 0 while unused
 * @gens:	generation of each entry, changed by every write of it
 * @comms:	comm of each entry, NUL-terminated
 */
struct rbn_cmdlines {
	arch_spinlock_t lock;
	unsigned int nr;
	unsigned int next;
	u16 *map;
	pid_t *pids;
	unsigned int *gens;
	char (*comms)[TASK_COMM_LEN];
};

/* From load to unload. */
static struct rbn_cmdlines *rbn_cmd;

/**
 * struct rbn_cmd_last - the task a CPU's writers saved last
 * @pid:	its pid, 0 for none
 * @idx:	its entry in the table
 * @gen:	the entry's generation after that save
 * @comm:	its comm as saved
 */
struct rbn_cmd_last {
	pid_t pid;
	unsigned int idx;
	unsigned int gen;
	char comm[TASK_COMM_LEN];
};

static DEFINE_PER_CPU(struct rbn_cmd_last, rbn_cmd_last);

/* Set while this CPU tries or holds the table's lock. */
static DEFINE_PER_CPU(int, rbn_cmd_busy);

/*
 * Take the table's lock with interrupts off, or return false: when it
 * stays held through @tries tries, and inside this CPU's own locked
 * section. @tries 0: wait for it (task context only).
 */
static __always_inline bool rbn_cmd_lock(struct rbn_cmdlines *c, int tries,
					 unsigned long *flags)
{
	raw_local_irq_save(*flags);
	if (this_cpu_read(rbn_cmd_busy))
		goto fail;
	this_cpu_write(rbn_cmd_busy, 1);
	if (!tries) {
		arch_spin_lock(&c->lock);
		return true;
	}
	while (!arch_spin_trylock(&c->lock)) {
		if (!--tries)
			goto fail_busy;
		cpu_relax();
	}
	return true;

fail_busy:
	this_cpu_write(rbn_cmd_busy, 0);
fail:
	raw_local_irq_restore(*flags);
	return false;
}

static __always_inline void rbn_cmd_unlock(struct rbn_cmdlines *c,
					   unsigned long flags)
{
	arch_spin_unlock(&c->lock);
	this_cpu_write(rbn_cmd_busy, 0);
	raw_local_irq_restore(flags);
}

/* The map's slot of @pid: its low 15 bits. */
static __always_inline unsigned int rbn_cmd_slot(pid_t pid)
{
	return (unsigned int)pid & (RBN_CMD_MAP_SIZE - 1);
}

/* Empty entry @i of the table, the lock held; its map slot is free. */
static void rbn_cmdline_clear(struct rbn_cmdlines *c, unsigned int i)
{
	WRITE_ONCE(c->pids[i], 0);
	c->comms[i][0] = '\0';
	WRITE_ONCE(c->gens[i], c->gens[i] + 1);
}

/* Save @tsk's pid and comm in the table; preemption is off. */
static noinline void notrace rbn_cmdline_save(struct rbn_cmdlines *c,
					      struct task_struct *tsk)
{
	struct rbn_cmd_last *last = this_cpu_ptr(&rbn_cmd_last);
	unsigned int slot, i, gen;
	char comm[TASK_COMM_LEN];
	pid_t pid = tsk->pid;
	unsigned long flags;
	pid_t old;

	/* A racing set_task_comm() is harmless: saved again next time. */
	data_race(memcpy(comm, tsk->comm, sizeof(comm)));
	comm[TASK_COMM_LEN - 1] = '\0';
	slot = rbn_cmd_slot(pid);

	if (!rbn_cmd_lock(c, in_nmi() ? 1 : RBN_CMD_TRIES, &flags))
		return;
	i = c->map[slot];
	if (i && c->pids[i - 1] == pid) {
		i--;
	} else {
		/*
		 * A pid with the same low bits that holds the map's slot
		 * leaves the table (an empty entry, skipped by the file), so
		 * that no pid has two entries. This one takes the oldest
		 * entry, from the pid that held it.
		 */
		if (i)
			rbn_cmdline_clear(c, i - 1);
		i = c->next;
		c->next = i + 1 < c->nr ? i + 1 : 0;
		old = c->pids[i];
		if (old)
			c->map[rbn_cmd_slot(old)] = 0;
		c->map[slot] = i + 1;
	}
	/* Both read without the lock by the writers' check of their cache. */
	WRITE_ONCE(c->pids[i], pid);
	memcpy(c->comms[i], comm, sizeof(comm));
	gen = c->gens[i] + 1;
	WRITE_ONCE(c->gens[i], gen);

	/*
	 * Still with interrupts off: an interrupt of this CPU that saves
	 * in between would otherwise find the cache half of its own save
	 * and half of this one.
	 */
	last->pid = pid;
	last->idx = i;
	last->gen = gen;
	memcpy(last->comm, comm, sizeof(comm));
	rbn_cmd_unlock(c, flags);
}

/*
 * Name the current task in the table, after its event; any context,
 * preemption off. See "Task names" above.
 */
static __always_inline void rbn_cmdline_note(void)
{
	struct rbn_cmdlines *c = READ_ONCE(rbn_cmd);
	struct task_struct *tsk = current;
	struct rbn_cmd_last *last;

	if (unlikely(!c) || !tsk->pid)
		return;
	last = this_cpu_ptr(&rbn_cmd_last);
	if (likely(last->pid == tsk->pid &&
		   READ_ONCE(c->gens[last->idx]) == last->gen &&
		   READ_ONCE(c->pids[last->idx]) == tsk->pid)) {
		/* A racing set_task_comm() only makes it save again. */
		if (likely(!data_race(memcmp(last->comm, tsk->comm,
					     TASK_COMM_LEN - 1))))
			return;
	}
	rbn_cmdline_save(c, tsk);
}

static int rbn_cmdlines_show(struct seq_file *m, void *v)
{
	struct rbn_cmdlines *c = rbn_cmd;
	char comm[TASK_COMM_LEN];
	unsigned long flags;
	unsigned int i;
	pid_t pid;

	for (i = 0; i < c->nr; i++) {
		/* Task context, not inside a locked section: waits. */
		if (!rbn_cmd_lock(c, 0, &flags))
			continue;
		pid = c->pids[i];
		memcpy(comm, c->comms[i], sizeof(comm));
		rbn_cmd_unlock(c, flags);
		if (pid)
			seq_printf(m, "%d %s\n", pid, comm);
	}
	return 0;
}

static int rbn_cmdlines_open(struct inode *inode, struct file *file)
{
	if (!rbn_files_ready())
		return -ENODEV;
	return single_open(file, rbn_cmdlines_show, NULL);
}

static const struct file_operations rbn_cmdlines_fops = {
	.owner		= THIS_MODULE,
	.open		= rbn_cmdlines_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= single_release,
};

/* Free @c and whatever of its arrays was allocated. */
static void rbn_cmdlines_release(struct rbn_cmdlines *c)
{
	kvfree(c->map);
	kfree(c->pids);
	kfree(c->gens);
	kfree(c->comms);
	kfree(c);
}

/**
 * rbn_cmdlines_init - allocate the table of task names
 *
 * Before any writer runs: the writers name their tasks in it from then on.
 *
 * Return: 0, -EINVAL for a cmdlines_size out of range, or -ENOMEM.
 */
int rbn_cmdlines_init(void)
{
	struct rbn_cmdlines *c;
	unsigned int nr = cmdlines_size;

	if (nr < RBN_CMDLINES_MIN || nr > RBN_CMDLINES_MAX) {
		pr_err("cmdlines_size=%u is out of range (%u..%u)\n", nr,
		       RBN_CMDLINES_MIN, RBN_CMDLINES_MAX);
		return -EINVAL;
	}
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	c->map = kvcalloc(RBN_CMD_MAP_SIZE, sizeof(*c->map), GFP_KERNEL);
	c->pids = kcalloc(nr, sizeof(*c->pids), GFP_KERNEL);
	c->gens = kcalloc(nr, sizeof(*c->gens), GFP_KERNEL);
	c->comms = kcalloc(nr, sizeof(*c->comms), GFP_KERNEL);
	if (!c->map || !c->pids || !c->gens || !c->comms) {
		rbn_cmdlines_release(c);
		return -ENOMEM;
	}
	c->lock = (arch_spinlock_t)__ARCH_SPIN_LOCK_UNLOCKED;
	c->nr = nr;
	rbn_cmd = c;
	return 0;
}

/**
 * rbn_cmdlines_free - free the table of task names
 *
 * Once no writer of the module is left (rbn_writers_exit(), and those of
 * inject and bench stopped) and its files are gone.
 */
void rbn_cmdlines_free(void)
{
	struct rbn_cmdlines *c = rbn_cmd;

	rbn_cmd = NULL;
	if (c)
		rbn_cmdlines_release(c);
}

/* ------------------------------------------------------------------ */
/* The writer                                                         */
/* ------------------------------------------------------------------ */

/* Every byte of a sample is written: no padding to leak. */
static_assert(sizeof(struct rbn_sample) == 40);

/* Preemption disables a writer adds before reading preempt_count(). */
#define RBN_PC_OWN	(IS_ENABLED(CONFIG_PREEMPT_COUNT) ? 1U : 0U)

/*
 * Write one rbnest:sample. @pc_bias counts the preemption disables of the
 * caller's own machinery (a tracepoint's) that ftrace would not show
 * either. Runs in any context, NMI included: per-CPU state is changed only
 * with this_cpu operations, which are single instructions on x86, and the
 * core's recursion guard keeps a probe inside the write path out of the
 * buffer.
 *
 * With discard_every = N, every Nth event reserved on the CPU is filled
 * as usual and handed to rbn_discard() instead of rbn_commit(). Its
 * number comes from one this_cpu_inc_return() after the reserve, so a
 * writer that interrupts (hard or soft interrupt, NMI, a probe) takes its
 * own: nested writers are discarded as often as the ones they interrupt.
 * A discarded sample takes no sequence number (its seq field holds
 * RBN_SEQ_DISCARDED, and the core clears the payload anyway): the
 * committed events of a CPU keep contiguous numbers.
 *
 * Return: true when the event was reserved and then discarded.
 */
static __always_inline bool rbn_write_sample(enum rbn_wsrc w,
					     enum rbn_source src,
					     enum rbn_tp_id tp, u32 arg,
					     unsigned int pc_bias)
{
	struct rbn_buffer *buf = rbn_buf;
	struct rbn_event *event;
	struct rbn_sample s;
	unsigned int depth, pc, every;
	u8 cflags = 0, ctx;
	bool discard = false;
	int cpu;

	if (unlikely(!buf))
		return false;

	preempt_disable_notrace();
	depth = this_cpu_inc_return(rbn_depth);

	/* The context of the caller, before the core adds its own. */
	pc = preempt_count();
	if (in_nmi()) {
		ctx = RBN_CTX_NMI;
		cflags |= RBN_FLAG_NMI;
	} else if (in_hardirq()) {
		ctx = RBN_CTX_HARDIRQ;
	} else if (in_serving_softirq()) {
		ctx = RBN_CTX_SOFTIRQ;
	} else {
		ctx = RBN_CTX_TASK;
	}
	if (pc & HARDIRQ_MASK)
		cflags |= RBN_FLAG_HARDIRQ;
	if (in_serving_softirq())
		cflags |= RBN_FLAG_SOFTIRQ;
	if (irqs_disabled())
		cflags |= RBN_FLAG_IRQS_OFF;
	pc = (pc & PREEMPT_MASK) - RBN_PC_OWN - pc_bias;

	if (w != RBN_W_NONE)
		this_cpu_inc(rbn_src_counts.attempts[w]);
	event = rbn_reserve(buf, sizeof(s));
	if (unlikely(!event)) {
		this_cpu_dec(rbn_depth);
		if (w != RBN_W_NONE)
			this_cpu_inc(rbn_src_counts.refused[w]);
		/*
		 * A failed reserve of the outermost writer still publishes
		 * what writers nested in it committed (rb_end_commit() on
		 * its way out): blocked readers must hear of it, or in
		 * producer/consumer mode, with the ring now full and every
		 * later write refused, they would never wake.
		 */
		rbn_pipe_commit_notify(raw_smp_processor_id());
		goto out;
	}

	cpu = raw_smp_processor_id();
	every = READ_ONCE(discard_every);
	discard = every && this_cpu_inc_return(rbn_reserved) % every == 0;
	s.common_type = RBN_EVENT_SAMPLE_ID;
	s.common_flags = cflags;
	s.common_preempt_count = pc & 0xff;
	s.common_pid = current->pid;
	/* Events written on this CPU before this one (committed ones). */
	s.seq = discard ? RBN_SEQ_DISCARDED : this_cpu_inc_return(rbn_seq) - 1;
	s.ts = rbn_event_ts(buf, event);
	s.cpu = cpu;
	s.context = ctx;
	s.depth = min(depth, 255U);
	s.source = src;
	s.flags = rbn_event_flags(buf, event);
	s.arg = arg;
	s.tp = tp;
	/* The payload is only 4-byte aligned. */
	memcpy(rbn_event_data(event), &s, sizeof(s));
	/* Either ends the reserve and publishes what nested in it. */
	if (discard) {
		rbn_discard(buf, event);
	} else {
		rbn_corrupt(buf, event);
		rbn_commit(buf, event);
	}
	/* Done with the buffer: a writer nesting from here is not deeper. */
	this_cpu_dec(rbn_depth);

	if (w != RBN_W_NONE) {
		if (!discard) {
			this_cpu_inc(rbn_src_counts.events[w]);
		} else {
			this_cpu_inc(rbn_src_counts.discarded[w]);
			if (depth >= 2)
				this_cpu_inc(rbn_src_counts.discarded_nested[w]);
		}
	}
	rbn_pipe_commit_notify(cpu);
	rbn_cmdline_note();
out:
	preempt_enable_notrace();
	return discard;
}

/**
 * rbn_writers_reset_seq - restart every CPU's sequence numbers at 0
 *
 * Called with recording off and no writer inside the buffer, right after
 * the buffer was emptied: a sequence number counts the events written on
 * its CPU before it, so a reader can tell events lost from events reset.
 */
void rbn_writers_reset_seq(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		per_cpu(rbn_seq, cpu) = 0;
}

/**
 * rbn_emit - write one rbnest:sample event on this CPU
 * @src:	where it comes from (enum rbn_source)
 * @arg:	source specific value, stored in the event's arg field
 *
 * Runs in any context, NMI included, and takes no lock. An event the
 * buffer refuses (recording off, full, a recursion) is dropped and counted
 * by the core.
 *
 * Return: true when the event was reserved and then discarded
 * (discard_every): the caller's only way to tell, as rbn_emit() has no
 * line of its own in the sources file.
 */
bool notrace rbn_emit(enum rbn_source src, u32 arg)
{
	return rbn_write_sample(RBN_W_NONE, src, RBN_TP_NONE, arg, 0);
}

static __always_inline void rbn_src_emit(enum rbn_wsrc w, enum rbn_source src,
					 u32 arg)
{
	rbn_write_sample(w, src, RBN_TP_NONE, arg, 0);
}

/* ------------------------------------------------------------------ */
/* Tracepoints                                                        */
/* ------------------------------------------------------------------ */

/* The tracepoint called the probe with preemption disabled. */
#define RBN_PC_TP	RBN_PC_OWN

static __always_inline void rbn_tp_emit(enum rbn_wsrc w, enum rbn_tp_id id,
					u32 val)
{
	rbn_write_sample(w, RBN_SRC_TRACEPOINT, id, val, RBN_PC_TP);
}

static void notrace rbn_tp_irq_entry(void *data, int irq,
				     struct irqaction *action)
{
	rbn_tp_emit(RBN_W_TP_IRQ, RBN_TP_IRQ_ENTRY, irq);
}

static void notrace rbn_tp_irq_exit(void *data, int irq,
				    struct irqaction *action, int ret)
{
	rbn_tp_emit(RBN_W_TP_IRQ, RBN_TP_IRQ_EXIT, irq);
}

static void notrace rbn_tp_softirq_entry(void *data, unsigned int vec_nr)
{
	rbn_tp_emit(RBN_W_TP_SOFTIRQ, RBN_TP_SOFTIRQ_ENTRY, vec_nr);
}

static void notrace rbn_tp_softirq_exit(void *data, unsigned int vec_nr)
{
	rbn_tp_emit(RBN_W_TP_SOFTIRQ, RBN_TP_SOFTIRQ_EXIT, vec_nr);
}

static void notrace rbn_tp_hrtimer_entry(void *data, struct hrtimer *hrtimer,
					 ktime_t *now)
{
	rbn_tp_emit(RBN_W_TP_HRTIMER, RBN_TP_HRTIMER_ENTRY, 0);
}

static void notrace rbn_tp_local_timer_entry(void *data, int vector)
{
	rbn_tp_emit(RBN_W_TP_LOCAL_TIMER, RBN_TP_LOCAL_TIMER_ENTRY, vector);
}

static void notrace rbn_tp_nmi_handler(void *data, void *handler,
				       s64 delta_ns, int handled)
{
	rbn_tp_emit(RBN_W_TP_NMI, RBN_TP_NMI_HANDLER, handled);
}

static void notrace rbn_tp_sched_switch(void *data, bool preempt,
					struct task_struct *prev,
					struct task_struct *next,
					unsigned int prev_state)
{
	rbn_tp_emit(RBN_W_TP_SCHED, RBN_TP_SCHED_SWITCH, next->pid);
}

/*
 * A probe must match its tracepoint's TP_PROTO exactly: compare it with
 * the register_trace_<name>() the kernel's header declares, without
 * referring to the (unexported) tracepoint itself.
 */
#define RBN_TP_PROTO_CHECK(tp, probe)					\
	static_assert(__same_type(&register_trace_##tp,			\
				  int (*)(typeof(probe) *, void *)),	\
		      #probe " does not match the " #tp " tracepoint")

RBN_TP_PROTO_CHECK(irq_handler_entry, rbn_tp_irq_entry);
RBN_TP_PROTO_CHECK(irq_handler_exit, rbn_tp_irq_exit);
RBN_TP_PROTO_CHECK(softirq_entry, rbn_tp_softirq_entry);
RBN_TP_PROTO_CHECK(softirq_exit, rbn_tp_softirq_exit);
RBN_TP_PROTO_CHECK(hrtimer_expire_entry, rbn_tp_hrtimer_entry);
RBN_TP_PROTO_CHECK(nmi_handler, rbn_tp_nmi_handler);
RBN_TP_PROTO_CHECK(sched_switch, rbn_tp_sched_switch);
#ifdef CONFIG_X86_LOCAL_APIC
RBN_TP_PROTO_CHECK(local_timer_entry, rbn_tp_local_timer_entry);
#endif

/**
 * struct rbn_tp - a tracepoint a source attaches to
 * @name:	the tracepoint's name
 * @probe:	the probe
 * @tp:		the tracepoint, NULL when this kernel has none of that name
 */
struct rbn_tp {
	const char *name;
	void *probe;
	struct tracepoint *tp;
};

static struct rbn_tp rbn_tps[RBN_NR_TP] = {
	[RBN_TP_IRQ_ENTRY]	= { "irq_handler_entry", rbn_tp_irq_entry },
	[RBN_TP_IRQ_EXIT]	= { "irq_handler_exit", rbn_tp_irq_exit },
	[RBN_TP_SOFTIRQ_ENTRY]	= { "softirq_entry", rbn_tp_softirq_entry },
	[RBN_TP_SOFTIRQ_EXIT]	= { "softirq_exit", rbn_tp_softirq_exit },
	[RBN_TP_HRTIMER_ENTRY]	= { "hrtimer_expire_entry",
				    rbn_tp_hrtimer_entry },
	[RBN_TP_LOCAL_TIMER_ENTRY] = { "local_timer_entry",
				       rbn_tp_local_timer_entry },
	[RBN_TP_NMI_HANDLER]	= { "nmi_handler", rbn_tp_nmi_handler },
	[RBN_TP_SCHED_SWITCH]	= { "sched_switch", rbn_tp_sched_switch },
};

static void rbn_tp_lookup(struct tracepoint *tp, void *priv)
{
	int i;

	for (i = RBN_TP_FIRST; i < RBN_NR_TP; i++)
		if (!rbn_tps[i].tp && !strcmp(tp->name, rbn_tps[i].name))
			rbn_tps[i].tp = tp;
}

static int rbn_tp_source_start(enum rbn_wsrc w)
{
	const struct rbn_src *s = &rbn_srcs[w];
	struct rbn_tp *t;
	int i, ret;

	for (i = 0; i < s->nr_tps; i++) {
		t = &rbn_tps[s->tp_first + i];
		ret = tracepoint_probe_register(t->tp, t->probe, NULL);
		if (ret) {
			pr_err("cannot attach to tracepoint %s: %d\n",
			       t->name, ret);
			goto err_unregister;
		}
	}
	return 0;

err_unregister:
	while (i--) {
		t = &rbn_tps[s->tp_first + i];
		tracepoint_probe_unregister(t->tp, t->probe, NULL);
	}
	return ret;
}

/* The caller waits for running probes: tracepoint_synchronize_unregister(). */
static void rbn_tp_source_stop(enum rbn_wsrc w)
{
	const struct rbn_src *s = &rbn_srcs[w];
	struct rbn_tp *t;
	int i;

	for (i = 0; i < s->nr_tps; i++) {
		t = &rbn_tps[s->tp_first + i];
		WARN_ON_ONCE(tracepoint_probe_unregister(t->tp, t->probe,
							 NULL));
	}
}

/* ------------------------------------------------------------------ */
/* Load generator: hrtimer, tasklet, irq_work, NMI                    */
/* ------------------------------------------------------------------ */

/* How long unload waits for self-NMIs still on their way. */
#define RBN_NMI_DRAIN_MS	100

/**
 * struct rbn_gen_cpu - the generator of one CPU
 * @timer:	hard interrupt hrtimer, pinned to the CPU
 * @tasklet:	softirq source, scheduled by @timer
 * @work:	hard irq_work source, queued by @timer
 * @nmi_pending: 1 from a self-NMI sent by @timer until the handler saw it
 * @expiries:	@timer's expiries since the generator started
 * @nmi_wait:	expiries since the last self-NMI
 * @tasklet_runs: runs of @tasklet
 * @work_runs:	runs of @work
 * @nmis:	self-NMIs handled
 * @task_events: events of the task writer
 */
struct rbn_gen_cpu {
	struct hrtimer timer;
	struct tasklet_struct tasklet;
	struct irq_work work;
	unsigned int nmi_pending;
	u64 expiries;
	unsigned int nmi_wait;
	u64 tasklet_runs;
	u64 work_runs;
	u64 nmis;
	u64 task_events;
};

static DEFINE_PER_CPU(struct rbn_gen_cpu, rbn_gen_cpus);

/* Generator sources using the hrtimer (RBN_W_TIMER_MASK bits). */
static unsigned long rbn_gen_mask;
/* Settings taken from the parameters when the hrtimer / nmi start. */
static u64 rbn_gen_period_ns;
static unsigned int rbn_gen_nmi_every;
/* The dynamic CPU hotplug state of the hrtimers, 0 when stopped. */
static int rbn_gen_hp_state;
static bool rbn_nmi_registered;

static void rbn_gen_tasklet_fn(struct tasklet_struct *t)
{
	struct rbn_gen_cpu *g = from_tasklet(g, t, tasklet);

	rbn_src_emit(RBN_W_SOFTIRQ, RBN_SRC_SOFTIRQ, ++g->tasklet_runs);
}

static void rbn_gen_work_fn(struct irq_work *work)
{
	struct rbn_gen_cpu *g = container_of(work, struct rbn_gen_cpu, work);

	rbn_src_emit(RBN_W_IRQ_WORK, RBN_SRC_IRQ_WORK, ++g->work_runs);
}

#if RBN_HAVE_NMI
/*
 * Claim only an NMI this CPU sent itself: one claim each time the sender
 * set the flag. A count of NMIs in flight would drift: two NMIs that
 * arrive while NMIs are blocked merge into one, the count stays above
 * zero and a later NMI of someone else is claimed. The flag cannot: the
 * first NMI after a send clears it, whatever merged into it. Only the
 * CPU's own hrtimer and NMI handler touch it, so program order is enough.
 */
static int rbn_gen_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	struct rbn_gen_cpu *g = this_cpu_ptr(&rbn_gen_cpus);

	if (!READ_ONCE(g->nmi_pending))
		return NMI_DONE;
	WRITE_ONCE(g->nmi_pending, 0);
	rbn_src_emit(RBN_W_NMI, RBN_SRC_NMI, ++g->nmis);
	return NMI_HANDLED;
}

/*
 * Sent as a one-CPU mask, not with send_IPI_self(): the x2APIC's self-IPI
 * register only sends fixed vectors, while every send_IPI_mask()
 * implementation turns NMI_VECTOR into NMI delivery, as the NMI backtrace
 * code relies on. The apic driver is exported on 6.1 and 6.12 alike (6.12
 * keeps it in step with its static calls).
 */
static void rbn_gen_send_nmi(struct rbn_gen_cpu *g)
{
	/* One in flight at a time. */
	if (READ_ONCE(g->nmi_pending))
		return;
	WRITE_ONCE(g->nmi_pending, 1);
	/* Set before the NMI can see it: the NMI comes to this CPU. */
	barrier();
	apic->send_IPI_mask(cpumask_of(smp_processor_id()), NMI_VECTOR);
}

/*
 * Wait, bounded, until every online CPU saw the self-NMI it sent: the
 * hrtimers are stopped, but one may have sent an NMI just before that
 * is not there yet; unregistered, its handler would leave it to the
 * kernel's "unknown NMI" path (a panic with unknown_nmi_panic). An
 * offline CPU gets none: its flag is cleared when it comes back.
 */
static void rbn_gen_nmi_drain(void)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(RBN_NMI_DRAIN_MS);
	struct rbn_gen_cpu *g;
	int cpu;

	cpus_read_lock();
	for_each_online_cpu(cpu) {
		g = per_cpu_ptr(&rbn_gen_cpus, cpu);
		while (READ_ONCE(g->nmi_pending)) {
			if (time_after(jiffies, deadline)) {
				pr_warn("CPU %d: a self-NMI did not arrive in %d ms\n",
					cpu, RBN_NMI_DRAIN_MS);
				break;
			}
			usleep_range(50, 100);
		}
	}
	cpus_read_unlock();
}
#endif /* RBN_HAVE_NMI */

static enum hrtimer_restart rbn_gen_timer_fn(struct hrtimer *timer)
{
	struct rbn_gen_cpu *g = container_of(timer, struct rbn_gen_cpu, timer);
	unsigned long mask = READ_ONCE(rbn_gen_mask);

	g->expiries++;
	if (mask & BIT(RBN_W_HRTIMER))
		rbn_src_emit(RBN_W_HRTIMER, RBN_SRC_HRTIMER, g->expiries);
	if (mask & BIT(RBN_W_SOFTIRQ))
		tasklet_schedule(&g->tasklet);
	if (mask & BIT(RBN_W_IRQ_WORK))
		irq_work_queue(&g->work);
#if RBN_HAVE_NMI
	if ((mask & BIT(RBN_W_NMI)) &&
	    ++g->nmi_wait >= READ_ONCE(rbn_gen_nmi_every)) {
		g->nmi_wait = 0;
		rbn_gen_send_nmi(g);
	}
#endif
	/*
	 * A full period from now, not from the last expiry: a machine too
	 * slow for the period (an emulator) gets fewer expiries instead of
	 * an interrupt storm.
	 */
	hrtimer_set_expires(timer, ktime_add_ns(ktime_get(), rbn_gen_period_ns));
	return HRTIMER_RESTART;
}

/* CPU hotplug: runs on @cpu, in its hotplug thread. */
static int rbn_gen_cpu_online(unsigned int cpu)
{
	struct rbn_gen_cpu *g = per_cpu_ptr(&rbn_gen_cpus, cpu);

	g->nmi_wait = 0;
	/* An NMI sent before the CPU went down never comes. */
	WRITE_ONCE(g->nmi_pending, 0);
	hrtimer_start(&g->timer, ns_to_ktime(rbn_gen_period_ns),
		      HRTIMER_MODE_REL_PINNED_HARD);
	return 0;
}

/* The hrtimer goes first: it raises the others. */
static int rbn_gen_cpu_offline(unsigned int cpu)
{
	struct rbn_gen_cpu *g = per_cpu_ptr(&rbn_gen_cpus, cpu);

	hrtimer_cancel(&g->timer);
	irq_work_sync(&g->work);
	tasklet_kill(&g->tasklet);
	return 0;
}

static int rbn_check_param(const char *name, unsigned int val,
			   unsigned int min, unsigned int max)
{
	if (val >= min && val <= max)
		return 0;
	pr_err("%s=%u is out of range (%u..%u)\n", name, val, min, max);
	return -EINVAL;
}

/* Start the generator source @w that needs the hrtimer. */
static int rbn_gen_timer_start(enum rbn_wsrc w)
{
	unsigned int period = READ_ONCE(gen_period_us);
	int ret;

	if (rbn_gen_mask) {
		WRITE_ONCE(rbn_gen_mask, rbn_gen_mask | BIT(w));
		return 0;
	}

	ret = rbn_check_param("gen_period_us", period, RBN_PERIOD_MIN_US,
			      RBN_PERIOD_MAX_US);
	if (ret)
		return ret;
	rbn_gen_period_ns = (u64)period * NSEC_PER_USEC;
	WRITE_ONCE(rbn_gen_mask, BIT(w));
	/* Starts the hrtimer on every online CPU and on each that comes. */
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "rbnest/gen:online",
				rbn_gen_cpu_online, rbn_gen_cpu_offline);
	if (ret < 0) {
		pr_err("cannot start the generator hrtimers: %d\n", ret);
		WRITE_ONCE(rbn_gen_mask, 0);
		return ret;
	}
	rbn_gen_hp_state = ret;
	return 0;
}

static void rbn_gen_timer_stop(enum rbn_wsrc w)
{
	WRITE_ONCE(rbn_gen_mask, rbn_gen_mask & ~BIT(w));
	if (rbn_gen_mask || !rbn_gen_hp_state)
		return;
	/* Cancels the hrtimer and waits for its work on every CPU. */
	cpuhp_remove_state(rbn_gen_hp_state);
	rbn_gen_hp_state = 0;
}

static int rbn_gen_nmi_start(void)
{
#if RBN_HAVE_NMI
	unsigned int every = READ_ONCE(gen_nmi_every);
	int ret;

	ret = rbn_check_param("gen_nmi_every", every, 1, RBN_NMI_EVERY_MAX);
	if (ret)
		return ret;
	WRITE_ONCE(rbn_gen_nmi_every, every);
	/* Registered once, until unload: a late NMI always finds it. */
	if (!rbn_nmi_registered) {
		ret = register_nmi_handler(NMI_LOCAL, rbn_gen_nmi_handler, 0,
					   KBUILD_MODNAME);
		if (ret) {
			pr_err("cannot register the NMI handler: %d\n", ret);
			return ret;
		}
		rbn_nmi_registered = true;
	}
	return rbn_gen_timer_start(RBN_W_NMI);
#else
	return -ENODEV;
#endif
}

/* At unload, or when no source could start at load. */
static void rbn_gen_nmi_unregister(void)
{
#if RBN_HAVE_NMI
	/* The hrtimers are stopped; an NMI they sent may still be coming. */
	if (rbn_nmi_registered) {
		rbn_gen_nmi_drain();
		unregister_nmi_handler(NMI_LOCAL, KBUILD_MODNAME);
		rbn_nmi_registered = false;
	}
#endif
}

static void rbn_gen_init(void)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct rbn_gen_cpu *g = per_cpu_ptr(&rbn_gen_cpus, cpu);

		hrtimer_init(&g->timer, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_PINNED_HARD);
		g->timer.function = rbn_gen_timer_fn;
		tasklet_setup(&g->tasklet, rbn_gen_tasklet_fn);
		g->work = IRQ_WORK_INIT_HARD(rbn_gen_work_fn);
		g->nmi_pending = 0;
	}
}

/* ------------------------------------------------------------------ */
/* Load generator: task writers                                       */
/* ------------------------------------------------------------------ */

static u64 rbn_task_busy_ns;
static u64 rbn_task_idle_ns;

static DEFINE_PER_CPU(struct task_struct *, rbn_task_thread);

static int rbn_task_should_run(unsigned int cpu)
{
	return 1;
}

/* Background load: lowest priority, so that it never starves a shell. */
static void rbn_task_setup(unsigned int cpu)
{
	set_user_nice(current, MAX_NICE);
}

static bool rbn_task_stopping(void)
{
	return kthread_should_stop() || kthread_should_park();
}

/*
 * One burst and one sleep; smpboot calls it again and again, and parks or
 * stops the thread between two calls. The sleep ends early when it is
 * asked to park or stop.
 */
static void rbn_task_fn(unsigned int cpu)
{
	struct rbn_gen_cpu *g = per_cpu_ptr(&rbn_gen_cpus, cpu);
	u64 end = local_clock() + READ_ONCE(rbn_task_busy_ns);
	ktime_t idle = ns_to_ktime(READ_ONCE(rbn_task_idle_ns));

	do {
		rbn_src_emit(RBN_W_TASK, RBN_SRC_TASK, ++g->task_events);
		cond_resched();
	} while (local_clock() < end && !rbn_task_stopping());

	set_current_state(TASK_INTERRUPTIBLE);
	if (!rbn_task_stopping())
		schedule_hrtimeout_range(&idle, 0, HRTIMER_MODE_REL);
	__set_current_state(TASK_RUNNING);
}

static struct smp_hotplug_thread rbn_task_threads = {
	.store			= &rbn_task_thread,
	.thread_should_run	= rbn_task_should_run,
	.thread_fn		= rbn_task_fn,
	.setup			= rbn_task_setup,
	.thread_comm		= "rbnest_task/%u",
};

static int rbn_task_start(void)
{
	unsigned int busy = READ_ONCE(gen_task_busy_us);
	unsigned int idle = READ_ONCE(gen_task_idle_us);
	int ret;

	ret = rbn_check_param("gen_task_busy_us", busy, RBN_BUSY_MIN_US,
			      RBN_BUSY_MAX_US);
	if (ret)
		return ret;
	ret = rbn_check_param("gen_task_idle_us", idle, RBN_IDLE_MIN_US,
			      RBN_IDLE_MAX_US);
	if (ret)
		return ret;
	WRITE_ONCE(rbn_task_busy_ns, (u64)busy * NSEC_PER_USEC);
	WRITE_ONCE(rbn_task_idle_ns, (u64)idle * NSEC_PER_USEC);

	/* A thread per online CPU; smpboot follows CPU hotplug. */
	ret = smpboot_register_percpu_thread(&rbn_task_threads);
	if (ret)
		pr_err("cannot start the task writers: %d\n", ret);
	return ret;
}

static void rbn_task_stop(void)
{
	smpboot_unregister_percpu_thread(&rbn_task_threads);
}

/* ------------------------------------------------------------------ */
/* kprobes                                                            */
/* ------------------------------------------------------------------ */

#define RBN_MAX_KPROBES		32
#define RBN_KPROBE_NAME_LEN	32	/* 31 characters and the NUL */
/* Longest write to kprobe_events accepted at once. */
#define RBN_KPROBE_WRITE_MAX	PAGE_SIZE

/**
 * struct rbn_kprobe - a kprobe of kprobe_events
 * @kp:		the kprobe, registered while listed
 * @hits:	times its handler ran
 * @slot:	its index in rbn_kprobes[], the arg of its events
 * @name:	its name
 * @sym:	the symbol it probes (@kp.symbol_name)
 */
struct rbn_kprobe {
	struct kprobe kp;
	atomic64_t hits;
	unsigned int slot;
	char name[RBN_KPROBE_NAME_LEN];
	char *sym;
};

/* The kprobes, in slots (rbn_writers_mutex). */
static struct rbn_kprobe *rbn_kprobes[RBN_MAX_KPROBES];

static int notrace rbn_kprobe_pre(struct kprobe *kp, struct pt_regs *regs)
{
	struct rbn_kprobe *k = container_of(kp, struct rbn_kprobe, kp);

	atomic64_inc(&k->hits);
	rbn_src_emit(RBN_W_KPROBES, RBN_SRC_KPROBE, k->slot);
	return 0;
}

static struct rbn_kprobe *rbn_kprobe_find(const char *name)
{
	int i;

	for (i = 0; i < RBN_MAX_KPROBES; i++)
		if (rbn_kprobes[i] && !strcmp(rbn_kprobes[i]->name, name))
			return rbn_kprobes[i];
	return NULL;
}

static void rbn_kprobe_free(struct rbn_kprobe *k)
{
	kfree(k->sym);
	kfree(k);
}

/* [A-Za-z_][A-Za-z0-9_]*, 1..31 characters */
static bool rbn_kprobe_name_ok(const char *name)
{
	size_t i, len = strlen(name);

	if (!len || len >= RBN_KPROBE_NAME_LEN)
		return false;
	if (!isalpha(name[0]) && name[0] != '_')
		return false;
	for (i = 1; i < len; i++)
		if (!isalnum(name[i]) && name[i] != '_')
			return false;
	return true;
}

/* A symbol as kallsyms spells it: "name.isra.0", "module:name". */
static bool rbn_kprobe_sym_ok(const char *sym)
{
	size_t i, len = strlen(sym);

	if (!len || len >= KSYM_NAME_LEN)
		return false;
	for (i = 0; i < len; i++)
		if (!isalnum(sym[i]) && !strchr("_.:$", sym[i]))
			return false;
	return true;
}

static int rbn_kprobe_add(const char *name, const char *sym,
			  unsigned int offset)
{
	struct rbn_kprobe *k;
	int slot, ret;

	if (rbn_kprobe_find(name))
		return -EEXIST;
	for (slot = 0; slot < RBN_MAX_KPROBES; slot++)
		if (!rbn_kprobes[slot])
			break;
	if (slot == RBN_MAX_KPROBES)
		return -ENOSPC;

	k = kzalloc(sizeof(*k), GFP_KERNEL);
	if (!k)
		return -ENOMEM;
	k->sym = kstrdup(sym, GFP_KERNEL);
	if (!k->sym) {
		ret = -ENOMEM;
		goto err_free_kprobe;
	}
	strscpy(k->name, name, sizeof(k->name));
	k->slot = slot;
	atomic64_set(&k->hits, 0);
	k->kp.symbol_name = k->sym;
	k->kp.offset = offset;
	k->kp.pre_handler = rbn_kprobe_pre;
	/* Armed only while the kprobes source is on. */
	if (!(rbn_src_on & BIT(RBN_W_KPROBES)))
		k->kp.flags = KPROBE_FLAG_DISABLED;

	/* -ENOENT for a symbol kallsyms does not know. */
	ret = register_kprobe(&k->kp);
	if (ret)
		goto err_free_kprobe;
	rbn_kprobes[slot] = k;
	return 0;

err_free_kprobe:
	rbn_kprobe_free(k);
	return ret;
}

static int rbn_kprobe_remove(const char *name)
{
	struct rbn_kprobe *k = rbn_kprobe_find(name);

	if (!k)
		return -ENOENT;
	/* Waits until no handler of it runs. */
	unregister_kprobe(&k->kp);
	rbn_kprobes[k->slot] = NULL;
	rbn_kprobe_free(k);
	return 0;
}

static void rbn_kprobe_remove_all(void)
{
	struct kprobe *kps[RBN_MAX_KPROBES];
	int i, n = 0;

	for (i = 0; i < RBN_MAX_KPROBES; i++)
		if (rbn_kprobes[i])
			kps[n++] = &rbn_kprobes[i]->kp;
	if (!n)
		return;
	/* One grace period for all of them. */
	unregister_kprobes(kps, n);
	for (i = 0; i < RBN_MAX_KPROBES; i++) {
		if (rbn_kprobes[i]) {
			rbn_kprobe_free(rbn_kprobes[i]);
			rbn_kprobes[i] = NULL;
		}
	}
}

/* Arm or disarm every kprobe; the caller waits for running handlers. */
static void rbn_kprobes_set(bool on)
{
	int i;

	for (i = 0; i < RBN_MAX_KPROBES; i++) {
		if (!rbn_kprobes[i])
			continue;
		/* Fails only for a kprobe whose module went away. */
		if (on)
			enable_kprobe(&rbn_kprobes[i]->kp);
		else
			disable_kprobe(&rbn_kprobes[i]->kp);
	}
}

/* One line of kprobe_events: "p:NAME SYMBOL[+OFFS]" or "-:NAME". */
static int rbn_kprobe_command(char *line)
{
	unsigned int offset = 0;
	char *name, *sym, *offs;

	line = strim(line);
	if (!*line || *line == '#')
		return 0;
	if (line[0] == '-' && line[1] == ':') {
		name = line + 2;
		if (!rbn_kprobe_name_ok(name))
			return -EINVAL;
		return rbn_kprobe_remove(name);
	}
	if (line[0] != 'p' || line[1] != ':')
		return -EINVAL;

	name = line + 2;
	sym = strpbrk(name, " \t");
	if (!sym)
		return -EINVAL;
	*sym = '\0';
	sym = skip_spaces(sym + 1);
	if (strpbrk(sym, " \t"))
		return -EINVAL;
	offs = strchr(sym, '+');
	if (offs) {
		*offs++ = '\0';
		if (kstrtouint(offs, 0, &offset))
			return -EINVAL;
	}
	if (!rbn_kprobe_name_ok(name) || !rbn_kprobe_sym_ok(sym))
		return -EINVAL;
	return rbn_kprobe_add(name, sym, offset);
}

static int rbn_kprobe_events_show(struct seq_file *m, void *v)
{
	struct rbn_kprobe *k;
	int i;

	mutex_lock(&rbn_writers_mutex);
	for (i = 0; i < RBN_MAX_KPROBES; i++) {
		k = rbn_kprobes[i];
		if (!k)
			continue;
		seq_printf(m, "p:%s %s", k->name, k->sym);
		if (k->kp.offset)
			seq_printf(m, "+%u", k->kp.offset);
		seq_printf(m, " hits=%lld\n", atomic64_read(&k->hits));
	}
	mutex_unlock(&rbn_writers_mutex);
	return 0;
}

static int rbn_kprobe_events_open(struct inode *inode, struct file *file)
{
	if (!rbn_files_ready())
		return -ENODEV;
	/* Like tracefs: "> kprobe_events" removes every kprobe first. */
	if ((file->f_mode & FMODE_WRITE) && (file->f_flags & O_TRUNC)) {
		mutex_lock(&rbn_writers_mutex);
		rbn_kprobe_remove_all();
		mutex_unlock(&rbn_writers_mutex);
	}
	return single_open(file, rbn_kprobe_events_show, NULL);
}

/*
 * Each line is a command, applied in order; the first that fails ends the
 * write with its error, the lines before it stay applied.
 */
static ssize_t rbn_kprobe_events_write(struct file *file,
				       const char __user *ubuf, size_t cnt,
				       loff_t *ppos)
{
	char *buf, *p, *line;
	int ret = 0;

	if (!cnt)
		return 0;
	if (cnt > RBN_KPROBE_WRITE_MAX)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, cnt);
	if (IS_ERR(buf))
		return PTR_ERR(buf);

	mutex_lock(&rbn_writers_mutex);
	p = buf;
	while (!ret && (line = strsep(&p, "\n"))) {
		if (rbn_writers_dead)
			ret = -ENODEV;
		else
			ret = rbn_kprobe_command(line);
	}
	mutex_unlock(&rbn_writers_mutex);
	kfree(buf);
	if (ret)
		return ret;
	*ppos += cnt;
	return cnt;
}

static const struct file_operations rbn_kprobe_events_fops = {
	.owner		= THIS_MODULE,
	.open		= rbn_kprobe_events_open,
	.read		= seq_read,
	.write		= rbn_kprobe_events_write,
	.llseek		= seq_lseek,
	.release	= single_release,
};

/* ------------------------------------------------------------------ */
/* Switching sources                                                  */
/* ------------------------------------------------------------------ */

static int rbn_src_start(enum rbn_wsrc w)
{
	switch (w) {
	case RBN_W_TASK:
		return rbn_task_start();
	case RBN_W_HRTIMER:
	case RBN_W_SOFTIRQ:
	case RBN_W_IRQ_WORK:
		return rbn_gen_timer_start(w);
	case RBN_W_NMI:
		return rbn_gen_nmi_start();
	case RBN_W_KPROBES:
		rbn_kprobes_set(true);
		return 0;
	default:
		return rbn_tp_source_start(w);
	}
}

/*
 * Stop @w. Returns true when handlers of it may still be running: the
 * caller then waits with tracepoint_synchronize_unregister().
 */
static bool rbn_src_stop(enum rbn_wsrc w)
{
	switch (w) {
	case RBN_W_TASK:
		rbn_task_stop();
		return false;
	case RBN_W_HRTIMER:
	case RBN_W_SOFTIRQ:
	case RBN_W_IRQ_WORK:
	case RBN_W_NMI:
		rbn_gen_timer_stop(w);
		return false;
	case RBN_W_KPROBES:
		rbn_kprobes_set(false);
		return true;
	default:
		rbn_tp_source_stop(w);
		return true;
	}
}

/*
 * Turn the sources in @want on and the others off. The new ones start
 * first: if one fails, those started here stop again and nothing changed.
 * When it returns, no event of a source it stopped is being written.
 */
static int rbn_sources_apply(unsigned long want)
{
	unsigned long start = want & ~rbn_src_on;
	unsigned long stop = rbn_src_on & ~want;
	unsigned long started = 0;
	bool sync = false;
	int w, ret;

	for_each_set_bit(w, &start, RBN_NR_WSRC) {
		ret = rbn_src_start(w);
		if (ret)
			goto err_stop_started;
		started |= BIT(w);
		rbn_src_on |= BIT(w);
	}
	for_each_set_bit(w, &stop, RBN_NR_WSRC) {
		rbn_src_on &= ~BIT(w);
		sync |= rbn_src_stop(w);
	}
	if (sync)
		tracepoint_synchronize_unregister();
	return 0;

err_stop_started:
	for_each_set_bit(w, &started, RBN_NR_WSRC) {
		rbn_src_on &= ~BIT(w);
		sync |= rbn_src_stop(w);
	}
	if (sync)
		tracepoint_synchronize_unregister();
	return ret;
}

static int rbn_src_lookup(const char *name)
{
	int w;

	for (w = 0; w < RBN_NR_WSRC; w++)
		if (!strcmp(name, rbn_srcs[w].name))
			return w;
	return -EINVAL;
}

/*
 * Parse the tokens of @buf ("NAME", "+NAME", "-NAME", "all", "-all",
 * separated by spaces, commas or newlines) into the set of sources wanted,
 * starting from the sources on. "all" means every available source.
 * Naming an unavailable source is -ENODEV, or, for the module parameter
 * (@param), a warning.
 */
static int rbn_sources_parse(char *buf, unsigned long *want, bool param)
{
	unsigned long mask = rbn_src_on;
	char *tok;
	bool off;
	int w;

	while ((tok = strsep(&buf, " ,\t\n"))) {
		if (!*tok)
			continue;
		off = *tok == '-';
		if (*tok == '-' || *tok == '+')
			tok++;
		if (!strcmp(tok, "all")) {
			mask = off ? 0 : mask | rbn_src_avail;
			continue;
		}
		w = rbn_src_lookup(tok);
		if (w < 0) {
			if (param)
				pr_err("sources: unknown source '%s'\n", tok);
			return -EINVAL;
		}
		if (off) {
			mask &= ~BIT(w);
		} else if (!(rbn_src_avail & BIT(w))) {
			if (!param)
				return -ENODEV;
			pr_warn("sources: %s is not available on this kernel\n",
				tok);
		} else {
			mask |= BIT(w);
		}
	}
	*want = mask;
	return 0;
}

/*
 * The sources file: "NAME on|off events=N attempts=N discarded=N
 * discarded_nested=N refused=N" per source, and " unavailable" after a
 * source this kernel lacks: struct rbn_src_counts, each summed over the
 * CPUs since the load. Once the source's writers are done, attempts ==
 * events + discarded + refused.
 */
static int rbn_sources_show(struct seq_file *m, void *v)
{
	u64 events, attempts, discarded, nested, refused;
	struct rbn_src_counts *c;
	int w, cpu;

	mutex_lock(&rbn_writers_mutex);
	for (w = 0; w < RBN_NR_WSRC; w++) {
		events = 0;
		attempts = 0;
		discarded = 0;
		nested = 0;
		refused = 0;
		for_each_possible_cpu(cpu) {
			c = per_cpu_ptr(&rbn_src_counts, cpu);
			attempts += READ_ONCE(c->attempts[w]);
			events += READ_ONCE(c->events[w]);
			discarded += READ_ONCE(c->discarded[w]);
			nested += READ_ONCE(c->discarded_nested[w]);
			refused += READ_ONCE(c->refused[w]);
		}
		seq_printf(m, "%s %s events=%llu attempts=%llu discarded=%llu discarded_nested=%llu refused=%llu%s\n",
			   rbn_srcs[w].name,
			   rbn_src_on & BIT(w) ? "on" : "off", events, attempts,
			   discarded, nested, refused,
			   rbn_src_avail & BIT(w) ? "" : " unavailable");
	}
	mutex_unlock(&rbn_writers_mutex);
	return 0;
}

static int rbn_sources_open(struct inode *inode, struct file *file)
{
	if (!rbn_files_ready())
		return -ENODEV;
	return single_open(file, rbn_sources_show, NULL);
}

static ssize_t rbn_sources_write(struct file *file, const char __user *ubuf,
				 size_t cnt, loff_t *ppos)
{
	unsigned long want;
	char *buf;
	int ret;

	if (!cnt)
		return 0;
	if (cnt > PAGE_SIZE)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, cnt);
	if (IS_ERR(buf))
		return PTR_ERR(buf);

	mutex_lock(&rbn_writers_mutex);
	if (rbn_writers_dead)
		ret = -ENODEV;
	else
		ret = rbn_sources_parse(buf, &want, false);
	if (!ret)
		ret = rbn_sources_apply(want);
	mutex_unlock(&rbn_writers_mutex);
	kfree(buf);
	if (ret)
		return ret;
	*ppos += cnt;
	return cnt;
}

static const struct file_operations rbn_sources_fops = {
	.owner		= THIS_MODULE,
	.open		= rbn_sources_open,
	.read		= seq_read,
	.write		= rbn_sources_write,
	.llseek		= seq_lseek,
	.release	= single_release,
};

/* ------------------------------------------------------------------ */
/* Load and unload                                                    */
/* ------------------------------------------------------------------ */

static void rbn_sources_probe(void)
{
	const struct rbn_src *s;
	int w, i;

	for_each_kernel_tracepoint(rbn_tp_lookup, NULL);

	for (w = 0; w < RBN_NR_WSRC; w++) {
		s = &rbn_srcs[w];
		if (w == RBN_W_NMI && !RBN_HAVE_NMI)
			continue;
		if ((w == RBN_W_NMI || w == RBN_W_TP_NMI) &&
		    !RBN_PORT_NMI_SAFE) {
			pr_warn("source %s unavailable: cmpxchg is not NMI safe here\n",
				s->name);
			continue;
		}
		for (i = 0; i < s->nr_tps; i++)
			if (!rbn_tps[s->tp_first + i].tp)
				break;
		if (i < s->nr_tps) {
			pr_info("source %s unavailable: no tracepoint %s\n",
				s->name, rbn_tps[s->tp_first + i].name);
			continue;
		}
		rbn_src_avail |= BIT(w);
	}
}

/**
 * rbn_writers_init - start the sources of the module parameter
 * @sources:	the "sources" module parameter: "" for none, "all", or a
 *		comma separated list of source names
 *
 * A source this kernel lacks is skipped with a warning. The files come
 * later (rbn_writers_create_files()), once nothing of the load can fail.
 *
 * Return: 0, -EINVAL for an unknown source name, or the error of a source
 * that failed to start (then none runs).
 */
int rbn_writers_init(const char *sources)
{
	unsigned long want;
	char *buf;
	int ret;

	rbn_gen_init();
	rbn_sources_probe();

	buf = kstrdup(sources, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	mutex_lock(&rbn_writers_mutex);
	ret = rbn_sources_parse(buf, &want, true);
	if (!ret)
		ret = rbn_sources_apply(want);
	if (ret)
		rbn_gen_nmi_unregister();
	mutex_unlock(&rbn_writers_mutex);
	kfree(buf);
	if (ret)
		pr_err("cannot start the sources \"%s\": %d\n", sources, ret);
	return ret;
}

/**
 * rbn_writers_create_files - create the sources, kprobe_events and
 * saved_cmdlines files
 * @root:	the module's debugfs directory
 *
 * They go with the module's debugfs tree at unload.
 */
void rbn_writers_create_files(struct dentry *root)
{
	rbn_debugfs_check(debugfs_create_file("sources", RBN_MODE_RW, root,
					      NULL, &rbn_sources_fops));
	rbn_debugfs_check(debugfs_create_file("kprobe_events", RBN_MODE_RW,
					      root, NULL,
					      &rbn_kprobe_events_fops));
	rbn_debugfs_check(debugfs_create_file("saved_cmdlines", RBN_MODE_RO,
					      root, NULL, &rbn_cmdlines_fops));
}

/**
 * rbn_writers_exit - stop every writer
 *
 * The files are gone already (or were never there). Stops every source,
 * removes the kprobes and the NMI handler, and returns once no writer of
 * this file is inside the buffer any more. Writers of other files
 * (inject, bench) are theirs to stop.
 */
void rbn_writers_exit(void)
{
	mutex_lock(&rbn_writers_mutex);
	rbn_writers_dead = true;
	rbn_sources_apply(0);
	rbn_kprobe_remove_all();
	rbn_gen_nmi_unregister();
	mutex_unlock(&rbn_writers_mutex);

	/* Probes that were unregistered, and anything else in the buffer. */
	tracepoint_synchronize_unregister();
	synchronize_rcu();
}
