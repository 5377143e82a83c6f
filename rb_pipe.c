// SPDX-License-Identifier: GPL-2.0
/*
 * rbnest readers: the debugfs files that take data out of the buffer.
 *
 *   per_cpu/cpuN/trace_pipe_raw  whole sub-buffer images of one CPU, by
 *				  read() or by splice() (zero copy for
 *				  order 0 sub-buffers)
 *   trace_pipe			  text, all CPUs merged by time, consuming
 *   trace			  text, all CPUs merged by time, not
 *				  consuming; a write resets the buffer
 *   snapshot			  the same text of the spare buffer
 *				  ("snapshot", rb_module.c), not
 *				  consuming; writes are rb_module.c's
 *   per_cpu/cpuN/snapshot_raw	  the spare's sub-buffers, as
 *				  trace_pipe_raw gives the live ones, by
 *				  read() or splice(), consuming, never
 *				  blocking
 *
 * The text and the raw readers take the buffer they read: rbn_buf, or the
 * spare a snapshot file holds (rbn_snapshot_get()). The spare is written
 * by nobody, so its readers never wait: what it holds, then end of file.
 *
 * Blocking and waking. A reader about to sleep sets its bit in the CPU's
 * wake word, then looks at the buffer; a writer, after each commit, looks
 * at the wake word (rbn_pipe_commit_notify(), any context up to NMI). A
 * full barrier on each side between the store and the load makes sure
 * that one of the two sees the other: either the reader sees the event
 * and does not sleep, or the writer sees the bit. The writer then decides
 * the watermark itself, from the core's counters and without any lock
 * (rbn_cpu_percent_full()), and only when it is reached queues the CPU's
 * irq_work, which clears the wake word and wakes the sleepers; a reader
 * whose condition still does not hold sets its bit again. Readers decide
 * with rbn_cpu_readable(), which also asks the pages, under the reader
 * lock, whether there is something to take. So a blocked
 * reader wakes at the first commit that reaches its watermark (any data,
 * for trace_pipe), and nothing on the write side, nor the irq_work it
 * queues, ever takes a reader lock: a reader on another CPU may hold one
 * while it waits for this CPU's writer to finish a head page push.
 *
 * The irq_work is a normal one: in hard interrupt context on !PREEMPT_RT,
 * in the irq_work thread on PREEMPT_RT, where a wait queue's lock may
 * sleep.
 *
 * When tracing stops (tracing_on 0), the buffer is reset (reset file,
 * clock change, a write to "trace") or the watermark changes, rb_module.c
 * calls rbn_pipe_wake_all(), and the sleepers look again. A trace_pipe_raw
 * reader then returns what there is, partly written sub-buffers too, and
 * 0 (end of file) when nothing is left: for as long as tracing is off, or
 * once after a reset of the buffer (rbn_pipe_reset_done() moved the reset
 * count) that happened while it was blocked. A trace_pipe reader returns 0
 * while tracing is off and nothing is left; a reset alone does not end it.
 * Opening "trace" for reading pauses recording, but only tracing_on says
 * whether tracing stopped.
 *
 * A snapshot (echo 1 > snapshot) is not a reset for these readers: the
 * live buffer goes on, with an empty ring on every CPU, and a blocked
 * reader goes on waiting for its watermark in it. The reset count is the
 * module's, not the core's rbn_cpu_resets(): that one belongs to a CPU's
 * ring, which a snapshot swaps out, and the ring that comes back has a
 * count of its own. A read that was in the core when the ring was swapped
 * out takes its events from that ring, in the spare now: they are read
 * once, by that reader, and are not in the snapshot.
 *
 * Life time. Every file has .owner = THIS_MODULE, so an open file holds a
 * reference on the module: while one is open, delete_module() fails with
 * -EWOULDBLOCK (EAGAIN, "Resource temporarily unavailable"; rmmod says the
 * module "is in use"), and a reader blocked in read() or splice() cannot
 * make rmmod hang. A sub-buffer spliced into a pipe is a page that left
 * the ring: the pipe frees it with the kernel's own pipe buffer
 * operations, without rbnest, so it holds no module reference and the
 * module's unload never frees it. rbn_pipe_remove_files() still sets a
 * shutdown flag and wakes everybody first (readers then get -ENODEV). A
 * load that fails never has files to be open: they are created once
 * nothing of the load can fail any more.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/irq_work.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pipe_fs_i.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/splice.h>
#include <linux/string.h>
#include <linux/time64.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "rb_module.h"

/* rbn_pipe_cpu.wake: somebody waits on trace_pipe_raw or trace_pipe. */
#define RBN_WAKE_RAW		BIT(0)
#define RBN_WAKE_TEXT		BIT(1)

/* Room for one event line and a line about lost events before it. */
#define RBN_LINE_MAX		320

/**
 * struct rbn_pipe_cpu - the readers' state of one CPU
 * @wake:	RBN_WAKE_*: read by every commit on the CPU, so it comes first
 * @cpu:	the CPU
 * @work:	queued by a commit when @wake is set; wakes the readers
 * @wq:		trace_pipe_raw readers and pollers of the CPU
 * @read_mutex:	serialises the consuming reads of the CPU done here, of
 *		rbn_buf and of the spare, so that an event trace_pipe
 *		formats cannot be taken away by a page swap of
 *		trace_pipe_raw or snapshot_raw meanwhile
 * @raw:	the trace_pipe_raw file
 * @snap_raw:	the snapshot_raw file
 */
struct rbn_pipe_cpu {
	atomic_t wake;
	int cpu;
	struct irq_work work;
	wait_queue_head_t wq;
	struct mutex read_mutex;	/* see above */
	struct dentry *raw;
	struct dentry *snap_raw;
};

static struct rbn_pipe_cpu *rbn_pipe_cpus;
static int rbn_pipe_nr_cpus;
static bool rbn_pipe_shutdown;
/* Resets of the live buffer (rbn_pipe_reset_done()); snapshots aside. */
static unsigned long rbn_pipe_resets;

/* trace_pipe readers and pollers. */
static DECLARE_WAIT_QUEUE_HEAD(rbn_text_wq);

static struct dentry *rbn_trace_dentry;
static struct dentry *rbn_trace_pipe_dentry;
static struct dentry *rbn_snapshot_dentry;

/* ------------------------------------------------------------------ */
/* Waking                                                             */
/* ------------------------------------------------------------------ */

/*
 * tracing_on is 0: readers stop waiting. Not the core's recording switch,
 * which also goes off while "trace" is open, and for a moment while the
 * buffer is reset, the clock switched or the write-path hook patched in.
 */
static bool rbn_pipe_stopped(void)
{
	return !rbn_tracing_is_on();
}

static bool rbn_pipe_going(void)
{
	return READ_ONCE(rbn_pipe_shutdown);
}

/* Queued by a commit that reached a sleeper's condition: wake only. */
static void rbn_pipe_irq_work(struct irq_work *work)
{
	struct rbn_pipe_cpu *pc = container_of(work, struct rbn_pipe_cpu, work);
	int wake = atomic_xchg(&pc->wake, 0);

	if (wake & RBN_WAKE_TEXT)
		wake_up_all(&rbn_text_wq);
	if (wake & RBN_WAKE_RAW)
		wake_up_all(&pc->wq);
}

/**
 * rbn_pipe_commit_notify - tell blocked readers that a CPU has new events
 * @cpu:	the CPU whose buffer the event was committed to
 *
 * Called by the writers after every commit, and after a failed reserve
 * (which may have published nested events), in any context including NMI.
 * Costs a full barrier and one load of a per-CPU word unless a reader
 * waits on @cpu; then the watermark is checked without a lock, and the
 * irq_work queued when it is reached.
 */
void rbn_pipe_commit_notify(int cpu)
{
	struct rbn_pipe_cpu *pcs = READ_ONCE(rbn_pipe_cpus);
	int wake;

	if (unlikely(!pcs || (unsigned int)cpu >= rbn_pipe_nr_cpus))
		return;
	/*
	 * The commit before the wake word. Pairs with the
	 * smp_mb__after_atomic() of a reader between setting its bit and
	 * looking at the buffer (rbn_raw_ready(), rbn_text_ready()).
	 */
	smp_mb();
	wake = atomic_read(&pcs[cpu].wake);
	if (likely(!wake))
		return;
	if ((wake & RBN_WAKE_TEXT) ||
	    rbn_cpu_percent_full(rbn_buf, cpu, READ_ONCE(rbn_buffer_percent)))
		irq_work_queue(&pcs[cpu].work);
	/* Below the watermark: the bit stays, the next commit looks again. */
}

/**
 * rbn_pipe_reset_done - the live buffer was reset
 *
 * For rb_module.c, right after it emptied rbn_buf and before it wakes the
 * readers (rbn_pipe_wake_all()): a trace_pipe_raw reader blocked across
 * it returns what there is, then end of file once. Caller holds the
 * module's control mutex.
 */
void rbn_pipe_reset_done(void)
{
	WRITE_ONCE(rbn_pipe_resets, rbn_pipe_resets + 1);
}

/**
 * rbn_pipe_flush_readers - wait for the consuming readers' events
 *
 * For rb_module.c before it clears or frees the snapshot's spare buffer:
 * a trace_pipe reader may hold an event it took from a ring that a
 * snapshot then moved into the spare, and format it under its CPU's
 * read_mutex. Taking and releasing every CPU's read_mutex waits until no
 * reader holds an event taken before the call. Caller holds the module's
 * control mutex (which no reader takes under a read_mutex). May sleep.
 */
void rbn_pipe_flush_readers(void)
{
	struct rbn_pipe_cpu *pcs = READ_ONCE(rbn_pipe_cpus);
	int cpu;

	if (!pcs)
		return;
	for (cpu = 0; cpu < rbn_pipe_nr_cpus; cpu++) {
		mutex_lock(&pcs[cpu].read_mutex);
		mutex_unlock(&pcs[cpu].read_mutex);
	}
}

/**
 * rbn_pipe_wake_all - wake every blocked or polling reader
 *
 * For rb_module.c when tracing stops, the buffer is reset, the clock or
 * the watermark changes. The readers look at the buffer again: a
 * trace_pipe_raw reader blocked across a reset of its CPU returns as if
 * tracing had stopped. Process context.
 */
void rbn_pipe_wake_all(void)
{
	struct rbn_pipe_cpu *pcs = READ_ONCE(rbn_pipe_cpus);
	int cpu;

	if (!pcs)
		return;
	for (cpu = 0; cpu < rbn_pipe_nr_cpus; cpu++)
		wake_up_all(&pcs[cpu].wq);
	wake_up_all(&rbn_text_wq);
}

/* ------------------------------------------------------------------ */
/* Text of an event, for trace and trace_pipe                         */
/* ------------------------------------------------------------------ */

#define RBN_TEXT_HEADER							\
	"#                 _-----=> irqs-off\n"				\
	"#                / _----=> need-resched (not recorded)\n"	\
	"#               | / _---=> hardirq/softirq/nmi\n"		\
	"#               || / _--=> preempt-depth\n"			\
	"#               ||| /\n"						\
	"#     PID  CPU  ||||    TIMESTAMP      EVENT\n"		\
	"#       |   |   ||||        |            |\n"

/*
 * The next "{ VALUE, "NAME" }" of a list of rbn_events.h (RBN_CTX_SYMS,
 * ...) from *@p on, the one text the format's print fmt shows too.
 */
static bool rbn_sym_next(const char **p, unsigned int *val,
			 const char **name, int *len)
{
	const char *s = strchr(*p, '{');
	unsigned int base = 10;

	if (!s)
		return false;
	s += 2;			/* "{ " */
	if (s[0] == '0' && s[1] == 'x') {
		base = 16;
		s += 2;
	}
	for (*val = 0; isxdigit(*s); s++)
		*val = *val * base + hex_to_bin(*s);
	s += 3;			/* ", \"" */
	*name = s;
	*len = strchrnul(s, '"') - s;
	*p = s + *len;
	return true;
}

/* The name of @val in @syms as "%.*s" arguments; "?" when it has none. */
static int rbn_sym_name(const char *syms, unsigned int val,
			const char **name)
{
	unsigned int v;
	int len;

	while (rbn_sym_next(&syms, &v, name, &len))
		if (v == val)
			return len;
	*name = "?";
	return 1;
}

/*
 * The writer's RBN_EV_* flags as "fast|extend" (__print_flags() of the
 * format: bits without a name in hex at the end), "-" for none.
 */
static void rbn_ev_flags_text(char *buf, size_t size, unsigned int flags)
{
	const char *syms = RBN_EV_SYMS, *name;
	unsigned int flag;
	size_t len = 0;
	int nlen;

	buf[0] = '\0';
	while (rbn_sym_next(&syms, &flag, &name, &nlen)) {
		if (!flag || (flags & flag) != flag)
			continue;
		len += scnprintf(buf + len, size - len, "%s%.*s",
				 len ? "|" : "", nlen, name);
		flags &= ~flag;
	}
	if (flags)
		len += scnprintf(buf + len, size - len, "%s%#x", len ? "|" : "",
				 flags);
	if (!len)
		scnprintf(buf, size, "-");
}

/*
 * One line for an event at @ts of @cpu's buffer, as ftrace's text shows
 * the common fields: pid, CPU, the irqs-off / need-resched /
 * hardirq-softirq / preempt-depth columns, the time; then the fields of
 * rbnest:sample. The time is the one rebuilt from the buffer, in seconds
 * and nanoseconds of the buffer's clock.
 */
static int rbn_format_event(char *buf, size_t size, int cpu, u64 ts,
			    struct rbn_event *event)
{
	unsigned int len = rbn_event_data_length(event);
	const char *ctx, *src, *tp;
	int ctx_len, src_len, tp_len;
	bool hardirq, softirq, nmi;
	char hardsoft, preempt;
	struct rbn_sample s;
	char evflags[48];
	u64 sec;
	u32 nsec;

	sec = div_u64_rem(ts, NSEC_PER_SEC, &nsec);
	if (len < sizeof(s))
		return scnprintf(buf, size,
				 "%9s [%03d] .... %6llu.%09u: unknown: len=%u\n",
				 "-", cpu, sec, nsec, len);
	/* The payload is 4-byte aligned only. */
	memcpy(&s, rbn_event_data(event), sizeof(s));
	if (s.common_type != RBN_EVENT_SAMPLE_ID)
		return scnprintf(buf, size,
				 "%9d [%03d] .... %6llu.%09u: unknown: type=%u len=%u\n",
				 s.common_pid, cpu, sec, nsec, s.common_type,
				 len);

	hardirq = s.common_flags & RBN_FLAG_HARDIRQ;
	softirq = s.common_flags & RBN_FLAG_SOFTIRQ;
	nmi = s.common_flags & RBN_FLAG_NMI;
	hardsoft = (nmi && hardirq) ? 'Z' : nmi ? 'z' :
		   (hardirq && softirq) ? 'H' : hardirq ? 'h' :
		   softirq ? 's' : '.';
	preempt = (s.common_preempt_count & 0xf) ?
		  hex_asc[s.common_preempt_count & 0xf] : '.';
	rbn_ev_flags_text(evflags, sizeof(evflags), s.flags);

	ctx_len = rbn_sym_name(RBN_CTX_SYMS, s.context, &ctx);
	src_len = rbn_sym_name(RBN_SRC_SYMS, s.source, &src);
	tp_len = rbn_sym_name(RBN_TP_SYMS, s.tp, &tp);

	return scnprintf(buf, size,
			 "%9d [%03d] %c.%c%c %6llu.%09u: sample: seq=%llu ctx=%.*s depth=%u src=%.*s flags=%s tp=%.*s arg=%u\n",
			 s.common_pid, cpu,
			 (s.common_flags & RBN_FLAG_IRQS_OFF) ? 'd' : '.',
			 hardsoft, preempt, sec, nsec, s.seq, ctx_len, ctx,
			 s.depth, src_len, src, evflags, tp_len, tp, s.arg);
}

/* ------------------------------------------------------------------ */
/* per_cpu/cpuN/trace_pipe_raw and per_cpu/cpuN/snapshot_raw          */
/* ------------------------------------------------------------------ */

/**
 * struct rbn_raw - one open trace_pipe_raw or snapshot_raw file
 * @pc:		its CPU
 * @buffer:	the buffer it reads: rbn_buf, or for snapshot_raw the spare
 *		it holds (NULL: there was none at open, the file is empty)
 * @snapshot:	a snapshot_raw file: @buffer is held from open to release
 *		(rbn_snapshot_get()), nothing writes to it, nothing waits
 * @lock:	serialises read() and splice() on the file (@spare)
 * @spare:	the page rbn_read_page() fills, from @buffer's
 *		rbn_alloc_read_page(); a page spliced out is replaced by a
 *		new one
 * @cpage:	order > 0: the compound page the next splice copies into
 * @pending:	@spare holds a sub-buffer a read() could not copy out
 */
struct rbn_raw {
	struct rbn_pipe_cpu *pc;
	struct rbn_buffer *buffer;
	bool snapshot;
	struct mutex lock;		/* read() and splice() */
	void *spare;
	struct page *cpage;
	bool pending;
};

/*
 * Wait until the watermark (and, for splice, a whole sub-buffer), the end
 * of tracing, or a reset of the live buffer after the reset count was
 * @resets. Only the live buffer's readers wait.
 */
static bool rbn_raw_ready(struct rbn_pipe_cpu *pc, bool splice,
			  unsigned long resets)
{
	atomic_or(RBN_WAKE_RAW, &pc->wake);
	/* The bit before the buffer: see rbn_pipe_commit_notify(). */
	smp_mb__after_atomic();
	if (rbn_pipe_going() || rbn_pipe_stopped() ||
	    READ_ONCE(rbn_pipe_resets) != resets)
		return true;
	if (!rbn_cpu_readable(rbn_buf, pc->cpu, READ_ONCE(rbn_buffer_percent)))
		return false;
	return !splice || rbn_cpu_subbuf_ready(rbn_buf, pc->cpu);
}

/**
 * struct rbn_raw_waiter - a trace_pipe_raw reader waiting for data
 * @resets:	the live buffer's reset count when the read or splice began
 * @reset:	the buffer was reset since then: stop waiting
 */
struct rbn_raw_waiter {
	unsigned long resets;
	bool reset;
};

static void rbn_raw_waiter_init(struct rbn_raw_waiter *w)
{
	w->resets = READ_ONCE(rbn_pipe_resets);
	w->reset = false;
}

/* Sleep until there may be something to do; 0 or -ERESTARTSYS. */
static int rbn_raw_wait(struct rbn_pipe_cpu *pc, bool splice,
			struct rbn_raw_waiter *w)
{
	int ret;

	ret = wait_event_interruptible(pc->wq,
				       rbn_raw_ready(pc, splice, w->resets));
	if (ret)
		return ret;
	if (READ_ONCE(rbn_pipe_resets) != w->resets)
		w->reset = true;
	return 0;
}

/*
 * Take what there is and end instead of waiting: tracing stopped, the
 * buffer was reset under a blocked reader, or the file reads the spare,
 * which nothing writes to.
 */
static bool rbn_raw_stopped(struct rbn_raw *raw, struct rbn_raw_waiter *w)
{
	return raw->snapshot || w->reset || rbn_pipe_stopped();
}

/* One sub-buffer into raw->spare; bytes of events or -EAGAIN, -ENOMEM. */
static int rbn_raw_read_page(struct rbn_raw *raw, bool full)
{
	struct rbn_pipe_cpu *pc = raw->pc;
	int ret;

	if (!raw->buffer)
		return -EAGAIN;
	if (!raw->spare) {
		raw->spare = rbn_alloc_read_page(raw->buffer, pc->cpu);
		if (!raw->spare)
			return -ENOMEM;
	}
	/*
	 * The CPU's consuming readers of both buffers share read_mutex: a
	 * snapshot moves a ring from one buffer to the other under a reader
	 * that holds an event of it (trace_pipe's rbn_text_fill()).
	 */
	mutex_lock(&pc->read_mutex);
	ret = rbn_read_page(raw->buffer, pc->cpu, &raw->spare,
			    rbn_subbuf_size(raw->buffer), full);
	mutex_unlock(&pc->read_mutex);
	return ret;
}

static struct rbn_raw *rbn_raw_new(struct inode *inode)
{
	struct rbn_raw *raw;

	raw = kzalloc(sizeof(*raw), GFP_KERNEL);
	if (!raw)
		return NULL;
	raw->pc = inode->i_private;
	mutex_init(&raw->lock);
	return raw;
}

static int rbn_raw_open(struct inode *inode, struct file *file)
{
	struct rbn_raw *raw;

	if (!rbn_files_ready())
		return -ENODEV;
	raw = rbn_raw_new(inode);
	if (!raw)
		return -ENOMEM;
	raw->buffer = rbn_buf;
	file->private_data = raw;
	return nonseekable_open(inode, file);
}

static int rbn_raw_release(struct inode *inode, struct file *file)
{
	struct rbn_raw *raw = file->private_data;

	/* A page of @buffer goes back to @buffer, which is still ours. */
	if (raw->buffer)
		rbn_free_read_page(raw->buffer, raw->pc->cpu, raw->spare);
	if (raw->cpage)
		__free_pages(raw->cpage, compound_order(raw->cpage));
	if (raw->snapshot)
		rbn_snapshot_put();
	mutex_destroy(&raw->lock);
	kfree(raw);
	return 0;
}

/*
 * read(): one whole sub-buffer image of rbn_subbuf_size() bytes per call,
 * zero after its events; @cnt must be at least that (-EINVAL). A blocking
 * read waits for the watermark, then returns the oldest sub-buffer even
 * if the writer is still on it; O_NONBLOCK returns whatever there is, or
 * -EAGAIN. snapshot_raw: the spare's oldest sub-buffer, partly filled ones
 * too, and 0 once it is empty, or when there was no spare at open.
 */
static ssize_t rbn_raw_read(struct file *file, char __user *ubuf,
			    size_t cnt, loff_t *ppos)
{
	struct rbn_raw *raw = file->private_data;
	bool nonblock = file->f_flags & O_NONBLOCK;
	struct rbn_raw_waiter w;
	unsigned int size;
	bool stopped;
	ssize_t ret;

	if (!raw->buffer)
		return 0;
	size = rbn_subbuf_size(raw->buffer);
	if (cnt < size)
		return -EINVAL;
	if (mutex_lock_interruptible(&raw->lock))
		return -ERESTARTSYS;

	rbn_raw_waiter_init(&w);
	while (!raw->pending) {
		stopped = rbn_raw_stopped(raw, &w);
		if (nonblock || stopped ||
		    rbn_cpu_readable(raw->buffer, raw->pc->cpu,
				     READ_ONCE(rbn_buffer_percent))) {
			ret = rbn_raw_read_page(raw, false);
			if (ret >= 0) {
				raw->pending = true;
				break;
			}
			if (ret != -EAGAIN)
				goto out_unlock;
		}
		if (rbn_pipe_going()) {
			ret = -ENODEV;
			goto out_unlock;
		}
		if (stopped) {
			ret = 0;
			goto out_unlock;
		}
		if (nonblock) {
			ret = -EAGAIN;
			goto out_unlock;
		}
		ret = rbn_raw_wait(raw->pc, false, &w);
		if (ret)
			goto out_unlock;
	}

	/* A failed copy keeps the sub-buffer for the next read. */
	if (copy_to_user(ubuf, raw->spare, size)) {
		ret = -EFAULT;
		goto out_unlock;
	}
	raw->pending = false;
	*ppos += size;
	ret = size;

out_unlock:
	mutex_unlock(&raw->lock);
	return ret;
}

/*
 * Move one sub-buffer into @pipe, which has room for it. Order 0: the page
 * rbn_read_page() swapped out of the ring goes as it is. Higher orders: the
 * core's pages are not compound pages, and the pipe code needs one for a
 * buffer longer than a page (copy_page_to_iter(), get_page() of zero copy
 * consumers), so the sub-buffer is copied into one.
 *
 * Either way the page has left rbnest for good: the pipe owns its one
 * reference, and the kernel's nosteal_pipe_buf_ops drop it with put_page()
 * (the whole compound page for a higher order). No rbnest code runs when
 * the pipe lets go, so the pipe holds no module reference either: rmmod
 * may go on, and the page outlives the module (and the spare buffer, for
 * a page of snapshot_raw).
 */
static int rbn_raw_splice_one(struct rbn_raw *raw,
			      struct pipe_inode_info *pipe, bool full)
{
	unsigned int size = rbn_subbuf_size(raw->buffer);
	unsigned int order = get_order(size);
	struct pipe_buffer buf = { };
	struct page *page;
	ssize_t ret;

	if (order && !raw->cpage) {
		/* Before consuming anything: no data lost to a failure. */
		raw->cpage = alloc_pages_node(cpu_to_node(raw->pc->cpu),
					      GFP_KERNEL | __GFP_COMP |
					      __GFP_NORETRY, order);
		if (!raw->cpage)
			return -ENOMEM;
	}
	if (!raw->pending) {
		ret = rbn_raw_read_page(raw, full);
		if (ret < 0)
			return ret;
	}
	raw->pending = false;

	if (!order || PageCompound(virt_to_page(raw->spare))) {
		page = virt_to_page(raw->spare);
		raw->spare = NULL;
	} else {
		page = raw->cpage;
		raw->cpage = NULL;
		memcpy(page_address(page), raw->spare, size);
	}

	buf.page = page;
	buf.len = size;
	buf.ops = &nosteal_pipe_buf_ops;
	/* On failure add_to_pipe() releases the buffer, freeing the page. */
	ret = add_to_pipe(pipe, &buf);
	return ret < 0 ? ret : 0;
}

/*
 * splice(): like tracefs, page granular. *ppos must be a multiple of the
 * sub-buffer size and @len at least one sub-buffer (else -EINVAL); @len is
 * rounded down to whole sub-buffers. Each sub-buffer becomes one pipe
 * buffer of rbn_subbuf_size() bytes. Only sub-buffers the writer has left
 * are taken (a partly read one gives its rest), unless tracing stopped:
 * then partly written ones too, and 0 once nothing is left. Blocking waits
 * for the watermark and a whole sub-buffer; O_NONBLOCK or
 * SPLICE_F_NONBLOCK return -EAGAIN instead. snapshot_raw: every
 * sub-buffer of the spare, partly filled ones too, and 0 once it is empty
 * (or when there was no spare at open); it never waits.
 */
static ssize_t rbn_raw_splice_read(struct file *file, loff_t *ppos,
				   struct pipe_inode_info *pipe, size_t len,
				   unsigned int flags)
{
	struct rbn_raw *raw = file->private_data;
	struct rbn_pipe_cpu *pc = raw->pc;
	bool nonblock = (file->f_flags & O_NONBLOCK) ||
			(flags & SPLICE_F_NONBLOCK);
	struct rbn_raw_waiter w;
	unsigned int size;
	ssize_t total = 0;
	bool stopped;
	int ret;

	if (!raw->buffer)
		return 0;
	size = rbn_subbuf_size(raw->buffer);
	if ((*ppos & (size - 1)) || len < size)
		return -EINVAL;
	len &= ~((size_t)size - 1);

	if (mutex_lock_interruptible(&raw->lock))
		return -ERESTARTSYS;
	rbn_raw_waiter_init(&w);
	for (;;) {
		stopped = rbn_raw_stopped(raw, &w);
		ret = -EAGAIN;
		while (len && !pipe_full(pipe->head, pipe->tail,
					 pipe->max_usage)) {
			ret = rbn_raw_splice_one(raw, pipe, !stopped);
			/* The final rest of a sub-buffer read in part. */
			if (ret == -EAGAIN && !stopped &&
			    rbn_cpu_subbuf_ready(raw->buffer, pc->cpu))
				ret = rbn_raw_splice_one(raw, pipe, false);
			if (ret)
				break;
			total += size;
			len -= size;
			*ppos += size;
		}
		if (total || ret != -EAGAIN)
			break;
		if (rbn_pipe_going()) {
			ret = -ENODEV;
			break;
		}
		if (stopped) {
			ret = 0;
			break;
		}
		/* A full pipe too: splice_file_to_pipe() makes room first. */
		if (nonblock || !len ||
		    pipe_full(pipe->head, pipe->tail, pipe->max_usage))
			break;
		ret = rbn_raw_wait(pc, true, &w);
		if (ret)
			break;
	}
	mutex_unlock(&raw->lock);
	return total ? total : ret;
}

/* Readable: what a splice() would take, or the end of the data. */
static __poll_t rbn_raw_poll(struct file *file, poll_table *wait)
{
	struct rbn_raw *raw = file->private_data;

	poll_wait(file, &raw->pc->wq, wait);
	if (READ_ONCE(raw->pending) ||
	    rbn_raw_ready(raw->pc, true, READ_ONCE(rbn_pipe_resets)))
		return EPOLLIN | EPOLLRDNORM;
	return 0;
}

static const struct file_operations rbn_raw_fops = {
	.owner		= THIS_MODULE,
	.open		= rbn_raw_open,
	.read		= rbn_raw_read,
	.splice_read	= rbn_raw_splice_read,
	.poll		= rbn_raw_poll,
	.release	= rbn_raw_release,
};

/*
 * snapshot_raw: the spare at open, held until release (rbn_snapshot_get():
 * while it is held, echo 0, 1 or 2 > snapshot fail with -EBUSY, so the
 * spare is neither freed, cleared nor swapped under the reader).
 */
static int rbn_snap_raw_open(struct inode *inode, struct file *file)
{
	struct rbn_raw *raw;

	if (!rbn_files_ready())
		return -ENODEV;
	raw = rbn_raw_new(inode);
	if (!raw)
		return -ENOMEM;
	raw->snapshot = true;
	raw->buffer = rbn_snapshot_get();
	file->private_data = raw;
	return nonseekable_open(inode, file);
}

/* No poll: the default says readable, and a read never blocks. */
static const struct file_operations rbn_snap_raw_fops = {
	.owner		= THIS_MODULE,
	.open		= rbn_snap_raw_open,
	.read		= rbn_raw_read,
	.splice_read	= rbn_raw_splice_read,
	.release	= rbn_raw_release,
};

/* ------------------------------------------------------------------ */
/* trace_pipe                                                         */
/* ------------------------------------------------------------------ */

/**
 * struct rbn_text - one open trace_pipe file
 * @lock:	serialises read() on the file
 * @buf:	lines consumed and not yet read, PAGE_SIZE bytes
 * @len:	bytes in @buf
 * @off:	bytes of @buf already read
 */
struct rbn_text {
	struct mutex lock;		/* read() */
	char *buf;
	size_t len;
	size_t off;
};

static bool rbn_text_ready(void)
{
	int cpu;

	for (cpu = 0; cpu < rbn_pipe_nr_cpus; cpu++)
		atomic_or(RBN_WAKE_TEXT, &rbn_pipe_cpus[cpu].wake);
	/* The bits before the buffer: see rbn_pipe_commit_notify(). */
	smp_mb__after_atomic();
	if (rbn_pipe_going() || rbn_pipe_stopped())
		return true;
	for (cpu = 0; cpu < rbn_pipe_nr_cpus; cpu++)
		if (rbn_cpu_readable(rbn_buf, cpu, 0))
			return true;
	return false;
}

/* The CPU whose next event is the oldest, or -1. */
static int rbn_text_oldest_cpu(void)
{
	struct rbn_event *event;
	int cpu, best = -1;
	u64 ts, best_ts = 0;

	for (cpu = 0; cpu < rbn_pipe_nr_cpus; cpu++) {
		/*
		 * A peek may swap the reader page, under an event another
		 * trace_pipe reader formats: the CPU's read_mutex, as for
		 * every consuming read.
		 */
		mutex_lock(&rbn_pipe_cpus[cpu].read_mutex);
		event = rbn_peek(rbn_buf, cpu, &ts, NULL);
		mutex_unlock(&rbn_pipe_cpus[cpu].read_mutex);
		if (!event)
			continue;
		if (best < 0 || ts < best_ts) {
			best = cpu;
			best_ts = ts;
		}
	}
	return best;
}

/* Consume events, oldest first, into text->buf up to about @want bytes. */
static void rbn_text_fill(struct rbn_text *text, size_t want)
{
	struct rbn_pipe_cpu *pc;
	struct rbn_event *event;
	unsigned long lost;
	int cpu;
	u64 ts;

	want = min_t(size_t, want, PAGE_SIZE - RBN_LINE_MAX);
	while (text->len < want) {
		cpu = rbn_text_oldest_cpu();
		if (cpu < 0)
			break;
		pc = &rbn_pipe_cpus[cpu];
		mutex_lock(&pc->read_mutex);
		event = rbn_consume(rbn_buf, cpu, &ts, &lost);
		if (event && lost)
			text->len += scnprintf(text->buf + text->len,
					       PAGE_SIZE - text->len,
					       "CPU:%d [LOST %lu EVENTS]\n",
					       cpu, lost);
		if (event)
			text->len += rbn_format_event(text->buf + text->len,
						      PAGE_SIZE - text->len,
						      cpu, ts, event);
		mutex_unlock(&pc->read_mutex);
	}
}

static int rbn_text_open(struct inode *inode, struct file *file)
{
	struct rbn_text *text;

	if (!rbn_files_ready())
		return -ENODEV;
	text = kzalloc(sizeof(*text), GFP_KERNEL);
	if (!text)
		return -ENOMEM;
	text->buf = (char *)__get_free_page(GFP_KERNEL);
	if (!text->buf) {
		kfree(text);
		return -ENOMEM;
	}
	mutex_init(&text->lock);
	file->private_data = text;
	return nonseekable_open(inode, file);
}

static int rbn_text_release(struct inode *inode, struct file *file)
{
	struct rbn_text *text = file->private_data;

	free_page((unsigned long)text->buf);
	mutex_destroy(&text->lock);
	kfree(text);
	return 0;
}

/*
 * read(): one line per event, all CPUs merged by time, consumed. Blocks
 * until any CPU has an event; O_NONBLOCK: -EAGAIN. A line that does not
 * fit @cnt is kept for the next read.
 */
static ssize_t rbn_text_read(struct file *file, char __user *ubuf,
			     size_t cnt, loff_t *ppos)
{
	struct rbn_text *text = file->private_data;
	bool stopped;
	ssize_t ret;
	size_t n;

	if (!cnt)
		return 0;
	if (mutex_lock_interruptible(&text->lock))
		return -ERESTARTSYS;
	while (text->off >= text->len) {
		text->off = 0;
		text->len = 0;
		stopped = rbn_pipe_stopped();
		rbn_text_fill(text, cnt);
		if (text->len)
			break;
		if (rbn_pipe_going()) {
			ret = -ENODEV;
			goto out_unlock;
		}
		if (stopped) {
			ret = 0;
			goto out_unlock;
		}
		if (file->f_flags & O_NONBLOCK) {
			ret = -EAGAIN;
			goto out_unlock;
		}
		ret = wait_event_interruptible(rbn_text_wq, rbn_text_ready());
		if (ret)
			goto out_unlock;
	}

	n = min(cnt, text->len - text->off);
	if (copy_to_user(ubuf, text->buf + text->off, n)) {
		ret = -EFAULT;
		goto out_unlock;
	}
	text->off += n;
	ret = n;

out_unlock:
	mutex_unlock(&text->lock);
	return ret;
}

static __poll_t rbn_text_poll(struct file *file, poll_table *wait)
{
	struct rbn_text *text = file->private_data;

	poll_wait(file, &rbn_text_wq, wait);
	if (READ_ONCE(text->off) < READ_ONCE(text->len) || rbn_text_ready())
		return EPOLLIN | EPOLLRDNORM;
	return 0;
}

static const struct file_operations rbn_text_fops = {
	.owner		= THIS_MODULE,
	.open		= rbn_text_open,
	.read		= rbn_text_read,
	.poll		= rbn_text_poll,
	.release	= rbn_text_release,
};

/* ------------------------------------------------------------------ */
/* trace and snapshot                                                 */
/* ------------------------------------------------------------------ */

enum rbn_peeked {
	RBN_PEEK_UNKNOWN,
	RBN_PEEK_EVENT,
	RBN_PEEK_END,
};

/**
 * struct rbn_trace - one "trace" or "snapshot" file open for reading
 * @buffer:	the buffer it shows: rbn_buf, or the spare of a snapshot
 *		file (NULL: no spare at open, nothing to show)
 * @snapshot:	a "snapshot" file: @buffer is held until release
 *		(rbn_snapshot_get()); else a "trace" file, which holds
 *		rbn_buf's rings in place (rbn_trace_iter_get())
 * @iters:	an iterator per CPU; they stop recording into @buffer
 * @peeked:	what rbn_iter_peek() said last, per CPU (enum rbn_peeked)
 * @ts:		the time stamp of the CPU's next event if RBN_PEEK_EVENT
 * @cur:	the CPU of the oldest event, or -1 at the end
 * @pos:	the record the iterators are at: 0 the header, N the Nth event
 * @entries:	events in the buffer at open
 * @written:	events written since the last reset, at open
 * @line:	RBN_LINE_MAX bytes for a line
 */
struct rbn_trace {
	struct rbn_buffer *buffer;
	bool snapshot;
	struct rbn_iter **iters;
	u8 *peeked;
	u64 *ts;
	int cur;
	loff_t pos;
	u64 entries;
	u64 written;
	char *line;
};

static void rbn_trace_free(struct rbn_trace *tr)
{
	int cpu;

	for (cpu = 0; tr->iters && cpu < rbn_pipe_nr_cpus; cpu++)
		rbn_iter_finish(tr->iters[cpu]);
	kfree(tr->line);
	kfree(tr->ts);
	kfree(tr->peeked);
	kfree(tr->iters);
	kfree(tr);
}

/* Find the CPU with the oldest next event. */
static void rbn_trace_pick(struct rbn_trace *tr)
{
	int cpu;

	tr->cur = -1;
	for (cpu = 0; tr->iters && cpu < rbn_pipe_nr_cpus; cpu++) {
		if (tr->peeked[cpu] == RBN_PEEK_UNKNOWN)
			tr->peeked[cpu] = rbn_iter_peek(tr->iters[cpu],
							&tr->ts[cpu]) ?
					  RBN_PEEK_EVENT : RBN_PEEK_END;
		if (tr->peeked[cpu] != RBN_PEEK_EVENT)
			continue;
		if (tr->cur < 0 || tr->ts[cpu] < tr->ts[tr->cur])
			tr->cur = cpu;
	}
}

static void rbn_trace_rewind(struct rbn_trace *tr)
{
	int cpu;

	for (cpu = 0; tr->iters && cpu < rbn_pipe_nr_cpus; cpu++) {
		/* May swap the reader page: not under a consumer's event. */
		mutex_lock(&rbn_pipe_cpus[cpu].read_mutex);
		rbn_iter_reset(tr->iters[cpu]);
		mutex_unlock(&rbn_pipe_cpus[cpu].read_mutex);
		tr->peeked[cpu] = RBN_PEEK_UNKNOWN;
	}
	tr->pos = 0;
}

/* From record tr->pos to the next one; false at the end. */
static bool rbn_trace_step(struct rbn_trace *tr)
{
	if (tr->pos) {
		rbn_trace_pick(tr);
		if (tr->cur < 0)
			return false;
		rbn_iter_advance(tr->iters[tr->cur]);
		tr->peeked[tr->cur] = RBN_PEEK_UNKNOWN;
	}
	tr->pos++;
	return true;
}

/* The record at *pos: SEQ_START_TOKEN for the header, else the state. */
static void *rbn_trace_at(struct rbn_trace *tr, loff_t pos)
{
	if (pos < tr->pos)
		rbn_trace_rewind(tr);
	while (tr->pos < pos)
		if (!rbn_trace_step(tr))
			return NULL;
	if (!pos)
		return SEQ_START_TOKEN;
	rbn_trace_pick(tr);
	return tr->cur < 0 ? NULL : tr;
}

static void *rbn_trace_start(struct seq_file *m, loff_t *pos)
{
	return rbn_trace_at(m->private, *pos);
}

static void *rbn_trace_next(struct seq_file *m, void *v, loff_t *pos)
{
	++*pos;
	return rbn_trace_at(m->private, *pos);
}

static void rbn_trace_stop(struct seq_file *m, void *v)
{
}

/* As ftrace's snapshot file says it, with rbnest's meaning of 1 and 2. */
#define RBN_SNAPSHOT_HELP						\
	"# Snapshot commands:\n"					\
	"# echo 0 > snapshot : Frees the snapshot buffer\n"		\
	"# echo 1 > snapshot : Allocates the snapshot buffer if needed, clears it\n" \
	"#                     and swaps it with the live buffer (which goes on\n" \
	"#                     empty)\n"				\
	"# echo 2 > snapshot : Clears the snapshot buffer (does not allocate it)\n" \
	"# Any other value is refused (EINVAL). While a snapshot file is open\n" \
	"# for reading, every write fails (EBUSY); echo 1 also while \"trace\"\n" \
	"# is open for reading.\n"

static void rbn_trace_header(struct seq_file *m, struct rbn_trace *tr)
{
	if (tr->snapshot) {
		seq_puts(m, "# rbnest snapshot\n#\n");
		seq_puts(m, tr->buffer ? "# * Snapshot is allocated *\n#\n" :
					 "# * Snapshot is not allocated *\n#\n");
		seq_puts(m, RBN_SNAPSHOT_HELP "#\n");
		if (!tr->buffer)
			return;
	} else {
		seq_puts(m, "# rbnest\n#\n");
	}
	seq_printf(m, "# entries-in-buffer/entries-written: %llu/%llu   #P:%d\n#\n",
		   tr->entries, tr->written, rbn_pipe_nr_cpus);
	seq_puts(m, RBN_TEXT_HEADER);
}

static int rbn_trace_show(struct seq_file *m, void *v)
{
	struct rbn_trace *tr = m->private;
	struct rbn_event *event;
	u64 ts;

	if (v == SEQ_START_TOKEN) {
		rbn_trace_header(m, tr);
		return 0;
	}
	event = rbn_iter_peek(tr->iters[tr->cur], &ts);
	if (!event)
		return SEQ_SKIP;
	rbn_format_event(tr->line, RBN_LINE_MAX, tr->cur, ts, event);
	seq_puts(m, tr->line);
	return 0;
}

static const struct seq_operations rbn_trace_seq_ops = {
	.start	= rbn_trace_start,
	.next	= rbn_trace_next,
	.stop	= rbn_trace_stop,
	.show	= rbn_trace_show,
};

/*
 * The text of @buffer's unread events, merged by time, not consumed:
 * an iterator per CPU, which stops recording into @buffer until the file
 * is closed. A NULL @buffer (snapshot file, no spare) shows the header
 * only. The caller holds @buffer for the life of the file.
 */
static int rbn_trace_open_read(struct file *file, struct rbn_buffer *buffer,
			       bool snapshot)
{
	struct rbn_cpu_stats st;
	struct rbn_trace *tr;
	int cpu, ret = -ENOMEM;

	tr = kzalloc(sizeof(*tr), GFP_KERNEL);
	if (!tr)
		return -ENOMEM;
	tr->buffer = buffer;
	tr->snapshot = snapshot;
	tr->cur = -1;
	if (!buffer)
		goto open;
	tr->iters = kcalloc(rbn_pipe_nr_cpus, sizeof(*tr->iters), GFP_KERNEL);
	tr->peeked = kcalloc(rbn_pipe_nr_cpus, sizeof(*tr->peeked),
			     GFP_KERNEL);
	tr->ts = kcalloc(rbn_pipe_nr_cpus, sizeof(*tr->ts), GFP_KERNEL);
	tr->line = kmalloc(RBN_LINE_MAX, GFP_KERNEL);
	if (!tr->iters || !tr->peeked || !tr->ts || !tr->line)
		goto err_free_trace;

	/* Recording off on every CPU, then one wait for the writers. */
	for (cpu = 0; cpu < rbn_pipe_nr_cpus; cpu++) {
		tr->iters[cpu] = rbn_iter_prepare(buffer, cpu);
		if (!tr->iters[cpu])
			goto err_free_trace;
	}
	rbn_iter_prepare_sync(buffer);
	for (cpu = 0; cpu < rbn_pipe_nr_cpus; cpu++) {
		/* May swap the reader page: not under a consumer's event. */
		mutex_lock(&rbn_pipe_cpus[cpu].read_mutex);
		rbn_iter_snapshot(tr->iters[cpu]);
		mutex_unlock(&rbn_pipe_cpus[cpu].read_mutex);
		if (!rbn_cpu_stats(buffer, cpu, &st)) {
			tr->entries += st.entries;
			tr->written += st.written;
		}
	}

open:
	ret = seq_open(file, &rbn_trace_seq_ops);
	if (ret)
		goto err_free_trace;
	((struct seq_file *)file->private_data)->private = tr;
	return 0;

err_free_trace:
	/* Finishes the iterators made so far: recording back on. */
	rbn_trace_free(tr);
	return ret;
}

static int rbn_trace_release_read(struct inode *inode, struct file *file)
{
	struct seq_file *m = file->private_data;

	rbn_trace_free(m->private);
	return seq_release(inode, file);
}

/*
 * Open for reading: the text of every CPU's unread events, merged by time,
 * not consumed; recording stays off until the file is closed, and no
 * snapshot is taken meanwhile: the iterators hold rbn_buf's rings, which
 * a swap would move to the spare. Open with O_TRUNC for writing
 * ("> trace"): reset the buffer.
 */
static int rbn_trace_open(struct inode *inode, struct file *file)
{
	int ret;

	if (!rbn_files_ready())
		return -ENODEV;
	if ((file->f_mode & FMODE_WRITE) && (file->f_flags & O_TRUNC))
		rbn_buffer_reset();
	if (!(file->f_mode & FMODE_READ))
		return 0;
	rbn_trace_iter_get();
	ret = rbn_trace_open_read(file, rbn_buf, false);
	if (ret)
		rbn_trace_iter_put();
	return ret;
}

static int rbn_trace_release(struct inode *inode, struct file *file)
{
	int ret;

	if (!(file->f_mode & FMODE_READ))
		return 0;
	/* The iterators first: they hand recording back to rbn_buf. */
	ret = rbn_trace_release_read(inode, file);
	rbn_trace_iter_put();
	return ret;
}

/* Any write resets the buffer, whatever it says. */
static ssize_t rbn_trace_write(struct file *file, const char __user *ubuf,
			       size_t cnt, loff_t *ppos)
{
	rbn_buffer_reset();
	*ppos += cnt;
	return cnt;
}

static loff_t rbn_trace_lseek(struct file *file, loff_t offset, int whence)
{
	if (file->f_mode & FMODE_READ)
		return seq_lseek(file, offset, whence);
	file->f_pos = 0;
	return 0;
}

static const struct file_operations rbn_trace_fops = {
	.owner		= THIS_MODULE,
	.open		= rbn_trace_open,
	.read		= seq_read,
	.write		= rbn_trace_write,
	.llseek		= rbn_trace_lseek,
	.release	= rbn_trace_release,
};

/*
 * snapshot. Open for reading: the spare's events as "trace" shows the live
 * ones (not consumed), or a header that says there is no spare; the spare
 * is held until the file is closed (rbn_snapshot_get()). Open for writing
 * only: nothing happens until a write, which rbn_snapshot_write() does;
 * O_TRUNC ("echo 1 > snapshot") changes nothing by itself.
 */
static int rbn_snapshot_open(struct inode *inode, struct file *file)
{
	int ret;

	if (!rbn_files_ready())
		return -ENODEV;
	if (!(file->f_mode & FMODE_READ))
		return 0;
	ret = rbn_trace_open_read(file, rbn_snapshot_get(), true);
	if (ret)
		rbn_snapshot_put();
	return ret;
}

static int rbn_snapshot_release(struct inode *inode, struct file *file)
{
	int ret;

	if (!(file->f_mode & FMODE_READ))
		return 0;
	/* The iterators first: they use the spare. */
	ret = rbn_trace_release_read(inode, file);
	rbn_snapshot_put();
	return ret;
}

static const struct file_operations rbn_snapshot_fops = {
	.owner		= THIS_MODULE,
	.open		= rbn_snapshot_open,
	.read		= seq_read,
	.write		= rbn_snapshot_write,
	.llseek		= rbn_trace_lseek,
	.release	= rbn_snapshot_release,
};

/* ------------------------------------------------------------------ */
/* Setup                                                              */
/* ------------------------------------------------------------------ */

/**
 * rbn_pipe_init - set up the readers' state
 *
 * Before any writer starts; the files come later, rbn_pipe_create_files().
 *
 * Return: 0 or -ENOMEM.
 */
int rbn_pipe_init(void)
{
	int nr = rbn_nr_cpus(rbn_buf), cpu;
	struct rbn_pipe_cpu *pcs;

	pcs = kcalloc(nr, sizeof(*pcs), GFP_KERNEL);
	if (!pcs)
		return -ENOMEM;
	for (cpu = 0; cpu < nr; cpu++) {
		pcs[cpu].cpu = cpu;
		init_irq_work(&pcs[cpu].work, rbn_pipe_irq_work);
		init_waitqueue_head(&pcs[cpu].wq);
		mutex_init(&pcs[cpu].read_mutex);
	}
	WRITE_ONCE(rbn_pipe_shutdown, false);
	rbn_pipe_nr_cpus = nr;
	WRITE_ONCE(rbn_pipe_cpus, pcs);
	return 0;
}

/**
 * rbn_pipe_create_files - create the reader files
 * @root:	the module's debugfs directory
 *
 * trace, trace_pipe and snapshot go into @root, trace_pipe_raw and
 * snapshot_raw into each directory rbn_debugfs_cpu_dir() returns. The raw
 * files are created "unsafe": debugfs's full proxy has no splice_read; the
 * module reference of the open file keeps its operations alive instead,
 * and the spare a snapshot_raw file holds is freed at unload only, when
 * no file is open. A file that could not be created fails the load
 * (rbn_debugfs_check()).
 */
void rbn_pipe_create_files(struct dentry *root)
{
	struct rbn_pipe_cpu *pcs = rbn_pipe_cpus;
	struct dentry *dir, *d;
	int cpu;

	for (cpu = 0; cpu < rbn_pipe_nr_cpus; cpu++) {
		dir = rbn_debugfs_cpu_dir(cpu);
		if (IS_ERR_OR_NULL(dir))
			continue;
		d = debugfs_create_file_unsafe("trace_pipe_raw", RBN_MODE_RO,
					       dir, &pcs[cpu], &rbn_raw_fops);
		pcs[cpu].raw = rbn_debugfs_check(d);
		d = debugfs_create_file_unsafe("snapshot_raw", RBN_MODE_RO,
					       dir, &pcs[cpu],
					       &rbn_snap_raw_fops);
		pcs[cpu].snap_raw = rbn_debugfs_check(d);
	}
	d = debugfs_create_file("trace", RBN_MODE_RW, root, NULL,
				&rbn_trace_fops);
	rbn_trace_dentry = rbn_debugfs_check(d);
	d = debugfs_create_file("trace_pipe", RBN_MODE_RO, root, NULL,
				&rbn_text_fops);
	rbn_trace_pipe_dentry = rbn_debugfs_check(d);
	d = debugfs_create_file("snapshot", RBN_MODE_RW, root, NULL,
				&rbn_snapshot_fops);
	rbn_snapshot_dentry = rbn_debugfs_check(d);
}

/**
 * rbn_pipe_remove_files - remove the reader files
 *
 * First thing at unload, writers still running. Wakes every reader first;
 * see the top of this file for why none can be left at module unload.
 */
void rbn_pipe_remove_files(void)
{
	struct rbn_pipe_cpu *pcs = rbn_pipe_cpus;
	int cpu;

	if (!pcs)
		return;
	WRITE_ONCE(rbn_pipe_shutdown, true);
	rbn_pipe_wake_all();

	debugfs_remove(rbn_snapshot_dentry);
	rbn_snapshot_dentry = NULL;
	debugfs_remove(rbn_trace_pipe_dentry);
	rbn_trace_pipe_dentry = NULL;
	debugfs_remove(rbn_trace_dentry);
	rbn_trace_dentry = NULL;
	for (cpu = 0; cpu < rbn_pipe_nr_cpus; cpu++) {
		debugfs_remove(pcs[cpu].snap_raw);
		pcs[cpu].snap_raw = NULL;
		debugfs_remove(pcs[cpu].raw);
		pcs[cpu].raw = NULL;
	}
}

/**
 * rbn_pipe_exit - free the readers' state
 *
 * The files are gone (rbn_pipe_remove_files()) and the writers stopped.
 */
void rbn_pipe_exit(void)
{
	struct rbn_pipe_cpu *pcs = rbn_pipe_cpus;
	int cpu;

	if (!pcs)
		return;
	WRITE_ONCE(rbn_pipe_cpus, NULL);
	for (cpu = 0; cpu < rbn_pipe_nr_cpus; cpu++) {
		irq_work_sync(&pcs[cpu].work);
		mutex_destroy(&pcs[cpu].read_mutex);
	}
	rbn_pipe_nr_cpus = 0;
	kfree(pcs);
}
