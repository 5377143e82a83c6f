// SPDX-License-Identifier: GPL-2.0
/*
 * rbnest: a per-CPU lockless ring buffer with exact timestamps for nested
 * writers.
 *
 * This is the nested timestamp algorithm of the ftrace ring buffer
 * (kernel/trace/ring_buffer.c), written again around one question: when
 * writers on a CPU interrupt each other (task, softirq, hardirq, NMI), which
 * time stamp does every event get? The answer of the article "Accurate
 * timestamps for the ftrace ring buffer" is implemented here with the later
 * fixes of mainline folded in; every step of the write path keeps the
 * article's label (A to F) and says what happens when a nested writer runs
 * right there.
 *
 * The same file builds in the kernel module and in a userspace library: it
 * only includes rb_port.h, of which each side has its own.
 *
 * Layout of a per-CPU buffer (as in ftrace): a ring of sub-buffers linked
 * through "next" words whose low two bits carry the HEAD/UPDATE flags, plus
 * one reader page outside the ring. Only the writer moves the tail and
 * pushes the head (overwrite mode); only a reader swaps its reader page
 * with the head page, with a cmpxchg on the flagged pointer. Writers never
 * wait for anybody.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include "rb_core.h"

/*
 * The functions that make up the write path; the coverage check of the
 * userspace tests requires each of their branches to be taken.
 *
 * rbn-write-path: rbn_reserve rb_reserve_next_event __rb_reserve_next
 * rbn-write-path: rb_update_event rb_add_time_stamp rb_move_tail
 * rbn-write-path: rb_reset_tail rb_tail_page_update rb_handle_head_page
 * rbn-write-path: rb_end_commit rb_set_commit_to_write rbn_commit
 * rbn-write-path: trace_recursive_lock rb_clock_read rbn_discard
 * rbn-write-path: rb_try_to_discard rb_validate_note rb_validate
 * rbn-write-path: rb_validate_one rb_validate_unpublished
 */

/* The write index and entry counter keep a tail update count above bit 20. */
#define RB_WRITE_MASK		0xFFFFFUL
#define RB_WRITE_INTCNT		BIT(20)

/* Flags in the low bits of a page's "next" word. */
#define RB_PAGE_NORMAL		0UL
#define RB_PAGE_HEAD		1UL
#define RB_PAGE_UPDATE		2UL
#define RB_FLAG_MASK		3UL
/* Returned when the pointer itself changed: a reader swapped the page. */
#define RB_PAGE_MOVED		4UL

#define RB_MAX_SMALL_DATA	(RBN_ALIGNMENT * RBN_TYPE_DATA_MAX)
#define RB_EVNT_MIN_SIZE	8U	/* header + one word */

/* What the write path adds in front of the event. */
#define RB_ADD_STAMP_NONE	0
#define RB_ADD_STAMP_EXTEND	BIT(1)
#define RB_ADD_STAMP_ABSOLUTE	BIT(2)	/* absolute mode: every event */
#define RB_ADD_STAMP_FORCE	BIT(3)

/* Recursion guard: one bit per context, lowest for the most nested. */
enum {
	RB_CTX_TRANSITION,
	RB_CTX_NMI,
	RB_CTX_IRQ,
	RB_CTX_SOFTIRQ,
	RB_CTX_NORMAL,
	RB_CTX_MAX
};

#define RB_MAX_NEST		RB_CTX_MAX

struct rbn_bpage {
	unsigned long next;		/* struct rbn_bpage * | RB_PAGE_* */
	struct rbn_bpage *prev;
	local_t write;			/* index of next write */
	local_t entries;		/* events reserved on this page */
	unsigned long real_end;		/* where padding starts, 0 if none */
	unsigned int read;		/* reader's index */
	struct rbn_page *page;		/* the sub-buffer */
};

/* What the writer at one nesting level is writing (rbn_event_ts()). */
struct rbn_nested {
	struct rbn_event *event;
	u64 ts;			/* the clock the writer read (rbn_event_ts()) */
	u64 stamp;		/* the time given: ts, or later on a clock back */
	unsigned int flags;
	/* where it was reserved, for rbn_discard() */
	struct rbn_bpage *bpage;
	unsigned long start;	/* write index of its first byte (stamp included) */
	unsigned long length;	/* bytes reserved, stamp included */
};

/*
 * The run-time validator's note of one event (rbn_set_validate()): taken
 * at its commit or discard, checked at the outermost commit on the CPU,
 * before that commit publishes it.
 */
struct rb_vnote {
	struct rbn_bpage *bpage;
	unsigned long start;	/* write index of its first byte (stamp included) */
	u64 ts;			/* the time the write path gave it */
	unsigned int flags;	/* RBN_EV_* */
	unsigned int gen;	/* rb_validate_gen when it was taken */
	bool discarded;		/* left in place as padding */
};

/* Events a CPU's outermost commit can check; more are counted skipped. */
#define RB_VLOG_SIZE		32

struct rbn_cpu_buffer {
	struct rbn_buffer *buffer;
	int cpu;

	/* Writer state: touched only on this CPU. */
	unsigned int current_context;
	unsigned int nest;
	struct rbn_nested nested[RB_MAX_NEST];
	local_t committing;
	local_t commits;
	struct rbn_bpage *tail_page;
	struct rbn_bpage *commit_page;
	local64_t before_stamp;
	local64_t write_stamp;
	local64_t last_ts;		/* latest time taken (rb_clock_read()) */

	/* Counters: written by the writer, read by anybody. */
	local_t entries;		/* events committed */
	local_t entries_bytes;
	local_t overrun;
	local_t commit_overrun;
	local_t dropped;
	local_t discarded;
	local_t pages_touched;
	local_t ts_slow;
	local_t ts_abs;
	local_t ts_zero;
	local_t ts_extend;
	local_t ts_clock_back;
	local_t recursion;
	unsigned long max_depth;

	/* The validator: notes of this CPU's writers, and its counts. */
	local_t vcount;			/* notes taken, may exceed RB_VLOG_SIZE */
	struct rb_vnote vlog[RB_VLOG_SIZE];
	local_t validate_checked;
	local_t validate_fail;
	local_t validate_skipped;

	/* Reader state: under reader_lock. */
	rbn_reader_lock_t reader_lock;
	struct rbn_bpage *head_page;	/* hint: the head flag is authoritative */
	struct rbn_bpage *reader_page;
	struct rbn_bpage *pages;	/* any page of the ring */
	unsigned long nr_pages;
	/* Also read without the lock: rbn_cpu_percent_full(). */
	unsigned long read;
	unsigned long read_bytes;
	unsigned long last_overrun;
	unsigned long lost_events;
	u64 read_stamp;
	/* rbn_reset_cpu() calls; read without the lock: rbn_cpu_resets(). */
	unsigned long resets;
};

struct rbn_buffer {
	unsigned int order;
	unsigned int subbuf_size;	/* bytes of data[] in a sub-buffer */
	unsigned int max_data_size;
	bool overwrite;
	bool abs_ts;		/* absolute time-stamp mode */
	u64 (*clock)(void);
	int nr_cpus;
	unsigned long nr_pages;
	atomic_t record_disabled;
	bool validate;		/* rbn_set_validate() */
	atomic_t validate_dumped; /* a sub-buffer was dumped already */
	struct rbn_cpu_buffer **cpu_buffers;
};

/* Bookkeeping of one reservation while it goes through the write path. */
struct rb_event_info {
	u64 ts;
	u64 clock;			/* the clock read behind ts */
	u64 delta;
	u64 before;
	u64 after;
	unsigned long length;
	unsigned long start;		/* write index the reserve got */
	struct rbn_bpage *tail_page;
	int add_timestamp;
	unsigned int flags;
};

/* ------------------------------------------------------------------ */
/* Events                                                             */
/* ------------------------------------------------------------------ */

static inline u64 rb_event_time_stamp(struct rbn_event *event)
{
	return ((u64)event->array[0] << RBN_TS_SHIFT) | event->time_delta;
}

/*
 * Bytes of an event, header included. Inside the commit of a sub-buffer
 * every padding has its length word: the bare 4-byte end marker of
 * rb_reset_tail() is only ever written past the commit.
 */
static unsigned int rb_event_length(struct rbn_event *event)
{
	switch (event->type_len) {
	case RBN_TYPE_PADDING:
		return event->array[0] + RBN_EVENT_HDR_SIZE;
	case RBN_TYPE_TIME_EXTEND:
		return RBN_LEN_TIME_EXTEND;
	case RBN_TYPE_TIME_STAMP:
		return RBN_LEN_TIME_STAMP;
	case 0:
		return event->array[0] + RBN_EVENT_HDR_SIZE;
	default:
		return event->type_len * RBN_ALIGNMENT + RBN_EVENT_HDR_SIZE;
	}
}

/* Length of an event with the time extend or stamp in front of it. */
static unsigned int rb_event_ts_length(struct rbn_event *event)
{
	unsigned int len = 0;

	if (event->type_len == RBN_TYPE_TIME_EXTEND ||
	    event->type_len == RBN_TYPE_TIME_STAMP) {
		len = RBN_LEN_TIME_EXTEND;
		event = (struct rbn_event *)((char *)event + len);
	}
	return len + rb_event_length(event);
}

/**
 * rbn_event_length - bytes an event takes in its sub-buffer, header included
 * @event: a data event
 *
 * Return: the length in bytes.
 */
unsigned int rbn_event_length(struct rbn_event *event)
{
	return rb_event_length(event);
}

/**
 * rbn_event_data_length - payload bytes of a data event (a multiple of 4)
 * @event: a data event
 *
 * Return: the length of the payload area in bytes.
 */
unsigned int rbn_event_data_length(struct rbn_event *event)
{
	if (event->type_len)
		return event->type_len * RBN_ALIGNMENT;
	return event->array[0] - sizeof(event->array[0]);
}

/**
 * rbn_event_data - the payload of a data event
 * @event: a data event
 *
 * Return: a pointer to the payload.
 */
void *rbn_event_data(struct rbn_event *event)
{
	if (event->type_len)
		return &event->array[0];
	return &event->array[1];
}

/**
 * rbn_event_time_delta - the delta or stamp an entry carries
 * @event: any entry of a sub-buffer
 *
 * Return: the 59-bit value of a time extend or absolute stamp, the 27-bit
 * delta of any other entry.
 */
u64 rbn_event_time_delta(struct rbn_event *event)
{
	if (event->type_len == RBN_TYPE_TIME_EXTEND ||
	    event->type_len == RBN_TYPE_TIME_STAMP)
		return rb_event_time_stamp(event);
	return event->time_delta;
}

/**
 * rbn_fix_abs_ts - restore the upper bits of an absolute time stamp
 * @abs:	the 59 bits stored in the event
 * @prev:	the full time stamp before it (page stamp or previous event)
 *
 * An absolute stamp stores 59 bits; clocks with larger values keep their
 * upper five bits from the previous full time. A stamp far below @prev
 * (more than 2^58) can only have carried out of the 59 bits: it gets the
 * carry, also when @prev is below 2^59 and the stamp is the first one above
 * it, which a check on @prev's upper bits alone would miss. A stamp a
 * little below @prev is a time before it, not 2^59 ahead; and one far above
 * @prev, when @prev has upper bits, is a little below @prev across a
 * multiple of 2^59. The write path never stores a stamp below the time
 * before it (rb_clock_read()); this reads the others as their writer meant.
 *
 * Return: the full 64-bit time stamp.
 */
u64 rbn_fix_abs_ts(u64 abs, u64 prev)
{
	abs |= prev & RBN_TS_MSB;
	if (abs < prev && prev - abs > (1ULL << 58))
		abs += 1ULL << 59;
	else if (abs > prev && abs - prev > (1ULL << 58) &&
		 (prev & RBN_TS_MSB))
		abs -= 1ULL << 59;
	return abs;
}

/* ------------------------------------------------------------------ */
/* The page list and its flags                                        */
/* ------------------------------------------------------------------ */

static inline struct rbn_bpage *rb_page_ptr(unsigned long val)
{
	return (struct rbn_bpage *)(val & ~RB_FLAG_MASK);
}

static inline struct rbn_bpage *rb_next_page(struct rbn_bpage *bpage)
{
	return rb_page_ptr(READ_ONCE(bpage->next));
}

static inline unsigned long rb_page_write(struct rbn_bpage *bpage)
{
	return local_read(&bpage->write) & RB_WRITE_MASK;
}

static inline unsigned long rb_page_entries(struct rbn_bpage *bpage)
{
	return local_read(&bpage->entries) & RB_WRITE_MASK;
}

static inline unsigned long rb_page_commit(struct rbn_bpage *bpage)
{
	return local_read(&bpage->page->commit);
}

/*
 * The flag state of the pointer from @prev to @page: RB_PAGE_NORMAL,
 * RB_PAGE_HEAD or RB_PAGE_UPDATE, or RB_PAGE_MOVED when @prev no longer
 * points to @page (a reader swapped it out).
 */
static unsigned long rb_is_head_page(struct rbn_bpage *page,
				     struct rbn_bpage *prev)
{
	unsigned long val = READ_ONCE(prev->next);

	if (rb_page_ptr(val) != page)
		return RB_PAGE_MOVED;
	return val & RB_FLAG_MASK;
}

/*
 * Whether @page is out of the ring, as the reader page is: the page in
 * front of it does not point to it. The writer must not compare with
 * cpu_buffer->reader_page, which a reader on another CPU updates only
 * after its cmpxchg has already put the old reader page into the ring.
 */
static bool rb_is_reader_page(struct rbn_bpage *page)
{
	struct rbn_bpage *prev = READ_ONCE(page->prev);

	return !prev || rb_page_ptr(READ_ONCE(prev->next)) != page;
}

/* cmpxchg the flags of prev->next from @old to @new; returns the old flag. */
static unsigned long rb_head_page_set(struct rbn_bpage *head,
				      struct rbn_bpage *prev,
				      unsigned long old_flag,
				      unsigned long new_flag)
{
	unsigned long val = (unsigned long)head;
	unsigned long ret;

	ret = cmpxchg(&prev->next, val | old_flag, val | new_flag);
	if ((ret & ~RB_FLAG_MASK) != val)
		return RB_PAGE_MOVED;
	return ret & RB_FLAG_MASK;
}

/* Find the head page: the one whose incoming pointer is flagged. */
static struct rbn_bpage *rb_set_head_page(struct rbn_cpu_buffer *cpu_buffer)
{
	struct rbn_bpage *head, *page;
	int i;

	page = cpu_buffer->head_page;
	head = page;
	/*
	 * A writer may push the head past where we started while we walk;
	 * a second round finds it. A third is for good measure.
	 */
	for (i = 0; i < 3; i++) {
		do {
			if (rb_is_head_page(page, page->prev) &
			    (RB_PAGE_HEAD | RB_PAGE_UPDATE)) {
				cpu_buffer->head_page = page;
				return page;
			}
			page = rb_next_page(page);
		} while (page != head);
	}
	RBN_WARN_ON(1);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Clock and recursion                                                */
/* ------------------------------------------------------------------ */

static __always_inline u64 rb_time_stamp(struct rbn_buffer *buffer)
{
	return buffer->clock();
}

/*
 * A writer that re-enters from the context it interrupted (a probe on a
 * function the write path calls, say) would corrupt the buffer. Each
 * context has a bit; interrupts are taken in stack order, so the newest
 * bit is always the lowest set one. When preempt_count() has not caught
 * up with a context switch yet, one extra level is allowed through the
 * transition bit.
 */
static __always_inline bool trace_recursive_lock(struct rbn_cpu_buffer *cpu_buffer)
{
	unsigned int val = cpu_buffer->current_context;
	int bit = RB_CTX_NORMAL - rbn_port_context_level();

	/*
	 * A writer that interrupts us here sets its own bit and clears it
	 * again before we go on: val is still the word as it is.
	 */
	RBN_HOOK(cpu_buffer->buffer, cpu_buffer->cpu, RBN_LABEL_CONTEXT);
	if (unlikely(val & (1U << bit))) {
		bit = RB_CTX_TRANSITION;
		if (val & (1U << bit)) {
			local_inc(&cpu_buffer->recursion);
			return true;
		}
	}
	cpu_buffer->current_context = val | (1U << bit);
	return false;
}

static __always_inline void trace_recursive_unlock(struct rbn_cpu_buffer *cpu_buffer)
{
	cpu_buffer->current_context &= cpu_buffer->current_context - 1;
}

/* ------------------------------------------------------------------ */
/* Labels                                                             */
/* ------------------------------------------------------------------ */

static const char * const rbn_label_names[RBN_NR_LABELS] = {
	[RBN_LABEL_CONTEXT] = "context",
	[RBN_LABEL_LOCKED] = "locked",
	[RBN_LABEL_NEST] = "nest",
	[RBN_LABEL_START] = "start",
	[RBN_LABEL_STARTED] = "started",
	[RBN_LABEL_A_PAGE] = "a_page",
	[RBN_LABEL_A_TAIL] = "a_tail",
	[RBN_LABEL_A_BEFORE] = "a_before",
	[RBN_LABEL_A_AFTER] = "a_after",
	[RBN_LABEL_A_CLOCK] = "a_clock",
	[RBN_LABEL_A] = "a",
	[RBN_LABEL_B] = "b",
	[RBN_LABEL_C] = "c",
	[RBN_LABEL_D] = "d",
	[RBN_LABEL_SLOW_BEFORE] = "slow_before",
	[RBN_LABEL_SLOW_CLOCK] = "slow_clock",
	[RBN_LABEL_SLOW_TS] = "slow_ts",
	[RBN_LABEL_SLOW_SET] = "slow_set",
	[RBN_LABEL_E] = "e",
	[RBN_LABEL_F_WRITE] = "f_write",
	[RBN_LABEL_F] = "f",
	[RBN_LABEL_EVENT] = "event",
	[RBN_LABEL_EVENT_ENTRIES] = "event_entries",
	[RBN_LABEL_EVENT_STAMP] = "event_stamp",
	[RBN_LABEL_RESERVED] = "reserved",
	[RBN_LABEL_PAGE_MOVE] = "page_move",
	[RBN_LABEL_PAGE_FREE] = "page_free",
	[RBN_LABEL_PAGE_DROP] = "page_drop",
	[RBN_LABEL_PAGE_FULL] = "page_full",
	[RBN_LABEL_HEAD_ENTRIES] = "head_entries",
	[RBN_LABEL_HEAD_FLAGGED] = "head_flagged",
	[RBN_LABEL_HEAD_OVERRUN] = "head_overrun",
	[RBN_LABEL_PAGE_HEAD] = "page_head",
	[RBN_LABEL_PAGE_NEW_HEAD] = "page_new_head",
	[RBN_LABEL_HEAD_TAIL] = "head_tail",
	[RBN_LABEL_HEAD_FIXED] = "head_fixed",
	[RBN_LABEL_HEAD_DONE] = "head_done",
	[RBN_LABEL_PAGE_CLAIM] = "page_claim",
	[RBN_LABEL_PAGE_TAIL] = "page_tail",
	[RBN_LABEL_PAGE_OURS] = "page_ours",
	[RBN_LABEL_PAGE_RESET_WRITE] = "page_reset_write",
	[RBN_LABEL_PAGE_RESET] = "page_reset",
	[RBN_LABEL_PAGE_ZERO] = "page_zero",
	[RBN_LABEL_PAGE_END] = "page_end",
	[RBN_LABEL_PAD_END] = "pad_end",
	[RBN_LABEL_PAD] = "pad",
	[RBN_LABEL_PAD_DONE] = "pad_done",
	[RBN_LABEL_PAGE_NEXT] = "page_next",
	[RBN_LABEL_ENTRIES] = "entries",
	[RBN_LABEL_COMMIT_READ] = "commit_read",
	[RBN_LABEL_COMMIT] = "commit",
	[RBN_LABEL_COMMIT_PAGE] = "commit_page",
	[RBN_LABEL_COMMIT_NEXT] = "commit_next",
	[RBN_LABEL_COMMIT_WRITE] = "commit_write",
	[RBN_LABEL_COMMIT_CHECK] = "commit_check",
	[RBN_LABEL_COMMIT_SET] = "commit_set",
	[RBN_LABEL_COMMIT_END] = "commit_end",
	[RBN_LABEL_COMMIT_RECHECK] = "commit_recheck",
	[RBN_LABEL_COMMIT_AGAIN] = "commit_again",
	[RBN_LABEL_COMMIT_DONE] = "commit_done",
	[RBN_LABEL_UNNEST] = "unnest",
	[RBN_LABEL_DISCARD] = "discard",
	[RBN_LABEL_DISCARD_ENTRIES] = "discard_entries",
	[RBN_LABEL_DISCARD_TAIL] = "discard_tail",
	[RBN_LABEL_DISCARD_STAMP] = "discard_stamp",
	[RBN_LABEL_DISCARD_DONE] = "discard_done",
	[RBN_LABEL_VALIDATE_NOTE] = "validate_note",
	[RBN_LABEL_VALIDATE] = "validate",
	[RBN_LABEL_SWAP] = "swap",
	[RBN_LABEL_SWAP_DONE] = "swap_done",
};

/**
 * rbn_label_name - the name of a label of the write path
 * @label:	an enum rbn_label
 *
 * The names are those of the module's inject file and of LABELS.md: the
 * enum's name in lower case, without RBN_LABEL_.
 *
 * Return: the name, or NULL for a value that is not a label.
 */
const char *rbn_label_name(int label)
{
	if (label < 0 || label >= RBN_NR_LABELS)
		return NULL;
	return rbn_label_names[label];
}

static const char * const rbn_reader_label_names[RBN_NR_READER_LABELS] = {
	[RBN_RLABEL_COMMIT_PAGE] = "r_commit_page",
	[RBN_RLABEL_USED] = "r_used",
	[RBN_RLABEL_SPIN] = "r_spin",
	[RBN_RLABEL_HEAD] = "r_head",
	[RBN_RLABEL_NEXT] = "r_next",
	[RBN_RLABEL_OVERRUN] = "r_overrun",
	[RBN_RLABEL_SWAPPED] = "r_swapped",
};

/**
 * rbn_reader_label_name - the name of a label of the reader's page swap
 * @label: an enum rbn_reader_label
 *
 * Return: the name, or NULL for a value that is not a reader label.
 */
const char *rbn_reader_label_name(int label)
{
	if (label < 0 || label >= RBN_NR_READER_LABELS)
		return NULL;
	return rbn_reader_label_names[label];
}

/* ------------------------------------------------------------------ */
/* Commit                                                             */
/* ------------------------------------------------------------------ */

/*
 * Memory ordering between a CPU's writers and readers on other CPUs.
 * Writers on one CPU are ordered among themselves by program order and
 * barrier(); what crosses CPUs is listed here, writer side first.
 *
 *  W1  rb_set_commit_to_write(), first loop: smp_wmb() before a page's
 *      commit is set as the commit leaves it. Orders the page's events
 *      (written before the tail moved on) before that commit. Pairs with
 *      R2 and R3.
 *  W2  rb_set_commit_to_write(), first loop: smp_wmb() after that commit,
 *      before commit_page moves on. Orders the final commit of a page
 *      before the commit page leaving it. Pairs with R1.
 *  W3  rb_set_commit_to_write(), second loop: smp_wmb() before the commit
 *      of the page the writer is on. Orders its events before the commit
 *      that covers them. Pairs with R2 and R3.
 *  W4  rb_reset_tail(): smp_wmb() after the padding or discarded event,
 *      before the write index moves. A nested writer on this CPU reads the
 *      index; readers on other CPUs see the padding through the commit
 *      that later covers it (W1).
 *  W5  rb_handle_head_page(), rb_tail_page_update(), a reader's swap:
 *      cmpxchg() on the flagged page pointers, full barriers. The
 *      overrun a writer adds after HEAD -> UPDATE is ordered by its
 *      cmpxchg. Pairs with R4.
 *
 *  R1  rb_get_reader_page(), rb_first_unread() callers, rb_iter_snapshot(),
 *      rbn_read_page(): READ_ONCE(commit_page), smp_rmb(), then a page's
 *      commit. A page the commit has left has its final commit (W2).
 *  R2  rb_buffer_peek(): smp_rmb() after rb_get_reader_page() read the
 *      reader page's commit, before the events under it (W1, W3).
 *  R3  rbn_read_page(): smp_rmb() after the reader page's commit, before
 *      its events are copied or the page handed out (W1, W3).
 *  R4  rb_get_reader_page(): smp_mb() between setting up the reader page's
 *      pointers and reading the overrun that goes with the swap; the
 *      swap's cmpxchg fails if a writer pushed the head meanwhile (W5).
 *  R5  rbn_cpu_percent_full(): counters read without order or lock; a
 *      stale value only moves a wake-up to the next commit. The wake-up
 *      protocol itself (a reader's wake bit against the writer's commit)
 *      is the module's: two smp_mb(), see rb_pipe.c.
 *  R6  rb_get_reader_page(), at its end: smp_rmb() between the reader
 *      page's commit and its time_stamp, which the writer stored before
 *      the first event it committed (W3, or W1 once the tail moved on).
 *
 * Iterators (rbn_iter_*) read with recording off and the writers past a
 * grace period, which orders everything they read.
 */

/* ------------------------------------------------------------------ */
/* The run-time validator                                             */
/* ------------------------------------------------------------------ */

/* Off unless a buffer validates: then a note and a check per event. */
RBN_PORT_DEFINE_VALIDATE_KEY;

/*
 * Bumped when a buffer starts validating and when a resize may free
 * sub-buffers: a note that carries another number is not read (its
 * sub-buffer may be gone, or its event published unchecked meanwhile).
 */
static atomic_t rb_validate_gen;

/*
 * Note the event of @n (left in place as padding when @discarded) for
 * the outermost commit on this CPU, which checks it before it publishes
 * it. Runs in the writer's context, with the writer's commit held.
 */
static void rb_validate_note(struct rbn_cpu_buffer *cpu_buffer,
			     struct rbn_nested *n, bool discarded)
{
	struct rb_vnote *note;
	long i;

	if (!READ_ONCE(cpu_buffer->buffer->validate))
		return;
	/*
	 * The slot first. Nobody reads it before we are done: the notes
	 * are read by the outermost commit on this CPU, which is ours or
	 * that of a writer we interrupted, and runs after our commit.
	 */
	i = local_add_return(1, &cpu_buffer->vcount) - 1;
	/* A writer nested here takes the next slot and fills it. */
	RBN_HOOK(cpu_buffer->buffer, cpu_buffer->cpu, RBN_LABEL_VALIDATE_NOTE);
	if (i >= RB_VLOG_SIZE) {
		local_inc(&cpu_buffer->validate_skipped);
		return;
	}
	note = &cpu_buffer->vlog[i];
	note->bpage = n->bpage;
	note->start = n->start;
	note->ts = n->stamp;
	note->flags = n->flags;
	note->gen = atomic_read(&rb_validate_gen);
	note->discarded = discarded;
}

/*
 * Whether the event of @note is still unpublished, so that its sub-buffer
 * is the ring's: on the commit page at or past the commit, or on a page
 * between the commit page and the tail page. Only the outermost commit,
 * which we are, publishes; a reader on another CPU takes pages up to the
 * commit page (and copies from that one: rbn_read_page()), and a writer
 * nested in us cannot move the tail past the commit page.
 */
static bool rb_validate_unpublished(struct rbn_cpu_buffer *cpu_buffer,
				    struct rb_vnote *note)
{
	struct rbn_bpage *page = cpu_buffer->commit_page;
	struct rbn_bpage *tail = READ_ONCE(cpu_buffer->tail_page);
	unsigned long max = cpu_buffer->nr_pages + 1;

	if (note->gen != (unsigned int)atomic_read(&rb_validate_gen))
		return false;
	if (page == note->bpage)
		return note->start >= rb_page_commit(page);
	while (page != tail && max--) {	/* rbn-cov-ignore: max: a broken ring */
		page = rb_next_page(page);
		if (page == note->bpage)
			return true;
	}
	return false;
}

/* The entries of a note's sub-buffer, for the kernel log, once. */
/*
 * The dump shows the entries from RB_VDUMP_AROUND bytes before the event
 * on, RB_VDUMP_MAX of them at most: it runs in the writer's context, up to
 * NMI, and a sub-buffer of order 4 holds thousands of entries.
 */
#define RB_VDUMP_AROUND		512
#define RB_VDUMP_MAX		64

static void rb_validate_dump(struct rbn_cpu_buffer *cpu_buffer,
			     struct rb_vnote *note)
{
	struct rbn_page *page = note->bpage->page;
	unsigned long write = min_t(unsigned long, rb_page_write(note->bpage),
				    cpu_buffer->buffer->subbuf_size);
	unsigned long off = 0, len, shown = 0;
	struct rbn_event *event;
	u64 ts = page->time_stamp;
	bool broken;
	long i, n;

	rbn_port_report("validate: cpu%d sub-buffer time_stamp %llu commit %lu write %lu\n",
			cpu_buffer->cpu, (unsigned long long)ts,
			rb_page_commit(note->bpage), write);
	rbn_port_report("validate:   offset type delta array[0] time (want, flags)\n");
	n = local_read(&cpu_buffer->vcount);
	if (n > RB_VLOG_SIZE)
		n = RB_VLOG_SIZE;
	while (off + RBN_EVENT_HDR_SIZE <= write && shown < RB_VDUMP_MAX) {
		event = (struct rbn_event *)&page->data[off];
		len = rb_event_length(event);
		/* A length word that wrapped gives 0: the dump ends there. */
		broken = len < RBN_EVENT_HDR_SIZE || off + len > write;
		if (!broken && event->type_len == RBN_TYPE_TIME_EXTEND)
			ts += rb_event_time_stamp(event);
		else if (!broken && event->type_len == RBN_TYPE_TIME_STAMP)
			ts = rbn_fix_abs_ts(rb_event_time_stamp(event), ts);
		else if (!broken)
			ts += event->time_delta;
		if (off + RB_VDUMP_AROUND < note->start && !broken) {
			off += len;
			continue;
		}
		shown++;
		rbn_port_report("validate:   %5lu %2u %9u %10u %llu%s\n", off,
				event->type_len, event->time_delta,
				off + 8 <= write ? event->array[0] : 0,
				(unsigned long long)ts,
				broken ? " (length past the index)" : "");
		for (i = 0; i < n; i++) {
			struct rb_vnote *v = &cpu_buffer->vlog[i];

			if (v->bpage == note->bpage && v->start == off)
				rbn_port_report("validate:         (%llu, %#x%s)\n",
						(unsigned long long)v->ts,
						v->flags,
						v->discarded ? ", discarded" : "");
		}
		if (broken)
			break;
		off += len;
	}
}

/*
 * Check the event of @note: decode its sub-buffer from the start, as a
 * reader will, up to the event; its time must be the one the write path
 * gave it (no later than it for a zero delta, which shows the previous
 * event's time), and no entry on the way may go back in time.
 */
static void rb_validate_one(struct rbn_cpu_buffer *cpu_buffer,
			    struct rb_vnote *note)
{
	unsigned long write, off = 0, len;
	struct rbn_event *event = NULL;
	const char *why = NULL;
	struct rbn_page *page;
	u64 ts, last;

	if (!rb_validate_unpublished(cpu_buffer, note)) {
		local_inc(&cpu_buffer->validate_skipped);
		return;
	}
	/* Unpublished: the sub-buffer is still the one it was reserved in. */
	page = note->bpage->page;
	write = min_t(unsigned long, rb_page_write(note->bpage),
		      cpu_buffer->buffer->subbuf_size);
	ts = page->time_stamp;
	last = ts;
	for (;;) {
		if (off + RBN_EVENT_HDR_SIZE > write) {
			why = "not found below the write index";
			break;
		}
		event = (struct rbn_event *)&page->data[off];
		len = rb_event_length(event);
		/* A length word that wrapped gives 0: past the index too. */
		if (len < RBN_EVENT_HDR_SIZE || off + len > write) {
			why = "an entry runs past the write index";
			break;
		}
		if (event->type_len == RBN_TYPE_TIME_EXTEND) {
			ts += rb_event_time_stamp(event);
		} else if (event->type_len == RBN_TYPE_TIME_STAMP) {
			ts = rbn_fix_abs_ts(rb_event_time_stamp(event), ts);
		} else {
			ts += event->time_delta;
			if (ts < last) {
				why = "time went backwards";
				break;
			}
			last = ts;
			if (off >= note->start)
				break;
		}
		off += len;
	}
	if (!why && off != note->start &&
	    off != note->start + RBN_LEN_TIME_EXTEND)
		why = "not where it was reserved";
	else if (!why && note->discarded != (event->type_len == RBN_TYPE_PADDING))
		why = note->discarded ? "discarded but not padding" :
			"not a data event";
	else if (!why && (note->flags & RBN_EV_ZERO_DELTA) && ts > note->ts)
		why = "zero delta later than its writer's time";
	else if (!why && !(note->flags & RBN_EV_ZERO_DELTA) && ts != note->ts)
		why = "time differs from its writer's";
	if (!why) {
		local_inc(&cpu_buffer->validate_checked);
		return;
	}
	local_inc(&cpu_buffer->validate_fail);
	rbn_port_report_ratelimited("validate: cpu%d %s: at %lu (%lu): %llu want %llu, %#x\n",
				    cpu_buffer->cpu, why, note->start, off,
				    (unsigned long long)ts,
				    (unsigned long long)note->ts, note->flags);
	if (!atomic_cmpxchg(&cpu_buffer->buffer->validate_dumped, 0, 1))
		rb_validate_dump(cpu_buffer, note);
}

/*
 * At the outermost commit on this CPU, before it publishes: check every
 * noted event (ours and those of the writers that interrupted us), then
 * drop the notes. Recording goes on whatever the checks find.
 */
static void rb_validate(struct rbn_cpu_buffer *cpu_buffer)
{
	struct rbn_buffer *buffer = cpu_buffer->buffer;
	long i = 0, n;

	for (;;) {
		n = local_read(&cpu_buffer->vcount);
		/*
		 * A writer nested here notes its event behind the n we
		 * read: the cmpxchg below fails and we check it too. One
		 * nested after the cmpxchg notes it in slot 0, and its
		 * event is published by the commit we are in, unchecked:
		 * it is counted skipped where the note is read.
		 */
		RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_VALIDATE);
		for (; i < n && i < RB_VLOG_SIZE; i++)
			if (READ_ONCE(buffer->validate))
				rb_validate_one(cpu_buffer, &cpu_buffer->vlog[i]);
		if (local_cmpxchg(&cpu_buffer->vcount, n, 0) == n)
			return;
	}
}

/**
 * rbn_set_validate - switch the run-time validator of a buffer
 * @buffer:	the buffer
 * @on:		check every event at the outermost commit on its CPU
 *
 * With the validator on, every event committed (or discarded in place) is
 * noted, and the outermost commit on the CPU, before it publishes them,
 * decodes each from its sub-buffer as a reader will and compares the time
 * with the one its writer was given (rbn_event_ts(); a zero delta must not
 * be later), and with the entries before it. A mismatch counts in
 * validate_fail (rbn_cpu_stats()), gets a rate-limited line in the kernel
 * log, and the first one of the buffer since it was switched on dumps
 * its sub-buffer there with offsets, headers and the times expected.
 * Events that cannot be checked are counted in validate_skipped: more
 * than %RB_VLOG_SIZE in one outermost commit, or published before the
 * check (written by a writer that interrupted the publishing itself, or
 * across a switch). Off, it costs the write path a patched-out jump at
 * the commit (a static key that any validating buffer turns on).
 *
 * Context: task (the static key); the caller serializes switches of a
 * buffer with each other and with rbn_free().
 * Return: 0, or -EINVAL for a %NULL buffer.
 */
int rbn_set_validate(struct rbn_buffer *buffer, bool on)
{
	if (!buffer)
		return -EINVAL;
	if (on == buffer->validate)
		return 0;
	if (on) {
		/* Notes of an earlier round may be published by now. */
		atomic_inc(&rb_validate_gen);
		atomic_set(&buffer->validate_dumped, 0);
		rbn_port_validate_get();
		WRITE_ONCE(buffer->validate, true);
	} else {
		WRITE_ONCE(buffer->validate, false);
		rbn_port_validate_put();
	}
	return 0;
}

/**
 * rbn_validating - whether the run-time validator of a buffer is on
 * @buffer:	the buffer
 *
 * Return: true when it is on.
 */
bool rbn_validating(struct rbn_buffer *buffer)
{
	return READ_ONCE(buffer->validate);
}

static __always_inline void rb_start_commit(struct rbn_cpu_buffer *cpu_buffer)
{
	local_inc(&cpu_buffer->committing);
	/*
	 * A writer that comes in now sees committing > 1: it is not the
	 * outermost and leaves its event for us to publish.
	 */
	RBN_HOOK(cpu_buffer->buffer, cpu_buffer->cpu, RBN_LABEL_START);
	local_inc(&cpu_buffer->commits);
	RBN_HOOK(cpu_buffer->buffer, cpu_buffer->cpu, RBN_LABEL_STARTED);
}

/*
 * Only the outermost writer moves the commit. Writers that interrupted it
 * finished before it resumed, so everything up to the tail is written and
 * can be published in one go.
 */
static __always_inline void rb_set_commit_to_write(struct rbn_cpu_buffer *cpu_buffer)
{
	struct rbn_buffer *buffer = cpu_buffer->buffer;
	unsigned long max_count;

again:
	max_count = cpu_buffer->nr_pages * 100;

	while (cpu_buffer->commit_page != READ_ONCE(cpu_buffer->tail_page)) {
		if (RBN_WARN_ON(!(--max_count)))
			return;
		if (RBN_WARN_ON(rb_is_reader_page(READ_ONCE(cpu_buffer->tail_page))))
			return;
		/*
		 * W1: the events on this page, written before the tail moved
		 * on, before the commit that covers them.
		 */
		smp_wmb();
		local_set(&cpu_buffer->commit_page->page->commit,
			  rb_page_write(cpu_buffer->commit_page));
		/*
		 * A writer nested here cannot write on this page any more
		 * (the tail left it): the commit we set is final. It sees
		 * committing > 1 and does not publish.
		 */
		RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_COMMIT_PAGE);
		/*
		 * W2: a reader that sees the commit leave a page relies on
		 * the page's commit being final: rb_get_reader_page().
		 */
		smp_wmb();
		WRITE_ONCE(cpu_buffer->commit_page,
			   rb_next_page(cpu_buffer->commit_page));
		barrier();
		/* The tail is read again below: a writer here is seen. */
		RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_COMMIT_NEXT);
	}
	while (rb_page_commit(cpu_buffer->commit_page) !=
	       rb_page_write(cpu_buffer->commit_page)) {
		/* W3: the events before the commit that covers them. */
		smp_wmb();
		local_set(&cpu_buffer->commit_page->page->commit,
			  rb_page_write(cpu_buffer->commit_page));
		barrier();
		/*
		 * A writer here adds to write on this page (the loop reads
		 * it again) or moves the tail on (the check below).
		 */
		RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_COMMIT_WRITE);
	}
	/*
	 * A writer nested here and one nested at RBN_LABEL_COMMIT_SET below
	 * differ: this one is caught by the tail check (when it moved the
	 * tail), that one only by rb_end_commit()'s re-check of commits.
	 */
	RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_COMMIT_CHECK);

	/* An interrupt may have moved the tail again meanwhile. */
	if (unlikely(cpu_buffer->commit_page != READ_ONCE(cpu_buffer->tail_page)))
		goto again;
	/*
	 * A writer nested here after the last check wrote behind the
	 * commit; committing is still ours, so it did not publish.
	 */
	RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_COMMIT_SET);
}

static __always_inline void rb_end_commit(struct rbn_cpu_buffer *cpu_buffer)
{
	struct rbn_buffer *buffer = cpu_buffer->buffer;
	long commits;

	if (RBN_WARN_ON(!local_read(&cpu_buffer->committing)))
		return;

again:
	commits = local_read(&cpu_buffer->commits);
	barrier();
	/*
	 * A writer nested here raises commits past our snapshot; if we are
	 * the outermost we publish its event below anyway, and the re-check
	 * at the end sends us round once more for nothing.
	 */
	RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_COMMIT_READ);
	if (local_read(&cpu_buffer->committing) == 1) {
		RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_COMMIT);
		if (rbn_port_validating())
			rb_validate(cpu_buffer);
		rb_set_commit_to_write(cpu_buffer);
	}

	local_dec(&cpu_buffer->committing);
	barrier();
	/*
	 * A writer nested here finds committing 0: it is the outermost now
	 * and publishes its event and everything before it itself.
	 */
	RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_COMMIT_END);

	/*
	 * A writer that came in after the commit was moved and before
	 * committing dropped left its event unpublished (it was not the
	 * outermost): publish it now.
	 */
	if (unlikely(local_read(&cpu_buffer->commits) != commits)) {
		/*
		 * Between the two reads: a writer here published its own
		 * event (committing was 0); we look once more, harmlessly.
		 */
		RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_COMMIT_RECHECK);
		if (!local_read(&cpu_buffer->committing)) {
			local_inc(&cpu_buffer->committing);
			/*
			 * Outermost again: a writer here is nested and
			 * leaves its event to the round we go into.
			 */
			RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_COMMIT_AGAIN);
			goto again;
		}
	}
}

/* ------------------------------------------------------------------ */
/* Moving to the next sub-buffer                                      */
/* ------------------------------------------------------------------ */

/*
 * Overwrite mode: the tail caught up with the head. Push the head one page
 * forward, against readers on other CPUs that swap the head page out and
 * against interrupts that run the same code on this CPU.
 *
 * Returns 0 when the head moved and the tail may follow, 1 to retry the
 * page switch (someone else changed the list), -1 on a broken list.
 */
static int rb_handle_head_page(struct rbn_cpu_buffer *cpu_buffer,
			       struct rbn_bpage *tail_page,
			       struct rbn_bpage *next_page)
{
	struct rbn_buffer *buffer = cpu_buffer->buffer;
	struct rbn_bpage *new_head;
	unsigned long entries, bytes;
	unsigned long type;
	unsigned long ret;

	/*
	 * What the push will take off the counters, read before the flag
	 * changes: once a writer nested after our HEAD -> UPDATE has helped
	 * with the push, it resets next_page (rb_tail_page_update()) and
	 * writes there. Until then nothing changes either count: the tail
	 * is behind the page and the commit too (rb_move_tail()).
	 */
	entries = rb_page_entries(next_page);
	bytes = rb_page_commit(next_page);
	/*
	 * A writer nested here pushes the head itself (our cmpxchg then
	 * finds NORMAL) or finds the ring unchanged. A reader swapping the
	 * head page out here makes our cmpxchg find MOVED. Either way the
	 * count read above is not used.
	 */
	RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_HEAD_ENTRIES);

	/*
	 * HEAD -> UPDATE. From here on a reader cannot swap the page, it
	 * fails its cmpxchg until the flag is HEAD again somewhere.
	 */
	type = rb_head_page_set(next_page, tail_page, RB_PAGE_HEAD,
				RB_PAGE_UPDATE);
	/*
	 * A writer nested here finds the UPDATE flag (ours, or the one of
	 * the writer we interrupted) and helps with the push.
	 */
	RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_HEAD_FLAGGED);
	/*
	 * NORMAL: an interrupt already moved the head for us. MOVED: a
	 * reader swapped next_page out. Either way: look again.
	 */
	if (type == RB_PAGE_NORMAL || type == RB_PAGE_MOVED)
		return 1;
	/* HEAD: we flagged it, the events on it are ours to account. */
	if (type == RB_PAGE_HEAD) {
		local_add(entries, &cpu_buffer->overrun);
		RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_HEAD_OVERRUN);
		local_sub(bytes, &cpu_buffer->entries_bytes);
	}
	/* UPDATE: we interrupted a writer in the middle of this push. */
	RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_PAGE_HEAD);

	new_head = rb_next_page(next_page);
	ret = rb_head_page_set(new_head, next_page, RB_PAGE_NORMAL,
			       RB_PAGE_HEAD);
	/*
	 * HEAD: an interrupt set it already. NORMAL: we set it, or
	 * interrupts set it and then moved it further on.
	 */
	if (RBN_WARN_ON(ret != RB_PAGE_HEAD && ret != RB_PAGE_NORMAL))
		return -1;
	RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_PAGE_NEW_HEAD);

	/*
	 * If interrupts moved the head past new_head after we flagged it,
	 * the tail moved too; our HEAD flag on new_head is stale then.
	 */
	if (ret == RB_PAGE_NORMAL) {
		struct rbn_bpage *buffer_tail_page;

		buffer_tail_page = READ_ONCE(cpu_buffer->tail_page);
		/*
		 * A writer nested here may fill next_page, find the HEAD
		 * flag on new_head, push it on and move the tail past it:
		 * it consumed that flag (HEAD -> UPDATE -> NORMAL), so no
		 * stale flag is left for the check below to clear.
		 */
		RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_HEAD_TAIL);
		if (buffer_tail_page != tail_page &&
		    buffer_tail_page != next_page)
			rb_head_page_set(new_head, next_page, RB_PAGE_HEAD,
					 RB_PAGE_NORMAL);
	}
	RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_HEAD_FIXED);

	/* The outermost updater turns UPDATE back into NORMAL. */
	if (type == RB_PAGE_HEAD) {
		ret = rb_head_page_set(next_page, tail_page, RB_PAGE_UPDATE,
				       RB_PAGE_NORMAL);
		if (RBN_WARN_ON(ret != RB_PAGE_UPDATE))
			return -1;
	}
	/* Readers may swap the new head page out from here on. */
	RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_HEAD_DONE);
	return 0;
}

static void rb_tail_page_update(struct rbn_cpu_buffer *cpu_buffer,
				struct rbn_bpage *tail_page,
				struct rbn_bpage *next_page)
{
	unsigned long old_entries;
	unsigned long old_write;

	/*
	 * Claim next_page by bumping its update counter. If an interrupt
	 * moves the tail onto it and writes there before we reset it, the
	 * counter tells us and we leave its events alone.
	 */
	old_write = local_add_return(RB_WRITE_INTCNT, &next_page->write);
	/*
	 * A writer nested here or at RBN_LABEL_PAGE_TAIL does the whole
	 * update itself: it claims next_page again, resets it, moves the
	 * tail and writes there. Our entries count is read after its
	 * claim, so only the tail re-read below protects its events: we
	 * find the tail moved and leave next_page alone. From
	 * RBN_LABEL_PAGE_OURS on, the counters' cmpxchg()s fail instead.
	 */
	RBN_HOOK(cpu_buffer->buffer, cpu_buffer->cpu, RBN_LABEL_PAGE_CLAIM);
	old_entries = local_add_return(RB_WRITE_INTCNT, &next_page->entries);
	barrier();
	RBN_HOOK(cpu_buffer->buffer, cpu_buffer->cpu, RBN_LABEL_PAGE_TAIL);

	if (tail_page == READ_ONCE(cpu_buffer->tail_page)) {
		unsigned long val = old_write & ~RB_WRITE_MASK;
		unsigned long eval = old_entries & ~RB_WRITE_MASK;

		/*
		 * A writer nested after the check moves the tail itself and
		 * writes on next_page: its claim changed the counters, so
		 * our resets below fail and the tail cmpxchg() too.
		 */
		RBN_HOOK(cpu_buffer->buffer, cpu_buffer->cpu,
			 RBN_LABEL_PAGE_OURS);
		(void)local_cmpxchg(&next_page->write, old_write, val);
		RBN_HOOK(cpu_buffer->buffer, cpu_buffer->cpu,
			 RBN_LABEL_PAGE_RESET_WRITE);
		(void)local_cmpxchg(&next_page->entries, old_entries, eval);
		RBN_HOOK(cpu_buffer->buffer, cpu_buffer->cpu,
			 RBN_LABEL_PAGE_RESET);
		/*
		 * Only the outermost commit moves commit, and not before we
		 * return: a nested writer's events on next_page are not
		 * published yet, so zero is still right for them.
		 */
		local_set(&next_page->page->commit, 0);
		RBN_HOOK(cpu_buffer->buffer, cpu_buffer->cpu, RBN_LABEL_PAGE_ZERO);

		if (cmpxchg(&cpu_buffer->tail_page, tail_page, next_page) ==
		    tail_page)
			local_inc(&cpu_buffer->pages_touched);
	}
}

/*
 * The event at @tail did not fit: close the sub-buffer. Only the writer
 * whose event crossed the end pads it; writers that came later found the
 * index already past the end and just give their bytes back.
 */
static void rb_reset_tail(struct rbn_cpu_buffer *cpu_buffer,
			  unsigned long tail, struct rb_event_info *info)
{
	unsigned long bsize = cpu_buffer->buffer->subbuf_size;
	struct rbn_bpage *tail_page = info->tail_page;
	unsigned long length = info->length;
	struct rbn_event *event;

	/*
	 * Where the index goes back below, it may come back to a value a
	 * discarding writer read (rb_try_to_discard()): its event ended
	 * where ours began. The update count above RB_WRITE_MASK is bumped
	 * at the same time, so that its cmpxchg() of the whole word fails
	 * on a sub-buffer the tail has left.
	 */
	if (tail >= bsize) {
		if (tail == bsize)
			tail_page->real_end = 0;
		/* No padding here: the index goes back right away. */
		RBN_HOOK(cpu_buffer->buffer, cpu_buffer->cpu, RBN_LABEL_PAD_END);
		local_add(RB_WRITE_INTCNT - length, &tail_page->write);
		RBN_HOOK(cpu_buffer->buffer, cpu_buffer->cpu, RBN_LABEL_PAD_DONE);
		return;
	}

	event = (struct rbn_event *)(tail_page->page->data + tail);
	tail_page->real_end = tail;
	/*
	 * A writer nested here finds the index past the end (ours is
	 * beyond it): it gives its bytes back and writes nothing here.
	 */
	RBN_HOOK(cpu_buffer->buffer, cpu_buffer->cpu, RBN_LABEL_PAD_END);

	if (tail > bsize - RB_EVNT_MIN_SIZE) {
		/*
		 * No event fits in what is left: mark the end and give the
		 * index back; nobody can use those few bytes.
		 */
		event->type_len = RBN_TYPE_PADDING;
		event->time_delta = 0;
		/* The padding is in place before the index goes back. */
		smp_wmb();
		/*
		 * A writer nested here (or anywhere before the index goes
		 * back) finds the index past the end and gives its own
		 * bytes back: it never writes over the padding.
		 */
		RBN_HOOK(cpu_buffer->buffer, cpu_buffer->cpu, RBN_LABEL_PAD);
		local_add(RB_WRITE_INTCNT - length, &tail_page->write);
		RBN_HOOK(cpu_buffer->buffer, cpu_buffer->cpu, RBN_LABEL_PAD_DONE);
		return;
	}

	/*
	 * Room for a small event is left: a nested writer must not slip
	 * into it after we move on, so fill it with a discarded event up to
	 * the end and leave the index at the end. Its bytes may reach user
	 * space: clear them.
	 */
	memset(&event->array[1], 0, bsize - tail - RB_EVNT_MIN_SIZE);
	event->array[0] = (bsize - tail) - RBN_EVENT_HDR_SIZE;
	event->type_len = RBN_TYPE_PADDING;
	/*
	 * Delta 1, as mainline writes it: its readers take a padding with
	 * delta 0 for the end of the page. rbnest's readers add the 1 ns
	 * like any delta; nothing follows on the page.
	 */
	event->time_delta = 1;
	local_add(bsize - tail, &cpu_buffer->entries_bytes);
	/* The discarded event is in place before the index moves. */
	smp_wmb();
	RBN_HOOK(cpu_buffer->buffer, cpu_buffer->cpu, RBN_LABEL_PAD);
	local_sub((tail + length) - bsize, &tail_page->write);
	RBN_HOOK(cpu_buffer->buffer, cpu_buffer->cpu, RBN_LABEL_PAD_DONE);
}

static struct rbn_event *rb_move_tail(struct rbn_cpu_buffer *cpu_buffer,
				      unsigned long tail,
				      struct rb_event_info *info)
{
	struct rbn_buffer *buffer = cpu_buffer->buffer;
	struct rbn_bpage *tail_page = info->tail_page;
	struct rbn_bpage *commit_page = cpu_buffer->commit_page;
	struct rbn_bpage *next_page = rb_next_page(tail_page);
	unsigned long type;
	int ret;

	/*
	 * Interrupts wrote a whole ring's worth while an outer writer has
	 * not committed yet: the next page is still unpublished. Drop.
	 */
	if (unlikely(next_page == commit_page)) {
		local_inc(&cpu_buffer->commit_overrun);
		goto out_drop;
	}
	/*
	 * A writer nested here meets the same full page and moves the tail
	 * on first; the flag we read next is then the one of a page that
	 * is not our next any more, and rb_tail_page_update() sees the
	 * tail moved.
	 */
	RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_PAGE_MOVE);

	type = rb_is_head_page(next_page, tail_page);
	/*
	 * Our page no longer points to next_page: a reader swapped it out
	 * (it was the head), or a writer nested at RBN_LABEL_PAGE_MOVE
	 * crossed first and a reader then swapped pages under it. Neither
	 * is a full buffer: look again from the tail as it is now.
	 */
	if (unlikely(type == RB_PAGE_MOVED))
		goto out_again;
	if (type != RB_PAGE_NORMAL) {
		if (!rb_is_reader_page(commit_page)) {
			if (!buffer->overwrite) {
				/* Producer/consumer: the buffer is full. */
				local_inc(&cpu_buffer->dropped);
				goto out_drop;
			}
			RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_PAGE_FULL);
			ret = rb_handle_head_page(cpu_buffer, tail_page,
						  next_page);
			if (ret < 0)	/* rbn-cov-ignore: after a warning */
				goto out_reset;
			if (ret)
				goto out_again;
		} else if (unlikely(commit_page != /* rbn-cov-ignore: see below */
				    READ_ONCE(cpu_buffer->tail_page))) {
			/*
			 * The commit is still on the reader page and the
			 * tail went all the way round the ring: nested
			 * writers filled the buffer. The tail may not lap
			 * the commit.
			 *
			 * Only nested writers that fill the whole ring get
			 * here, which the signal stress does now and then;
			 * the deterministic tests cannot.
			 *
			 * Otherwise the commit and the tail are both on the
			 * reader page with the HEAD flag on its next pointer,
			 * and the tail may leave it, as mainline lets it. We
			 * know of no interleaving that gets there: a page the
			 * reader takes with the writers on it keeps its next
			 * pointer unflagged (the flag goes to the old reader
			 * page's), and a changed pointer is MOVED above.
			 */
			local_inc(&cpu_buffer->commit_overrun);
			goto out_drop;
		}
	} else {
		/*
		 * A writer nested here moves the tail on first (it finds
		 * the same full page): rb_tail_page_update() sees it.
		 */
		RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_PAGE_FREE);
	}

	rb_tail_page_update(cpu_buffer, tail_page, next_page);
	RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_PAGE_END);

out_again:
	rb_reset_tail(cpu_buffer, tail, info);

	/* Publish what is complete; we stay a committer for the retry. */
	rb_end_commit(cpu_buffer);
	local_inc(&cpu_buffer->committing);
	RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_PAGE_NEXT);

	return ERR_PTR(-EAGAIN);

out_drop:
	/*
	 * The refusal is counted; a writer nested here meets the same
	 * full page and is refused too, before we close it.
	 */
	RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_PAGE_DROP);
out_reset:
	rb_reset_tail(cpu_buffer, tail, info);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* The write path                                                     */
/* ------------------------------------------------------------------ */

static struct rbn_event *rb_add_time_stamp(struct rbn_cpu_buffer *cpu_buffer,
					   struct rbn_event *event,
					   u64 delta, bool abs)
{
	event->type_len = abs ? RBN_TYPE_TIME_STAMP : RBN_TYPE_TIME_EXTEND;
	/*
	 * A time extend carries the event's own delta, which the write
	 * path has already zeroed when the event must not move time
	 * forward (first on the page, or the sandwich case). Carrying the
	 * delta computed before a nested writer ran would push this event,
	 * and every one after it on the page, into the future (seed 001).
	 */
	event->time_delta = delta & RBN_TS_MASK;
	event->array[0] = delta >> RBN_TS_SHIFT;
	if (!abs)
		local_inc(&cpu_buffer->ts_extend);
	return (struct rbn_event *)((char *)event + RBN_LEN_TIME_EXTEND);
}

static struct rbn_event *rb_update_event(struct rbn_cpu_buffer *cpu_buffer,
					 struct rbn_event *event,
					 struct rb_event_info *info)
{
	unsigned long length = info->length;
	u64 delta = info->delta;

	if (unlikely(info->add_timestamp)) {
		bool abs = info->add_timestamp & (RB_ADD_STAMP_FORCE |
						  RB_ADD_STAMP_ABSOLUTE);

		event = rb_add_time_stamp(cpu_buffer, event,
					  abs ? delta & RBN_ABS_TS_MASK : delta,
					  abs);
		length -= RBN_LEN_TIME_EXTEND;
		delta = 0;
	}

	event->time_delta = delta;
	length -= RBN_EVENT_HDR_SIZE;
	if (length > RB_MAX_SMALL_DATA) {
		event->type_len = 0;
		event->array[0] = length;
	} else {
		event->type_len = DIV_ROUND_UP(length, RBN_ALIGNMENT);
	}
	return event;
}

/*
 * The clock as the write path uses it: never below last_ts, the latest
 * time a writer took on this CPU. trace_clock=mono and boot read in an NMI
 * can be behind the reading of the event the NMI interrupted, and
 * local_clock() can step back when the TSC is resynchronised. A delta from
 * an earlier, larger time would be negative, and an absolute stamp below
 * the time before it on the page reads as a 59-bit carry, 2^59 ns ahead.
 *
 * The writer cannot know the time of the event before it on the page when
 * it is nested (that event may be the one it interrupted, or one before
 * it), but every such time was taken before, so it is at most last_ts. An
 * event whose clock reads below last_ts is stored at last_ts: the time of
 * the event before it when nothing is nested, and never ahead of a time
 * the clock gave. It gets RBN_EV_CLOCK_BACK and is counted. So every time
 * the path below works with comes from a clock that never goes back on
 * this CPU, which is what the nested timestamp algorithm assumes.
 *
 * The clock is read after last_ts, and the new time published with a
 * cmpxchg from the value read: a writer that runs in between (at the
 * label) took a later time, and we read the clock again, after it. Each
 * retry means a writer nested on this CPU finished in between.
 */
static __always_inline u64 rb_clock_read(struct rbn_cpu_buffer *cpu_buffer,
					 struct rb_event_info *info, int label)
{
	struct rbn_buffer *buffer = cpu_buffer->buffer;
	u64 last, ts, old;

	last = local64_read(&cpu_buffer->last_ts);
	for (;;) {
		ts = rb_time_stamp(buffer);
		RBN_HOOK(buffer, cpu_buffer->cpu, label);
		old = local64_cmpxchg(&cpu_buffer->last_ts, last,
				      ts < last ? last : ts);
		if (likely(old == last))
			break;
		last = old;
	}
	info->clock = ts;
	if (unlikely(ts < last)) {
		info->flags |= RBN_EV_CLOCK_BACK;
		return last;
	}
	info->flags &= ~RBN_EV_CLOCK_BACK;
	return ts;
}

/*
 * Reserve info->length bytes on this CPU's tail page and decide the time
 * stamp of the event. Three players (the article's names):
 *
 *   w / write	the write index of the tail page, moved with one
 *		local_add_return() (C) by every writer;
 *   before_stamp	the clock value of the last writer that started (B);
 *   write_stamp	the clock value of the last writer that reserved
 *		without being interrupted (D).
 *
 * Writers on one CPU nest like a stack: an interrupting writer runs to
 * its end before the interrupted one continues. So at any label below,
 * "a nested writer ran here" means: it went through this whole function
 * and its commit, and we see all of its effects afterwards.
 */
static struct rbn_event *__rb_reserve_next(struct rbn_cpu_buffer *cpu_buffer,
					   struct rb_event_info *info)
{
	struct rbn_buffer *buffer = cpu_buffer->buffer;
	int cpu = cpu_buffer->cpu;
	struct rbn_bpage *tail_page;
	unsigned long tail, write, w;
	struct rbn_event *event;

	tail_page = READ_ONCE(cpu_buffer->tail_page);
	info->tail_page = tail_page;
	/*
	 * A writer nested here may move the tail on: we then read the
	 * write index of a full page, reserve past its end at C and go to
	 * rb_move_tail(), which finds the tail moved and retries.
	 */
	RBN_HOOK(buffer, cpu, RBN_LABEL_A_PAGE);

	/*
	 * A: take the write index, both stamps and the clock, in this
	 * order. A nested writer that runs between any two of these reads
	 * reserves space on this page, so the C below will not return w:
	 * whatever we read here is then thrown away by the slow path.
	 */
 /*A*/	w = local_read(&tail_page->write) & RB_WRITE_MASK;
	RBN_HOOK(buffer, cpu, RBN_LABEL_A_TAIL);
	info->before = local64_read(&cpu_buffer->before_stamp);
	RBN_HOOK(buffer, cpu, RBN_LABEL_A_BEFORE);
	info->after = local64_read(&cpu_buffer->write_stamp);
	RBN_HOOK(buffer, cpu, RBN_LABEL_A_AFTER);
	barrier();
	/*
	 * The clock, never below a time taken before on this CPU; a nested
	 * writer at RBN_LABEL_A_CLOCK takes a later time and we read again.
	 * A clock behind it is stored at last_ts (RBN_EV_CLOCK_BACK).
	 */
	info->ts = rb_clock_read(cpu_buffer, info, RBN_LABEL_A_CLOCK);

	if (info->add_timestamp & RB_ADD_STAMP_ABSOLUTE) {
		/*
		 * Absolute mode: the room for our stamp is reserved already,
		 * and no delta is taken from the stamps. They are kept up to
		 * date all the same (B, D), so that the mode can change
		 * with writers nested in each other.
		 */
	} else if (!w) {
		/*
		 * First event of the sub-buffer: the page header has the
		 * time, at or after the last event of the page before.
		 */
		info->delta = 0;
	} else if (unlikely(info->before != info->after)) {
		/*
		 * We interrupted a writer between its B and D (it set
		 * before_stamp, not yet write_stamp), or a writer ran
		 * between our two reads. write_stamp is not the time of the
		 * last event: reserve room for an absolute stamp.
		 */
		info->add_timestamp |= RB_ADD_STAMP_FORCE | RB_ADD_STAMP_EXTEND;
		info->length += RBN_LEN_TIME_EXTEND;
	} else {
		/*
		 * write_stamp is the time of the last event on the page. It
		 * was taken before ours, so the delta is never negative: a
		 * clock behind it gave us last_ts, which is write_stamp
		 * itself (a delta of zero) when that event took the latest
		 * time, as it does when nothing is nested.
		 */
		info->delta = info->ts - info->after;
		if (unlikely(info->delta & RBN_TS_DELTA_TEST)) {
			info->add_timestamp |= RB_ADD_STAMP_EXTEND;
			info->length += RBN_LEN_TIME_EXTEND;
		}
	}
	RBN_HOOK(buffer, cpu, RBN_LABEL_A);

	/*
	 * B: from now until our D, before_stamp != write_stamp, so a
	 * writer that interrupts us takes the FORCE branch above.
	 *
	 * Only if before_stamp is still what we read at A. If it changed,
	 * a writer ran between our read and here: it reserved in front of
	 * us (so we take the slow path) and left both stamps at the time
	 * of its event if nothing disturbed its D. Overwriting
	 * before_stamp with our older time would destroy exactly the
	 * evidence the slow path needs to compute an exact delta, and
	 * leave us the zero delta. Leaving it is safe: a writer that comes
	 * in before our C is in front of us and its delta from that
	 * event is right; one that comes in after C is behind us, and F
	 * then sees the write index moved and gives us the zero delta, so
	 * its delta counts from the same event.
	 */
 /*B*/	(void)local64_cmpxchg(&cpu_buffer->before_stamp, info->before, info->ts);
	RBN_HOOK(buffer, cpu, RBN_LABEL_B);

	/*
	 * C: reserve. Nested writers that ran before this point are in
	 * front of us on the page; those that run after it are behind.
	 */
 /*C*/	write = local_add_return(info->length, &tail_page->write);
	write &= RB_WRITE_MASK;
	tail = write - info->length;
	RBN_HOOK(buffer, cpu, RBN_LABEL_C);

	/* Past the end of the sub-buffer: pad it, move on, try again. */
	if (unlikely(write > buffer->subbuf_size))
		return rb_move_tail(cpu_buffer, tail, info);

	if (likely(tail == w)) {
		/*
		 * Fast path: nothing was reserved between A and C, so the
		 * stamps read at A were those of the event just before us.
		 *
		 * D: a writer that interrupts us between C and D sees
		 * before_stamp (ours) != write_stamp and writes absolute
		 * stamps; it also sets write_stamp to its own, later time,
		 * which we overwrite here with ours. That is harmless:
		 * before_stamp then holds its time, differs from
		 * write_stamp, and the next event is forced absolute.
		 *
		 * The forced absolute stamp is our time from A, at or above
		 * last_ts, so at or above the time of the event before us
		 * on the page, whichever writer wrote it: an NMI whose clock
		 * reads behind the event it interrupted is stored at that
		 * event's time (RBN_EV_CLOCK_BACK), not below it.
		 */
 /*D*/		local64_set(&cpu_buffer->write_stamp, info->ts);
		RBN_HOOK(buffer, cpu, RBN_LABEL_D);
		if (likely(!(info->add_timestamp & (RB_ADD_STAMP_FORCE |
						    RB_ADD_STAMP_ABSOLUTE)))) {
			/* Did not interrupt a time update: a plain delta. */
			info->delta = info->ts - info->after;
		} else {
			/*
			 * Interrupted a writer between its B and D, or
			 * absolute mode.
			 */
			info->delta = info->ts;
			info->flags |= RBN_EV_ABSOLUTE;
			local_inc(&cpu_buffer->ts_abs);
		}
		info->flags |= RBN_EV_FAST;
	} else {
		unsigned long now_write;
		bool undisturbed;
		u64 ts;

		/*
		 * Slow path: writers ran between A and C and are in front
		 * of us on the page. Our clock value from A is older than
		 * theirs and useless; take a new one, after them.
		 *
		 * before_stamp is what the last of them set. Setting it to
		 * the new clock value makes a writer that interrupts us from
		 * here on see before_stamp != write_stamp and write an
		 * absolute stamp: it cannot rely on write_stamp, which we
		 * never update on this path.
		 */
		info->before = local64_read(&cpu_buffer->before_stamp);
		RBN_HOOK(buffer, cpu, RBN_LABEL_SLOW_BEFORE);
		/*
		 * As at A: a writer nested at RBN_LABEL_SLOW_CLOCK makes us
		 * read the clock again, and a clock behind the times of the
		 * writers in front of us gives last_ts, the latest of them.
		 * The flag of A's clock read goes: this one counts.
		 */
		ts = rb_clock_read(cpu_buffer, info, RBN_LABEL_SLOW_CLOCK);
		RBN_HOOK(buffer, cpu, RBN_LABEL_SLOW_TS);
		local64_set(&cpu_buffer->before_stamp, ts);
		RBN_HOOK(buffer, cpu, RBN_LABEL_SLOW_SET);
		barrier();
		/*
		 * E: the last writer in front of us went through D
		 * undisturbed if write_stamp equals the before_stamp it
		 * left: then write_stamp is the time of the event right in
		 * front of us.
		 */
 /*E*/		info->after = local64_read(&cpu_buffer->write_stamp);
		RBN_HOOK(buffer, cpu, RBN_LABEL_E);
		barrier();
		/*
		 * F: and if the write index did not move since C and the
		 * tail is still on our page, nothing was written behind us
		 * either: the delta from write_stamp is exact. A writer that
		 * ran between C and F is behind us with a time we cannot
		 * know any more. Then we are sandwiched between two sets of
		 * nested events, and the only safe delta is zero: we are
		 * shown at the time of the event in front of us.
		 *
		 * A clock behind write_stamp came back from rb_clock_read()
		 * as last_ts, at or above write_stamp: equal to it when
		 * undisturbed, and then the exact delta is zero, the time of
		 * the event in front of us, as on the fast path. That is no
		 * sandwich: the event is flagged for its clock, not for a
		 * delta it lost. Above ts write_stamp cannot be when nothing
		 * was written after C: it is the time of a writer in front
		 * of us, whose clock rb_clock_read() handed out before ours.
		 *
		 * The write index alone does not tell: when our event ends
		 * at (or less than 8 bytes before) the end of the sub-buffer,
		 * a writer that comes after C gives its bytes back here and
		 * writes on the next page. The tail cannot come back to this
		 * page while we have not committed.
		 */
/*F*/		now_write = local_read(&tail_page->write) & RB_WRITE_MASK;
		/*
		 * A writer nested between the two reads of F reserves
		 * behind us after we looked at the write index: it is no
		 * different from a writer nested just after F, which the
		 * split into two reads does not change. Its time never
		 * depends on our delta.
		 */
		RBN_HOOK(buffer, cpu, RBN_LABEL_F_WRITE);
		undisturbed = write == now_write &&
			      READ_ONCE(cpu_buffer->tail_page) == tail_page;
		if (undisturbed &&
		    (info->add_timestamp & RB_ADD_STAMP_ABSOLUTE)) {
			/*
			 * Absolute mode: nothing behind us, and our clock was
			 * read after every writer in front of us: our own
			 * time, whatever write_stamp holds.
			 */
			info->delta = ts;
			info->flags |= RBN_EV_ABSOLUTE;
			local_inc(&cpu_buffer->ts_abs);
		} else if (undisturbed && info->after == info->before &&
			   !RBN_WARN_ON(info->after > ts)) {
			info->delta = ts - info->after;
		} else {
			/*
			 * In absolute mode too: a writer behind us may have
			 * taken an earlier time than ours. No stamp of ours
			 * then: the room reserved for it becomes a time
			 * extend of 0.
			 */
			info->add_timestamp &= ~RB_ADD_STAMP_ABSOLUTE;
			info->delta = 0;
			info->flags |= RBN_EV_ZERO_DELTA;
		}
		RBN_HOOK(buffer, cpu, RBN_LABEL_F);
		info->ts = ts;
		info->add_timestamp &= ~RB_ADD_STAMP_FORCE;
		info->flags |= RBN_EV_SLOW;
		local_inc(&cpu_buffer->ts_slow);

		/*
		 * The delta is exact but only fits in 27 bits, or in a
		 * time extend if A reserved one. Never store a truncated
		 * delta: without room for an extend, fall back to zero.
		 */
		if (unlikely((info->delta & RBN_TS_DELTA_TEST) &&
			     !(info->add_timestamp & RB_ADD_STAMP_EXTEND))) {
			info->delta = 0;
			info->flags |= RBN_EV_ZERO_DELTA;
		}
	}

	/*
	 * The first event of a sub-buffer takes the page's time stamp. It
	 * never has FORCE: A saw w == 0 (fast path), or the slow path
	 * dropped it.
	 */
	if (unlikely(!tail)) {
		/* In absolute mode it has its stamp too, equal to the page's. */
		if (!(info->add_timestamp & RB_ADD_STAMP_ABSOLUTE))
			info->delta = 0;
		info->flags &= ~RBN_EV_ZERO_DELTA;
		info->flags |= RBN_EV_PAGE_START;
	}
	if (info->flags & RBN_EV_ZERO_DELTA)
		local_inc(&cpu_buffer->ts_zero);
	if (unlikely(info->flags & RBN_EV_CLOCK_BACK))
		local_inc(&cpu_buffer->ts_clock_back);
	if (info->add_timestamp & RB_ADD_STAMP_EXTEND &&
	    !(info->add_timestamp & (RB_ADD_STAMP_FORCE |
				     RB_ADD_STAMP_ABSOLUTE)))
		info->flags |= RBN_EV_EXTEND;

	info->start = tail;
	event = (struct rbn_event *)(tail_page->page->data + tail);
	event = rb_update_event(cpu_buffer, event, info);
	RBN_HOOK(buffer, cpu, RBN_LABEL_EVENT);

	local_inc(&tail_page->entries);
	/*
	 * A writer nested here or at RBN_LABEL_EVENT is behind us on this
	 * page or on a later one: the stamp below is only ours to set if
	 * our event is the page's first, and the page is not published
	 * before the outermost commit.
	 */
	RBN_HOOK(buffer, cpu, RBN_LABEL_EVENT_ENTRIES);
	if (unlikely(!tail))
		WRITE_ONCE(tail_page->page->time_stamp, info->ts);
	RBN_HOOK(buffer, cpu, RBN_LABEL_EVENT_STAMP);
	local_add(info->length, &cpu_buffer->entries_bytes);

	return event;
}

static unsigned long rb_calculate_event_length(unsigned int length)
{
	unsigned long len = length;

	if (len > RB_MAX_SMALL_DATA)
		len += sizeof(u32);
	len += RBN_EVENT_HDR_SIZE;
	return ALIGN(len, (unsigned long)RBN_ALIGNMENT);
}

static struct rbn_event *rb_reserve_next_event(struct rbn_cpu_buffer *cpu_buffer,
					       unsigned int length)
{
	int add_ts = RB_ADD_STAMP_NONE;
	struct rb_event_info info;
	struct rbn_event *event;
	int nr_loops = 0;

	rb_start_commit(cpu_buffer);

	/* Absolute mode: room for an absolute stamp in front of every event. */
	if (unlikely(READ_ONCE(cpu_buffer->buffer->abs_ts)))
		add_ts = RB_ADD_STAMP_ABSOLUTE | RB_ADD_STAMP_EXTEND;
	info.length = rb_calculate_event_length(length) +
		      (add_ts ? RBN_LEN_TIME_EXTEND : 0);
	info.add_timestamp = add_ts;
	info.start = 0;
	info.flags = 0;
again:
	/* A page switch is retried; a thousand of them is a broken ring. */
	if (RBN_WARN_ON(++nr_loops > 1000))
		goto out_fail;

	event = __rb_reserve_next(cpu_buffer, &info);
	if (unlikely(PTR_ERR(event) == -EAGAIN)) {
		/* What this try added, gone: the mode's own room stays. */
		if ((info.add_timestamp & RB_ADD_STAMP_EXTEND) && !add_ts)
			info.length -= RBN_LEN_TIME_EXTEND;
		info.add_timestamp = add_ts;
		info.flags = 0;
		goto again;
	}
	if (likely(event)) {
		struct rbn_nested *n = &cpu_buffer->nested[cpu_buffer->nest - 1];

		n->event = event;
		n->ts = info.clock;
		n->stamp = info.ts;
		n->flags = info.flags;
		n->bpage = info.tail_page;
		n->start = info.start;
		n->length = info.length;
		RBN_HOOK(cpu_buffer->buffer, cpu_buffer->cpu, RBN_LABEL_RESERVED);
		return event;
	}
out_fail:
	rb_end_commit(cpu_buffer);
	return NULL;
}

/**
 * rbn_reserve - reserve space for an event on this CPU
 * @buffer:	the buffer
 * @len:	payload bytes (1 .. rbn_max_event_size())
 *
 * Runs in any context, including NMI. Preemption stays disabled until the
 * matching rbn_commit(), which must run on the same CPU in the same context.
 *
 * Return: the event (fill it via rbn_event_data()), or NULL when recording
 * is off, the buffer is full (producer/consumer mode), @len is out of range
 * (both counted as dropped) or the context is already writing (counted as
 * recursion).
 */
struct rbn_event *rbn_reserve(struct rbn_buffer *buffer, unsigned int len)
{
	struct rbn_cpu_buffer *cpu_buffer;
	struct rbn_event *event;
	int cpu;

	rbn_port_preempt_disable();
	if (unlikely(atomic_read(&buffer->record_disabled)))
		goto out;
	/* An NMI writer where cmpxchg is not NMI safe (port header). */
	if (unlikely(rbn_port_write_refused()))
		goto out;
	cpu = rbn_port_cpu();
	if (unlikely((unsigned int)cpu >= buffer->nr_cpus))
		goto out;
again:
	cpu_buffer = READ_ONCE(buffer->cpu_buffers[cpu]);
	if (unlikely(!len || len > buffer->max_data_size)) {
		local_inc(&cpu_buffer->dropped);
		goto out;
	}
	if (unlikely(trace_recursive_lock(cpu_buffer)))
		goto out;
	/*
	 * A swap (rbn_swap_cpu(), which runs on this CPU) that came in
	 * between our read of cpu_buffers[] and our bit found no writer
	 * here and gave this CPU buffer to the other buffer: write in the
	 * one that is ours now. A swap from here on sees our bit and
	 * refuses, so the CPU buffer stays ours up to our commit. The
	 * barrier keeps the compiler from moving the bit's store (a plain
	 * one) below the read: a swap in between would see no writer.
	 */
	barrier();
	if (unlikely(READ_ONCE(buffer->cpu_buffers[cpu]) != cpu_buffer)) {
		trace_recursive_unlock(cpu_buffer);
		goto again;
	}
	/*
	 * A writer nested here takes the slot of nested[] we are about to
	 * take, and gives it back before we go on.
	 */
	RBN_HOOK(buffer, cpu, RBN_LABEL_LOCKED);

	cpu_buffer->nest++;
	if (unlikely(cpu_buffer->nest > cpu_buffer->max_depth))
		WRITE_ONCE(cpu_buffer->max_depth, cpu_buffer->nest);
	/* A writer nested here takes the next slot of nested[]. */
	RBN_HOOK(buffer, cpu, RBN_LABEL_NEST);

	event = rb_reserve_next_event(cpu_buffer, len);
	if (unlikely(!event))
		goto out_unlock;

	/* The round-up bytes of the payload must not leak old data. */
	if (len & (RBN_ALIGNMENT - 1))
		((u32 *)rbn_event_data(event))[len / RBN_ALIGNMENT] = 0;
	return event;

out_unlock:
	cpu_buffer->nest--;
	trace_recursive_unlock(cpu_buffer);
out:
	rbn_port_preempt_enable();
	return NULL;
}

/**
 * rbn_commit - publish an event reserved with rbn_reserve()
 * @buffer:	the buffer
 * @event:	the event
 *
 * Nested events become visible to readers when the outermost writer on the
 * CPU commits.
 */
void rbn_commit(struct rbn_buffer *buffer, struct rbn_event *event)
{
	struct rbn_cpu_buffer *cpu_buffer;

	cpu_buffer = buffer->cpu_buffers[rbn_port_cpu()];
	RBN_WARN_ON(!cpu_buffer->nest ||
		    cpu_buffer->nested[cpu_buffer->nest - 1].event != event);

	/* nest is 0 only in the bug warned of above */
	if (rbn_port_validating() && cpu_buffer->nest)	/* rbn-cov-ignore */
		rb_validate_note(cpu_buffer,
				 &cpu_buffer->nested[cpu_buffer->nest - 1], false);
	local_inc(&cpu_buffer->entries);
	RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_ENTRIES);
	rb_end_commit(cpu_buffer);
	/*
	 * Our event is published if we were the outermost; a writer nested
	 * here is the outermost of its own commit then.
	 */
	RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_COMMIT_DONE);

	cpu_buffer->nest--;
	/* A writer nested here reuses our slot of nested[]. */
	RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_UNNEST);
	trace_recursive_unlock(cpu_buffer);
	rbn_port_preempt_enable();
}

/*
 * Give the bytes of a discarded event back when nothing was reserved
 * behind it: the tail is still on its sub-buffer and the write index still
 * ends where the event (and its time extend or stamp) ends. Returns true
 * when they were given back.
 *
 * The event's stamp is then gone from the page, but write_stamp still
 * holds it (our D, or the D of a writer nested in our reserve). No writer
 * may take a delta from it any more: the page's time where the next event
 * goes is the time of the event in front of ours, which is not known here
 * (it may be in a time extend or an absolute stamp). That is mainline's
 * "force absolute timestamp on discard of event", done here on write_stamp
 * instead of before_stamp: write_stamp is set to 0, the floor of a clock
 * that never goes back on this CPU (last_ts starts at 0 at a reset), so
 * that:
 *
 *  - the next writer's A sees before_stamp != write_stamp and writes an
 *    absolute stamp (unless before_stamp is 0 too: then every time taken
 *    on the CPU since the reset was 0, and a delta from 0 is exact);
 *  - a writer we interrupted on its slow path between its read of
 *    before_stamp and its E cannot find write_stamp equal to that value
 *    (but for the same 0) and take a delta from our lost stamp. Clearing
 *    before_stamp instead,
 *    as mainline does, leaves write_stamp at our time, which that writer
 *    compares with a before_stamp it read earlier: they are equal when
 *    the clock read the same value for both (a clock that stands still,
 *    or one behind last_ts, which gives last_ts), and the writer takes a
 *    delta from a time that is no longer on the page. test_nest found
 *    exactly that with the clock one nanosecond back.
 */
static bool rb_try_to_discard(struct rbn_cpu_buffer *cpu_buffer,
			      struct rbn_nested *n)
{
	struct rbn_buffer *buffer = cpu_buffer->buffer;
	unsigned long end = n->start + n->length;
	unsigned long write;

	/*
	 * The index first, then the tail: a writer nested between the two
	 * either reserves behind us (the index moves and the cmpxchg below
	 * fails) or moves the tail on, which the tail read sees. The other
	 * way round, a writer moving the tail on could leave the index at
	 * our end again (rb_reset_tail() gives back what did not fit) after
	 * setting the page's real end there.
	 */
	write = local_read(&n->bpage->write);
	if (READ_ONCE(cpu_buffer->tail_page) != n->bpage ||
	    (write & RB_WRITE_MASK) != end) {
		/*
		 * A writer nested after our C reserved behind us (on this
		 * page, or it moved the tail on): the event stays in place
		 * as padding, and its delta stays on the page, because that
		 * writer may have taken its delta from our stamp.
		 */
		RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_DISCARD_TAIL);
		return false;
	}
	/*
	 * A writer nested here reserves behind us: the cmpxchg below fails
	 * and the event stays in place. On this page the index moved; a
	 * writer that did not fit and moved the tail on gave its bytes back
	 * to the index, which is then our end again, but it bumped the
	 * update count above RB_WRITE_MASK (rb_reset_tail()), and the
	 * cmpxchg compares the whole word. Without that, our bytes would go
	 * back on a page the tail left: a writer we interrupted before its
	 * C would write there, in front of events reserved after it, and a
	 * reader taking the page whole would read up to the real end that
	 * writer set. The writer behind us took its delta from write_stamp,
	 * our time, which the padding's delta keeps on the page: it is read
	 * exactly. (Clearing write_stamp below then only costs the next
	 * event an absolute stamp.)
	 */
	RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_DISCARD_TAIL);
	/* Before the bytes go: a writer must not see a valid stamp pair. */
	local64_set(&cpu_buffer->write_stamp, 0);
	/*
	 * A writer nested here sees before_stamp != write_stamp and writes
	 * an absolute stamp, behind us (on this page, or on the next one
	 * with the update count bumped here): the cmpxchg fails, the event
	 * stays in place, and its delta is still right for what is in
	 * front. The
	 * writer's D leaves both stamps at its own time, which is right for
	 * the event after it.
	 *
	 * A writer we interrupted between its A and C goes on after we
	 * return. If we gave the bytes back, its C finds the write index
	 * where its A read it, and it writes where we were, on its fast
	 * path, with the delta from the stamps its A read, those of the
	 * event in front of us: exact. If its B is still to come, the
	 * cmpxchg there fails (before_stamp holds our time, not what its A
	 * read) and its D makes write_stamp differ from before_stamp: the
	 * event after it is forced absolute, nothing worse.
	 */
	RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_DISCARD_STAMP);
	if (local_cmpxchg(&n->bpage->write, write,
			  (write & ~RB_WRITE_MASK) | n->start) != write)
		return false;
	local_sub(n->length, &cpu_buffer->entries_bytes);
	return true;
}

/**
 * rbn_discard - drop a reserved event instead of committing it
 * @buffer:	the buffer
 * @event:	the event rbn_reserve() returned, not committed
 *
 * Call it instead of rbn_commit() (never both), on the same CPU in the
 * same context, as mainline's ring_buffer_discard_commit(): it ends the
 * reserve as rbn_commit() does, publishing nested events if this was the
 * outermost writer. The event is neither an entry nor lost: it is counted
 * in rbn_cpu_stats()' @discarded only.
 *
 * When nothing was reserved behind the event, its bytes (with its time
 * extend or absolute stamp) are given back to the sub-buffer, and the next
 * event on the CPU writes an absolute stamp. Otherwise it stays in place
 * as a discarded event: a padding of the same length (payload cleared)
 * that keeps the event's time delta. That delta is time for every reader
 * of the page (rbn_consume(), the iterator, and libtraceevent's kbuffer,
 * which adds a padding's delta): writers nested behind the event took
 * their deltas from its stamp.
 *
 * Calling it for an event that is not the innermost one being written on
 * this CPU is a bug: it warns and ends the innermost reserve as
 * rbn_commit() does; called with no reserve in progress it only warns.
 */
void rbn_discard(struct rbn_buffer *buffer, struct rbn_event *event)
{
	struct rbn_cpu_buffer *cpu_buffer;
	struct rbn_nested *n;
	unsigned int len;

	cpu_buffer = buffer->cpu_buffers[rbn_port_cpu()];
	if (RBN_WARN_ON(!cpu_buffer->nest))
		return;
	if (RBN_WARN_ON(cpu_buffer->nested[cpu_buffer->nest - 1].event !=
			event)) {
		rbn_commit(buffer, event);
		return;
	}
	n = &cpu_buffer->nested[cpu_buffer->nest - 1];

	/*
	 * A padding of the event's length that keeps its delta. No reader
	 * sees it before the commit below: the bytes are still ours. A
	 * writer nested at any label from here on is behind us, and took
	 * its delta (if any) from write_stamp, our stamp or a later one.
	 */
	len = rb_event_length(event);
	event->array[0] = len - RBN_EVENT_HDR_SIZE;
	memset(&event->array[1], 0, len - RB_EVNT_MIN_SIZE);
	event->type_len = RBN_TYPE_PADDING;
	RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_DISCARD);
	/*
	 * The page counted us at our reserve; a reader taking the page
	 * whole, or a head push losing it, counts its entries. Neither
	 * happens to our page before our commit: the reader stops at the
	 * commit, and the tail cannot lap the commit page.
	 */
	local_dec(&n->bpage->entries);
	RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_DISCARD_ENTRIES);
	if (!rb_try_to_discard(cpu_buffer, n) && rbn_port_validating())
		rb_validate_note(cpu_buffer, n, true);
	local_inc(&cpu_buffer->discarded);
	/* A writer nested here is behind us, or where our bytes were. */
	RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_DISCARD_DONE);

	rb_end_commit(cpu_buffer);
	RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_COMMIT_DONE);
	cpu_buffer->nest--;
	RBN_HOOK(buffer, cpu_buffer->cpu, RBN_LABEL_UNNEST);
	trace_recursive_unlock(cpu_buffer);
	rbn_port_preempt_enable();
}

/**
 * rbn_write - reserve, copy and commit an event
 * @buffer:	the buffer
 * @len:	payload bytes
 * @data:	the payload
 *
 * Return: 0, -EINVAL for a length out of range, -EBUSY when not written.
 */
int rbn_write(struct rbn_buffer *buffer, unsigned int len, const void *data)
{
	struct rbn_event *event;

	if (unlikely(!len || len > buffer->max_data_size)) {
		/* Count it like rbn_reserve() does. */
		rbn_reserve(buffer, len);
		return -EINVAL;
	}
	event = rbn_reserve(buffer, len);
	if (unlikely(!event))
		return -EBUSY;
	memcpy(rbn_event_data(event), data, len);
	rbn_commit(buffer, event);
	return 0;
}

static struct rbn_nested *rb_find_nested(struct rbn_buffer *buffer,
					 struct rbn_event *event)
{
	struct rbn_cpu_buffer *cpu_buffer;
	int cpu = rbn_port_cpu();
	int i;

	if (cpu < 0 || cpu >= buffer->nr_cpus)
		return NULL;
	cpu_buffer = buffer->cpu_buffers[cpu];
	for (i = (int)cpu_buffer->nest - 1; i >= 0; i--)
		if (cpu_buffer->nested[i].event == event)
			return &cpu_buffer->nested[i];
	return NULL;
}

/**
 * rbn_event_ts - the clock value the writer used for an event
 * @buffer:	the buffer
 * @event:	an event reserved on this CPU and not committed yet
 *
 * Unless rbn_event_flags() has RBN_EV_ZERO_DELTA or RBN_EV_CLOCK_BACK, a
 * reader rebuilds exactly this time stamp from the sub-buffer. With
 * RBN_EV_CLOCK_BACK the clock read below a time already taken on this CPU,
 * and the event is stored at that later time (at most the latest time the
 * clock gave before).
 *
 * Return: the time stamp, or 0 if @event is not being written here.
 */
u64 rbn_event_ts(struct rbn_buffer *buffer, struct rbn_event *event)
{
	struct rbn_nested *n = rb_find_nested(buffer, event);

	return n ? n->ts : 0;
}

/**
 * rbn_event_flags - how the time stamp of an event was written
 * @buffer:	the buffer
 * @event:	an event reserved on this CPU and not committed yet
 *
 * Return: RBN_EV_* flags, 0 if @event is not being written here.
 */
unsigned int rbn_event_flags(struct rbn_buffer *buffer, struct rbn_event *event)
{
	struct rbn_nested *n = rb_find_nested(buffer, event);

	return n ? n->flags : 0;
}

/* ------------------------------------------------------------------ */
/* Readers                                                            */
/* ------------------------------------------------------------------ */

static unsigned long rb_num_of_entries(struct rbn_cpu_buffer *cpu_buffer)
{
	return local_read(&cpu_buffer->entries) -
		(local_read(&cpu_buffer->overrun) + cpu_buffer->read);
}

static inline struct rbn_event *rb_reader_event(struct rbn_cpu_buffer *cpu_buffer)
{
	struct rbn_bpage *reader = cpu_buffer->reader_page;

	return (struct rbn_event *)(reader->page->data + reader->read);
}

static void rb_init_bpage(struct rbn_bpage *bpage)
{
	local_set(&bpage->write, 0);
	local_set(&bpage->entries, 0);
	local_set(&bpage->page->commit, 0);
	bpage->real_end = 0;
	bpage->read = 0;
}

/*
 * Make the reader page hold unread data: swap it with the head page when
 * it is used up. The swap is a cmpxchg on the flagged pointer to the head
 * page, which fails while a writer is pushing the head (UPDATE) or after
 * it pushed it (the flag moved on): then find the head again and retry.
 */
static struct rbn_bpage *rb_get_reader_page(struct rbn_cpu_buffer *cpu_buffer)
{
	struct rbn_bpage *reader = NULL, *commit_page;
	unsigned long overwrite;
	unsigned long val;
	int nr_loops = 0;

again:
	/*
	 * Twice normally; three times when the swap brought in the empty
	 * page that a reset left at the head.
	 */
	if (RBN_WARN_ON(++nr_loops > 3)) {
		reader = NULL;
		goto out;
	}

	reader = cpu_buffer->reader_page;
	/*
	 * Read where the commit is first, the page's commit after: the
	 * writer may still be on the reader page, commit more and move on
	 * between the two reads. Read the other way round, we could find
	 * the page used up by a stale commit and recycle events that were
	 * just committed. Pairs with the smp_wmb() in
	 * rb_set_commit_to_write().
	 */
	commit_page = READ_ONCE(cpu_buffer->commit_page);
	smp_rmb(); /* commit_page, then the page's commit */
	/*
	 * A writer here commits more on the reader page: we read it below.
	 * If it also moved the commit on, our commit_page is stale and we
	 * wait for the next call to swap.
	 */
	RBN_READER_HOOK(cpu_buffer->buffer, cpu_buffer->cpu, RBN_RLABEL_COMMIT_PAGE);
	if (reader->read < rb_page_commit(reader))
		goto out;
	if (RBN_WARN_ON(reader->read > rb_page_commit(reader))) {
		reader = NULL;
		goto out;
	}
	/*
	 * A writer here commits on the reader page we just found used up,
	 * and may move the commit on: the stale commit_page keeps us from
	 * recycling those events (a fresh read here would not).
	 */
	RBN_READER_HOOK(cpu_buffer->buffer, cpu_buffer->cpu, RBN_RLABEL_USED);

	reader = NULL;
	/* The writer is still on the reader page: nothing more to read. */
	if (commit_page == cpu_buffer->reader_page)
		goto out;
	if (rb_num_of_entries(cpu_buffer) == 0)
		goto out;

	rb_init_bpage(cpu_buffer->reader_page);

spin:
	/*
	 * A writer here (overwrite mode) may push the head on and count
	 * the overrun: we look for the head after it, and read the overrun
	 * after that.
	 */
	RBN_READER_HOOK(cpu_buffer->buffer, cpu_buffer->cpu, RBN_RLABEL_SPIN);
	reader = rb_set_head_page(cpu_buffer);
	if (!reader)
		goto out;
	/*
	 * A writer here that pushes the head makes our cmpxchg below fail:
	 * the HEAD flag is no longer in front of @reader.
	 */
	RBN_READER_HOOK(cpu_buffer->buffer, cpu_buffer->cpu, RBN_RLABEL_HEAD);
	/*
	 * The reader page will point to the new head. A writer still on
	 * the reader page reads this pointer: one store, flag included.
	 */
	WRITE_ONCE(cpu_buffer->reader_page->next,
		   (unsigned long)rb_next_page(reader) | RB_PAGE_HEAD);
	/*
	 * The old reader page is not in the ring yet (the cmpxchg below
	 * links it), so no writer crossing pages sees it; a writer here
	 * that pushes the head makes the cmpxchg fail, and we set the
	 * page up again.
	 */
	RBN_READER_HOOK(cpu_buffer->buffer, cpu_buffer->cpu, RBN_RLABEL_NEXT);
	WRITE_ONCE(cpu_buffer->reader_page->prev, reader->prev);
	cpu_buffer->pages = reader->prev;

	/*
	 * Read the overrun after setting up the pointers: a writer crossing
	 * pages does a cmpxchg on them, which our cmpxchg below fails on,
	 * so the overrun read here is the one that goes with the swap.
	 */
	smp_mb();
	overwrite = local_read(&cpu_buffer->overrun);
	/*
	 * A writer here that pushes the head counts more overrun, and
	 * makes the cmpxchg fail: the retry reads the overrun again.
	 */
	RBN_READER_HOOK(cpu_buffer->buffer, cpu_buffer->cpu, RBN_RLABEL_OVERRUN);

	val = (unsigned long)reader | RB_PAGE_HEAD;
	if (cmpxchg(&reader->prev->next, val,
		    (unsigned long)cpu_buffer->reader_page) != val) {
		/*
		 * A writer is pushing the head (UPDATE) or pushed it on. It
		 * runs with preemption off and is done soon; in userspace
		 * its thread may have been preempted, hence the relax.
		 */
		rbn_port_cpu_relax();
		reader = NULL;
		goto spin;
	}

	/*
	 * Swapped. A writer here that crosses into the new head finds the
	 * HEAD flag on the old reader page's next pointer; its prev
	 * pointer is fixed below, before any reader walks the ring again.
	 */
	RBN_READER_HOOK(cpu_buffer->buffer, cpu_buffer->cpu, RBN_RLABEL_SWAPPED);
	/* The new head points back to the old reader page. */
	WRITE_ONCE(rb_next_page(reader)->prev, cpu_buffer->reader_page);
	cpu_buffer->head_page = rb_next_page(cpu_buffer->reader_page);
	cpu_buffer->reader_page = reader;
	reader->read = 0;

	if (overwrite != cpu_buffer->last_overrun) {
		cpu_buffer->lost_events += overwrite - cpu_buffer->last_overrun;
		cpu_buffer->last_overrun = overwrite;
	}
	goto again;

out:
	if (reader && reader->read == 0) {
		/* R6: the page's commit, then the stamp the writer set first. */
		smp_rmb();
		cpu_buffer->read_stamp = READ_ONCE(reader->page->time_stamp);
	}
	return reader;
}

static void rb_update_read_stamp(struct rbn_cpu_buffer *cpu_buffer,
				 struct rbn_event *event)
{
	switch (event->type_len) {
	case RBN_TYPE_PADDING:
		/*
		 * A discarded event keeps its delta, and it is time: a
		 * writer behind it may have taken its own delta from the
		 * discarded event's stamp (see rbn_discard()).
		 */
		cpu_buffer->read_stamp += event->time_delta;
		return;
	case RBN_TYPE_TIME_EXTEND:
		cpu_buffer->read_stamp += rb_event_time_stamp(event);
		return;
	case RBN_TYPE_TIME_STAMP:
		cpu_buffer->read_stamp =
			rbn_fix_abs_ts(rb_event_time_stamp(event),
				       cpu_buffer->read_stamp);
		return;
	default:
		cpu_buffer->read_stamp += event->time_delta;
		return;
	}
}

static void rb_advance_reader(struct rbn_cpu_buffer *cpu_buffer)
{
	struct rbn_event *event = rb_reader_event(cpu_buffer);

	if (event->type_len <= RBN_TYPE_DATA_MAX)
		WRITE_ONCE(cpu_buffer->read, cpu_buffer->read + 1);
	rb_update_read_stamp(cpu_buffer, event);
	WRITE_ONCE(cpu_buffer->read_bytes,
		   cpu_buffer->read_bytes + rb_event_length(event));
	cpu_buffer->reader_page->read += rb_event_length(event);
}

/* The next data event and its time stamp, under the reader lock. */
static struct rbn_event *rb_buffer_peek(struct rbn_cpu_buffer *cpu_buffer,
					u64 *ts, unsigned long *lost)
{
	struct rbn_bpage *reader;
	struct rbn_event *event;
	int nr_loops = 0;

	for (;;) {
		/* Stamps and paddings in a row are bounded by the page. */
		if (RBN_WARN_ON(++nr_loops > 2048))
			return NULL;
		reader = rb_get_reader_page(cpu_buffer);
		if (!reader)
			return NULL;
		/* R2: the commit before the events it covers. */
		smp_rmb();
		event = rb_reader_event(cpu_buffer);
		if (event->type_len > RBN_TYPE_DATA_MAX) {
			rb_advance_reader(cpu_buffer);
			continue;
		}
		if (ts)
			*ts = cpu_buffer->read_stamp + event->time_delta;
		if (lost)
			*lost = cpu_buffer->lost_events;
		return event;
	}
}

static struct rbn_cpu_buffer *rb_reader_cpu(struct rbn_buffer *buffer, int cpu)
{
	if (cpu < 0 || cpu >= buffer->nr_cpus)
		return NULL;
	return buffer->cpu_buffers[cpu];
}

/* The next event of a CPU under the reader lock, consumed or not. */
static struct rbn_event *rb_read_next(struct rbn_buffer *buffer, int cpu,
				      u64 *ts, unsigned long *lost,
				      bool consume)
{
	struct rbn_cpu_buffer *cpu_buffer = rb_reader_cpu(buffer, cpu);
	struct rbn_event *event;
	unsigned long flags = 0;

	if (!cpu_buffer)
		return NULL;
	rbn_reader_lock(&cpu_buffer->reader_lock, flags);
	event = rb_buffer_peek(cpu_buffer, ts, lost);
	if (event && consume) {
		cpu_buffer->lost_events = 0;
		rb_advance_reader(cpu_buffer);
	}
	rbn_reader_unlock(&cpu_buffer->reader_lock, flags);
	return event;
}

/**
 * rbn_peek - look at the next event of a CPU without consuming it
 * @buffer:	the buffer
 * @cpu:	the CPU
 * @ts:		its time stamp (may be NULL)
 * @lost:	events lost before it since the last read (may be NULL)
 *
 * Return: the event, valid until the next reader call on @cpu, or NULL.
 */
struct rbn_event *rbn_peek(struct rbn_buffer *buffer, int cpu, u64 *ts,
			   unsigned long *lost)
{
	return rb_read_next(buffer, cpu, ts, lost, false);
}

/**
 * rbn_consume - read and consume the next event of a CPU
 * @buffer:	the buffer
 * @cpu:	the CPU
 * @ts:		its time stamp (may be NULL)
 * @lost:	events lost before it since the last read (may be NULL)
 *
 * Return: the event, valid until the next reader call on @cpu, or NULL.
 */
struct rbn_event *rbn_consume(struct rbn_buffer *buffer, int cpu, u64 *ts,
			      unsigned long *lost)
{
	return rb_read_next(buffer, cpu, ts, lost, true);
}

/**
 * rbn_empty_cpu - whether a CPU has nothing left to read
 * @buffer:	the buffer
 * @cpu:	the CPU
 *
 * Return: true when no committed event is unread.
 */
bool rbn_empty_cpu(struct rbn_buffer *buffer, int cpu)
{
	return !rb_read_next(buffer, cpu, NULL, NULL, false);
}

/**
 * rbn_alloc_read_page - allocate a sub-buffer for rbn_read_page()
 * @buffer:	the buffer
 * @cpu:	the CPU it will be used for (NUMA placement)
 *
 * Return: the page, or NULL.
 */
void *rbn_alloc_read_page(struct rbn_buffer *buffer, int cpu)
{
	return rbn_port_alloc_pages(buffer->order, cpu);
}

/**
 * rbn_free_read_page - free a page from rbn_alloc_read_page()
 * @buffer:	the buffer
 * @cpu:	the CPU
 * @page:	the page, or NULL
 */
void rbn_free_read_page(struct rbn_buffer *buffer, int cpu, void *page)
{
	(void)cpu;
	if (page)
		rbn_port_free_pages(page, buffer->order);
}

/**
 * rbn_read_page - take a whole sub-buffer of events out of a CPU's buffer
 * @buffer:	the buffer
 * @cpu:	the CPU
 * @data_page:	in: a page from rbn_alloc_read_page(); out: the page read,
 *		which may be a different one (zero copy swap)
 * @len:	size of the page (rbn_subbuf_size())
 * @full:	only succeed for a whole sub-buffer the writer left
 *
 * A fully written sub-buffer that nothing has been read from is swapped
 * with the caller's page; otherwise the unread events are copied. The
 * commit word gets RBN_MISSED_EVENTS when events were lost before the page,
 * and RBN_MISSED_STORED with the count stored right after the data when it
 * fits. Every byte after that is zero.
 *
 * Return: the bytes of events in the page, -EAGAIN when there is nothing
 * (or with @full, no whole sub-buffer) to read, -EINVAL on bad arguments.
 */
int rbn_read_page(struct rbn_buffer *buffer, int cpu, void **data_page,
		  size_t len, bool full)
{
	struct rbn_cpu_buffer *cpu_buffer = rb_reader_cpu(buffer, cpu);
	unsigned long missed_events, commit, read, flags = 0;
	struct rbn_bpage *reader, *commit_page;
	struct rbn_event *event;
	struct rbn_page *bpage;
	int ret = -EAGAIN;

	if (!cpu_buffer || !data_page || !*data_page ||
	    len < RBN_PAGE_HDR_SIZE + RB_EVNT_MIN_SIZE ||
	    len > RBN_PAGE_HDR_SIZE + buffer->subbuf_size)
		return -EINVAL;
	len -= RBN_PAGE_HDR_SIZE;
	bpage = *data_page;

	rbn_reader_lock(&cpu_buffer->reader_lock, flags);

	reader = rb_get_reader_page(cpu_buffer);
	if (!reader)
		goto out_unlock;
	/*
	 * Where the commit is before the page's commit (see
	 * rb_get_reader_page()), the page's commit before its events.
	 */
	commit_page = READ_ONCE(cpu_buffer->commit_page);
	smp_rmb(); /* R1: commit_page, then the page's commit */
	read = reader->read;
	commit = rb_page_commit(reader);
	smp_rmb(); /* R3: the page's commit, then its events */
	event = rb_reader_event(cpu_buffer);
	missed_events = cpu_buffer->lost_events;

	if (read || len < commit - read || commit_page == reader) {
		unsigned long rpos = read, pos = 0, size;
		u64 save_timestamp;

		/* Partly read, or still being written: copy the events. */
		if (full)
			goto out_unlock;
		if (len > commit - read)
			len = commit - read;
		size = rb_event_ts_length(event);
		if (len < size)
			goto out_unlock;

		/* The copy starts at the time of the last event read. */
		save_timestamp = cpu_buffer->read_stamp;
		do {
			size = rb_event_length(event);
			memcpy(bpage->data + pos, reader->page->data + rpos, size);
			len -= size;
			rb_advance_reader(cpu_buffer);
			rpos = reader->read;
			pos += size;
			if (rpos >= commit)
				break;
			event = rb_reader_event(cpu_buffer);
			/* Keep a time extend with its event. */
			size = rb_event_ts_length(event);
		} while (len >= size);

		local_set(&bpage->commit, pos);
		bpage->time_stamp = save_timestamp;
	} else {
		/* A whole, finished sub-buffer: swap it with the caller's. */
		WRITE_ONCE(cpu_buffer->read,
			   cpu_buffer->read + rb_page_entries(reader));
		WRITE_ONCE(cpu_buffer->read_bytes,
			   cpu_buffer->read_bytes + commit);
		local_set(&bpage->commit, 0);
		bpage->time_stamp = 0;
		bpage = reader->page;
		reader->page = *data_page;
		local_set(&reader->write, 0);
		local_set(&reader->entries, 0);
		reader->read = 0;
		*data_page = bpage;
		/* Leave the padding out: room for the missed count. */
		if (reader->real_end)
			local_set(&bpage->commit, reader->real_end);
	}
	cpu_buffer->lost_events = 0;

	commit = local_read(&bpage->commit);
	ret = commit;
	if (missed_events) {
		if (buffer->subbuf_size - commit >= sizeof(missed_events)) {
			memcpy(&bpage->data[commit], &missed_events,
			       sizeof(missed_events));
			local_set(&bpage->commit, local_read(&bpage->commit) |
				  RBN_MISSED_STORED);
			commit += sizeof(missed_events);
		}
		/* The page is ours alone now: no writer races with this. */
		local_set(&bpage->commit, local_read(&bpage->commit) |
			  RBN_MISSED_EVENTS);
	}
	/* This page goes to user space: nothing stale after the data. */
	if (commit < buffer->subbuf_size)
		memset(&bpage->data[commit], 0, buffer->subbuf_size - commit);

out_unlock:
	rbn_reader_unlock(&cpu_buffer->reader_lock, flags);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Allocation and control                                             */
/* ------------------------------------------------------------------ */

static struct rbn_bpage *rb_alloc_bpage(struct rbn_buffer *buffer, int cpu)
{
	struct rbn_bpage *bpage;

	bpage = rbn_port_zalloc(sizeof(*bpage), cpu);
	if (!bpage)
		return NULL;
	bpage->page = rbn_port_alloc_pages(buffer->order, cpu);
	if (!bpage->page) {
		rbn_port_free(bpage);
		return NULL;
	}
	return bpage;
}

static void rb_free_bpage(struct rbn_buffer *buffer, struct rbn_bpage *bpage)
{
	rbn_port_free_pages(bpage->page, buffer->order);
	rbn_port_free(bpage);
}

/* A chain of @nr pages linked through next/prev, not closed. */
static struct rbn_bpage *rb_alloc_chain(struct rbn_buffer *buffer, int cpu,
					unsigned long nr,
					struct rbn_bpage **last)
{
	struct rbn_bpage *first = NULL, *prev = NULL, *bpage;
	unsigned long i;

	for (i = 0; i < nr; i++) {
		bpage = rb_alloc_bpage(buffer, cpu);
		if (!bpage)
			goto free_chain;
		if (prev) {
			prev->next = (unsigned long)bpage;
			bpage->prev = prev;
		} else {
			first = bpage;
		}
		prev = bpage;
	}
	*last = prev;
	return first;

free_chain:
	while (first) {
		bpage = first;
		first = (first == prev) ? NULL : rb_page_ptr(first->next);
		rb_free_bpage(buffer, bpage);
	}
	return NULL;
}

/* Back to empty: all pages reset, the first one head, tail and commit. */
static void rb_reset_cpu(struct rbn_cpu_buffer *cpu_buffer)
{
	struct rbn_bpage *first = cpu_buffer->pages, *page = first;

	do {
		page->next &= ~RB_FLAG_MASK;
		rb_init_bpage(page);
		page = rb_page_ptr(page->next);
	} while (page != first);

	first->prev->next |= RB_PAGE_HEAD;
	cpu_buffer->head_page = first;
	cpu_buffer->tail_page = first;
	cpu_buffer->commit_page = first;
	rb_init_bpage(cpu_buffer->reader_page);
	cpu_buffer->reader_page->next = 0;
	cpu_buffer->reader_page->prev = NULL;

	local_set(&cpu_buffer->committing, 0);
	local_set(&cpu_buffer->commits, 0);
	local64_set(&cpu_buffer->before_stamp, 0);
	local64_set(&cpu_buffer->write_stamp, 0);
	local64_set(&cpu_buffer->last_ts, 0);
	local_set(&cpu_buffer->entries, 0);
	local_set(&cpu_buffer->entries_bytes, 0);
	local_set(&cpu_buffer->overrun, 0);
	local_set(&cpu_buffer->commit_overrun, 0);
	local_set(&cpu_buffer->dropped, 0);
	local_set(&cpu_buffer->discarded, 0);
	local_set(&cpu_buffer->pages_touched, 0);
	local_set(&cpu_buffer->ts_slow, 0);
	local_set(&cpu_buffer->ts_abs, 0);
	local_set(&cpu_buffer->ts_zero, 0);
	local_set(&cpu_buffer->ts_extend, 0);
	local_set(&cpu_buffer->ts_clock_back, 0);
	local_set(&cpu_buffer->recursion, 0);
	cpu_buffer->max_depth = 0;
	local_set(&cpu_buffer->vcount, 0);
	local_set(&cpu_buffer->validate_checked, 0);
	local_set(&cpu_buffer->validate_fail, 0);
	local_set(&cpu_buffer->validate_skipped, 0);
	WRITE_ONCE(cpu_buffer->read, 0);
	WRITE_ONCE(cpu_buffer->read_bytes, 0);
	cpu_buffer->last_overrun = 0;
	cpu_buffer->lost_events = 0;
	cpu_buffer->read_stamp = 0;
}

static void rb_free_cpu_buffer(struct rbn_cpu_buffer *cpu_buffer)
{
	struct rbn_buffer *buffer = cpu_buffer->buffer;
	struct rbn_bpage *first = cpu_buffer->pages, *page, *next;

	if (first) {
		page = first;
		do {
			next = rb_page_ptr(page->next);
			rb_free_bpage(buffer, page);
			page = next;
		} while (page != first);
	}
	if (cpu_buffer->reader_page)
		rb_free_bpage(buffer, cpu_buffer->reader_page);
	rbn_port_free(cpu_buffer);
}

static struct rbn_cpu_buffer *rb_alloc_cpu_buffer(struct rbn_buffer *buffer,
						  int cpu)
{
	struct rbn_cpu_buffer *cpu_buffer;
	struct rbn_bpage *first, *last;

	cpu_buffer = rbn_port_zalloc(sizeof(*cpu_buffer), cpu);
	if (!cpu_buffer)
		return NULL;
	cpu_buffer->buffer = buffer;
	cpu_buffer->cpu = cpu;
	rbn_reader_lock_init(&cpu_buffer->reader_lock);

	cpu_buffer->reader_page = rb_alloc_bpage(buffer, cpu);
	if (!cpu_buffer->reader_page)
		goto free_cpu_buffer;

	first = rb_alloc_chain(buffer, cpu, buffer->nr_pages, &last);
	if (!first)
		goto free_reader_page;
	last->next = (unsigned long)first;
	first->prev = last;
	cpu_buffer->pages = first;
	cpu_buffer->nr_pages = buffer->nr_pages;

	rb_reset_cpu(cpu_buffer);
	return cpu_buffer;

free_reader_page:
	rb_free_bpage(buffer, cpu_buffer->reader_page);
free_cpu_buffer:
	rbn_port_free(cpu_buffer);
	return NULL;
}

static unsigned long rb_size_to_pages(struct rbn_buffer *buffer,
				      unsigned long size)
{
	/* Not DIV_ROUND_UP(): it wraps for sizes near ULONG_MAX. */
	unsigned long nr = size / buffer->subbuf_size +
		!!(size % buffer->subbuf_size);

	return nr < 2 ? 2 : nr;
}

/**
 * rbn_alloc - allocate a buffer
 * @cfg:	size per CPU, sub-buffer order, mode, clock, CPUs
 *
 * Return: the buffer, or ERR_PTR(-EINVAL) for a bad configuration,
 * ERR_PTR(-ENOMEM).
 */
struct rbn_buffer *rbn_alloc(const struct rbn_config *cfg)
{
	struct rbn_buffer *buffer;
	int cpu;

	if (!cfg || !cfg->size || cfg->order > RBN_MAX_ORDER ||
	    cfg->nr_cpus < 0 || cfg->nr_cpus > rbn_port_nr_cpus())
		return ERR_PTR(-EINVAL);
	if (!cfg->clock && !RBN_PORT_HAS_DEFAULT_CLOCK)
		return ERR_PTR(-EINVAL);

	buffer = rbn_port_zalloc(sizeof(*buffer), 0);
	if (!buffer)
		return ERR_PTR(-ENOMEM);
	buffer->order = cfg->order;
	buffer->subbuf_size = (PAGE_SIZE << cfg->order) - RBN_PAGE_HDR_SIZE;
	/*
	 * The largest payload still fits a sub-buffer with a large-event
	 * header and a time extend in front of it.
	 */
	buffer->max_data_size = buffer->subbuf_size - RBN_EVENT_HDR_SIZE -
		sizeof(u32) - RBN_LEN_TIME_EXTEND;
	buffer->overwrite = cfg->overwrite;
	buffer->abs_ts = cfg->abs_ts;
	buffer->clock = cfg->clock ? cfg->clock : RBN_PORT_DEFAULT_CLOCK;
	buffer->nr_cpus = cfg->nr_cpus ? cfg->nr_cpus : rbn_port_nr_cpus();
	buffer->nr_pages = rb_size_to_pages(buffer, cfg->size);
	if (buffer->nr_pages > RB_WRITE_MASK) {
		rbn_port_free(buffer);
		return ERR_PTR(-EINVAL);
	}

	buffer->cpu_buffers = rbn_port_zalloc(buffer->nr_cpus *
					      sizeof(*buffer->cpu_buffers), 0);
	if (!buffer->cpu_buffers)
		goto free_buffer;

	for (cpu = 0; cpu < buffer->nr_cpus; cpu++) {
		buffer->cpu_buffers[cpu] = rb_alloc_cpu_buffer(buffer, cpu);
		if (!buffer->cpu_buffers[cpu])
			goto free_cpu_buffers;
	}
	if (cfg->validate)
		rbn_set_validate(buffer, true);
	return buffer;

free_cpu_buffers:
	while (--cpu >= 0)
		rb_free_cpu_buffer(buffer->cpu_buffers[cpu]);
	rbn_port_free(buffer->cpu_buffers);
free_buffer:
	rbn_port_free(buffer);
	return ERR_PTR(-ENOMEM);
}

/**
 * rbn_free - free a buffer; no writer or reader may use it any more
 * @buffer:	the buffer, or NULL
 *
 * Context: task; may sleep (a validating buffer lets the static key go).
 */
void rbn_free(struct rbn_buffer *buffer)
{
	int cpu;

	if (IS_ERR_OR_NULL(buffer))
		return;
	rbn_set_validate(buffer, false);
	for (cpu = 0; cpu < buffer->nr_cpus; cpu++)
		rb_free_cpu_buffer(buffer->cpu_buffers[cpu]);
	rbn_port_free(buffer->cpu_buffers);
	rbn_port_free(buffer);
}

/* Stop the writers and wait until none is inside the write path. */
static void rb_quiesce(struct rbn_buffer *buffer)
{
	atomic_inc(&buffer->record_disabled);
	rbn_port_synchronize_writers();
}

static void rb_unquiesce(struct rbn_buffer *buffer)
{
	atomic_dec(&buffer->record_disabled);
}

/* With the writers quiesced: empty a CPU's buffer, against its readers. */
static void rb_reset_cpu_reader(struct rbn_cpu_buffer *cpu_buffer)
{
	unsigned long flags = 0;

	rbn_reader_lock(&cpu_buffer->reader_lock, flags);
	rb_reset_cpu(cpu_buffer);
	WRITE_ONCE(cpu_buffer->resets, cpu_buffer->resets + 1);
	rbn_reader_unlock(&cpu_buffer->reader_lock, flags);
}

/**
 * rbn_reset_cpu - drop everything in one CPU's buffer and its counters
 * @buffer:	the buffer
 * @cpu:	the CPU
 *
 * May sleep (waits for writers in progress).
 */
void rbn_reset_cpu(struct rbn_buffer *buffer, int cpu)
{
	struct rbn_cpu_buffer *cpu_buffer = rb_reader_cpu(buffer, cpu);

	if (!cpu_buffer)
		return;
	rb_quiesce(buffer);
	rb_reset_cpu_reader(cpu_buffer);
	rb_unquiesce(buffer);
}

/**
 * rbn_cpu_resets - how many times a CPU's buffer was reset
 * @buffer:	the buffer
 * @cpu:	the CPU
 *
 * A generation number for readers that wait: it changes with every
 * rbn_reset_cpu() and rbn_reset() of @cpu, and never otherwise. Lockless;
 * any context.
 *
 * Return: the count, 0 for a CPU out of range.
 */
unsigned long rbn_cpu_resets(struct rbn_buffer *buffer, int cpu)
{
	struct rbn_cpu_buffer *cpu_buffer = rb_reader_cpu(buffer, cpu);

	return cpu_buffer ? READ_ONCE(cpu_buffer->resets) : 0;
}

/**
 * rbn_reset - drop everything in all CPU buffers and their counters
 * @buffer:	the buffer
 *
 * May sleep (waits for writers in progress).
 */
void rbn_reset(struct rbn_buffer *buffer)
{
	/* One wait for the writers of every CPU. */
	rb_quiesce(buffer);
	rbn_reset_stopped(buffer);
	rb_unquiesce(buffer);
}

/**
 * rbn_reset_stopped - rbn_reset() for a caller that stopped the writers
 * @buffer:	the buffer
 *
 * For a caller with more to do while nothing writes (the module switches
 * the clock): it turned recording off with rbn_record_disable() and waited
 * for the writers in the write path (rbn_port_synchronize_writers(), a
 * grace period in the kernel) before the call, and turns recording on
 * again after it. The writers of every CPU are waited for once, by the
 * caller. May sleep where the reader lock does (PREEMPT_RT).
 */
void rbn_reset_stopped(struct rbn_buffer *buffer)
{
	int cpu;

	RBN_WARN_ON(!atomic_read(&buffer->record_disabled));
	for (cpu = 0; cpu < buffer->nr_cpus; cpu++)
		rb_reset_cpu_reader(buffer->cpu_buffers[cpu]);
}

/*
 * Sub-buffers are added and removed right after an anchor page: the tail
 * page, or when a reader took the tail page out of the ring (it caught up
 * with the writer), the ring page in front of the head. Either way the
 * pages after the anchor up to the head hold nothing unread.
 */
static struct rbn_bpage *rb_resize_anchor(struct rbn_cpu_buffer *cpu_buffer)
{
	if (rb_is_reader_page(cpu_buffer->tail_page))
		return rb_set_head_page(cpu_buffer)->prev;
	return cpu_buffer->tail_page;
}

static unsigned long rb_free_pages(struct rbn_cpu_buffer *cpu_buffer)
{
	struct rbn_bpage *page = cpu_buffer->tail_page;
	unsigned long nr = 0;

	if (rb_is_reader_page(page))
		return cpu_buffer->nr_pages;
	while (rb_is_head_page(rb_next_page(page), page) == RB_PAGE_NORMAL &&
	       rb_next_page(page) != cpu_buffer->tail_page) {
		page = rb_next_page(page);
		nr++;
	}
	return nr;
}

static void rb_insert_pages(struct rbn_cpu_buffer *cpu_buffer,
			    struct rbn_bpage *first, struct rbn_bpage *last)
{
	struct rbn_bpage *anchor = rb_resize_anchor(cpu_buffer);

	/* The last new page takes over the anchor's link and its flag. */
	last->next = anchor->next;
	rb_next_page(anchor)->prev = last;
	first->prev = anchor;
	anchor->next = (unsigned long)first;
}

/*
 * Unlink @nr sub-buffers behind the anchor; they stay linked to each other
 * from *@first to *@last, to be freed by the caller once it dropped
 * reader_lock: a raw spinlock, under which freeing may not sleep on
 * PREEMPT_RT.
 */
static void rb_remove_pages(struct rbn_cpu_buffer *cpu_buffer,
			    unsigned long nr, struct rbn_bpage **first,
			    struct rbn_bpage **last)
{
	struct rbn_bpage *anchor = rb_resize_anchor(cpu_buffer);
	struct rbn_bpage *page;

	*first = nr ? rb_next_page(anchor) : NULL;
	for (; nr; nr--) {
		page = rb_next_page(anchor);
		/* A HEAD flag on either link ends up on the new one. */
		anchor->next = (unsigned long)rb_next_page(page) |
			(anchor->next & RB_FLAG_MASK) |
			(page->next & RB_FLAG_MASK);
		rb_next_page(anchor)->prev = anchor;
		*last = page;
	}
	/* A writer on the reader page goes on to the new head. */
	if (rb_is_reader_page(cpu_buffer->tail_page))
		cpu_buffer->tail_page->next = (unsigned long)rb_next_page(anchor);
	cpu_buffer->pages = anchor;
	cpu_buffer->head_page = anchor;
}

/**
 * rbn_resize - change the number of sub-buffers of every CPU
 * @buffer:	the buffer
 * @size:	new size per CPU in bytes
 *
 * Growing adds empty sub-buffers behind the tail. Shrinking removes
 * sub-buffers behind the tail that hold nothing unread; if unread data would
 * have to go, nothing changes. May sleep.
 *
 * Return: 0, -EINVAL for a bad size, -ENOMEM, -EBUSY when shrinking would
 * drop unread events. On error the buffer is unchanged.
 */
int rbn_resize(struct rbn_buffer *buffer, unsigned long size)
{
	struct rbn_bpage **first, **last;
	unsigned long nr_pages, flags = 0;
	int cpu, ret = 0;

	if (!size)
		return -EINVAL;
	nr_pages = rb_size_to_pages(buffer, size);
	if (nr_pages > RB_WRITE_MASK)
		return -EINVAL;
	if (nr_pages == buffer->nr_pages)
		return 0;

	first = rbn_port_zalloc(2 * buffer->nr_cpus * sizeof(*first), 0);
	if (!first)
		return -ENOMEM;
	last = first + buffer->nr_cpus;

	if (nr_pages > buffer->nr_pages) {
		for (cpu = 0; cpu < buffer->nr_cpus; cpu++) {
			first[cpu] = rb_alloc_chain(buffer, cpu,
						    nr_pages - buffer->nr_pages,
						    &last[cpu]);
			if (!first[cpu]) {
				ret = -ENOMEM;
				goto free_chains;
			}
		}
	}

	rb_quiesce(buffer);
	/* The validator's notes may point to sub-buffers freed below. */
	atomic_inc(&rb_validate_gen);
	/*
	 * With the writers stopped, readers can only free more pages: if
	 * every CPU has enough now, it still has when we remove them.
	 */
	for (cpu = 0; cpu < buffer->nr_cpus && nr_pages < buffer->nr_pages; cpu++) {
		struct rbn_cpu_buffer *cpu_buffer = buffer->cpu_buffers[cpu];
		unsigned long nr_free;

		rbn_reader_lock(&cpu_buffer->reader_lock, flags);
		nr_free = rb_free_pages(cpu_buffer);
		rbn_reader_unlock(&cpu_buffer->reader_lock, flags);
		if (nr_free < buffer->nr_pages - nr_pages) {
			ret = -EBUSY;
			goto unquiesce;
		}
	}

	for (cpu = 0; cpu < buffer->nr_cpus; cpu++) {
		struct rbn_cpu_buffer *cpu_buffer = buffer->cpu_buffers[cpu];

		rbn_reader_lock(&cpu_buffer->reader_lock, flags);
		if (first[cpu]) {
			rb_insert_pages(cpu_buffer, first[cpu], last[cpu]);
			first[cpu] = NULL;
		} else {
			/* Freed below, after the lock. */
			rb_remove_pages(cpu_buffer,
					cpu_buffer->nr_pages - nr_pages,
					&first[cpu], &last[cpu]);
		}
		cpu_buffer->nr_pages = nr_pages;
		rb_set_head_page(cpu_buffer);
		rbn_reader_unlock(&cpu_buffer->reader_lock, flags);
	}
	buffer->nr_pages = nr_pages;

unquiesce:
	rb_unquiesce(buffer);
free_chains:
	/* New pages not linked in, and the pages unlinked above. */
	for (cpu = 0; cpu < buffer->nr_cpus; cpu++) {
		struct rbn_bpage *page = first[cpu], *next;

		while (page) {
			next = page == last[cpu] ? NULL : rb_page_ptr(page->next);
			rb_free_bpage(buffer, page);
			page = next;
		}
	}
	rbn_port_free(first);
	return ret;
}

/**
 * rbn_record_disable - make writers drop events (not counted)
 * @buffer:	the buffer
 *
 * Calls nest: each needs a rbn_record_enable().
 */
void rbn_record_disable(struct rbn_buffer *buffer)
{
	atomic_inc(&buffer->record_disabled);
}

/**
 * rbn_record_enable - undo one rbn_record_disable()
 * @buffer:	the buffer
 */
void rbn_record_enable(struct rbn_buffer *buffer)
{
	atomic_dec(&buffer->record_disabled);
}

/**
 * rbn_record_is_on - whether writers record
 * @buffer:	the buffer
 *
 * Return: true when recording is on.
 */
bool rbn_record_is_on(struct rbn_buffer *buffer)
{
	return !atomic_read(&buffer->record_disabled);
}

/**
 * rbn_nr_cpus - number of per-CPU buffers
 * @buffer:	the buffer
 *
 * Return: the number of CPUs.
 */
int rbn_nr_cpus(struct rbn_buffer *buffer)
{
	return buffer->nr_cpus;
}

/**
 * rbn_subbuf_size - bytes of a sub-buffer, header included
 * @buffer:	the buffer
 *
 * Return: PAGE_SIZE << order.
 */
unsigned int rbn_subbuf_size(struct rbn_buffer *buffer)
{
	return buffer->subbuf_size + RBN_PAGE_HDR_SIZE;
}

/**
 * rbn_max_event_size - the largest payload rbn_reserve() accepts
 * @buffer:	the buffer
 *
 * Return: bytes.
 */
unsigned int rbn_max_event_size(struct rbn_buffer *buffer)
{
	return buffer->max_data_size;
}

/**
 * rbn_nr_subbufs - sub-buffers in each CPU's ring (the reader page aside)
 * @buffer:	the buffer
 *
 * Return: the number of sub-buffers.
 */
unsigned long rbn_nr_subbufs(struct rbn_buffer *buffer)
{
	return buffer->nr_pages;
}

/**
 * rbn_size - bytes of event space per CPU
 * @buffer:	the buffer
 *
 * Return: sub-buffers times their data size.
 */
unsigned long rbn_size(struct rbn_buffer *buffer)
{
	return buffer->nr_pages * buffer->subbuf_size;
}

/**
 * rbn_clock - read the buffer's clock
 * @buffer:	the buffer
 *
 * Return: the clock value.
 */
u64 rbn_clock(struct rbn_buffer *buffer)
{
	return rb_time_stamp(buffer);
}

/* Swapping CPU buffers needs the same geometry, clock and mode. */
static int rb_swap_check(struct rbn_buffer *a, struct rbn_buffer *b, int cpu)
{
	if (!a || !b || a == b || cpu < 0 || cpu >= a->nr_cpus ||
	    cpu >= b->nr_cpus)
		return -EINVAL;
	if (a->order != b->order || a->clock != b->clock ||
	    a->abs_ts != b->abs_ts || a->overwrite != b->overwrite)
		return -EINVAL;
	if (a->cpu_buffers[cpu]->nr_pages != b->cpu_buffers[cpu]->nr_pages)
		return -EINVAL;
	return 0;
}

/* The swap itself, on @cpu (or with no writer of @cpu possible). */
static int rb_swap_one(struct rbn_buffer *a, struct rbn_buffer *b, int cpu)
{
	struct rbn_cpu_buffer *ca = a->cpu_buffers[cpu];
	struct rbn_cpu_buffer *cb = b->cpu_buffers[cpu];

	/*
	 * A writer of this CPU holds its bit from its lock to the end of
	 * its commit: one we interrupted there keeps its CPU buffer, and we
	 * refuse. One we interrupted before its lock finds the buffers
	 * swapped once it holds it, and writes in its new one.
	 *
	 * A writer that interrupts us (an NMI) runs to its end before we go
	 * on: nested here or before the stores, it writes in the old CPU
	 * buffer, an event older than the swap; after them, in the new one.
	 * Nested between the stores (no label: one instruction each) it
	 * may find a CPU buffer whose back pointer is still the other
	 * buffer: the write path reads the clock, the mode, the overwrite
	 * flag and the sub-buffer size there, which is why they must agree.
	 */
	RBN_HOOK(a, cpu, RBN_LABEL_SWAP);
	if (READ_ONCE(ca->current_context) || READ_ONCE(cb->current_context))
		return -EBUSY;
	WRITE_ONCE(a->cpu_buffers[cpu], cb);
	WRITE_ONCE(b->cpu_buffers[cpu], ca);
	WRITE_ONCE(ca->buffer, b);
	WRITE_ONCE(cb->buffer, a);
	RBN_HOOK(a, cpu, RBN_LABEL_SWAP_DONE);
	return 0;
}

/**
 * rbn_swap_cpu - swap the ring of a CPU between two buffers (a snapshot)
 * @a:		a buffer
 * @b:		another buffer of the same geometry, clock, mode and CPUs
 * @cpu:	the CPU; the call runs on it
 *
 * The 2008 API's ring_buffer_swap_cpu(): afterwards @a's ring of @cpu
 * holds what @b's held, and @b's what @a's held, readers' positions and
 * counters included. Runs on @cpu with interrupts off (rbn_swap() calls
 * it through an IPI), or with the CPU's writers stopped: a writer of
 * @cpu interrupted before it locked its recursion bit finds its CPU
 * buffer moved and writes in the new one, and one that interrupts the
 * swap (an NMI) writes before or after it. A reader on another CPU that
 * holds a CPU buffer keeps reading it, in its new buffer. Resizes and
 * resets of the two buffers must not run at the same time.
 *
 * Return: 0; -EINVAL for a @cpu out of range or not the current CPU,
 * @a == @b, or buffers that differ in sub-buffer size, pages of @cpu,
 * clock, mode or overwrite; -EBUSY when a writer of @cpu is between its
 * reserve and its commit in either buffer (as mainline's -EBUSY for a
 * commit in progress), and nothing is swapped.
 */
int rbn_swap_cpu(struct rbn_buffer *a, struct rbn_buffer *b, int cpu)
{
	int ret;

	ret = rb_swap_check(a, b, cpu);
	if (ret)
		return ret;
	if (cpu != rbn_port_cpu())
		return -EINVAL;
	return rb_swap_one(a, b, cpu);
}

struct rb_swap_arg {
	struct rbn_buffer *a;
	struct rbn_buffer *b;
	int cpu;
	int ret;
};

static void rb_swap_on_cpu(void *data)
{
	struct rb_swap_arg *arg = data;

	arg->ret = rb_swap_one(arg->a, arg->b, arg->cpu);
}

/* Tries per CPU of rbn_swap() while a writer is in its commit there. */
#define RBN_SWAP_TRIES	100

/**
 * rbn_swap - swap the rings of every CPU between two buffers
 * @a:		a buffer
 * @b:		another buffer of the same geometry, clock, mode and CPUs
 *
 * rbn_swap_cpu() on each CPU in turn, run there by an IPI (on a CPU
 * that is not online, here), tried again while a writer of that CPU is
 * between its reserve and its commit. Each CPU's ring is in one buffer
 * or the other, never in both: an event is in the snapshot or in the
 * live buffer. The CPUs are not swapped at one instant: a CPU swapped
 * later has events of the time in between in the ring that goes out.
 * Task context; resizes and resets of the two buffers must not run at
 * the same time, nor another swap of either.
 *
 * Return: 0; -EINVAL as rbn_swap_cpu() for any CPU (nothing swapped);
 * -EBUSY when a CPU stayed busy for %RBN_SWAP_TRIES tries: the CPUs
 * before it are swapped, it and those after it are not.
 */
int rbn_swap(struct rbn_buffer *a, struct rbn_buffer *b)
{
	struct rb_swap_arg arg = { .a = a, .b = b };
	int tries;

	if (!a || !b || a->nr_cpus != b->nr_cpus)
		return -EINVAL;
	for (arg.cpu = 0; arg.cpu < a->nr_cpus; arg.cpu++) {
		arg.ret = rb_swap_check(a, b, arg.cpu);
		if (arg.ret)
			return arg.ret;
	}
	for (arg.cpu = 0; arg.cpu < a->nr_cpus; arg.cpu++) {
		for (tries = 0; tries < RBN_SWAP_TRIES; tries++) {
			rbn_port_on_cpu(arg.cpu, rb_swap_on_cpu, &arg);
			if (arg.ret != -EBUSY)
				break;
		}
		if (arg.ret)
			return arg.ret;
	}
	return 0;
}

/**
 * rbn_set_time_stamp_abs - switch the absolute time-stamp mode
 * @buffer:	the buffer
 * @abs:	true: every event carries its full time in an absolute stamp,
 *		except a sandwiched one (RBN_EV_ZERO_DELTA); false: deltas
 *
 * Only a buffer with nothing unread changes mode (after rbn_reset(), or
 * once everything was read), so that a recording has one mode, as a
 * buffer has one clock. The check is a snapshot: a writer between its
 * reserve and its own accounting is not seen, and the caller stops the
 * writers first if it needs one mode per recording (the module resets
 * the buffer with recording off and a grace period). A writer that
 * races with the change writes its event in one mode or the other; the
 * stamps that nested writers share are kept in both modes, so a writer
 * of one mode nested in a writer of the other is exact too.
 *
 * Return: 0, or -EBUSY when a CPU holds data (the mode is unchanged).
 */
int rbn_set_time_stamp_abs(struct rbn_buffer *buffer, bool abs)
{
	int cpu;

	for (cpu = 0; cpu < buffer->nr_cpus; cpu++) {
		struct rbn_cpu_buffer *cpu_buffer = buffer->cpu_buffers[cpu];

		/* Bytes reserved and not read (a snapshot). */
		if (local_read(&cpu_buffer->entries_bytes) !=
		    READ_ONCE(cpu_buffer->read_bytes))
			return -EBUSY;
	}
	WRITE_ONCE(buffer->abs_ts, abs);
	return 0;
}

/**
 * rbn_time_stamp_abs - whether the buffer is in absolute time-stamp mode
 * @buffer:	the buffer
 *
 * Return: true in absolute mode.
 */
bool rbn_time_stamp_abs(struct rbn_buffer *buffer)
{
	return READ_ONCE(buffer->abs_ts);
}

/**
 * rbn_cpu_published - whether every event reserved on a CPU is published
 * @buffer:	the buffer
 * @cpu:	the CPU
 *
 * True when the commit is at the tail and the tail page's commit equals
 * its write index: a reader can see every event reserved so far. That
 * must hold whenever no writer is between rbn_reserve() and the return of
 * rbn_commit() on @cpu, in particular right after the outermost writer's
 * commit. For tests and debugging: call it on @cpu outside any writer,
 * never alongside rbn_resize(), rbn_free() or a reader taking pages of
 * @cpu (it reads the tail page without the reader lock).
 *
 * Return: true when everything is published, false otherwise or for a CPU
 * out of range.
 */
bool rbn_cpu_published(struct rbn_buffer *buffer, int cpu)
{
	struct rbn_cpu_buffer *cpu_buffer;
	struct rbn_bpage *tail;

	if (cpu < 0 || cpu >= buffer->nr_cpus)
		return false;
	cpu_buffer = buffer->cpu_buffers[cpu];
	tail = READ_ONCE(cpu_buffer->tail_page);
	return READ_ONCE(cpu_buffer->commit_page) == tail &&
	       rb_page_commit(tail) == rb_page_write(tail);
}

/**
 * rbn_cpu_head_updating - is a writer of a CPU pushing the head page
 * @buffer:	the buffer
 * @cpu:	the CPU
 *
 * True when a page of @cpu's ring carries the UPDATE flag: a writer is
 * between its HEAD -> UPDATE and UPDATE -> NORMAL, and a reader that
 * swaps the head page out spins until it is done. For tests that run a
 * reader nested in a writer on one thread: they call it from the writer's
 * test hook, on @cpu's thread, to keep the reader out of there. Never
 * alongside a reader of @cpu on another thread, rbn_resize() or
 * rbn_free(): it walks the ring without the reader lock.
 *
 * Return: true while a head push is under way, false otherwise or for a
 * CPU out of range.
 */
bool rbn_cpu_head_updating(struct rbn_buffer *buffer, int cpu)
{
	struct rbn_cpu_buffer *cpu_buffer;
	struct rbn_bpage *page;
	unsigned long i;

	if (cpu < 0 || cpu >= buffer->nr_cpus)
		return false;
	cpu_buffer = buffer->cpu_buffers[cpu];
	page = cpu_buffer->head_page;
	for (i = 0; i < cpu_buffer->nr_pages; i++) {
		unsigned long next = READ_ONCE(page->next);

		if ((next & RB_FLAG_MASK) == RB_PAGE_UPDATE)
			return true;
		page = rb_page_ptr(next);
	}
	return false;
}

/**
 * rbn_cpu_stats - the counters of one CPU
 * @buffer:	the buffer
 * @cpu:	the CPU
 * @stats:	filled in
 *
 * Return: 0, or -EINVAL for a CPU out of range.
 */
int rbn_cpu_stats(struct rbn_buffer *buffer, int cpu,
		  struct rbn_cpu_stats *stats)
{
	struct rbn_cpu_buffer *cpu_buffer = rb_reader_cpu(buffer, cpu);
	unsigned long flags = 0;
	struct rbn_bpage *page;

	if (!cpu_buffer || !stats)
		return -EINVAL;
	memset(stats, 0, sizeof(*stats));

	rbn_reader_lock(&cpu_buffer->reader_lock, flags);
	stats->written = local_read(&cpu_buffer->entries);
	stats->overrun = local_read(&cpu_buffer->overrun);
	stats->read = cpu_buffer->read;
	stats->entries = rb_num_of_entries(cpu_buffer);
	stats->bytes = local_read(&cpu_buffer->entries_bytes) -
		cpu_buffer->read_bytes;
	page = cpu_buffer->reader_page;
	if (page->read >= rb_page_commit(page))
		page = rb_set_head_page(cpu_buffer);
	stats->oldest_ts = page ? READ_ONCE(page->page->time_stamp) : 0;
	rbn_reader_unlock(&cpu_buffer->reader_lock, flags);

	stats->commit_overrun = local_read(&cpu_buffer->commit_overrun);
	stats->dropped = local_read(&cpu_buffer->dropped);
	stats->now_ts = rb_time_stamp(buffer);
	stats->ts_slow = local_read(&cpu_buffer->ts_slow);
	stats->ts_abs = local_read(&cpu_buffer->ts_abs);
	stats->ts_zero = local_read(&cpu_buffer->ts_zero);
	stats->ts_extend = local_read(&cpu_buffer->ts_extend);
	stats->ts_clock_back = local_read(&cpu_buffer->ts_clock_back);
	stats->discarded = local_read(&cpu_buffer->discarded);
	/* The path counters count reserves: discarded events too. */
	stats->ts_fast = stats->written + stats->discarded > stats->ts_slow ?
		stats->written + stats->discarded - stats->ts_slow : 0;
	stats->max_depth = READ_ONCE(cpu_buffer->max_depth);
	stats->recursion = local_read(&cpu_buffer->recursion);
	stats->pages_touched = local_read(&cpu_buffer->pages_touched);
	stats->validate_checked = local_read(&cpu_buffer->validate_checked);
	stats->validate_fail = local_read(&cpu_buffer->validate_fail);
	stats->validate_skipped = local_read(&cpu_buffer->validate_skipped);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Fill level, for readers that wait                                  */
/* ------------------------------------------------------------------ */

/*
 * Under the reader lock: the sub-buffer that holds the oldest unread
 * events, or NULL when everything committed has been read. @commit_page
 * was read before the commits of the pages, as in rb_get_reader_page().
 * Unlike rb_get_reader_page(), this never swaps a page.
 */
static struct rbn_bpage *rb_first_unread(struct rbn_cpu_buffer *cpu_buffer,
					 struct rbn_bpage *commit_page)
{
	struct rbn_bpage *reader = cpu_buffer->reader_page;
	struct rbn_bpage *head;

	if (reader->read < rb_page_commit(reader))
		return reader;
	/* The writer is on the reader page: all it committed is read. */
	if (commit_page == reader)
		return NULL;
	head = rb_set_head_page(cpu_buffer);
	if (!head || (head == commit_page && !rb_page_commit(head)))
		return NULL;
	return head;
}

/**
 * rbn_cpu_percent_full - whether a CPU's buffer is filled to a watermark
 * @buffer:	the buffer
 * @cpu:	the CPU
 * @percent:	0 for "any committed event is unread", else 1..100
 *
 * The fill level counts the bytes reserved and not yet read (events,
 * stamps and paddings) plus one sub-buffer, against the size of the ring,
 * as ftrace's buffer_percent does: 100 is reached when all but one
 * sub-buffer are full. A committed unread event is required at any level.
 *
 * Lockless: it reads the counters only, and never the reader lock. A
 * writer, and whatever a writer queues to run on top of itself, may call
 * it in any context up to NMI. It must: a reader on another CPU may hold
 * the reader lock while it waits for this CPU's writer to finish pushing
 * the head page (rb_get_reader_page()), so a writer that waits for the
 * lock never finishes. A reader's counters are read as one word each and
 * may be a read behind, which only delays a wake-up until the next commit.
 *
 * Return: true when the watermark is reached.
 */
bool rbn_cpu_percent_full(struct rbn_buffer *buffer, int cpu,
			  unsigned int percent)
{
	struct rbn_cpu_buffer *cpu_buffer = rb_reader_cpu(buffer, cpu);
	long unread;

	if (!cpu_buffer)
		return false;
	/* Committed, neither overwritten nor read: rb_num_of_entries(). */
	if ((long)(local_read(&cpu_buffer->entries) -
		   local_read(&cpu_buffer->overrun) -
		   READ_ONCE(cpu_buffer->read)) <= 0)
		return false;
	if (!percent)
		return true;
	unread = local_read(&cpu_buffer->entries_bytes) -
		 (long)READ_ONCE(cpu_buffer->read_bytes);
	if (unread < 0)
		unread = 0;
	return ((u64)unread + buffer->subbuf_size) * 100 >=
		(u64)percent * buffer->nr_pages * buffer->subbuf_size;
}

/**
 * rbn_cpu_readable - whether a reader can take a CPU's events now
 * @buffer:	the buffer
 * @cpu:	the CPU
 * @percent:	the watermark, as for rbn_cpu_percent_full()
 *
 * For readers deciding whether to wait: rbn_cpu_percent_full(), and a
 * committed unread event that rbn_consume() or rbn_read_page() finds now.
 * The counters can run ahead of what is published for a moment (nested
 * events count before the outermost writer publishes them); a reader
 * that trusted them alone could spin on a buffer it cannot read yet.
 * Takes the reader lock; never moves the reader. Not for writers, nor
 * for anything they queue: see rbn_cpu_percent_full().
 *
 * Return: true when the watermark is reached and there is data to take.
 */
bool rbn_cpu_readable(struct rbn_buffer *buffer, int cpu, unsigned int percent)
{
	struct rbn_cpu_buffer *cpu_buffer = rb_reader_cpu(buffer, cpu);
	struct rbn_bpage *commit_page, *first;
	unsigned long flags = 0;

	if (!rbn_cpu_percent_full(buffer, cpu, percent))
		return false;
	rbn_reader_lock(&cpu_buffer->reader_lock, flags);
	commit_page = READ_ONCE(cpu_buffer->commit_page);
	smp_rmb(); /* R1: commit_page, then the pages' commits */
	first = rb_first_unread(cpu_buffer, commit_page);
	rbn_reader_unlock(&cpu_buffer->reader_lock, flags);
	return first;
}

/**
 * rbn_cpu_subbuf_ready - whether the oldest unread sub-buffer is complete
 * @buffer:	the buffer
 * @cpu:	the CPU
 *
 * Complete means the writer has moved on from it, so its commit is final:
 * rbn_read_page() with @full succeeds on it unless part of it was read
 * already, and then a read without @full returns its final rest. Takes
 * the reader lock; never moves the reader. Callable from any context but
 * NMI.
 *
 * Return: true when such a sub-buffer is there.
 */
bool rbn_cpu_subbuf_ready(struct rbn_buffer *buffer, int cpu)
{
	struct rbn_cpu_buffer *cpu_buffer = rb_reader_cpu(buffer, cpu);
	struct rbn_bpage *commit_page, *first;
	unsigned long flags = 0;

	if (!cpu_buffer)
		return false;
	rbn_reader_lock(&cpu_buffer->reader_lock, flags);
	commit_page = READ_ONCE(cpu_buffer->commit_page);
	smp_rmb(); /* commit_page, then the pages' commits */
	first = rb_first_unread(cpu_buffer, commit_page);
	rbn_reader_unlock(&cpu_buffer->reader_lock, flags);
	return first && first != commit_page;
}

/* ------------------------------------------------------------------ */
/* Non-consuming iterator                                             */
/* ------------------------------------------------------------------ */

/*
 * An iterator walks a snapshot: from the consumer's read position (the
 * reader page, or the head page if the reader page is used up) through the
 * ring up to where the commit was when the iterator started. Recording is
 * off while it exists, so nothing in that range changes unless a consuming
 * reader takes it: then the iterator ends (see rb_iter_valid()).
 */
struct rbn_iter {
	struct rbn_cpu_buffer *cpu_buffer;
	struct rbn_bpage *page;		/* current sub-buffer; NULL: the end */
	unsigned long index;		/* offset of the next entry in data[] */
	u64 stamp;			/* full time before that entry */
	unsigned long nr_pages;		/* sub-buffers stepped onto */
	struct rbn_bpage *commit_page;	/* the snapshot ends on this page */
	unsigned long commit;		/* ... at this offset */
	/* What the consumer looked like at the snapshot. */
	struct rbn_bpage *cache_reader;
	unsigned long cache_read;
	unsigned long cache_entries;
	struct rbn_event *event;	/* copy of the current event */
};

/* Under the reader lock: start at the consumer's position. */
static void rb_iter_snapshot(struct rbn_iter *iter)
{
	struct rbn_cpu_buffer *cpu_buffer = iter->cpu_buffer;
	struct rbn_bpage *reader;

	/* Brings in the head page if the reader page is used up. */
	reader = rb_get_reader_page(cpu_buffer);
	iter->commit_page = READ_ONCE(cpu_buffer->commit_page);
	smp_rmb(); /* commit_page, then its commit */
	iter->commit = rb_page_commit(iter->commit_page);
	iter->cache_reader = cpu_buffer->reader_page;
	iter->cache_read = cpu_buffer->read;
	iter->cache_entries = local_read(&cpu_buffer->entries);
	iter->nr_pages = 0;
	iter->page = reader;
	if (reader) {
		iter->index = reader->read;
		iter->stamp = cpu_buffer->read_stamp;
	}
}

/* Under the reader lock: nothing was consumed or reset since the snapshot. */
static bool rb_iter_valid(struct rbn_iter *iter)
{
	struct rbn_cpu_buffer *cpu_buffer = iter->cpu_buffer;

	return cpu_buffer->reader_page == iter->cache_reader &&
	       cpu_buffer->read == iter->cache_read &&
	       local_read(&cpu_buffer->entries) == iter->cache_entries;
}

/*
 * Under the reader lock: the data event at the iterator, or NULL at the
 * end. Time extends, absolute stamps and paddings on the way are applied
 * to the stamp and skipped, as the consuming reader does.
 */
static struct rbn_event *rb_iter_event(struct rbn_iter *iter)
{
	struct rbn_cpu_buffer *cpu_buffer = iter->cpu_buffer;
	struct rbn_event *event;
	unsigned long end, len;
	struct rbn_bpage *next;

	if (iter->page && !rb_iter_valid(iter))
		iter->page = NULL;

	while (iter->page) {
		end = iter->page == iter->commit_page ? iter->commit :
			rb_page_commit(iter->page);
		if (iter->index >= end) {
			if (iter->page == iter->commit_page)
				break;
			next = rb_next_page(iter->page);
			/* The snapshot is at most the ring plus the reader page. */
			if (RBN_WARN_ON(!next ||
					++iter->nr_pages > cpu_buffer->nr_pages))
				break;
			iter->page = next;
			iter->index = 0;
			iter->stamp = READ_ONCE(next->page->time_stamp);
			continue;
		}
		event = (struct rbn_event *)(iter->page->page->data + iter->index);
		len = rb_event_length(event);
		if (RBN_WARN_ON(iter->index + len > end))
			break;
		switch (event->type_len) {
		case RBN_TYPE_PADDING:
			/* A discarded event's delta is time, as for readers. */
			iter->stamp += event->time_delta;
			break;
		case RBN_TYPE_TIME_EXTEND:
			iter->stamp += rb_event_time_stamp(event);
			break;
		case RBN_TYPE_TIME_STAMP:
			iter->stamp = rbn_fix_abs_ts(rb_event_time_stamp(event),
						     iter->stamp);
			break;
		default:
			return event;
		}
		iter->index += len;
	}
	iter->page = NULL;
	return NULL;
}

/**
 * rbn_iter_prepare - set up an iterator over a CPU's events, first step
 * @buffer:	the buffer
 * @cpu:	the CPU
 *
 * Turns recording off (for every CPU: the buffer has one switch, as
 * rbn_record_disable()) without waiting for writers in progress. To read
 * several CPUs, prepare an iterator for each, wait once with
 * rbn_iter_prepare_sync(), then take each one's snapshot with
 * rbn_iter_snapshot(). rbn_iter_finish() turns recording back on.
 *
 * Return: the iterator, or NULL for a bad CPU or no memory.
 */
struct rbn_iter *rbn_iter_prepare(struct rbn_buffer *buffer, int cpu)
{
	struct rbn_cpu_buffer *cpu_buffer = rb_reader_cpu(buffer, cpu);
	struct rbn_iter *iter;

	if (!cpu_buffer)
		return NULL;
	iter = rbn_port_zalloc(sizeof(*iter), cpu);
	if (!iter)
		return NULL;
	/* The largest event fits a sub-buffer. */
	iter->event = rbn_port_alloc_pages(buffer->order, cpu);
	if (!iter->event) {
		rbn_port_free(iter);
		return NULL;
	}
	iter->cpu_buffer = cpu_buffer;
	atomic_inc(&buffer->record_disabled);
	return iter;
}

/**
 * rbn_iter_prepare_sync - wait for the writers after rbn_iter_prepare()
 * @buffer:	the buffer
 *
 * Returns when no writer that started before recording went off is still
 * in the write path. May sleep.
 */
void rbn_iter_prepare_sync(struct rbn_buffer *buffer)
{
	/* Only rbn_iter_prepare() turned recording off. */
	RBN_WARN_ON(!atomic_read(&buffer->record_disabled));
	rbn_port_synchronize_writers();
}

/**
 * rbn_iter_snapshot - start a prepared iterator at the consumer's position
 * @iter:	an iterator from rbn_iter_prepare(), after rbn_iter_prepare_sync()
 *
 * The iterator covers the events that are unread now. May bring the head
 * page in as the reader page when the reader page is used up, like a
 * consuming read: the caller serialises it with its consuming readers of
 * the CPU as it does those among themselves. A consuming read of the CPU
 * (rbn_peek(), rbn_consume(), rbn_read_page()) or a reset while the
 * iterator exists ends it early: rbn_iter_peek() returns NULL from then on.
 */
void rbn_iter_snapshot(struct rbn_iter *iter)
{
	struct rbn_cpu_buffer *cpu_buffer = iter->cpu_buffer;
	unsigned long flags = 0;

	rbn_reader_lock(&cpu_buffer->reader_lock, flags);
	rb_iter_snapshot(iter);
	rbn_reader_unlock(&cpu_buffer->reader_lock, flags);
}

/**
 * rbn_iter_start - start reading a CPU's events without consuming them
 * @buffer:	the buffer
 * @cpu:	the CPU
 *
 * rbn_iter_prepare(), rbn_iter_prepare_sync() and rbn_iter_snapshot() in
 * one, for a single CPU; may sleep. rbn_iter_finish() turns recording
 * back on.
 *
 * Return: the iterator, or NULL for a bad CPU or no memory.
 */
struct rbn_iter *rbn_iter_start(struct rbn_buffer *buffer, int cpu)
{
	struct rbn_iter *iter = rbn_iter_prepare(buffer, cpu);

	if (!iter)
		return NULL;
	rbn_iter_prepare_sync(buffer);
	rbn_iter_snapshot(iter);
	return iter;
}

/**
 * rbn_iter_reset - go back to the start of an iterator
 * @iter:	the iterator
 *
 * Takes a new snapshot from the consumer's current position, which is the
 * start of the old one unless a consumer read meanwhile. Serialised with
 * consuming readers as rbn_iter_snapshot() is.
 */
void rbn_iter_reset(struct rbn_iter *iter)
{
	struct rbn_cpu_buffer *cpu_buffer = iter->cpu_buffer;
	unsigned long flags = 0;

	rbn_reader_lock(&cpu_buffer->reader_lock, flags);
	rb_iter_snapshot(iter);
	rbn_reader_unlock(&cpu_buffer->reader_lock, flags);
}

/**
 * rbn_iter_peek - the event at an iterator
 * @iter:	the iterator
 * @ts:		its time stamp, rebuilt as rbn_consume() does (may be NULL)
 *
 * Return: a copy of the event, valid until the next call on @iter, or
 * NULL at the end of the snapshot.
 */
struct rbn_event *rbn_iter_peek(struct rbn_iter *iter, u64 *ts)
{
	struct rbn_cpu_buffer *cpu_buffer = iter->cpu_buffer;
	struct rbn_event *event;
	unsigned long flags = 0;

	rbn_reader_lock(&cpu_buffer->reader_lock, flags);
	event = rb_iter_event(iter);
	if (event) {
		/* A consumer may take the page away once we unlock. */
		memcpy(iter->event, event, rb_event_length(event));
		if (ts)
			*ts = iter->stamp + event->time_delta;
		event = iter->event;
	}
	rbn_reader_unlock(&cpu_buffer->reader_lock, flags);
	return event;
}

/**
 * rbn_iter_advance - move an iterator past its event
 * @iter:	the iterator
 *
 * Nothing happens at the end of the snapshot.
 */
void rbn_iter_advance(struct rbn_iter *iter)
{
	struct rbn_cpu_buffer *cpu_buffer = iter->cpu_buffer;
	struct rbn_event *event;
	unsigned long flags = 0;

	rbn_reader_lock(&cpu_buffer->reader_lock, flags);
	event = rb_iter_event(iter);
	if (event) {
		iter->stamp += event->time_delta;
		iter->index += rb_event_length(event);
	}
	rbn_reader_unlock(&cpu_buffer->reader_lock, flags);
}

/**
 * rbn_iter_finish - free an iterator and undo its recording stop
 * @iter:	the iterator, or NULL
 */
void rbn_iter_finish(struct rbn_iter *iter)
{
	struct rbn_buffer *buffer;

	if (!iter)
		return;
	buffer = iter->cpu_buffer->buffer;
	rb_unquiesce(buffer);
	rbn_port_free_pages(iter->event, buffer->order);
	rbn_port_free(iter);
}
