// SPDX-License-Identifier: GPL-2.0
/*
 * The "bench" file: rbnest's write and read paths against the kernel's
 * ring buffer. A benchmark, not a test: it reports numbers and judges
 * nothing.
 *
 * Writing "run [sizes=8,32,128,1024] [events=N] [rounds=N] [buffer_kb=N]
 * [clock=trace|port]" runs it synchronously in the writer's task, pinned
 * to the CPU it is on (migrate_disable()); reading shows the table of the
 * last run.
 *
 * Each side gets a private buffer with the same size per CPU, in
 * overwrite mode (it never fills), with one-page sub-buffers and the same
 * time stamp clock: trace_clock_local(), the kernel buffer's default
 * (clock=port gives rbnest its own default, local_clock(), instead, the
 * clock of the module's "local"). Everything is timed with local_clock()
 * in batches of at most RBN_BENCH_BATCH operations, each with preemption
 * off and interrupts on; the rounds alternate the two sides and the
 * table shows the median over the rounds.
 *
 * Measured:
 *  - write: reserve, fill the payload (memset), commit, per payload size;
 *  - absolute mode: the same writes on a second rbnest buffer in absolute
 *    time-stamp mode, allocated for these rounds only, in rounds
 *    alternating with the delta-mode buffer;
 *  - validator: the same writes on rbnest's buffer with the run-time
 *    validator off and on, in alternating rounds;
 *  - clock: one call of local_clock() and of trace_clock_local();
 *  - slow path: with the write-path hook installed, pairs of an outer
 *    event and one written by the hook at label A (the outer one takes
 *    the slow path) or at label B (also the nested one gets an absolute
 *    stamp), against pairs of two plain events with the hook installed
 *    but not firing;
 *  - consume: events read one by one until the buffer is empty;
 *  - read_page: whole sub-buffers taken out until the buffer is empty.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/mutex.h>
#include <linux/preempt.h>
#include <linux/ring_buffer.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/trace_clock.h>
#include <linux/uaccess.h>
#include <linux/utsname.h>

#include "rb_module.h"
#include "rbn_kcompat.h"

#define RBN_BENCH_MAX_SIZES	8
#define RBN_BENCH_MAX_ROUNDS	99
#define RBN_BENCH_MAX_PAYLOAD	2048
#define RBN_BENCH_MIN_EVENTS	1000
#define RBN_BENCH_MAX_EVENTS	10000000
#define RBN_BENCH_MIN_KB	64
#define RBN_BENCH_MAX_KB	65536
/* Operations per preemption-off batch: short, even under TCG. */
#define RBN_BENCH_BATCH		1000
#define RBN_BENCH_PAGE_BATCH	16
/* Payload of the slow path, consume and read_page measurements. */
#define RBN_BENCH_SLOW_SIZE	8
#define RBN_BENCH_READ_SIZE	32
#define RBN_BENCH_CMD_MAX	256
#define RBN_BENCH_TEXT_MAX	8192

enum rbn_bench_side {
	RBN_SIDE_RBN,
	RBN_SIDE_KERNEL,
	RBN_NR_SIDES
};

/* The three kinds of pairs of the slow path measurement. */
enum rbn_bench_pair {
	RBN_PAIR_PLAIN,		/* two plain events, hook not firing */
	RBN_PAIR_LABEL_A,	/* outer event, nested one written at A */
	RBN_PAIR_LABEL_B,	/* outer event, nested one written at B */
	RBN_NR_PAIRS
};

static const char * const rbn_bench_pair_names[RBN_NR_PAIRS] = {
	[RBN_PAIR_PLAIN]	= "plain",
	[RBN_PAIR_LABEL_A]	= "a",
	[RBN_PAIR_LABEL_B]	= "b",
};

static const int rbn_bench_pair_label[RBN_NR_PAIRS] = {
	[RBN_PAIR_PLAIN]	= -1,
	[RBN_PAIR_LABEL_A]	= RBN_LABEL_A,
	[RBN_PAIR_LABEL_B]	= RBN_LABEL_B,
};

/**
 * struct rbn_bench_args - what "run" asked for
 * @sizes:	payload sizes of the write measurement
 * @nr_sizes:	number of @sizes
 * @events:	events per round and side
 * @rounds:	rounds (each runs both sides)
 * @buffer_kb:	buffer size per CPU of both buffers
 * @port_clock:	rbnest stamps with its port default, local_clock()
 */
struct rbn_bench_args {
	unsigned int sizes[RBN_BENCH_MAX_SIZES];
	unsigned int nr_sizes;
	unsigned int events;
	unsigned int rounds;
	unsigned int buffer_kb;
	bool port_clock;
};

/**
 * struct rbn_bench_slow - counters of one kind of pair, all rounds
 * @pairs:	pairs written
 * @nested:	events the hook wrote
 * @hook_fail:	nested reserves that failed
 * @hook_calls:	calls of the hook for the private buffer
 * @ts_slow:	rbnest's ts_slow counter went up by this
 * @ts_abs:	and ts_abs by this
 * @recursion:	and recursion by this
 */
struct rbn_bench_slow {
	u64 pairs;
	u64 nested;
	u64 hook_fail;
	u64 hook_calls;
	u64 ts_slow;
	u64 ts_abs;
	u64 recursion;
};

/**
 * struct rbn_bench - the state of the benchmark, under rbn_bench_mutex
 * @args:	the arguments of the run
 * @rbn:	rbnest's private buffer
 * @rbn_abs:	a second one, in absolute time-stamp mode
 * @kbuf:	the kernel's ring buffer
 * @cpu:	the CPU of the write, clock, consume and read_page figures
 * @slow_cpu:	the CPU of the slow path figures
 * @fail:	reserves that failed, per side
 * @samples:	picoseconds per operation of each round (scratch)
 * @write_ps:	median picoseconds per event, per side and size
 * @abs_ps:	median picoseconds per event, rbnest delta (0) and absolute
 *		(1) mode, per size
 * @abs_fail:	reserves that failed on the absolute-mode buffer
 * @val_ps:	median picoseconds per event, validator off (0) and on (1),
 *		per size
 * @val_checked: events the validator checked in its rounds
 * @val_fail:	events it found wrong there
 * @clock_ps:	median picoseconds per call: local_clock, trace_clock_local
 * @consume_ps:	median picoseconds per consumed event, per side
 * @consumed:	events consumed in the last round, per side
 * @page_ps:	median picoseconds per page read, per side
 * @pages:	pages read in the last round, per side
 * @page_events: events filled before each page read round
 * @slow_state:	0 measured, else why not (-EBUSY: another hook)
 * @slow_ps:	median picoseconds per pair, per kind of pair
 * @slow:	counters per kind of pair
 * @slow_extra_ps: a pair's cost beyond a plain pair, per kind of pair
 * @slow_net_ps: the same without its extra hook calls
 * @hook_call_ps: estimated cost of one hook call, 0 when unknown
 * @hook_label:	label the hook writes at, -1 for none
 * @hook_armed:	the next time the hook reaches @hook_label, it writes
 * @hook_calls:	calls of the hook for @rbn
 * @hook_nested: events the hook wrote
 * @hook_fail:	nested reserves that failed
 * @text:	the table of the last run
 * @text_len:	its length
 */
struct rbn_bench {
	struct rbn_bench_args args;
	struct rbn_buffer *rbn;
	struct rbn_buffer *rbn_abs;
	struct trace_buffer *kbuf;
	int cpu;
	int slow_cpu;
	u64 fail[RBN_NR_SIDES];
	u64 samples[RBN_NR_PAIRS][RBN_BENCH_MAX_ROUNDS];
	u64 write_ps[RBN_NR_SIDES][RBN_BENCH_MAX_SIZES];
	u64 abs_ps[2][RBN_BENCH_MAX_SIZES];
	u64 abs_fail;
	u64 val_ps[2][RBN_BENCH_MAX_SIZES];
	u64 val_checked;
	u64 val_fail;
	u64 clock_ps[2];
	u64 consume_ps[RBN_NR_SIDES];
	u64 consumed[RBN_NR_SIDES];
	u64 page_ps[RBN_NR_SIDES];
	u64 pages[RBN_NR_SIDES];
	u64 page_events;
	int slow_state;
	u64 slow_ps[RBN_NR_PAIRS];
	struct rbn_bench_slow slow[RBN_NR_PAIRS];
	s64 slow_extra_ps[RBN_NR_PAIRS];
	s64 slow_net_ps[RBN_NR_PAIRS];
	u64 hook_call_ps;
	int hook_label;
	bool hook_armed;
	u64 hook_calls;
	u64 hook_nested;
	u64 hook_fail;
	char *text;
	size_t text_len;
};

static struct rbn_bench rbn_bench;
/* Held for a whole run, and by readers of the table. */
static DEFINE_MUTEX(rbn_bench_mutex);

/* ------------------------------------------------------------------ */
/* The kernel ring buffer: the API changed between 6.1 and 6.12       */
/* ------------------------------------------------------------------ */

static __always_inline void rbn_bench_kcommit(struct trace_buffer *kbuf,
					      struct ring_buffer_event *event)
{
	/* v6.3 dropped the unused event argument. */
#ifdef RBN_RB_COMMIT_NO_EVENT
	ring_buffer_unlock_commit(kbuf);
#else
	ring_buffer_unlock_commit(kbuf, event);
#endif
}

/*
 * A page for ring_buffer_read_page(): since v6.8 (sub-buffer orders) a
 * struct buffer_data_read_page that knows its page, before a bare page
 * the call may swap for another one.
 */
#ifdef RBN_RB_READ_PAGE_STRUCT
struct rbn_bench_kpage {
	struct buffer_data_read_page *page;
};

/*
 * 6.12.y stable made ring_buffer_alloc_read_page() return an error code
 * and the page through its last argument.
 */
static int rbn_bench_kalloc_page(struct trace_buffer *kbuf,
				 struct rbn_bench_kpage *kpage, int cpu)
{
#ifdef RBN_RB_ALLOC_READ_PAGE_INT
	return ring_buffer_alloc_read_page(kbuf, cpu, &kpage->page);
#else
	kpage->page = ring_buffer_alloc_read_page(kbuf, cpu);
	return PTR_ERR_OR_ZERO(kpage->page);
#endif
}

static int rbn_bench_kread_page(struct trace_buffer *kbuf,
				struct rbn_bench_kpage *kpage, int cpu)
{
	return ring_buffer_read_page(kbuf, kpage->page, PAGE_SIZE, cpu, 0);
}
#else
struct rbn_bench_kpage {
	void *page;
};

static int rbn_bench_kalloc_page(struct trace_buffer *kbuf,
				 struct rbn_bench_kpage *kpage, int cpu)
{
	kpage->page = ring_buffer_alloc_read_page(kbuf, cpu);
	return PTR_ERR_OR_ZERO(kpage->page);
}

static int rbn_bench_kread_page(struct trace_buffer *kbuf,
				struct rbn_bench_kpage *kpage, int cpu)
{
	return ring_buffer_read_page(kbuf, &kpage->page, PAGE_SIZE, cpu, 0);
}
#endif

/* ------------------------------------------------------------------ */
/* Timed batches: preemption off, interrupts on                       */
/* ------------------------------------------------------------------ */

static noinline u64 rbn_bench_rbn_write(struct rbn_buffer *rbn, u64 *fail,
					unsigned int size, unsigned int n)
{
	struct rbn_event *event;
	unsigned int i;
	u64 t0, t1;

	preempt_disable();
	t0 = local_clock();
	for (i = 0; i < n; i++) {
		event = rbn_reserve(rbn, size);
		if (unlikely(!event)) {
			(*fail)++;
			continue;
		}
		memset(rbn_event_data(event), i & 0xff, size);
		rbn_commit(rbn, event);
	}
	t1 = local_clock();
	preempt_enable();
	return t1 - t0;
}

static noinline u64 rbn_bench_kernel_write(struct rbn_bench *b,
					   unsigned int size, unsigned int n)
{
	struct ring_buffer_event *event;
	unsigned int i;
	u64 t0, t1;

	preempt_disable();
	t0 = local_clock();
	for (i = 0; i < n; i++) {
		event = ring_buffer_lock_reserve(b->kbuf, size);
		if (unlikely(!event)) {
			b->fail[RBN_SIDE_KERNEL]++;
			continue;
		}
		memset(ring_buffer_event_data(event), i & 0xff, size);
		rbn_bench_kcommit(b->kbuf, event);
	}
	t1 = local_clock();
	preempt_enable();
	return t1 - t0;
}

static noinline u64 rbn_bench_clock(bool trace, unsigned int n)
{
	unsigned int i;
	u64 t0, t1;

	preempt_disable();
	t0 = local_clock();
	if (trace) {
		for (i = 0; i < n; i++)
			(void)trace_clock_local();
	} else {
		for (i = 0; i < n; i++)
			(void)local_clock();
	}
	t1 = local_clock();
	preempt_enable();
	return t1 - t0;
}

/* @n pairs; @nested: the hook writes the second event of each pair. */
static noinline u64 rbn_bench_pairs(struct rbn_bench *b, bool nested,
				    unsigned int n)
{
	struct rbn_event *event;
	unsigned int i, j;
	u64 t0, t1;

	preempt_disable();
	t0 = local_clock();
	for (i = 0; i < n; i++) {
		for (j = 0; j < (nested ? 1 : 2); j++) {
			/* Only this task writes the private buffer. */
			WRITE_ONCE(b->hook_armed, nested);
			event = rbn_reserve(b->rbn, RBN_BENCH_SLOW_SIZE);
			if (unlikely(!event)) {
				b->fail[RBN_SIDE_RBN]++;
				continue;
			}
			memset(rbn_event_data(event), i & 0xff,
			       RBN_BENCH_SLOW_SIZE);
			rbn_commit(b->rbn, event);
		}
	}
	WRITE_ONCE(b->hook_armed, false);
	t1 = local_clock();
	preempt_enable();
	return t1 - t0;
}

/* Consume up to @n events; *@count gets how many there were. */
static noinline u64 rbn_bench_consume(struct rbn_bench *b, int side,
				      unsigned int n, unsigned int *count)
{
	unsigned int i;
	u64 t0, t1;
	bool got;

	preempt_disable();
	t0 = local_clock();
	for (i = 0; i < n; i++) {
		if (side == RBN_SIDE_RBN)
			got = !!rbn_consume(b->rbn, b->cpu, NULL, NULL);
		else
			got = !!ring_buffer_consume(b->kbuf, b->cpu, NULL, NULL);
		if (!got)
			break;
	}
	t1 = local_clock();
	preempt_enable();
	*count = i;
	return t1 - t0;
}

/* Read up to @n pages; *@count gets how many there were. */
static noinline u64 rbn_bench_read_pages(struct rbn_bench *b, int side,
					 void **rpage, struct rbn_bench_kpage *kpage,
					 unsigned int n, unsigned int *count)
{
	unsigned int i;
	u64 t0, t1;
	int ret;

	preempt_disable();
	t0 = local_clock();
	for (i = 0; i < n; i++) {
		if (side == RBN_SIDE_RBN)
			ret = rbn_read_page(b->rbn, b->cpu, rpage,
					    rbn_subbuf_size(b->rbn), false);
		else
			ret = rbn_bench_kread_page(b->kbuf, kpage, b->cpu);
		if (ret < 0)
			break;
	}
	t1 = local_clock();
	preempt_enable();
	*count = i;
	return t1 - t0;
}

/* ------------------------------------------------------------------ */
/* The hook of the slow path measurement                              */
/* ------------------------------------------------------------------ */

static void rbn_bench_hook(struct rbn_buffer *buffer, int cpu, int label,
			   void *arg)
{
	struct rbn_bench *b = arg;
	struct rbn_event *event;

	/* The module's own buffer, on any CPU: not ours. */
	if (buffer != b->rbn)
		return;
	/*
	 * Only the benchmark task writes @buffer, on its CPU with
	 * preemption off: the nested writer below runs after this
	 * increment and before the outer one goes on.
	 */
	b->hook_calls++;
	if (label != b->hook_label || !READ_ONCE(b->hook_armed))
		return;
	WRITE_ONCE(b->hook_armed, false);
	event = rbn_reserve(buffer, RBN_BENCH_SLOW_SIZE);
	if (!event) {
		b->hook_fail++;
		return;
	}
	memset(rbn_event_data(event), 0x5a, RBN_BENCH_SLOW_SIZE);
	rbn_commit(buffer, event);
	b->hook_nested++;
}

/* ------------------------------------------------------------------ */
/* Measurements                                                       */
/* ------------------------------------------------------------------ */

static int rbn_bench_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static u64 rbn_bench_median(u64 *v, unsigned int n)
{
	sort(v, n, sizeof(*v), rbn_bench_cmp_u64, NULL);
	if (n & 1)
		return v[n / 2];
	return (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Picoseconds per operation. */
static u64 rbn_bench_ps(u64 ns, u64 ops)
{
	return ops ? div64_u64(ns * 1000, ops) : 0;
}

/* Between batches: let the CPU do other work; stop on a fatal signal. */
static int rbn_bench_yield(void)
{
	cond_resched();
	return fatal_signal_pending(current) ? -EINTR : 0;
}

/* Write @events events of @size bytes on one side, in batches. */
static int rbn_bench_write_side(struct rbn_bench *b, int side,
				unsigned int size, unsigned int events,
				u64 *ns)
{
	unsigned int done, n;
	int ret;

	*ns = 0;
	for (done = 0; done < events; done += n) {
		n = min_t(unsigned int, events - done, RBN_BENCH_BATCH);
		if (side == RBN_SIDE_RBN)
			*ns += rbn_bench_rbn_write(b->rbn,
						   &b->fail[RBN_SIDE_RBN],
						   size, n);
		else
			*ns += rbn_bench_kernel_write(b, size, n);
		ret = rbn_bench_yield();
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * Fill both buffers once with 1 KiB events, so that every round finds
 * them in the same state: full, each new page pushing the oldest out.
 */
static int rbn_bench_warm_up(struct rbn_bench *b)
{
	unsigned int events = b->args.buffer_kb + 256;
	u64 ns;
	int ret;

	ret = rbn_bench_write_side(b, RBN_SIDE_RBN, 1024, events, &ns);
	if (ret)
		return ret;
	return rbn_bench_write_side(b, RBN_SIDE_KERNEL, 1024, events, &ns);
}

static int rbn_bench_writes(struct rbn_bench *b)
{
	unsigned int s, r, size;
	int side, ret;
	u64 ns;

	for (s = 0; s < b->args.nr_sizes; s++) {
		size = b->args.sizes[s];
		for (r = 0; r < b->args.rounds; r++) {
			for (side = 0; side < RBN_NR_SIDES; side++) {
				ret = rbn_bench_write_side(b, side, size,
							   b->args.events, &ns);
				if (ret)
					return ret;
				b->samples[side][r] = rbn_bench_ps(ns,
								   b->args.events);
			}
		}
		for (side = 0; side < RBN_NR_SIDES; side++)
			b->write_ps[side][s] =
				rbn_bench_median(b->samples[side],
						 b->args.rounds);
	}
	return 0;
}

/* @events writes of @size bytes on @rbn, in batches; the time in *@ns. */
static int rbn_bench_rbn_writes(struct rbn_buffer *rbn, u64 *fail,
				unsigned int size, unsigned int events,
				u64 *ns)
{
	unsigned int done, n;
	int ret;

	*ns = 0;
	for (done = 0; done < events; done += n) {
		n = min_t(unsigned int, events - done, RBN_BENCH_BATCH);
		*ns += rbn_bench_rbn_write(rbn, fail, size, n);
		ret = rbn_bench_yield();
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * The cost of absolute mode: the same writes on rbnest's delta-mode
 * buffer and on its absolute-mode one, round after round, A B A B.
 */
static int rbn_bench_abs_writes(struct rbn_bench *b)
{
	struct rbn_buffer *rbn[2] = { b->rbn, b->rbn_abs };
	u64 *fail[2] = { &b->fail[RBN_SIDE_RBN], &b->abs_fail };
	unsigned int s, r, size, m;
	int ret;
	u64 ns;

	/*
	 * Warm both buffers up as rbn_bench_warm_up() does: this may be
	 * another CPU than the one of the first rounds.
	 */
	for (m = 0; m < 2; m++) {
		ret = rbn_bench_rbn_writes(rbn[m], fail[m], 1024,
					   b->args.buffer_kb + 256, &ns);
		if (ret)
			return ret;
	}
	for (s = 0; s < b->args.nr_sizes; s++) {
		size = b->args.sizes[s];
		for (r = 0; r < b->args.rounds; r++) {
			for (m = 0; m < 2; m++) {
				ret = rbn_bench_rbn_writes(rbn[m], fail[m], size,
							   b->args.events, &ns);
				if (ret)
					return ret;
				b->samples[m][r] = rbn_bench_ps(ns, b->args.events);
			}
		}
		for (m = 0; m < 2; m++)
			b->abs_ps[m][s] = rbn_bench_median(b->samples[m],
							   b->args.rounds);
	}
	return 0;
}

/*
 * The absolute-mode buffer exists only for its own rounds: allocated
 * before the kernel's buffer, it moved that one's pages and changed the
 * rbnest/kernel ratios of the rounds that do not use it (1.3-1.4 where
 * they are 0.9-1.0 without it).
 */
static int rbn_bench_abs(struct rbn_bench *b, const struct rbn_config *base)
{
	struct rbn_config cfg = *base;
	int ret;

	cfg.abs_ts = true;
	b->rbn_abs = rbn_alloc(&cfg);
	if (IS_ERR(b->rbn_abs)) {
		ret = PTR_ERR(b->rbn_abs);
		b->rbn_abs = NULL;
		return ret;
	}
	migrate_disable();
	ret = rbn_bench_abs_writes(b);
	migrate_enable();
	rbn_free(b->rbn_abs);
	b->rbn_abs = NULL;
	return ret;
}

/* Sum a validator counter of rbnest's buffer over the CPUs. */
static void rbn_bench_val_counts(struct rbn_bench *b, u64 *checked, u64 *fail)
{
	struct rbn_cpu_stats st;
	int cpu;

	*checked = 0;
	*fail = 0;
	for (cpu = 0; cpu < rbn_nr_cpus(b->rbn); cpu++) {
		if (rbn_cpu_stats(b->rbn, cpu, &st))
			continue;
		*checked += st.validate_checked;
		*fail += st.validate_fail;
	}
}

/*
 * The cost of the run-time validator: the same writes on rbnest's buffer
 * with it off and on, round after round, A B A B. Switching it patches
 * the static key's jumps: outside the pinned sections, as the hook of
 * the slow path is installed (rbn_bench_slow()). Off is what every other
 * figure measures.
 */
static int rbn_bench_validate(struct rbn_bench *b)
{
	unsigned int s, r, size, m;
	u64 ns, checked0, fail0;
	int ret = 0;

	rbn_bench_val_counts(b, &checked0, &fail0);
	for (s = 0; s < b->args.nr_sizes && !ret; s++) {
		size = b->args.sizes[s];
		for (r = 0; r < b->args.rounds && !ret; r++) {
			for (m = 0; m < 2 && !ret; m++) {
				if (m)
					rbn_set_validate(b->rbn, true);
				migrate_disable();
				/* This CPU's pages warm first, either way. */
				ret = rbn_bench_rbn_writes(b->rbn, &b->fail[RBN_SIDE_RBN],
							   size, RBN_BENCH_BATCH, &ns);
				if (!ret)
					ret = rbn_bench_rbn_writes(b->rbn,
								   &b->fail[RBN_SIDE_RBN],
								   size, b->args.events,
								   &ns);
				migrate_enable();
				if (m)
					rbn_set_validate(b->rbn, false);
				b->samples[m][r] = rbn_bench_ps(ns, b->args.events);
			}
		}
		for (m = 0; m < 2; m++)
			b->val_ps[m][s] = rbn_bench_median(b->samples[m],
							   b->args.rounds);
	}
	rbn_bench_val_counts(b, &b->val_checked, &b->val_fail);
	b->val_checked -= checked0;
	b->val_fail -= fail0;
	return ret;
}

static int rbn_bench_clocks(struct rbn_bench *b)
{
	unsigned int done, n, r;
	int which, ret;
	u64 ns;

	for (r = 0; r < b->args.rounds; r++) {
		for (which = 0; which < 2; which++) {
			ns = 0;
			for (done = 0; done < b->args.events; done += n) {
				n = min_t(unsigned int, b->args.events - done,
					  RBN_BENCH_BATCH);
				ns += rbn_bench_clock(which, n);
				ret = rbn_bench_yield();
				if (ret)
					return ret;
			}
			b->samples[which][r] = rbn_bench_ps(ns, b->args.events);
		}
	}
	for (which = 0; which < 2; which++)
		b->clock_ps[which] = rbn_bench_median(b->samples[which],
						      b->args.rounds);
	return 0;
}

/* Consume everything, untimed. */
static int rbn_bench_drain(struct rbn_bench *b, int side)
{
	unsigned int count;
	int ret;

	do {
		rbn_bench_consume(b, side, RBN_BENCH_BATCH, &count);
		ret = rbn_bench_yield();
		if (ret)
			return ret;
	} while (count == RBN_BENCH_BATCH);
	return 0;
}

/* Time consuming all of @events events; *@ps per event. */
static int rbn_bench_consume_side(struct rbn_bench *b, int side,
				  unsigned int events, u64 *ps)
{
	unsigned int count;
	u64 ns = 0, total = 0;
	int ret;

	ret = rbn_bench_write_side(b, side, RBN_BENCH_READ_SIZE, events, &ns);
	if (ret)
		return ret;
	ns = 0;
	do {
		ns += rbn_bench_consume(b, side, RBN_BENCH_BATCH, &count);
		total += count;
		ret = rbn_bench_yield();
		if (ret)
			return ret;
	} while (count == RBN_BENCH_BATCH);
	b->consumed[side] = total;
	*ps = rbn_bench_ps(ns, total);
	return 0;
}

/*
 * As many events as surely fit into the buffer: 36 bytes each with
 * their header, with room to spare for page padding and time extends.
 */
static unsigned int rbn_bench_fill_events(struct rbn_bench *b)
{
	return min_t(unsigned int, b->args.events,
		     b->args.buffer_kb * 1024U / 64);
}

static int rbn_bench_consumes(struct rbn_bench *b)
{
	unsigned int events = rbn_bench_fill_events(b);
	unsigned int r;
	int side, ret;

	for (side = 0; side < RBN_NR_SIDES; side++) {
		ret = rbn_bench_drain(b, side);
		if (ret)
			return ret;
	}
	for (r = 0; r < b->args.rounds; r++) {
		for (side = 0; side < RBN_NR_SIDES; side++) {
			ret = rbn_bench_consume_side(b, side, events,
						     &b->samples[side][r]);
			if (ret)
				return ret;
		}
	}
	for (side = 0; side < RBN_NR_SIDES; side++)
		b->consume_ps[side] = rbn_bench_median(b->samples[side],
						       b->args.rounds);
	return 0;
}

static int rbn_bench_pages_side(struct rbn_bench *b, int side,
				unsigned int events, void **rpage,
				struct rbn_bench_kpage *kpage, u64 *ps)
{
	unsigned int count;
	u64 ns = 0, total = 0;
	int ret;

	ret = rbn_bench_write_side(b, side, RBN_BENCH_READ_SIZE, events, &ns);
	if (ret)
		return ret;
	ns = 0;
	do {
		ns += rbn_bench_read_pages(b, side, rpage, kpage,
					   RBN_BENCH_PAGE_BATCH, &count);
		total += count;
		ret = rbn_bench_yield();
		if (ret)
			return ret;
	} while (count == RBN_BENCH_PAGE_BATCH);
	b->pages[side] = total;
	*ps = rbn_bench_ps(ns, total);
	return 0;
}

static int rbn_bench_read_pages_all(struct rbn_bench *b)
{
	unsigned int events = rbn_bench_fill_events(b);
	struct rbn_bench_kpage kpage;
	unsigned int r;
	int side, ret;
	void *rpage;

	b->page_events = events;
	rpage = rbn_alloc_read_page(b->rbn, b->cpu);
	if (!rpage)
		return -ENOMEM;
	ret = rbn_bench_kalloc_page(b->kbuf, &kpage, b->cpu);
	if (ret)
		goto out_free_rpage;
	/* Both are empty after the consume measurement. */
	for (r = 0; r < b->args.rounds; r++) {
		for (side = 0; side < RBN_NR_SIDES; side++) {
			ret = rbn_bench_pages_side(b, side, events, &rpage,
						   &kpage,
						   &b->samples[side][r]);
			if (ret)
				goto out_free_kpage;
		}
	}
	for (side = 0; side < RBN_NR_SIDES; side++)
		b->page_ps[side] = rbn_bench_median(b->samples[side],
						    b->args.rounds);
	ret = 0;
out_free_kpage:
	ring_buffer_free_read_page(b->kbuf, b->cpu, kpage.page);
out_free_rpage:
	rbn_free_read_page(b->rbn, b->cpu, rpage);
	return ret;
}

/* One round of one kind of pair, with the counters it moved. */
static int rbn_bench_pair_round(struct rbn_bench *b, int kind, u64 *ps)
{
	struct rbn_bench_slow *s = &b->slow[kind];
	struct rbn_cpu_stats before, after;
	unsigned int pairs = b->args.events / 2;
	unsigned int done, n;
	u64 ns = 0;
	int ret;

	b->hook_label = rbn_bench_pair_label[kind];
	b->hook_calls = 0;
	b->hook_nested = 0;
	b->hook_fail = 0;
	rbn_cpu_stats(b->rbn, b->slow_cpu, &before);
	for (done = 0; done < pairs; done += n) {
		n = min_t(unsigned int, pairs - done, RBN_BENCH_BATCH / 2);
		ns += rbn_bench_pairs(b, kind != RBN_PAIR_PLAIN, n);
		ret = rbn_bench_yield();
		if (ret)
			return ret;
	}
	rbn_cpu_stats(b->rbn, b->slow_cpu, &after);
	b->hook_label = -1;

	s->pairs += pairs;
	s->nested += b->hook_nested;
	s->hook_fail += b->hook_fail;
	s->hook_calls += b->hook_calls;
	s->ts_slow += after.ts_slow - before.ts_slow;
	s->ts_abs += after.ts_abs - before.ts_abs;
	s->recursion += after.recursion - before.recursion;
	*ps = rbn_bench_ps(ns, pairs);
	return 0;
}

static int rbn_bench_slow_path(struct rbn_bench *b)
{
	unsigned int r;
	int kind, ret;

	for (r = 0; r < b->args.rounds; r++) {
		for (kind = 0; kind < RBN_NR_PAIRS; kind++) {
			ret = rbn_bench_pair_round(b, kind,
						   &b->samples[kind][r]);
			if (ret)
				return ret;
		}
	}
	for (kind = 0; kind < RBN_NR_PAIRS; kind++)
		b->slow_ps[kind] = rbn_bench_median(b->samples[kind],
						    b->args.rounds);
	return 0;
}

/* ------------------------------------------------------------------ */
/* The table                                                          */
/* ------------------------------------------------------------------ */

static __printf(2, 3) void rbn_bench_printf(struct rbn_bench *b,
					    const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	b->text_len += vscnprintf(b->text + b->text_len,
				  RBN_BENCH_TEXT_MAX - b->text_len, fmt, args);
	va_end(args);
}

/* Nanoseconds with one decimal: "%llu.%u", rbn_ns(ps), rbn_ns_dec(ps). */
static u64 rbn_ns(u64 ps)
{
	return div_u64(ps, 1000);
}

static unsigned int rbn_ns_dec(u64 ps)
{
	return div_u64(ps, 100) % 10;
}

/* a / b with three decimals, in thousandths. */
static u64 rbn_ratio(u64 a, u64 b)
{
	return b ? div64_u64(a * 1000, b) : 0;
}

static void rbn_bench_metric(struct rbn_bench *b, const char *name, u64 ps)
{
	rbn_bench_printf(b, "metric %s %llu.%u\n", name, rbn_ns(ps),
			 rbn_ns_dec(ps));
}

static void rbn_bench_metric_ratio(struct rbn_bench *b, const char *name,
				   u64 milli)
{
	rbn_bench_printf(b, "metric %s %llu.%03llu\n", name,
			 div_u64(milli, 1000), milli % 1000);
}

static void rbn_bench_format_header(struct rbn_bench *b)
{
	const struct rbn_bench_args *a = &b->args;

	rbn_bench_printf(b,
			 "rbnest benchmark: kernel %s, cpu %d, rounds %u, events/round %u, batch %u\n",
			 utsname()->release, b->cpu, a->rounds, a->events,
			 RBN_BENCH_BATCH);
	rbn_bench_printf(b, "buffers: %u KiB per cpu each, overwrite, %lu-byte sub-buffers\n",
			 a->buffer_kb, PAGE_SIZE);
	rbn_bench_printf(b,
			 "stamp clock: rbnest %s, kernel trace_clock_local(); timing: local_clock(), preemption off, irqs on\n",
			 a->port_clock ? "local_clock() (port default)" :
			 "trace_clock_local()");
	rbn_bench_printf(b, "figures: median over rounds; ratio = rbnest / kernel\n\n");
}

static void rbn_bench_format_writes(struct rbn_bench *b)
{
	unsigned int s;

	rbn_bench_printf(b, "write: reserve + memset payload + commit\n");
	rbn_bench_printf(b, "%6s %14s %14s %8s\n", "size", "rbnest ns/ev",
			 "kernel ns/ev", "ratio");
	for (s = 0; s < b->args.nr_sizes; s++) {
		u64 a = b->write_ps[RBN_SIDE_RBN][s];
		u64 k = b->write_ps[RBN_SIDE_KERNEL][s];
		u64 ratio = rbn_ratio(a, k);

		rbn_bench_printf(b, "%6u %12llu.%u %12llu.%u %4llu.%03llu\n",
				 b->args.sizes[s], rbn_ns(a), rbn_ns_dec(a),
				 rbn_ns(k), rbn_ns_dec(k),
				 div_u64(ratio, 1000), ratio % 1000);
	}
	rbn_bench_printf(b, "failed reserves: rbnest %llu, kernel %llu\n\n",
			 b->fail[RBN_SIDE_RBN], b->fail[RBN_SIDE_KERNEL]);

	rbn_bench_printf(b, "absolute mode: the same writes, delta vs absolute stamps\n");
	rbn_bench_printf(b, "%6s %14s %14s %8s\n", "size", "delta ns/ev",
			 "absolute ns/ev", "ratio");
	for (s = 0; s < b->args.nr_sizes; s++) {
		u64 d = b->abs_ps[0][s];
		u64 a = b->abs_ps[1][s];
		u64 ratio = rbn_ratio(a, d);

		rbn_bench_printf(b, "%6u %12llu.%u %12llu.%u %4llu.%03llu\n",
				 b->args.sizes[s], rbn_ns(d), rbn_ns_dec(d),
				 rbn_ns(a), rbn_ns_dec(a),
				 div_u64(ratio, 1000), ratio % 1000);
	}
	rbn_bench_printf(b, "failed reserves: absolute mode %llu\n\n",
			 b->abs_fail);

	rbn_bench_printf(b, "validator: the same writes, validate off vs on\n");
	rbn_bench_printf(b, "%6s %14s %14s %8s\n", "size", "off ns/ev",
			 "on ns/ev", "ratio");
	for (s = 0; s < b->args.nr_sizes; s++) {
		u64 o = b->val_ps[0][s];
		u64 v = b->val_ps[1][s];
		u64 ratio = rbn_ratio(v, o);

		rbn_bench_printf(b, "%6u %12llu.%u %12llu.%u %4llu.%03llu\n",
				 b->args.sizes[s], rbn_ns(o), rbn_ns_dec(o),
				 rbn_ns(v), rbn_ns_dec(v),
				 div_u64(ratio, 1000), ratio % 1000);
	}
	rbn_bench_printf(b, "validator in its rounds: %llu events checked, %llu failed\n\n",
			 b->val_checked, b->val_fail);
}

static void rbn_bench_format_reads(struct rbn_bench *b)
{
	u64 ca = b->consume_ps[RBN_SIDE_RBN];
	u64 ck = b->consume_ps[RBN_SIDE_KERNEL];
	u64 pa = b->page_ps[RBN_SIDE_RBN];
	u64 pk = b->page_ps[RBN_SIDE_KERNEL];
	u64 ratio;

	rbn_bench_printf(b,
			 "clock: local_clock %llu.%u ns/call, trace_clock_local %llu.%u ns/call\n",
			 rbn_ns(b->clock_ps[0]), rbn_ns_dec(b->clock_ps[0]),
			 rbn_ns(b->clock_ps[1]), rbn_ns_dec(b->clock_ps[1]));
	ratio = rbn_ratio(ca, ck);
	rbn_bench_printf(b,
			 "consume: rbnest %llu.%u ns/ev, kernel %llu.%u ns/ev, ratio %llu.%03llu (%llu / %llu events of %u bytes)\n",
			 rbn_ns(ca), rbn_ns_dec(ca), rbn_ns(ck), rbn_ns_dec(ck),
			 div_u64(ratio, 1000), ratio % 1000,
			 b->consumed[RBN_SIDE_RBN], b->consumed[RBN_SIDE_KERNEL],
			 RBN_BENCH_READ_SIZE);
	ratio = rbn_ratio(pa, pk);
	rbn_bench_printf(b,
			 "read_page: rbnest %llu.%u ns/page, kernel %llu.%u ns/page, ratio %llu.%03llu (%llu / %llu pages, %llu events of %u bytes)\n",
			 rbn_ns(pa), rbn_ns_dec(pa), rbn_ns(pk), rbn_ns_dec(pk),
			 div_u64(ratio, 1000), ratio % 1000,
			 b->pages[RBN_SIDE_RBN], b->pages[RBN_SIDE_KERNEL],
			 b->page_events, RBN_BENCH_READ_SIZE);
}

/* Signed nanoseconds with one decimal, from picoseconds. */
static const char *rbn_bench_sns(char *buf, size_t len, s64 ps)
{
	u64 v = ps < 0 ? -ps : ps;

	snprintf(buf, len, "%s%llu.%u", ps < 0 ? "-" : "+", rbn_ns(v),
		 rbn_ns_dec(v));
	return buf;
}

/*
 * The figures derived from the pairs: what a nested pair costs more
 * than a plain one, and the same without the extra hook calls it makes
 * (the outer event passes the slow path's labels), each costing what a
 * plain pair spends beyond two 8-byte writes of the write measurement,
 * divided by its hook calls. Without an 8-byte write figure the hook
 * cost stays unknown (0).
 */
static void rbn_bench_slow_derive(struct rbn_bench *b)
{
	const struct rbn_bench_slow *p = &b->slow[RBN_PAIR_PLAIN];
	u64 plain = b->slow_ps[RBN_PAIR_PLAIN], two = 0;
	unsigned int s;
	int kind;

	b->hook_call_ps = 0;
	for (s = 0; s < b->args.nr_sizes; s++)
		if (b->args.sizes[s] == RBN_BENCH_SLOW_SIZE)
			two = 2 * b->write_ps[RBN_SIDE_RBN][s];
	if (two && plain > two && p->hook_calls)
		b->hook_call_ps = div64_u64((plain - two) * p->pairs,
					    p->hook_calls);

	for (kind = 0; kind < RBN_NR_PAIRS; kind++) {
		const struct rbn_bench_slow *k = &b->slow[kind];
		s64 calls;

		b->slow_extra_ps[kind] = (s64)b->slow_ps[kind] - (s64)plain;
		/* Extra hook calls per pair, in thousandths. */
		calls = (s64)div64_u64(k->hook_calls * 1000, max(k->pairs, 1ULL)) -
			(s64)div64_u64(p->hook_calls * 1000, max(p->pairs, 1ULL));
		b->slow_net_ps[kind] = b->slow_extra_ps[kind] -
			div_s64(calls * (s64)b->hook_call_ps, 1000);
	}
}

static void rbn_bench_format_slow(struct rbn_bench *b)
{
	char extra[32], net[32];
	int kind;

	if (b->slow_state) {
		rbn_bench_printf(b, "slow path: not measured (%s)\n",
				 b->slow_state == -EBUSY ?
				 "another hook is installed: inject armed?" :
				 "hook install failed");
		return;
	}
	rbn_bench_printf(b,
			 "slow path (cpu %d, %u-byte events, hook installed for all pairs; hook call ~%llu.%u ns%s):\n",
			 b->slow_cpu, RBN_BENCH_SLOW_SIZE,
			 rbn_ns(b->hook_call_ps), rbn_ns_dec(b->hook_call_ps),
			 b->hook_call_ps ? "" : " (unknown: no size 8)");
	for (kind = 0; kind < RBN_NR_PAIRS; kind++) {
		const struct rbn_bench_slow *s = &b->slow[kind];
		u64 ps = b->slow_ps[kind];

		rbn_bench_printf(b,
				 "  pairs %-5s %8llu.%u ns/pair, vs plain %s ns (%s without the extra hook calls)\n",
				 rbn_bench_pair_names[kind], rbn_ns(ps),
				 rbn_ns_dec(ps),
				 rbn_bench_sns(extra, sizeof(extra),
					       b->slow_extra_ps[kind]),
				 rbn_bench_sns(net, sizeof(net),
					       b->slow_net_ps[kind]));
		rbn_bench_printf(b,
				 "        pairs %llu nested %llu failed %llu ts_slow %llu ts_abs %llu recursion %llu hook calls/pair %llu.%llu\n",
				 s->pairs, s->nested, s->hook_fail, s->ts_slow,
				 s->ts_abs, s->recursion,
				 div64_u64(s->hook_calls, max(s->pairs, 1ULL)),
				 div64_u64(s->hook_calls * 10,
					   max(s->pairs, 1ULL)) % 10);
	}
}

static void rbn_bench_format_metrics(struct rbn_bench *b)
{
	static const char * const side_names[RBN_NR_SIDES] = {
		"rbnest", "kernel",
	};
	char name[48];
	unsigned int s;
	int side, kind;

	rbn_bench_printf(b, "\n");
	for (s = 0; s < b->args.nr_sizes; s++) {
		for (side = 0; side < RBN_NR_SIDES; side++) {
			snprintf(name, sizeof(name), "write_ns.%s.%u",
				 side_names[side], b->args.sizes[s]);
			rbn_bench_metric(b, name, b->write_ps[side][s]);
		}
		snprintf(name, sizeof(name), "write_ratio.%u",
			 b->args.sizes[s]);
		rbn_bench_metric_ratio(b, name,
				       rbn_ratio(b->write_ps[RBN_SIDE_RBN][s],
						 b->write_ps[RBN_SIDE_KERNEL][s]));
		snprintf(name, sizeof(name), "write_abs_ratio.%u",
			 b->args.sizes[s]);
		rbn_bench_metric_ratio(b, name,
				       rbn_ratio(b->abs_ps[1][s],
						 b->abs_ps[0][s]));
		snprintf(name, sizeof(name), "write_validate_ratio.%u",
			 b->args.sizes[s]);
		rbn_bench_metric_ratio(b, name,
				       rbn_ratio(b->val_ps[1][s],
						 b->val_ps[0][s]));
	}
	rbn_bench_metric(b, "clock_ns.local_clock", b->clock_ps[0]);
	rbn_bench_metric(b, "clock_ns.trace_clock_local", b->clock_ps[1]);
	for (side = 0; side < RBN_NR_SIDES; side++) {
		snprintf(name, sizeof(name), "consume_ns.%s", side_names[side]);
		rbn_bench_metric(b, name, b->consume_ps[side]);
	}
	rbn_bench_metric_ratio(b, "consume_ratio",
			       rbn_ratio(b->consume_ps[RBN_SIDE_RBN],
					 b->consume_ps[RBN_SIDE_KERNEL]));
	for (side = 0; side < RBN_NR_SIDES; side++) {
		snprintf(name, sizeof(name), "read_page_ns.%s",
			 side_names[side]);
		rbn_bench_metric(b, name, b->page_ps[side]);
	}
	rbn_bench_metric_ratio(b, "read_page_ratio",
			       rbn_ratio(b->page_ps[RBN_SIDE_RBN],
					 b->page_ps[RBN_SIDE_KERNEL]));
	if (b->slow_state)
		return;
	for (kind = 0; kind < RBN_NR_PAIRS; kind++) {
		snprintf(name, sizeof(name), "slow_pair_ns.%s",
			 rbn_bench_pair_names[kind]);
		rbn_bench_metric(b, name, b->slow_ps[kind]);
	}
	rbn_bench_metric(b, "slow_hook_call_ns", b->hook_call_ps);
	for (kind = RBN_PAIR_LABEL_A; kind < RBN_NR_PAIRS; kind++) {
		const char *n = rbn_bench_pair_names[kind];
		char v[32];

		rbn_bench_printf(b, "metric slow_extra_ns.%s %s\n", n,
				 rbn_bench_sns(v, sizeof(v),
					       b->slow_extra_ps[kind]));
		rbn_bench_printf(b, "metric slow_net_ns.%s %s\n", n,
				 rbn_bench_sns(v, sizeof(v),
					       b->slow_net_ps[kind]));
		rbn_bench_printf(b, "metric slow_ts_slow.%s %llu\n", n,
				 b->slow[kind].ts_slow);
		rbn_bench_printf(b, "metric slow_ts_abs.%s %llu\n", n,
				 b->slow[kind].ts_abs);
		rbn_bench_printf(b, "metric slow_pairs.%s %llu\n", n,
				 b->slow[kind].pairs);
	}
}

static void rbn_bench_format(struct rbn_bench *b)
{
	b->text_len = 0;
	rbn_bench_format_header(b);
	rbn_bench_format_writes(b);
	rbn_bench_format_reads(b);
	if (!b->slow_state)
		rbn_bench_slow_derive(b);
	rbn_bench_format_slow(b);
	rbn_bench_format_metrics(b);
}

/* ------------------------------------------------------------------ */
/* A run                                                              */
/* ------------------------------------------------------------------ */

/* Everything but absolute mode and the slow path, on one CPU. */
static int rbn_bench_pinned(struct rbn_bench *b)
{
	int ret;

	migrate_disable();
	b->cpu = smp_processor_id();
	ret = rbn_bench_warm_up(b);
	if (!ret)
		ret = rbn_bench_writes(b);
	if (!ret)
		ret = rbn_bench_clocks(b);
	if (!ret)
		ret = rbn_bench_consumes(b);
	if (!ret)
		ret = rbn_bench_read_pages_all(b);
	migrate_enable();
	return ret;
}

/*
 * The hook is installed (static key on, text patched) outside the pinned
 * section: CPU hotplug waits for pinned tasks while holding the lock that
 * patching takes.
 */
static int rbn_bench_slow(struct rbn_bench *b)
{
	int ret;

	b->hook_label = -1;
	WRITE_ONCE(b->hook_armed, false);
	memset(b->slow, 0, sizeof(b->slow));
	b->slow_state = rbn_hook_install(rbn_bench_hook, b);
	if (b->slow_state)
		return 0;	/* noted in the table */

	migrate_disable();
	b->slow_cpu = smp_processor_id();
	ret = rbn_bench_slow_path(b);
	migrate_enable();

	rbn_hook_remove();
	return ret;
}

static int rbn_bench_run(struct rbn_bench *b)
{
	unsigned long size = (unsigned long)b->args.buffer_kb * 1024;
	struct rbn_config cfg = {
		.size		= size,
		.order		= 0,
		.overwrite	= true,
		.clock		= b->args.port_clock ? NULL : trace_clock_local,
		.nr_cpus	= 0,
	};
	char *text;
	int ret;

	text = kzalloc(RBN_BENCH_TEXT_MAX, GFP_KERNEL);
	if (!text)
		return -ENOMEM;
	b->rbn = rbn_alloc(&cfg);
	if (IS_ERR(b->rbn)) {
		ret = PTR_ERR(b->rbn);
		goto out_free_text;
	}
	b->kbuf = ring_buffer_alloc(size, RB_FL_OVERWRITE);
	if (!b->kbuf) {
		ret = -ENOMEM;
		goto out_free_rbn;
	}
	memset(b->fail, 0, sizeof(b->fail));
	b->abs_fail = 0;

	ret = rbn_bench_pinned(b);
	if (ret)
		goto out_free_kbuf;
	ret = rbn_bench_abs(b, &cfg);
	if (ret)
		goto out_free_kbuf;
	ret = rbn_bench_validate(b);
	if (ret)
		goto out_free_kbuf;
	ret = rbn_bench_slow(b);
	if (ret)
		goto out_free_kbuf;

	kfree(b->text);
	b->text = text;
	text = NULL;
	rbn_bench_format(b);

out_free_kbuf:
	ring_buffer_free(b->kbuf);
	b->kbuf = NULL;
out_free_rbn:
	rbn_free(b->rbn);
	b->rbn = NULL;
out_free_text:
	kfree(text);
	return ret;
}

/* ------------------------------------------------------------------ */
/* The file                                                           */
/* ------------------------------------------------------------------ */

static int rbn_bench_parse_sizes(struct rbn_bench_args *a, char *list)
{
	char *tok;
	int ret;

	a->nr_sizes = 0;
	while ((tok = strsep(&list, ","))) {
		unsigned int size;

		if (a->nr_sizes == RBN_BENCH_MAX_SIZES)
			return -EINVAL;
		ret = kstrtouint(tok, 0, &size);
		if (ret || !size || size > RBN_BENCH_MAX_PAYLOAD)
			return -EINVAL;
		a->sizes[a->nr_sizes++] = size;
	}
	return a->nr_sizes ? 0 : -EINVAL;
}

static int rbn_bench_parse_uint(const char *val, unsigned int min,
				unsigned int max, unsigned int *res)
{
	unsigned int v;

	if (kstrtouint(val, 0, &v) || v < min || v > max)
		return -EINVAL;
	*res = v;
	return 0;
}

static int rbn_bench_parse_clock(struct rbn_bench_args *a, const char *val)
{
	if (!strcmp(val, "trace"))
		a->port_clock = false;
	else if (!strcmp(val, "port"))
		a->port_clock = true;
	else
		return -EINVAL;
	return 0;
}

/* "run" then key=value words; anything else is -EINVAL. */
static int rbn_bench_parse(struct rbn_bench_args *a, char *cmd)
{
	static const unsigned int def_sizes[] = { 8, 32, 128, 1024 };
	char *word, *val;
	int ret;

	memcpy(a->sizes, def_sizes, sizeof(def_sizes));
	a->nr_sizes = ARRAY_SIZE(def_sizes);
	a->events = 100000;
	a->rounds = 7;
	a->buffer_kb = 4096;
	a->port_clock = false;

	cmd = strim(cmd);
	word = strsep(&cmd, " \t\n");
	if (!word || strcmp(word, "run"))
		return -EINVAL;
	while ((word = strsep(&cmd, " \t\n"))) {
		if (!*word)
			continue;
		val = strchr(word, '=');
		if (!val)
			return -EINVAL;
		*val++ = '\0';
		if (!strcmp(word, "sizes") || !strcmp(word, "size"))
			ret = rbn_bench_parse_sizes(a, val);
		else if (!strcmp(word, "events"))
			ret = rbn_bench_parse_uint(val, RBN_BENCH_MIN_EVENTS,
						   RBN_BENCH_MAX_EVENTS,
						   &a->events);
		else if (!strcmp(word, "rounds"))
			ret = rbn_bench_parse_uint(val, 1, RBN_BENCH_MAX_ROUNDS,
						   &a->rounds);
		else if (!strcmp(word, "buffer_kb"))
			ret = rbn_bench_parse_uint(val, RBN_BENCH_MIN_KB,
						   RBN_BENCH_MAX_KB,
						   &a->buffer_kb);
		else if (!strcmp(word, "clock"))
			ret = rbn_bench_parse_clock(a, val);
		else
			ret = -EINVAL;
		if (ret)
			return ret;
	}
	return 0;
}

static ssize_t rbn_bench_write(struct file *file, const char __user *ubuf,
			       size_t cnt, loff_t *ppos)
{
	struct rbn_bench_args args;
	char *cmd;
	int ret;

	if (!cnt || cnt >= RBN_BENCH_CMD_MAX)
		return -EINVAL;
	cmd = memdup_user_nul(ubuf, cnt);
	if (IS_ERR(cmd))
		return PTR_ERR(cmd);
	ret = rbn_bench_parse(&args, cmd);
	kfree(cmd);
	if (ret)
		return ret;

	if (!mutex_trylock(&rbn_bench_mutex))
		return -EBUSY;
	rbn_bench.args = args;
	ret = rbn_bench_run(&rbn_bench);
	mutex_unlock(&rbn_bench_mutex);
	if (ret) {
		pr_warn("bench: run failed: %d\n", ret);
		return ret;
	}
	*ppos += cnt;
	return cnt;
}

static int rbn_bench_show(struct seq_file *m, void *v)
{
	if (!mutex_trylock(&rbn_bench_mutex))
		return -EBUSY;
	if (rbn_bench.text)
		seq_write(m, rbn_bench.text, rbn_bench.text_len);
	else
		seq_puts(m, "no results yet: write \"run\" to this file\n");
	mutex_unlock(&rbn_bench_mutex);
	return 0;
}

static int rbn_bench_open(struct inode *inode, struct file *file)
{
	if (!rbn_files_ready())
		return -ENODEV;
	return single_open(file, rbn_bench_show, NULL);
}

static const struct file_operations rbn_bench_fops = {
	.owner		= THIS_MODULE,
	.open		= rbn_bench_open,
	.read		= seq_read,
	.write		= rbn_bench_write,
	.llseek		= seq_lseek,
	.release	= single_release,
};

/**
 * rbn_bench_create_files - create the bench file
 * @root:	rbnest's debugfs directory
 */
void rbn_bench_create_files(struct dentry *root)
{
	rbn_debugfs_check(debugfs_create_file("bench", RBN_MODE_RW, root, NULL,
					      &rbn_bench_fops));
}

/**
 * rbn_bench_exit - wait for a run in progress and free the last table
 *
 * A run removes its hook and frees its buffers before it returns, so
 * once the mutex is ours nothing of the benchmark is left in the write
 * path.
 */
void rbn_bench_exit(void)
{
	mutex_lock(&rbn_bench_mutex);
	kfree(rbn_bench.text);
	rbn_bench.text = NULL;
	rbn_bench.text_len = 0;
	mutex_unlock(&rbn_bench_mutex);
}
