/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rbnest: a per-CPU lockless ring buffer with exact timestamps for nested
 * writers.
 *
 * The on-page format is the ftrace ring buffer's (x86_64): a sub-buffer of
 * PAGE_SIZE << order bytes starts with a 64-bit time stamp and a 64-bit
 * commit word, followed by 4-byte aligned events.
 */
#ifndef _RB_CORE_H
#define _RB_CORE_H

#include "rb_port.h"

/* Event types (the 5-bit type_len of the event header). */
#define RBN_TYPE_DATA_MAX	28	/* 1..28: data of type_len * 4 bytes */
#define RBN_TYPE_PADDING	29
#define RBN_TYPE_TIME_EXTEND	30
#define RBN_TYPE_TIME_STAMP	31

#define RBN_ALIGNMENT		4U
#define RBN_EVENT_HDR_SIZE	4U	/* type_len:5, time_delta:27 */
#define RBN_LEN_TIME_EXTEND	8U
#define RBN_LEN_TIME_STAMP	8U

#define RBN_TS_SHIFT		27
#define RBN_TS_MASK		((1ULL << RBN_TS_SHIFT) - 1)
#define RBN_TS_DELTA_TEST	(~RBN_TS_MASK)
/* An absolute stamp keeps 59 bits; the top 5 come from the last full time. */
#define RBN_TS_MSB		(0xf8ULL << 56)
#define RBN_ABS_TS_MASK		(~RBN_TS_MSB)

/* Flags in the commit word of a page handed to a reader. */
#define RBN_MISSED_EVENTS	BIT(31)
#define RBN_MISSED_STORED	BIT(30)
#define RBN_MISSED_FLAGS	(RBN_MISSED_EVENTS | RBN_MISSED_STORED)

#define RBN_MAX_ORDER		4

/**
 * struct rbn_event - an event header as it lies in a sub-buffer
 * @type_len:	0 (length in @array[0]), 1..28 (length/4), or RBN_TYPE_*
 * @time_delta:	delta from the previous event, in clock units
 * @array:	length or payload
 */
struct rbn_event {
	u32 type_len:5, time_delta:27;
	u32 array[];
};

/**
 * struct rbn_page - the header of a sub-buffer, as ftrace's buffer_data_page
 * @time_stamp:	full time stamp of the first event on the page
 * @commit:	committed bytes of @data, plus RBN_MISSED_* flags for readers
 * @data:	the events
 */
struct rbn_page {
	u64 time_stamp;
	local_t commit;
	unsigned char data[];
};

#define RBN_PAGE_HDR_SIZE	offsetof(struct rbn_page, data)

/**
 * enum rbn_label - places in the write path where a nested writer may run
 *
 * The test hook is called at each of them. Between any two accesses of the
 * write and commit paths to state shared with nested writers or with
 * readers there is one label, from the recursion bits rbn_reserve() takes
 * to the release of them at the end of rbn_commit(); LABELS.md lists every
 * such access and the label after it. A label says where the writer is:
 * what it has done, and the next shared access it has not made yet.
 */
enum rbn_label {
	/* rbn_reserve() and the start of the commit */
	RBN_LABEL_CONTEXT,	/* recursion bits read, own bit not yet set */
	RBN_LABEL_LOCKED,	/* own bit set, nest level not yet raised */
	RBN_LABEL_NEST,		/* nest level raised */
	RBN_LABEL_START,	/* committing raised, commits not yet */
	RBN_LABEL_STARTED,	/* committing and commits raised */
	/* A..F, __rb_reserve_next() */
	RBN_LABEL_A_PAGE,	/* A: tail page read, its write index not yet */
	RBN_LABEL_A_TAIL,	/* A: tail page and write index read */
	RBN_LABEL_A_BEFORE,	/* A: before_stamp read */
	RBN_LABEL_A_AFTER,	/* A: write_stamp read */
	RBN_LABEL_A_CLOCK,	/* A: last_ts and the clock read, not yet raised */
	RBN_LABEL_A,		/* A: clock read, delta decided */
	RBN_LABEL_B,		/* B: before_stamp = ts */
	RBN_LABEL_C,		/* C: space reserved */
	RBN_LABEL_D,		/* D: write_stamp = ts (fast path) */
	RBN_LABEL_SLOW_BEFORE,	/* slow path: before_stamp re-read */
	RBN_LABEL_SLOW_CLOCK,	/* slow path: last_ts and the clock read again */
	RBN_LABEL_SLOW_TS,	/* slow path: last_ts raised to the new time */
	RBN_LABEL_SLOW_SET,	/* slow path: before_stamp = new ts */
	RBN_LABEL_E,		/* E: write_stamp re-read */
	RBN_LABEL_F_WRITE,	/* F: write index re-read, tail page not yet */
	RBN_LABEL_F,		/* F: tail page re-read, delta decided */
	RBN_LABEL_EVENT,	/* event header written, page entries not counted */
	RBN_LABEL_EVENT_ENTRIES, /* page entries counted, page stamp not set */
	RBN_LABEL_EVENT_STAMP,	/* page stamp set, entries_bytes not counted */
	RBN_LABEL_RESERVED,	/* reserve done, event handed to the writer */
	/* rb_move_tail(): the event did not fit */
	RBN_LABEL_PAGE_MOVE,	/* commit page and next page read, flag not yet */
	RBN_LABEL_PAGE_FREE,	/* the next page is not the head: ours to move on */
	RBN_LABEL_PAGE_DROP,	/* refusal counted, sub-buffer not yet closed */
	RBN_LABEL_PAGE_FULL,	/* overwrite: the next page is the head */
	/* rb_handle_head_page() */
	RBN_LABEL_HEAD_ENTRIES,	/* head page entries read, flag not yet changed */
	RBN_LABEL_HEAD_FLAGGED,	/* HEAD -> UPDATE tried, overrun not counted */
	RBN_LABEL_HEAD_OVERRUN,	/* overrun counted, entries_bytes not yet */
	RBN_LABEL_PAGE_HEAD,	/* old head accounted, next page not flagged */
	RBN_LABEL_PAGE_NEW_HEAD, /* next page flagged HEAD */
	RBN_LABEL_HEAD_TAIL,	/* tail re-read for a stale HEAD flag */
	RBN_LABEL_HEAD_FIXED,	/* stale flag handled, UPDATE not yet cleared */
	RBN_LABEL_HEAD_DONE,	/* UPDATE -> NORMAL, the push is over */
	/* rb_tail_page_update() */
	RBN_LABEL_PAGE_CLAIM,	/* next page's write bumped, entries not yet */
	RBN_LABEL_PAGE_TAIL,	/* next page claimed, tail not yet re-read */
	RBN_LABEL_PAGE_OURS,	/* tail re-read: still ours, next page not reset */
	RBN_LABEL_PAGE_RESET_WRITE, /* next page's write reset, entries not */
	RBN_LABEL_PAGE_RESET,	/* entries reset, page commit not yet zero */
	RBN_LABEL_PAGE_ZERO,	/* page commit zero, tail not yet moved */
	RBN_LABEL_PAGE_END,	/* tail moved on, old sub-buffer not yet padded */
	/* rb_reset_tail() */
	RBN_LABEL_PAD_END,	/* real_end set, padding not yet written */
	RBN_LABEL_PAD,		/* padding written, write index not given back */
	RBN_LABEL_PAD_DONE,	/* write index given back */
	RBN_LABEL_PAGE_NEXT,	/* old sub-buffer published, before the retry */
	/* rbn_commit(), rb_end_commit(), rb_set_commit_to_write() */
	RBN_LABEL_ENTRIES,	/* CPU entries counted, commit not started */
	RBN_LABEL_COMMIT_READ,	/* commits read, committing not yet */
	RBN_LABEL_COMMIT,	/* outermost commit: before the commit moves */
	RBN_LABEL_COMMIT_PAGE,	/* a left page's commit set, commit page not moved */
	RBN_LABEL_COMMIT_NEXT,	/* commit page moved on, tail not yet re-read */
	RBN_LABEL_COMMIT_WRITE,	/* commit set to write, write not yet re-read */
	RBN_LABEL_COMMIT_CHECK,	/* commit caught up, tail not yet re-read */
	RBN_LABEL_COMMIT_SET,	/* commit at the tail, committing not dropped */
	RBN_LABEL_COMMIT_END,	/* committing dropped, commits not re-read */
	RBN_LABEL_COMMIT_RECHECK, /* commits re-read, committing not yet */
	RBN_LABEL_COMMIT_AGAIN,	/* committing raised again for another round */
	RBN_LABEL_COMMIT_DONE,	/* commit over, nest level not lowered */
	RBN_LABEL_UNNEST,	/* nest level lowered, own bit not released */
	/* rbn_discard() */
	RBN_LABEL_DISCARD,	/* event turned into padding, page entries not yet */
	RBN_LABEL_DISCARD_ENTRIES, /* page entries lowered, tail not read */
	RBN_LABEL_DISCARD_TAIL,	/* tail and write index read, stamps untouched */
	RBN_LABEL_DISCARD_STAMP, /* write_stamp cleared, bytes not given back */
	RBN_LABEL_DISCARD_DONE,	/* given back or left in place, commit not ended */
	/* the run-time validator (rbn_set_validate()) */
	RBN_LABEL_VALIDATE_NOTE, /* a slot of the notes taken, not filled */
	RBN_LABEL_VALIDATE,	/* the outermost commit read the count of notes */
	/* rbn_swap_cpu(), in which a writer of the CPU may nest (an NMI) */
	RBN_LABEL_SWAP,		/* geometry checked, writers not yet */
	RBN_LABEL_SWAP_DONE,	/* buffers swapped */
	RBN_NR_LABELS
};

const char *rbn_label_name(int label);

/**
 * enum rbn_reader_label - places in the reader's page swap where a writer
 * of the CPU may run
 *
 * rb_get_reader_page() reads the commit page, the reader page's commit,
 * the head page, the overrun count, and swaps the head page out with one
 * cmpxchg(). A writer of the CPU (on its own CPU, while the reader runs on
 * another) may run between any two of these; the test hook for readers is
 * called at each of these labels. LABELS.md lists the accesses.
 */
enum rbn_reader_label {
	RBN_RLABEL_COMMIT_PAGE,	/* commit page read, the page's commit not yet */
	RBN_RLABEL_USED,	/* reader page used up, commit page not compared */
	RBN_RLABEL_SPIN,	/* before looking for the head page */
	RBN_RLABEL_HEAD,	/* head page found, reader page not set up */
	RBN_RLABEL_NEXT,	/* reader page's next set, prev not yet */
	RBN_RLABEL_OVERRUN,	/* overrun read, the swap not tried */
	RBN_RLABEL_SWAPPED,	/* head page swapped out, new head not fixed */
	RBN_NR_READER_LABELS
};

const char *rbn_reader_label_name(int label);

/* How an event's time stamp was written (rbn_event_flags()). */
#define RBN_EV_FAST		0x01	/* not interrupted between A and C */
#define RBN_EV_ABSOLUTE		0x02	/* absolute stamp (forced, or absolute mode) */
#define RBN_EV_SLOW		0x04	/* interrupted between A and C */
#define RBN_EV_ZERO_DELTA	0x08	/* sandwich: shown at the previous event's time */
#define RBN_EV_EXTEND		0x10	/* time extend before the event (of 0 for */
					/* a sandwich in absolute mode) */
#define RBN_EV_PAGE_START	0x20	/* first event of a sub-buffer */
#define RBN_EV_CLOCK_BACK	0x40	/* clock read below the CPU's latest time */

/**
 * struct rbn_config - how to build a buffer
 * @size:	bytes of sub-buffers per CPU (rounded up, at least 2 sub-buffers)
 * @order:	sub-buffer size is PAGE_SIZE << @order (0..RBN_MAX_ORDER)
 * @overwrite:	overwrite the oldest data when full instead of dropping new
 * @clock:	time source, monotonic per CPU; NULL for the port's default
 * @nr_cpus:	number of per-CPU buffers; 0 for every possible CPU
 * @abs_ts:	absolute time-stamp mode: every event carries its full time
 *		in an absolute stamp (ftrace's ring_buffer_set_time_stamp_abs())
 * @validate:	the run-time validator on from the start (rbn_set_validate())
 */
struct rbn_config {
	unsigned long size;
	unsigned int order;
	bool overwrite;
	u64 (*clock)(void);
	int nr_cpus;
	bool abs_ts;
	bool validate;
};

/**
 * struct rbn_cpu_stats - per-CPU accounting
 * @entries:		events in the buffer, not yet read
 * @written:		events committed
 * @overrun:		events overwritten before they were read (overwrite mode)
 * @commit_overrun:	events dropped because nested writers wrapped the buffer
 * @dropped:		events refused: buffer full (producer/consumer) or too big
 * @read:		events consumed by readers (per event or by page)
 * @bytes:		bytes of events and padding in the buffer
 * @oldest_ts:		time stamp of the oldest unread sub-buffer
 * @now_ts:		the clock now
 * @ts_fast:		events not interrupted between A and C (the path
 *			counters count reserves: discarded events included)
 * @ts_abs:		events with an absolute stamp: forced (nested in A..D),
 *			or every event but sandwiched ones in absolute mode
 * @ts_slow:		events interrupted before their reserve (slow path)
 * @ts_zero:		events written with a zero delta (sandwich)
 * @ts_extend:		time extends written
 * @max_depth:		deepest writer nesting seen (1 = not nested)
 * @recursion:		writes rejected by the recursion guard
 * @pages_touched:	sub-buffers the writer moved onto
 * @ts_clock_back:	events whose clock read below the latest time taken on
 *			the CPU, stored at that time (RBN_EV_CLOCK_BACK)
 * @discarded:		events reserved, then discarded with rbn_discard():
 *			neither written (an entry) nor lost
 * @validate_checked:	events the run-time validator found right
 * @validate_fail:	events it found wrong (rbn_set_validate())
 * @validate_skipped:	events it could not check
 */
struct rbn_cpu_stats {
	u64 entries;
	u64 written;
	u64 overrun;
	u64 commit_overrun;
	u64 dropped;
	u64 read;
	u64 bytes;
	u64 oldest_ts;
	u64 now_ts;
	u64 ts_fast;
	u64 ts_abs;
	u64 ts_slow;
	u64 ts_zero;
	u64 ts_extend;
	u64 max_depth;
	u64 recursion;
	u64 pages_touched;
	u64 ts_clock_back;
	u64 discarded;
	u64 validate_checked;
	u64 validate_fail;
	u64 validate_skipped;
};

struct rbn_buffer;

struct rbn_buffer *rbn_alloc(const struct rbn_config *cfg);
void rbn_free(struct rbn_buffer *buffer);
int rbn_resize(struct rbn_buffer *buffer, unsigned long size);
void rbn_reset(struct rbn_buffer *buffer);
void rbn_reset_stopped(struct rbn_buffer *buffer);
void rbn_reset_cpu(struct rbn_buffer *buffer, int cpu);
void rbn_record_disable(struct rbn_buffer *buffer);
void rbn_record_enable(struct rbn_buffer *buffer);
bool rbn_record_is_on(struct rbn_buffer *buffer);

int rbn_nr_cpus(struct rbn_buffer *buffer);
unsigned int rbn_subbuf_size(struct rbn_buffer *buffer);
unsigned int rbn_max_event_size(struct rbn_buffer *buffer);
unsigned long rbn_size(struct rbn_buffer *buffer);
unsigned long rbn_nr_subbufs(struct rbn_buffer *buffer);
u64 rbn_clock(struct rbn_buffer *buffer);
int rbn_set_time_stamp_abs(struct rbn_buffer *buffer, bool abs);
int rbn_swap_cpu(struct rbn_buffer *a, struct rbn_buffer *b, int cpu);
int rbn_swap(struct rbn_buffer *a, struct rbn_buffer *b);
bool rbn_time_stamp_abs(struct rbn_buffer *buffer);
int rbn_set_validate(struct rbn_buffer *buffer, bool on);
bool rbn_validating(struct rbn_buffer *buffer);

struct rbn_event *rbn_reserve(struct rbn_buffer *buffer, unsigned int len);
void rbn_commit(struct rbn_buffer *buffer, struct rbn_event *event);
void rbn_discard(struct rbn_buffer *buffer, struct rbn_event *event);
int rbn_write(struct rbn_buffer *buffer, unsigned int len, const void *data);
u64 rbn_event_ts(struct rbn_buffer *buffer, struct rbn_event *event);
unsigned int rbn_event_flags(struct rbn_buffer *buffer,
			     struct rbn_event *event);

void *rbn_event_data(struct rbn_event *event);
unsigned int rbn_event_length(struct rbn_event *event);
unsigned int rbn_event_data_length(struct rbn_event *event);
u64 rbn_event_time_delta(struct rbn_event *event);
u64 rbn_fix_abs_ts(u64 abs, u64 prev);

struct rbn_event *rbn_peek(struct rbn_buffer *buffer, int cpu, u64 *ts,
			   unsigned long *lost);
struct rbn_event *rbn_consume(struct rbn_buffer *buffer, int cpu, u64 *ts,
			      unsigned long *lost);
bool rbn_empty_cpu(struct rbn_buffer *buffer, int cpu);

void *rbn_alloc_read_page(struct rbn_buffer *buffer, int cpu);
void rbn_free_read_page(struct rbn_buffer *buffer, int cpu, void *page);
int rbn_read_page(struct rbn_buffer *buffer, int cpu, void **page,
		  size_t len, bool full);

int rbn_cpu_stats(struct rbn_buffer *buffer, int cpu,
		  struct rbn_cpu_stats *stats);
bool rbn_cpu_percent_full(struct rbn_buffer *buffer, int cpu,
			  unsigned int percent);
bool rbn_cpu_published(struct rbn_buffer *buffer, int cpu);
bool rbn_cpu_head_updating(struct rbn_buffer *buffer, int cpu);
bool rbn_cpu_readable(struct rbn_buffer *buffer, int cpu, unsigned int percent);
bool rbn_cpu_subbuf_ready(struct rbn_buffer *buffer, int cpu);
unsigned long rbn_cpu_resets(struct rbn_buffer *buffer, int cpu);

/* Reading without consuming; recording is off while an iterator exists. */
struct rbn_iter;

struct rbn_iter *rbn_iter_prepare(struct rbn_buffer *buffer, int cpu);
void rbn_iter_prepare_sync(struct rbn_buffer *buffer);
void rbn_iter_snapshot(struct rbn_iter *iter);
struct rbn_iter *rbn_iter_start(struct rbn_buffer *buffer, int cpu);
void rbn_iter_reset(struct rbn_iter *iter);
struct rbn_event *rbn_iter_peek(struct rbn_iter *iter, u64 *ts);
void rbn_iter_advance(struct rbn_iter *iter);
void rbn_iter_finish(struct rbn_iter *iter);

#endif /* _RB_CORE_H */
