/* SPDX-License-Identifier: GPL-2.0 */
/*
 * nest_harness.h - deterministic nested writers for the userspace tests.
 *
 * A scenario is a tree of writers. The root writes in task context; each
 * writer may be interrupted at up to two labels of its write path
 * (RBN_LABEL_*) by a child writer one context level up (softirq, hardirq,
 * NMI), which may itself be interrupted, and so on. The interrupts are
 * injected from the core's test hook, so every interleaving the stack
 * discipline of a CPU allows can be run on the real rb_core.c, one at a
 * time, and checked against what each writer used.
 *
 * A node may also be a reader action: at that label a reader on another
 * CPU consumes an event or takes a page, which is how the reader/writer
 * races on the head page are made deterministic.
 *
 * A scenario can also be given as a plan (struct nest_plan): a list of
 * actions, each at a point of the run. A point is offered at every hook
 * call, and again after an action taken there (so two interrupts can come
 * at the same label); points are numbered in the order they are offered.
 * A plan is grown from the points a run of its prefix offered, so every
 * action of a plan is taken where it was meant to be: the enumeration of
 * test_nest only generates what the code can reach.
 */
#ifndef _RBN_NEST_HARNESS_H
#define _RBN_NEST_HARNESS_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rb_core.h"

#define NEST_MAX_NODES		8
#define NEST_MAX_EVENTS		4096
#define NEST_FILLER_ID		0xffffu
#define NEST_PLAN_MAX		8
#define NEST_MAX_POINTS		1024

/*
 * Points carry a write-path label (enum rbn_label) or, past those, a label
 * of the reader's page swap (enum rbn_reader_label).
 */
#define NEST_NR_LABELS		(RBN_NR_LABELS + RBN_NR_READER_LABELS)
#define NEST_RLABEL(l)		(RBN_NR_LABELS + (l))

static inline const char *nest_label_name(int label)
{
	if (label >= RBN_NR_LABELS)
		return rbn_reader_label_name(label - RBN_NR_LABELS);
	return rbn_label_name(label);
}

enum nest_action {
	NEST_WRITE,		/* a nested writer */
	NEST_CONSUME,		/* a reader consumes one event */
	NEST_READ_PAGE,		/* a reader takes a sub-buffer */
	NEST_DRAIN,		/* a reader consumes until there is nothing */
	NEST_WRITE_DISCARD,	/* plans only: a nested writer that discards */
				/* its events (rbn_discard()) */
	NEST_SWAP,		/* plans only: rbn_swap_cpu() with ctx->spare */
	NEST_JUMP,		/* plans only: the clock jumps by ctx->jump; */
				/* NEST_JUMP + k: a jump of kind k (the test's) */
};

/* A scenario as actions at points of the run, in the order they happen. */
struct nest_plan {
	unsigned char n;
	unsigned char action[NEST_PLAN_MAX];
	unsigned short point[NEST_PLAN_MAX];
};

/* A point a run offered: where an action could have been taken. */
struct nest_point {
	unsigned char label;
	unsigned char depth;	/* writers on the stack */
	unsigned char children;	/* interrupts the top writer had so far */
	unsigned char head_busy; /* a writer on the stack is pushing the head */
	unsigned char reader;	/* the reader action on the stack, 0 none */
};

struct nest_node {
	unsigned char nr_child;
	unsigned char label[2];
	unsigned char child[2];
	unsigned char action;
	unsigned char repeat;	/* a writer writes 1 + repeat events */
	unsigned short len;	/* payload bytes of a writer */
};

struct nest_tree {
	unsigned char nr;
	struct nest_node n[NEST_MAX_NODES];
};

/* What a writer used, captured between reserve and commit. */
struct nest_record {
	u64 ts;
	unsigned int flags;
	unsigned short len;
	unsigned char depth;
	bool written;
	bool seen;
	bool committing;	/* payload written, rbn_commit() called */
	bool discarded;		/* rbn_discard() instead of rbn_commit() */
};

/* A reader's view of one event. */
struct nest_read {
	u64 ts;
	unsigned int id;
	unsigned long lost;
};

struct nest_ctx {
	struct rbn_buffer *buffer;
	const struct nest_tree *tree;

	/* the clock */
	u64 now;
	u64 step;
	u64 jump;		/* added to the clock: a step back wraps below 0 */
	long jump_at;		/* hook call at which the clock jumps, -1 never */
	long hook_calls;
	int jump_label;		/* or: at this label (-1 none) ... */
	int jump_nth;		/* ... the time it is reached after this many */
	u64 clock_max;		/* the latest clock value handed out */

	/* writers in progress, innermost last */
	int depth;
	int stack[NEST_MAX_NODES];
	unsigned char fired[NEST_MAX_NODES][2];
	int planned, fired_total;

	/* plan mode: the plan, the next action, the points offered */
	const struct nest_plan *plan;
	int plan_next;
	int nr_points;
	int nr_writers;
	int in_reader;		/* the planned reader action running, 0 none */
	bool overwrite;		/* the buffer overwrites: heads get pushed */
	bool root_discard;	/* the plan's root discards its events */
	unsigned int nr_discarded;	/* events discarded */

	/* swaps: the other buffer, and what the swaps did */
	struct rbn_buffer *spare;
	int in_swap;			/* a swap is running */
	unsigned char holds[NEST_MAX_NODES];	/* writer at this depth holds */
						/* its recursion bit */
	unsigned int swaps, swaps_busy;
	int swap_bad;			/* 1 + the point of a wrong result */
	unsigned char children[NEST_MAX_NODES];
	struct nest_point *points;	/* log of the points, or NULL */
	unsigned short len_by_depth[NEST_MAX_NODES + 1];
	unsigned char repeat_by_depth[NEST_MAX_NODES + 1];

	/* pages handed out with missed events but no count */
	unsigned int lost_uncounted;
	/* reserves refused, and whether the scenario allows it */
	unsigned int refused;
	bool drop_planned;
	/* a reader saw an event before its writer called rbn_commit() */
	int early_read;
	/* the outermost rbn_commit() returned with events unpublished */
	int unpublished;

	/* what was written and read */
	unsigned int nr_ids;
	struct nest_record rec[NEST_MAX_EVENTS];
	unsigned int nr_read;
	struct nest_read rd[NEST_MAX_EVENTS];
	unsigned long lost;
	unsigned long lost_pending;	/* a page's missed count, no event yet */
	/* the time of each filler written, in order */
	unsigned int nr_fillers;
	u64 filler_ts[NEST_MAX_EVENTS];
	unsigned int payload_bad;	/* id + 1 of a corrupted payload */
	void *page;

	/* path counters, over all scenarios */
	unsigned long paths[8];
	unsigned long events;
	unsigned long reader_actions;
	char err[256];
};

static struct nest_ctx *nest_cur;

static u64 nest_clock(void)
{
	nest_cur->now += nest_cur->step;
	if (nest_cur->now > nest_cur->clock_max)
		nest_cur->clock_max = nest_cur->now;
	return nest_cur->now;
}

static void nest_fill(void *data, unsigned int id, unsigned int len,
		      unsigned int depth)
{
	unsigned char *p = data;
	unsigned int i;

	memcpy(p, &id, sizeof(id));
	for (i = sizeof(id); i < len; i++)
		p[i] = (unsigned char)(id * 31 + i + depth);
}

static bool nest_check_fill(const void *data, unsigned int id,
			    unsigned int len, unsigned int depth)
{
	const unsigned char *p = data;
	unsigned int i;

	for (i = sizeof(id); i < len; i++)
		if (p[i] != (unsigned char)(id * 31 + i + depth))
			return false;
	/* the round-up bytes are zero */
	for (; i & 3; i++)
		if (p[i])
			return false;
	return true;
}

static void nest_check_payload(struct nest_ctx *c, unsigned int id,
			       const void *data)
{
	if (id == NEST_FILLER_ID || id >= c->nr_ids || c->payload_bad)
		return;
	/* A reader sees only events whose writer is done with them. */
	if (!c->rec[id].committing && !c->early_read)
		c->early_read = id + 1;
	if (!nest_check_fill(data, id, c->rec[id].len, c->rec[id].depth))
		c->payload_bad = id + 1;
}

/* Decode the events of a page taken by a reader, in order. */
static bool nest_take_page_events(struct nest_ctx *c, const struct rbn_page *pg,
				  int bytes)
{
	unsigned int off = 0, commit = bytes;
	u64 ts = pg->time_stamp;

	while (off + 4 <= commit) {
		const struct rbn_event *ev = (const void *)(pg->data + off);
		unsigned int len;

		switch (ev->type_len) {
		case RBN_TYPE_PADDING:
			/* a discarded event: its delta is time */
			if (commit - off < 8)
				return true;
			ts += ev->time_delta;
			off += ev->array[0] + 4;
			continue;
		case RBN_TYPE_TIME_EXTEND:
			ts += ((u64)ev->array[0] << RBN_TS_SHIFT) | ev->time_delta;
			off += 8;
			continue;
		case RBN_TYPE_TIME_STAMP:
			ts = rbn_fix_abs_ts(((u64)ev->array[0] << RBN_TS_SHIFT) |
					    ev->time_delta, ts);
			off += 8;
			continue;
		default:
			break;
		}
		ts += ev->time_delta;
		len = rbn_event_length((struct rbn_event *)ev);
		if (off + len > commit || c->nr_read >= NEST_MAX_EVENTS) {
			snprintf(c->err, sizeof(c->err),
				 "page event at %u runs past commit %u", off, commit);
			return false;
		}
		c->rd[c->nr_read].ts = ts;
		memcpy(&c->rd[c->nr_read].id,
		       rbn_event_data((struct rbn_event *)ev), sizeof(unsigned int));
		/* a count of missed events goes with the next event read */
		c->rd[c->nr_read].lost = c->lost_pending;
		c->lost_pending = 0;
		nest_check_payload(c, c->rd[c->nr_read].id,
				   rbn_event_data((struct rbn_event *)ev));
		c->nr_read++;
		off += len;
	}
	return true;
}

static void nest_consume_one(struct nest_ctx *c)
{
	struct rbn_event *ev;
	unsigned long lost = 0;
	u64 ts;

	ev = rbn_consume(c->buffer, 0, &ts, &lost);
	if (!ev || c->nr_read >= NEST_MAX_EVENTS)
		return;
	c->rd[c->nr_read].ts = ts;
	memcpy(&c->rd[c->nr_read].id, rbn_event_data(ev), sizeof(unsigned int));
	c->rd[c->nr_read].lost = c->lost_pending + lost;
	c->lost_pending = 0;
	nest_check_payload(c, c->rd[c->nr_read].id, rbn_event_data(ev));
	c->lost += lost;
	c->nr_read++;
}

static void nest_read_page(struct nest_ctx *c)
{
	const struct rbn_page *pg;
	int ret;

	ret = rbn_read_page(c->buffer, 0, &c->page, rbn_subbuf_size(c->buffer),
			    false);
	if (ret < 0)
		return;
	pg = c->page;
	if (local_read(&pg->commit) & RBN_MISSED_STORED) {
		unsigned long missed;

		memcpy(&missed, pg->data + ret, sizeof(missed));
		c->lost += missed;
		c->lost_pending += missed;
	} else if (local_read(&pg->commit) & RBN_MISSED_EVENTS) {
		/* no room for the count: the scenarios leave room for it */
		c->lost_uncounted++;
	}
	nest_take_page_events(c, pg, ret);
}

static void nest_run_node(struct nest_ctx *c, int idx);
static void nest_plan_writer(struct nest_ctx *c, bool discard);
static void nest_drain(struct nest_ctx *c);

/*
 * One event of a writer: reserve, fill, commit (or discard); a refusal is
 * counted. A discarded event is not written: no reader may see it.
 */
static void nest_write_one(struct nest_ctx *c, unsigned int len, bool discard)
{
	struct rbn_event *ev;
	unsigned int id;

	if (c->nr_ids >= NEST_MAX_EVENTS)
		return;
	id = c->nr_ids++;
	memset(&c->rec[id], 0, sizeof(c->rec[id]));
	ev = rbn_reserve(c->buffer, len);
	if (!ev) {
		/* the recursion bit: taken at the lock, dropped by now */
		c->holds[c->depth] = 0;
		c->refused++;
		return;
	}
	{
		struct nest_record *r = &c->rec[id];

		r->ts = rbn_event_ts(c->buffer, ev);
		r->flags = rbn_event_flags(c->buffer, ev);
		r->len = len;
		r->depth = c->depth;
		nest_fill(rbn_event_data(ev), id, len, c->depth);
		if (discard) {
			r->discarded = true;
			c->nr_discarded++;
			rbn_discard(c->buffer, ev);
		} else {
			r->written = true;
			r->committing = true;
			rbn_commit(c->buffer, ev);
		}
		c->holds[c->depth] = 0;
	}
	/*
	 * The outermost writer's commit publishes everything reserved on
	 * the CPU so far.
	 */
	if (c->depth == 1 && !c->unpublished &&
	    !rbn_cpu_published(c->buffer, 0))
		c->unpublished = id + 1;
}

/*
 * Plan mode: offer a point, take the plan's action if it is planned
 * there, and offer the next point after it, until no action is taken.
 */
static void nest_plan_hook(struct nest_ctx *c, int label)
{
	const struct nest_plan *p = c->plan;
	int top = c->depth ? c->stack[c->depth - 1] : -1;
	int action;

	/*
	 * The top writer holds its recursion bit from the lock on; at
	 * "context" it is about to take it (again, after a swap).
	 */
	if (c->depth && label < RBN_NR_LABELS && label != RBN_LABEL_SWAP &&
	    label != RBN_LABEL_SWAP_DONE)
		c->holds[c->depth] = label != RBN_LABEL_CONTEXT;
	for (;;) {
		int pt = c->nr_points++;
		/*
		 * While a writer on the stack holds the UPDATE flag (from
		 * its HEAD -> UPDATE to its UPDATE -> NORMAL), a reader
		 * swapping the head page out spins until the writer goes
		 * on: on one thread, forever. Readers are not planned
		 * there; everywhere else they are, a writer whose
		 * HEAD -> UPDATE failed included.
		 */
		int busy = c->overwrite && !c->in_reader && c->points &&
			   rbn_cpu_head_updating(c->buffer, 0);
		if (c->points && pt < NEST_MAX_POINTS) {
			struct nest_point *np = &c->points[pt];

			np->label = label;
			np->depth = c->depth;
			np->children = top >= 0 ? c->children[top] : 0;
			np->head_busy = busy;
			np->reader = c->in_reader;
		}
		if (c->plan_next >= p->n || p->point[c->plan_next] != pt)
			return;
		c->fired_total++;
		if (p->action[c->plan_next] >= NEST_JUMP) {
			c->plan_next++;
			c->now += c->jump;
			continue;
		}
		action = p->action[c->plan_next++];
		if (action == NEST_WRITE || action == NEST_WRITE_DISCARD) {
			if (top >= 0)
				c->children[top]++;
			nest_plan_writer(c, action == NEST_WRITE_DISCARD);
			continue;
		}
		if (action == NEST_SWAP) {
			int busy = 0, ret;

			for (int d = 1; d <= c->depth; d++)
				busy |= c->holds[d];
			c->in_swap = 1;
			ret = rbn_swap_cpu(c->buffer, c->spare, 0);
			c->in_swap = 0;
			c->swaps++;
			c->swaps_busy += ret == -EBUSY;
			if (ret != (busy ? -EBUSY : 0) && !c->swap_bad)
				c->swap_bad = pt + 1;
			continue;
		}
		/* A reader: the points it offers say which one runs. */
		c->reader_actions++;
		c->in_reader = action;
		if (action == NEST_CONSUME)
			nest_consume_one(c);
		else if (action == NEST_READ_PAGE)
			nest_read_page(c);
		else
			nest_drain(c);
		c->in_reader = 0;
	}
}

static void nest_hook(struct rbn_buffer *buffer, int cpu, int label, void *arg)
{
	struct nest_ctx *c = arg;
	const struct nest_node *nd;
	int top, i;

	(void)buffer;
	(void)cpu;
	if (c->plan) {
		nest_plan_hook(c, label);
		return;
	}
	if (c->hook_calls++ == c->jump_at)
		c->now += c->jump;
	if (label == c->jump_label && c->jump_nth-- == 0)
		c->now += c->jump;
	if (!c->depth)
		return;
	top = c->stack[c->depth - 1];
	nd = &c->tree->n[top];
	for (i = 0; i < nd->nr_child; i++) {
		if (c->fired[top][i] || nd->label[i] != label)
			continue;
		c->fired[top][i] = 1;
		c->fired_total++;
		nest_run_node(c, nd->child[i]);
	}
}

/*
 * Plan mode: the reader's page swap offers its labels as points too, where
 * a writer of the CPU may run (on its own CPU, the reader on another).
 */
static void nest_reader_hook(struct rbn_buffer *buffer, int cpu, int label,
			     void *arg)
{
	struct nest_ctx *c = arg;

	(void)buffer;
	(void)cpu;
	if (c->plan)
		nest_plan_hook(c, NEST_RLABEL(label));
}

static void nest_run_node(struct nest_ctx *c, int idx)
{
	const struct nest_node *nd = &c->tree->n[idx];
	int saved = rbn_user_context;
	if (nd->action == NEST_CONSUME) {
		c->reader_actions++;
		nest_consume_one(c);
		return;
	}
	if (nd->action == NEST_READ_PAGE) {
		c->reader_actions++;
		nest_read_page(c);
		return;
	}

	c->stack[c->depth++] = idx;
	rbn_user_context = c->depth - 1;
	for (int i = 0; i <= nd->repeat; i++)
		nest_write_one(c, nd->len, nd->action == NEST_WRITE_DISCARD);
	rbn_user_context = saved;
	c->depth--;
}

/* Plan mode: a writer one level up from the top of the stack. */
static void nest_plan_writer(struct nest_ctx *c, bool discard)
{
	int saved = rbn_user_context;
	int idx = c->nr_writers++;
	int d;

	c->children[idx] = 0;
	c->stack[c->depth++] = idx;
	d = c->depth;
	rbn_user_context = d - 1;
	for (int i = 0; i <= c->repeat_by_depth[d]; i++)
		nest_write_one(c, c->len_by_depth[d], discard);
	rbn_user_context = saved;
	c->depth--;
}

/*
 * Write a filler event of @total bytes (header included) in task context
 * with the hook off, so that the next event starts where a scenario wants.
 */
static bool nest_filler(struct nest_ctx *c, unsigned int total)
{
	/* absolute mode: every event has its stamp in front */
	unsigned int stamp = rbn_time_stamp_abs(c->buffer) ?
			     RBN_LEN_TIME_STAMP : 0;
	unsigned int len = total - RBN_EVENT_HDR_SIZE - stamp;
	struct rbn_event *ev;

	if (len > RBN_ALIGNMENT * RBN_TYPE_DATA_MAX)
		len -= sizeof(u32);
	ev = rbn_reserve(c->buffer, len);
	if (!ev || rbn_event_length(ev) + stamp != total)
		return false;
	if (c->nr_fillers < NEST_MAX_EVENTS)
		c->filler_ts[c->nr_fillers++] = rbn_event_ts(c->buffer, ev);
	/* only its id: nobody checks a filler's payload, and it is big */
	memcpy(rbn_event_data(ev), &(unsigned int){ NEST_FILLER_ID },
	       sizeof(unsigned int));
	rbn_commit(c->buffer, ev);
	return true;
}

/* Reset the buffer, the clock and the records for a new scenario. */
static void nest_begin(struct nest_ctx *c, const struct nest_tree *t,
		       u64 base, u64 step, u64 jump, long jump_at)
{
	rbn_test_set_hook(NULL, NULL);
	rbn_test_set_reader_hook(NULL, NULL);
	rbn_reset(c->buffer);
	c->tree = t;
	c->now = base;
	c->step = step;
	c->jump = jump;
	c->jump_at = jump_at;
	c->jump_label = -1;
	c->jump_nth = 0;
	c->clock_max = base;
	c->hook_calls = 0;
	c->depth = 0;
	memset(c->fired, 0, sizeof(c->fired));
	c->fired_total = 0;
	c->planned = 0;
	for (int i = 0; t && i < t->nr; i++)
		c->planned += t->n[i].nr_child;
	c->nr_ids = 0;
	c->nr_read = 0;
	c->lost = 0;
	c->lost_pending = 0;
	c->nr_fillers = 0;
	c->payload_bad = 0;
	c->err[0] = 0;
	c->plan = NULL;
	c->plan_next = 0;
	c->nr_points = 0;
	c->nr_writers = 0;
	c->in_reader = 0;
	c->overwrite = false;
	c->root_discard = false;
	c->nr_discarded = 0;
	c->in_swap = 0;
	memset(c->holds, 0, sizeof(c->holds));
	c->swaps = 0;
	c->swaps_busy = 0;
	c->swap_bad = 0;
	c->refused = 0;
	c->lost_uncounted = 0;
	c->drop_planned = false;
	c->early_read = 0;
	c->unpublished = 0;
	rbn_user_context = 0;
}

/* Plan mode: run @p on the buffer as set up by nest_begin() and fillers. */
static inline void nest_run_plan(struct nest_ctx *c, const struct nest_plan *p,
			  struct nest_point *points)
{
	c->plan = p;
	c->plan_next = 0;
	c->planned = p->n;
	c->fired_total = 0;
	c->nr_points = 0;
	c->points = points;
	rbn_test_set_hook(nest_hook, c);
	rbn_test_set_reader_hook(nest_reader_hook, c);
	nest_plan_writer(c, c->root_discard);
	rbn_test_set_reader_hook(NULL, NULL);
	rbn_test_set_hook(NULL, NULL);
	c->points = NULL;
}

static inline void nest_run(struct nest_ctx *c)
{
	rbn_test_set_hook(nest_hook, c);
	nest_run_node(c, 0);
	rbn_test_set_hook(NULL, NULL);
}

static void nest_drain(struct nest_ctx *c)
{
	unsigned int before;

	do {
		before = c->nr_read;
		nest_consume_one(c);
	} while (c->nr_read != before);
}

/*
 * The invariants of DESIGN.md on one scenario: every event a reader saw
 * was written once, with the time its writer used, or (sandwich) the time
 * of the event before it, or (its clock read below the latest time taken
 * on the CPU: clock-back) a later time than its clock, but none that the
 * clock had not given yet; time never goes backwards; payloads are intact
 * (checked by the caller for consumed events); and nothing is lost unless
 * counted: written = read + lost.
 */
static bool nest_check(struct nest_ctx *c, unsigned int extra)
{
	unsigned int i, written = 0;
	u64 prev = 0;

	for (i = 0; i < c->nr_ids; i++)
		c->rec[i].seen = false;
	for (i = 0; i < c->nr_ids; i++)
		written += c->rec[i].written;

	for (i = 0; i < c->nr_read; i++) {
		struct nest_read *r = &c->rd[i];
		struct nest_record *w;

		if (i && r->ts < prev) {
			snprintf(c->err, sizeof(c->err),
				 "read %u (id %u): time went backwards %" PRIu64
				 " < %" PRIu64, i, r->id, r->ts, prev);
			return false;
		}
		if (r->id == NEST_FILLER_ID) {
			prev = r->ts;
			continue;
		}
		if (r->id < c->nr_ids && c->rec[r->id].discarded) {
			snprintf(c->err, sizeof(c->err),
				 "read %u: id %u was discarded", i, r->id);
			return false;
		}
		if (r->id >= c->nr_ids || !c->rec[r->id].written ||
		    c->rec[r->id].seen) {
			snprintf(c->err, sizeof(c->err),
				 "read %u: unknown or duplicate id %u", i, r->id);
			return false;
		}
		w = &c->rec[r->id];
		w->seen = true;
		if (w->flags & RBN_EV_ZERO_DELTA) {
			if (!i || r->ts != prev) {
				snprintf(c->err, sizeof(c->err),
					 "id %u: zero-delta event at %" PRIu64
					 ", previous at %" PRIu64, r->id, r->ts, prev);
				return false;
			}
		} else if (w->flags & RBN_EV_CLOCK_BACK) {
			if (r->ts <= w->ts || r->ts > c->clock_max) {
				snprintf(c->err, sizeof(c->err),
					 "id %u (depth %u flags %#x): clock-back event read at %" PRIu64
					 ", its clock %" PRIu64 ", latest clock %" PRIu64,
					 r->id, w->depth, w->flags, r->ts, w->ts,
					 c->clock_max);
				return false;
			}
		} else if (r->ts != w->ts) {
			snprintf(c->err, sizeof(c->err),
				 "id %u (depth %u flags %#x): read %" PRIu64
				 ", writer used %" PRIu64 " (diff %" PRId64 ")",
				 r->id, w->depth, w->flags, r->ts, w->ts,
				 (int64_t)(r->ts - w->ts));
			return false;
		}
		prev = r->ts;
	}

	if (c->nr_read + c->lost != written + extra) {
		snprintf(c->err, sizeof(c->err),
			 "written %u (+%u filler), read %u, lost %lu", written,
			 extra, c->nr_read, c->lost);
		return false;
	}
	if (c->payload_bad) {
		snprintf(c->err, sizeof(c->err), "payload of id %u corrupted",
			 c->payload_bad - 1);
		return false;
	}
	if (c->lost_uncounted) {
		snprintf(c->err, sizeof(c->err),
			 "%u page(s) taken with missed events and no room for their count",
			 c->lost_uncounted);
		return false;
	}
	if (c->refused && !c->drop_planned) {
		snprintf(c->err, sizeof(c->err),
			 "%u reserve(s) refused in a scenario that plans no drop",
			 c->refused);
		return false;
	}
	if (c->early_read) {
		snprintf(c->err, sizeof(c->err),
			 "a reader saw id %u before its writer committed it",
			 c->early_read - 1);
		return false;
	}
	if (c->unpublished) {
		snprintf(c->err, sizeof(c->err),
			 "outermost commit of id %u returned with events unpublished",
			 c->unpublished - 1);
		return false;
	}
	if (c->fired_total != c->planned) {
		snprintf(c->err, sizeof(c->err),
			 "%d of %d planned interrupts or actions taken",
			 c->fired_total, c->planned);
		return false;
	}
	if (rbn_user_warnings) {
		snprintf(c->err, sizeof(c->err), "core warnings: %lu",
			 rbn_user_warnings);
		return false;
	}
	for (i = 0; i < c->nr_ids; i++) {
		unsigned int f = c->rec[i].flags;

		if (!c->rec[i].written)
			continue;
		c->events++;
		if (f & RBN_EV_FAST)
			c->paths[0]++;
		if (f & RBN_EV_ABSOLUTE)
			c->paths[1]++;
		if (f & RBN_EV_SLOW)
			c->paths[2]++;
		if (f & RBN_EV_ZERO_DELTA)
			c->paths[3]++;
		if (f & RBN_EV_EXTEND)
			c->paths[4]++;
		if (f & RBN_EV_PAGE_START)
			c->paths[5]++;
		if (f & RBN_EV_CLOCK_BACK)
			c->paths[6]++;
	}
	return true;
}

#endif /* _RBN_NEST_HARNESS_H */
