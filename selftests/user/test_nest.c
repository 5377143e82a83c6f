// SPDX-License-Identifier: GPL-2.0
/*
 * test_nest.c - exhaustive nesting of writers on the real rb_core.c.
 *
 * A scenario is a plan (nest_harness.h): actions taken at points of the
 * run, where a point is a hook call of the core (a label of the write
 * path, or of the reader's page swap) or the moment after an action taken
 * at one. The actions are a nested writer one context level up (softirq,
 * hardirq, NMI), a reader on another CPU consuming an event, taking a
 * sub-buffer or (overwrite) consuming everything there is, or a jump of
 * the clock. Inside a reader's swap the actions are writers: the CPU's
 * writers run while the reader is between two of its accesses.
 *
 * The plans are enumerated depth first: a plan is run, and every point
 * its run offered after its last action is where one more action can go.
 * Everything before that point runs the same in the longer plan, so every
 * action of every plan is taken where it was meant to be, and a label is
 * tried exactly where the code reaches it (a slow-path label only after a
 * writer ran between A and C, a page-switch label only on a crossing, a
 * second time round when the code loops). A plan whose actions were not
 * all taken fails. Bounds: up to four writers (task .. NMI), up to two
 * interrupts per writer; one reader action; one clock jump of one kind in
 * plans of up to three writers, and at two points after the last
 * interrupt of the four-writer plans.
 *
 * Each plan runs at several positions in a sub-buffer (first event of a
 * page, middle, exactly filling it, crossing its end, nested writers
 * crossing it, a full producer/consumer ring where reserves are refused,
 * a reader that keeps up on a ring gone round once).
 * After each run a reader rebuilds the time stamps and nest_check() checks
 * the invariants, and at every step: a reader acting at a point sees only
 * whole, committed events; the outermost commit leaves everything
 * published; no reserve is refused unless the position plans it, and then
 * each refusal is counted.
 *
 * The overwrite family does the same on full rings of 2, 3 and 4
 * sub-buffers, where the outermost writer or a nested one pushes the head
 * and readers swap pages at the points, with the counters checked exactly.
 *
 * Overwrite also checks where the reader is told of lost events: with the
 * first event read after them, never before and never later.
 *
 * The discard families run the same enumeration with smaller bounds (up to
 * three writers, readers and clock jumps in plans of up to two), where one
 * writer of each plan, the root included, discards its event with
 * rbn_discard() instead of committing it: at every position, given back
 * or left in place as padding, interrupted before or after its reserve.
 * No reader may see it, every other event keeps its time, stats.discarded
 * grows by exactly the discards, and the counters stay exact. The
 * absolute families are the discard families in absolute time-stamp mode
 * (positions sized for the stamp every event carries there).
 *
 * Every label of enum rbn_label and of enum rbn_reader_label must get a
 * writer somewhere, or the test fails: the enums and the enumeration stay
 * in step.
 *
 * RBN_NEST_QUICK=1 runs a sample (sanitizer builds): every 7th four-writer
 * plan, and of the plans that end with a reader action, a clock jump or a
 * swap every 4th (and what grows from it). RBN_NEST_QUICK=N samples N
 * times fewer of the four-writer plans and of those ending in a reader
 * action or a jump (the coverage build, which only has to reach every
 * branch: the plain build runs every plan).
 */
#include <stdlib.h>

#include "ktap.h"
#include "nest_harness.h"

#define MAX_WRITERS	4

enum pos {
	POS_START,	/* root is the first event of a fresh sub-buffer */
	POS_MID,	/* plenty of room */
	POS_EXACT,	/* root exactly fills the sub-buffer */
	POS_CROSS,	/* root does not fit */
	POS_NESTED,	/* root fits, the first nested writer does not */
	POS_FILL_NESTED,	/* a depth-2 event, then the root fill it exactly */
	POS_FILL_NESTED_ABS,	/* the same with the depth-2 event absolute */
	POS_SHORT_NESTED,	/* a depth-2 event and the root leave 4 bytes */
	/*
	 * Discard families only: a depth-2 event nested before the root's
	 * reserve fills the sub-buffer exactly, or leaves 4 bytes, so that
	 * a writer nested in its discard crosses to the next one.
	 */
	POS_SECOND_EXACT,
	POS_SECOND_SHORT,
	POS_FULL,	/* producer/consumer ring full: the root is refused */
	/*
	 * On the same small ring, gone round once: the reader keeps up. Its
	 * page is the tail page, read to its end, and the pages ahead were
	 * written and read in the last round.
	 */
	POS_CAUGHT_UP_NESTED,	/* the root (or a writer in its place) fits */
	POS_CAUGHT_UP_CROSS,	/* the root crosses onto a reused page */
	NR_POS
};

static const char * const pos_name[NR_POS] = {
	"page-start", "middle", "exact-fill", "crossing", "nested-crossing",
	"fill-after-nested", "fill-after-abs", "short-after-nested",
	"second-exact", "second-short", "full",
	"caught-up-nested", "caught-up-crossing"
};

/* Payload per depth: small, small, large (type_len 0), small. */
static const unsigned short depth_len[MAX_WRITERS + 1] = { 0, 24, 40, 120, 16 };

enum clk {
	CLK_STEADY,	/* 1 ns per clock read, no jump */
	CLK_HIGH,	/* around 2^59, crossing it */
	CLK_JUMP,	/* 2^27 ns jump */
	CLK_JUMP_BIG,	/* 2^32 + 3 ns jump */
	CLK_HIGH_JUMP,	/* above 2^59 - 2^27, jump across 2^59 */
	CLK_BACK,	/* the next clock read 1 ns below the last one */
	CLK_BACK_27,	/* ... 2^27 ns below */
	CLK_BACK_32,	/* ... 2^32 ns below */
	CLK_HIGH_BACK,	/* just above 2^59, 2^27 ns back across it */
	NR_CLK
};

static const char * const clk_name[NR_CLK] = {
	"steady", "near 2^59", "jump 2^27", "jump 2^32", "jump across 2^59",
	"back 1 ns", "back 2^27", "back 2^32", "back across 2^59"
};

/* Plans per bound, given to the enumeration. */
struct bounds {
	int writes;		/* nested writers */
	int readers;		/* reader actions */
	int writes_reader;	/* ... in plans of at most this many nested writers */
	bool jumps;		/* a clock jump */
	int writes_jump;	/* ... in plans of at most this many nested writers */
	int quick;		/* sample: 0 all plans, N every 7N-th/4N-th */
	bool discards;		/* one writer of a plan may discard */
	bool abs_ts;		/* absolute time-stamp mode */
	bool validate;		/* the run-time validator on */
	bool swaps;		/* one swap of the CPU's ring per plan */
};

struct family {
	char name[32];
	struct rbn_buffer *buffer;
	struct bounds b;
	int pos;		/* the position being enumerated */
	unsigned int extra;	/* filler events written before the plan */
	unsigned long scenarios, failed, quick_skipped;
	unsigned long by_pos[NR_POS];
	unsigned long by_clk[NR_CLK];
	unsigned long by_writers[MAX_WRITERS + 1];
	unsigned long by_action[NEST_JUMP + 1];
	unsigned long label_writer[NEST_NR_LABELS];
	unsigned long label_reader[NEST_NR_LABELS];
	unsigned long refused, dropped, discarded;
	/* validate: the validator's counts, summed */
	unsigned long vchecked, vskipped, vfail;
	bool root_discard;	/* the root of every plan discards */
	/* (label, depth, position, clock) combinations exercised */
	unsigned char combo[NEST_NR_LABELS][MAX_WRITERS + 1][NR_POS][NR_CLK];
	/* overwrite: the counters, summed */
	unsigned long overrun, lost, read, uncounted_pages;
	bool overwrite;
	int ring;		/* overwrite: sub-buffers in the ring */
	struct rbn_buffer *spare;	/* swaps: the other buffer */
	unsigned long swaps, swaps_busy;
	bool (*setup)(struct family *f);
};

static struct nest_ctx ctx;
/* RBN_NEST_VALIDATOR_ONLY=1: the validate families alone, judged by it. */
static bool validator_only;
static unsigned long all_label_writer[NEST_NR_LABELS];

static unsigned int subbuf_room(struct family *f)
{
	return rbn_subbuf_size(f->buffer) - RBN_PAGE_HDR_SIZE;
}

/*
 * Bytes left in the sub-buffer before the root writes. @stamp: the bytes
 * of the absolute stamp every event has in absolute mode, else 0.
 */
static unsigned int pos_room(int pos, unsigned int subbuf, unsigned int stamp)
{
	unsigned int root = 4 + depth_len[1] + stamp;

	switch (pos) {
	case POS_MID:
		return subbuf / 2;
	case POS_EXACT:
		return root;
	case POS_CROSS:
	case POS_FULL:
	case POS_CAUGHT_UP_CROSS:
		return root - 4;
	case POS_NESTED:
	case POS_CAUGHT_UP_NESTED:
		/* the root with a stamp fits; a depth-2 event does not */
		return root + 8 + 20;
	case POS_FILL_NESTED:
		return root + 4 + depth_len[2] + stamp;
	case POS_FILL_NESTED_ABS:
		return root + 4 + depth_len[2] + 8;
	case POS_SHORT_NESTED:
		return root + 4 + depth_len[2] + stamp + 4;
	case POS_SECOND_EXACT:
		return 4 + depth_len[2] + stamp;
	case POS_SECOND_SHORT:
		return 4 + depth_len[2] + stamp + 4;
	default:
		return subbuf;
	}
}

static void clk_setup(int clk, u64 *base, u64 *jump)
{
	*base = 1000;
	*jump = 0;
	switch (clk) {
	case CLK_JUMP:
		*jump = 1ULL << 27;
		break;
	case CLK_JUMP_BIG:
		*jump = (1ULL << 32) + 3;
		break;
	case CLK_HIGH:
		*base = (1ULL << 59) - 40;
		break;
	case CLK_HIGH_JUMP:
		*base = (1ULL << 59) - (1ULL << 26);
		*jump = 1ULL << 27;
		break;
	/*
	 * A step back of N: the jump takes N + 1 off the clock, so the next
	 * read (which adds the step of 1) is N below the last one.
	 */
	case CLK_BACK:
		*base = 1ULL << 40;
		*jump = -2ULL;
		break;
	case CLK_BACK_27:
		*base = 1ULL << 40;
		*jump = -((1ULL << 27) + 1);
		break;
	case CLK_BACK_32:
		*base = 1ULL << 40;
		*jump = -((1ULL << 32) + 1);
		break;
	case CLK_HIGH_BACK:
		*base = (1ULL << 59) + 20;
		*jump = -((1ULL << 27) + 1);
		break;
	}
}

/*
 * Write @total bytes of filler events (a sub-buffer takes at most
 * rbn_max_event_size() in one), counting them in f->extra.
 */
static bool fill(struct family *f, unsigned int total)
{
	unsigned int half = subbuf_room(f) / 2;

	while (total) {
		unsigned int n = total > half ? half : total;

		/* leave no piece smaller than an event */
		if (total - n && total - n < 16)
			n -= 16;
		if (!nest_filler(&ctx, n))
			return false;
		f->extra++;
		total -= n;
	}
	return true;
}

/*
 * A sub-buffer filled up to this many bytes from its end: the next event
 * does not fit, the rest becomes a discarded event, and a reader taking
 * the sub-buffer (without the discarded event) has room for the count of
 * events lost before it.
 */
#define FULL_SLACK	16

/* Consume every event there is, without the hook and without a record. */
static void consume_quietly(struct family *f)
{
	while (rbn_consume(f->buffer, 0, NULL, NULL))
		;
}

/* Producer/consumer family: fill the sub-buffer for the position. */
static bool setup_nest(struct family *f)
{
	unsigned int subbuf = subbuf_room(f);
	unsigned int room = pos_room(f->pos, subbuf,
				     f->b.abs_ts ? RBN_LEN_TIME_STAMP : 0);
	unsigned long i;

	f->extra = 0;
	ctx.len_by_depth[1] = depth_len[1];
	for (i = 2; i <= MAX_WRITERS; i++)
		ctx.len_by_depth[i] = depth_len[i];
	memset(ctx.repeat_by_depth, 0, sizeof(ctx.repeat_by_depth));
	if (f->pos == POS_CAUGHT_UP_NESTED || f->pos == POS_CAUGHT_UP_CROSS) {
		/*
		 * Round the ring once, the reader consuming as it goes; then
		 * the tail page up to the room, read to its end. The reader
		 * copies nothing: none of this is the scenario's.
		 */
		for (i = 0; i < rbn_nr_subbufs(f->buffer); i++) {
			if (!fill(f, subbuf - FULL_SLACK))
				return false;
			consume_quietly(f);
		}
		if (!fill(f, subbuf - room))
			return false;
		consume_quietly(f);
		f->extra = 0;
		return true;
	}
	if (f->pos == POS_FULL) {
		/* every sub-buffer of the ring full but the last one's end */
		for (i = 0; i + 1 < rbn_nr_subbufs(f->buffer); i++)
			if (!fill(f, subbuf - FULL_SLACK))
				return false;
		ctx.drop_planned = true;
	}
	return room >= subbuf || fill(f, subbuf - room);
}

/*
 * Overwrite family: a ring of f->ring sub-buffers, filled so that the
 * tail is on its last sub-buffer (the next one is the head) with @pos
 * deciding the room left: the root pushes the head (crossing), a nested
 * writer does (the root fits), or nobody does (middle of the page).
 * Events of a quarter of a sub-buffer: three nested writers write less
 * than a sub-buffer, so they never lap the commit and nothing may be
 * refused.
 */
enum ow_pos {
	OW_ROOT_PUSH, OW_NESTED_PUSH, OW_DEEP_PUSH, OW_MID,
	OW_LAP,		/* the root pushes, a nested writer crosses twice */
	NR_OW_POS
};

static const char * const ow_pos_name[NR_OW_POS] = {
	"root-pushes", "nested-pushes", "third-pushes", "no-push",
	"nested-crosses-twice"
};

/*
 * OW_LAP: the second writer writes this many events: from the root's
 * full page it fills the next one and crosses again, so that nested in
 * the root's head push it moves the tail twice and pushes the head past
 * the page the root is flagging. The third page still has room for the
 * root and a third writer: nothing laps the root's commit. Rings of 3
 * sub-buffers or more (in 2 it would lap it), plans of up to three
 * writers with one interrupt of the root (the second writer is the only
 * one of its depth), readers in plans of up to two.
 */
#define OW_LAP_EVENTS	5

#define OW_LEN		1004

static bool setup_overwrite(struct family *f)
{
	unsigned int subbuf = subbuf_room(f);
	unsigned int ev = OW_LEN + 4 + (f->b.abs_ts ? RBN_LEN_TIME_STAMP : 0);
	unsigned int room;
	unsigned long i;

	f->extra = 0;
	for (i = 1; i <= MAX_WRITERS; i++)
		ctx.len_by_depth[i] = OW_LEN;
	memset(ctx.repeat_by_depth, 0, sizeof(ctx.repeat_by_depth));
	if (f->pos == OW_LAP)
		ctx.repeat_by_depth[2] = OW_LAP_EVENTS - 1;
	switch (f->pos) {
	case OW_LAP:
	case OW_ROOT_PUSH:
		room = ev - 4;
		break;
	case OW_NESTED_PUSH:
		room = ev + 8 + ev / 2;		/* ev / 2 = 502: a multiple of 4 */
		break;
	case OW_DEEP_PUSH:
		room = 2 * (ev + 8) + ev / 2;
		break;
	default:
		room = subbuf / 2 + 2 * ev;
		/* the filler before needs 16 bytes in absolute mode */
		if (subbuf - room < 16)
			room = subbuf - 16;
		break;
	}
	/* wrap the ring once, so that the head has events to lose */
	for (i = 0; i < rbn_nr_subbufs(f->buffer); i++)
		if (!fill(f, subbuf - FULL_SLACK))
			return false;
	return fill(f, subbuf - room);
}

static int plan_writes(const struct nest_plan *p, int *readers, int *jump,
		       int *discards)
{
	int w = 0;

	*readers = 0;
	*jump = -1;
	*discards = 0;
	for (int i = 0; i < p->n; i++) {
		if (p->action[i] == NEST_WRITE) {
			w++;
		} else if (p->action[i] == NEST_WRITE_DISCARD) {
			w++;
			(*discards)++;
		} else if (p->action[i] == NEST_SWAP) {
			(*discards) += 100;	/* a swap: see has_swap() */
		} else if (p->action[i] >= NEST_JUMP) {
			*jump = p->action[i] - NEST_JUMP;
		} else {
			(*readers)++;
		}
	}
	return w;
}

/* plan_writes() counts a swap as 100 discards: plans have one at most. */
static bool has_swap(int discards)
{
	return discards >= 100;
}

static void describe(const struct nest_plan *p, const struct nest_point *pts,
		     char *buf, size_t size)
{
	static const char * const act[] = {
		"write", "consume", "take-page", "drain", "discarding-write",
		"swap"
	};
	int len = 0;

	buf[0] = 0;
	for (int i = 0; i < p->n && len < (int)size; i++) {
		const struct nest_point *np = &pts[p->point[i]];

		len += snprintf(buf + len, size - len, " %s@%s(depth %d, point %d)",
				p->action[i] >= NEST_JUMP ? "clock" :
				act[p->action[i]], nest_label_name(np->label),
				np->depth, p->point[i]);
	}
}

/*
 * Overwrite: a reader is told of lost events where they were, with the
 * first event it reads after them. So when it reads an event, the counts
 * it got so far cover every overwritten event older than that one, and
 * none newer. Times grow along the buffer and sub-buffers are lost whole;
 * only a zero-delta event is shown at a time that is not its writer's (the
 * one of the event before it), so it counts on neither side for sure.
 */
static bool lost_where_reported(struct nest_ctx *c)
{
	static unsigned char was_read[NEST_MAX_EVENTS], filler_read[NEST_MAX_EVENTS];
	static u64 gone[2 * NEST_MAX_EVENTS];
	static unsigned char exact[2 * NEST_MAX_EVENTS];
	unsigned int nr_gone = 0, i, j;
	unsigned long told = 0;

	memset(was_read, 0, c->nr_ids);
	memset(filler_read, 0, c->nr_fillers);
	for (i = 0; i < c->nr_read; i++) {
		if (c->rd[i].id < c->nr_ids) {
			was_read[c->rd[i].id] = 1;
			continue;
		}
		for (j = 0; j < c->nr_fillers; j++)
			if (c->filler_ts[j] == c->rd[i].ts)
				filler_read[j] = 1;
	}
	for (i = 0; i < c->nr_ids; i++) {
		if (!c->rec[i].written || was_read[i])
			continue;
		gone[nr_gone] = c->rec[i].ts;
		exact[nr_gone++] = !(c->rec[i].flags & RBN_EV_ZERO_DELTA);
	}
	for (j = 0; j < c->nr_fillers; j++) {
		if (filler_read[j])
			continue;
		gone[nr_gone] = c->filler_ts[j];
		exact[nr_gone++] = 1;
	}
	for (i = 0; i < c->nr_read; i++) {
		unsigned long older = 0, maybe = 0;
		u64 ts = c->rd[i].ts;

		told += c->rd[i].lost;
		for (j = 0; j < nr_gone; j++) {
			if (exact[j] && gone[j] < ts)
				older++;
			if (!exact[j] || gone[j] <= ts)
				maybe++;
		}
		if (told < older || told > maybe) {
			snprintf(c->err, sizeof(c->err),
				 "read %u (ts %llu): told of %lu lost events so far, %lu older ones were lost (%lu at most)",
				 i, (unsigned long long)ts, told, older, maybe);
			return false;
		}
	}
	return true;
}

/*
 * Run one plan at the family's position with clock @clk (the plan's jump
 * kind, or steady / near 2^59 without a jump). Fills @pts with the points
 * the run offered and returns how many.
 */
static int run_plan(struct family *f, const struct nest_plan *p, int clk,
		    struct nest_point *pts)
{
	struct rbn_cpu_stats st0, st;
	int readers, jump, writes, discards;
	unsigned long vfailed = 0;
	u64 base, jv;
	bool ok = true;

	writes = plan_writes(p, &readers, &jump, &discards);
	clk_setup(clk, &base, &jv);
	nest_begin(&ctx, NULL, base, 1, jv, -1);
	ctx.overwrite = f->overwrite;
	ctx.root_discard = f->root_discard;
	ctx.spare = f->spare;
	if (f->spare)
		rbn_reset(f->spare);
	if (!f->setup(f)) {
		snprintf(ctx.err, sizeof(ctx.err), "the fillers of %s failed",
			 f->overwrite ? ow_pos_name[f->pos] : pos_name[f->pos]);
		ok = false;
	}
	rbn_cpu_stats(f->buffer, 0, &st0);
	if (ok) {
		nest_run_plan(&ctx, p, pts);
		/*
		 * A reader saw only committed events; now every one is. A
		 * swap left the older events in the spare: read it first.
		 */
		if (f->spare) {
			struct rbn_buffer *live = ctx.buffer;

			ctx.buffer = f->spare;
			nest_drain(&ctx);
			ctx.buffer = live;
		}
		nest_drain(&ctx);
		rbn_cpu_stats(f->buffer, 0, &st);
		if (f->overwrite && !ctx.lost_uncounted &&
		    !lost_where_reported(&ctx))
			ok = false;
		/*
		 * A reader that copies out the page the commit is still on
		 * copies the discarded event at its end too, and has no
		 * room left for the count of events lost before it: the
		 * page says "missed", the core's overrun says how many.
		 */
		if (ctx.lost_uncounted && f->overwrite && st.overrun > ctx.lost) {
			f->uncounted_pages += ctx.lost_uncounted;
			ctx.lost = st.overrun;
			ctx.lost_uncounted = 0;
		}
		ok = nest_check(&ctx, f->extra) && ok;
	}
	rbn_cpu_stats(f->buffer, 0, &st);
	/* A discarded event is counted there, and nowhere else. */
	if (ok && st.discarded - st0.discarded != ctx.nr_discarded) {
		snprintf(ctx.err, sizeof(ctx.err),
			 "%u events discarded, stats.discarded grew by %llu",
			 ctx.nr_discarded,
			 (unsigned long long)(st.discarded - st0.discarded));
		ok = false;
	}
	f->discarded += ctx.nr_discarded;
	if (f->b.validate) {
		unsigned long written = st.written - st0.written;
		unsigned long checked = st.validate_checked - st0.validate_checked;
		unsigned long skipped = st.validate_skipped - st0.validate_skipped;
		unsigned long vfail = st.validate_fail - st0.validate_fail;

		f->vchecked += checked;
		f->vskipped += skipped;
		f->vfail += vfail;
		/*
		 * Every event committed, and every one discarded in place,
		 * was checked or counted skipped; none failed.
		 */
		if (vfail && (ok || validator_only)) {
			snprintf(ctx.err, sizeof(ctx.err),
				 "the validator failed %lu events (checked %lu, skipped %lu)",
				 vfail, checked, skipped);
			ok = false;
		} else if (ok && (checked + skipped < written ||
				  checked + skipped > written + ctx.nr_discarded)) {
			snprintf(ctx.err, sizeof(ctx.err),
				 "the validator checked %lu and skipped %lu of %lu written and %u discarded events",
				 checked, skipped, written, ctx.nr_discarded);
			ok = false;
		}
		vfailed = vfail;
	}
	if (ok && ctx.swap_bad) {
		snprintf(ctx.err, sizeof(ctx.err),
			 "the swap at point %d returned %s", ctx.swap_bad - 1,
			 ctx.swaps_busy ? "-EBUSY with no writer holding its bit" :
			 "0 with a writer holding its bit");
		ok = false;
	}
	if (ok && f->spare) {
		struct rbn_cpu_stats sp;

		rbn_cpu_stats(f->spare, 0, &sp);
		if (sp.bytes || sp.entries) {
			snprintf(ctx.err, sizeof(ctx.err),
				 "spare: %llu bytes, %llu entries left after the drain",
				 (unsigned long long)sp.bytes,
				 (unsigned long long)sp.entries);
			ok = false;
		}
	}
	f->swaps += ctx.swaps;
	f->swaps_busy += ctx.swaps_busy;
	if (ok && ctx.drop_planned &&
	    ctx.refused != (st.dropped - st0.dropped) +
			   (st.commit_overrun - st0.commit_overrun)) {
		snprintf(ctx.err, sizeof(ctx.err),
			 "%u reserves refused, %llu counted as dropped",
			 ctx.refused,
			 (unsigned long long)(st.dropped - st0.dropped +
					      st.commit_overrun - st0.commit_overrun));
		ok = false;
	}
	if (ok && f->overwrite) {
		/*
		 * Every event written before and during the plan was read
		 * or overwritten, and each overwritten one is counted once:
		 * by the core's overrun counter and by the reader as lost.
		 */
		if (st.entries || st.overrun != ctx.lost ||
		    st.read != ctx.nr_read || st.commit_overrun || st.dropped) {
			snprintf(ctx.err, sizeof(ctx.err),
				 "counters: entries %llu, overrun %llu (reader lost %lu), read %llu (reader %u), dropped %llu + %llu",
				 (unsigned long long)st.entries,
				 (unsigned long long)st.overrun, ctx.lost,
				 (unsigned long long)st.read, ctx.nr_read,
				 (unsigned long long)st.dropped,
				 (unsigned long long)st.commit_overrun);
			ok = false;
		}
		f->overrun += st.overrun;
		f->lost += ctx.lost;
		f->read += st.read;
	}
	/*
	 * Everything was read: no byte is left in the fill level (bytes
	 * written, minus those of overwritten sub-buffers, minus read).
	 */
	if (ok && st.bytes) {
		snprintf(ctx.err, sizeof(ctx.err),
			 "%llu bytes left unread after the drain",
			 (unsigned long long)st.bytes);
		ok = false;
	}
	if (ok && !rbn_cpu_published(f->buffer, 0)) {
		snprintf(ctx.err, sizeof(ctx.err), "not published at the end");
		ok = false;
	}

	if (validator_only && !vfailed)
		ok = true;
	f->scenarios++;
	f->by_pos[f->pos]++;
	f->by_clk[clk]++;
	f->by_writers[1 + writes]++;
	f->refused += ctx.refused;
	f->dropped += st.dropped - st0.dropped;
	for (int i = 0; i < p->n; i++) {
		const struct nest_point *np = &pts[p->point[i]];
		int a = p->action[i] >= NEST_JUMP ? NEST_JUMP : p->action[i];

		f->by_action[a]++;
		if (a == NEST_WRITE || a == NEST_WRITE_DISCARD) {
			f->label_writer[np->label]++;
			f->combo[np->label][np->depth][f->pos][clk] = 1;
		} else if (a != NEST_JUMP) {
			f->label_reader[np->label]++;
		}
	}
	if (!ok) {
		f->failed++;
		if (f->failed <= 10) {
			char desc[512];

			describe(p, pts, desc, sizeof(desc));
			ktap_print("FAIL %s %s clock %s plan%s: %s", f->name,
				   f->overwrite ? ow_pos_name[f->pos] :
				   pos_name[f->pos], clk_name[clk],
				   desc[0] ? desc : " (none)", ctx.err);
		}
	}
	return ctx.nr_points < NEST_MAX_POINTS ? ctx.nr_points : NEST_MAX_POINTS;
}

/*
 * The clock jumps tried in plans of 1 + N writers: every kind up to two
 * writers, fewer in the larger plans (whose count would otherwise grow
 * with every kind at every point).
 */
#define CLK_BIT(k)	(1U << (k))
static const unsigned int jump_kinds[MAX_WRITERS] = {
	~0U, ~0U,
	CLK_BIT(CLK_JUMP) | CLK_BIT(CLK_JUMP_BIG) | CLK_BIT(CLK_BACK) |
	CLK_BIT(CLK_HIGH_BACK),
	CLK_BIT(CLK_JUMP) | CLK_BIT(CLK_BACK),
};

static unsigned long quick_count;

/*
 * The positions where the reader keeps up are about pages and readers:
 * their plans run with the steady clock only (the clocks are the other
 * positions' business, which run the same plans with every kind).
 */
static bool caught_up(const struct family *f)
{
	return !f->overwrite && (f->pos == POS_CAUGHT_UP_NESTED ||
				 f->pos == POS_CAUGHT_UP_CROSS);
}

/* Run @p and every plan that extends it by actions after its last one. */
static void explore(struct family *f, struct nest_plan *p)
{
	struct nest_point pts[NEST_MAX_POINTS];
	int readers, jump, writes, discards, np, start, clk;

	writes = plan_writes(p, &readers, &jump, &discards);
	clk = jump >= 0 ? jump : CLK_STEADY;
	/*
	 * The sample (RBN_NEST_QUICK=N): every 7N-th four-writer plan, every
	 * 4N-th plan that ends in a jump or a reader action, every 4th that
	 * ends in a swap (fewer leave a swap label without a writer).
	 */
	if (f->b.quick &&
	    ((writes == MAX_WRITERS - 1 && quick_count++ % (7 * f->b.quick)) ||
	     (p->n && p->action[p->n - 1] != NEST_WRITE &&
	      quick_count++ % (p->action[p->n - 1] == NEST_SWAP ?
			       4 : 4 * f->b.quick)))) {
		f->quick_skipped++;
		return;
	}
	np = run_plan(f, p, clk, pts);
	/*
	 * The same plan without a jump with the clock near 2^59, unless a
	 * reader acts in it: readers rebuild times the same way at the end
	 * of every plan, and the writers' plans run near 2^59 without one.
	 */
	if (jump < 0 && !readers && !f->overwrite && !caught_up(f)) {
		struct nest_point pts2[NEST_MAX_POINTS];

		run_plan(f, p, CLK_HIGH, pts2);
	}
	if (p->n >= NEST_PLAN_MAX - 1)
		return;
	start = p->n ? p->point[p->n - 1] + 1 : 0;
	for (int pt = start; pt < np; pt++) {
		const struct nest_point *at = &pts[pt];
		int n = p->n;

		p->point[n] = pt;
		p->n = n + 1;
		/*
		 * Writers run inside a reader's consume: its swap of the
		 * head page is the one a page take and a drain go through
		 * too. A page take and a drain (overwrite) are there for
		 * what the reader does with the pages the writers left, and
		 * run alone.
		 */
		if (writes < f->b.writes && at->depth < MAX_WRITERS &&
		    (!at->reader || at->reader == NEST_CONSUME) &&
		    !(f->overwrite && f->pos == OW_LAP &&
		      (writes >= 2 || (at->depth == 1 && at->children))) &&
		    !(f->overwrite && f->pos == OW_LAP && readers && writes >= 1) &&
		    at->children < 2 &&
		    (jump < 0 || (writes + 1 <= f->b.writes_jump &&
				  jump_kinds[writes + 1] & CLK_BIT(jump))) &&
		    (!readers || writes + 1 <= f->b.writes_reader)) {
			p->action[n] = NEST_WRITE;
			explore(f, p);
			/* one discarding writer per plan, the root included */
			if (f->b.discards && !discards && !f->root_discard &&
			    !f->b.swaps) {
				p->action[n] = NEST_WRITE_DISCARD;
				explore(f, p);
			}
		}
		if (f->b.swaps && !has_swap(discards) && !at->reader &&
		    at->label < RBN_NR_LABELS && at->label != RBN_LABEL_SWAP &&
		    at->label != RBN_LABEL_SWAP_DONE) {
			p->action[n] = NEST_SWAP;
			explore(f, p);
		}
		if (readers < f->b.readers && !at->head_busy && !at->reader &&
		    !(f->overwrite && f->pos == OW_LAP && writes > 1) &&
		    writes <= f->b.writes_reader && jump < 0) {
			p->action[n] = NEST_CONSUME;
			explore(f, p);
			p->action[n] = NEST_READ_PAGE;
			explore(f, p);
			/*
			 * Overwrite: a reader that keeps reading gets to the
			 * pages the writers just claimed.
			 */
			if (f->overwrite) {
				p->action[n] = NEST_DRAIN;
				explore(f, p);
			}
		}
		if (f->b.jumps && jump < 0 && !readers && !caught_up(f) &&
		    at->label < RBN_NR_LABELS &&
		    (writes <= f->b.writes_jump ||
		     (writes == f->b.writes && (pt == start || pt == np - 1)))) {
			for (int k = CLK_JUMP; k < NR_CLK; k++) {
				if (!(jump_kinds[writes] & CLK_BIT(k)))
					continue;
				p->action[n] = NEST_JUMP + k;
				explore(f, p);
			}
		}
		p->n = n;
	}
}

static void print_family(struct family *f)
{
	unsigned long combos = 0, labels = 0;
	int i, d, pos, clk;

	for (i = 0; i < NEST_NR_LABELS; i++) {
		labels += !!f->label_writer[i];
		for (d = 0; d <= MAX_WRITERS; d++)
			for (pos = 0; pos < NR_POS; pos++)
				for (clk = 0; clk < NR_CLK; clk++)
					combos += f->combo[i][d][pos][clk];
	}
	ktap_print("%s: %lu scenarios run as planned (every action taken where planned), %lu failed%s",
		   f->name, f->scenarios - f->failed, f->failed,
		   f->quick_skipped ? " (quick sample)" : "");
	ktap_print("  %lu distinct (label, depth, position, clock) combinations of a nested writer; %lu of %d labels",
		   combos, labels, NEST_NR_LABELS);
	ktap_print("  actions: %lu nested writers (%lu discarding), %lu reader consumes, %lu page takes, %lu drains, %lu clock jumps",
		   f->by_action[NEST_WRITE] + f->by_action[NEST_WRITE_DISCARD],
		   f->by_action[NEST_WRITE_DISCARD], f->by_action[NEST_CONSUME],
		   f->by_action[NEST_READ_PAGE], f->by_action[NEST_DRAIN],
		   f->by_action[NEST_JUMP]);
	if (f->discarded)
		ktap_print("  events discarded %lu (stats.discarded agreed in every scenario)",
			   f->discarded);
	if (f->b.validate)
		ktap_print("  validator: %lu events checked, %lu skipped, %lu failed",
			   f->vchecked, f->vskipped, f->vfail);
	for (pos = 0; pos < NR_POS; pos++)
		if (f->by_pos[pos])
			ktap_print("  position %-18s %lu", f->overwrite ?
				   (pos < NR_OW_POS ? ow_pos_name[pos] : "?") :
				   pos_name[pos], f->by_pos[pos]);
	for (clk = 0; clk < NR_CLK; clk++)
		if (f->by_clk[clk])
			ktap_print("  clock %-18s %lu", clk_name[clk], f->by_clk[clk]);
	ktap_print("  writers per scenario: 1:%lu 2:%lu 3:%lu 4:%lu",
		   f->by_writers[1], f->by_writers[2], f->by_writers[3],
		   f->by_writers[4]);
	if (f->refused || f->dropped)
		ktap_print("  refused reserves %lu, counted dropped %lu",
			   f->refused, f->dropped);
	if (f->overwrite)
		ktap_print("  overrun %lu = lost seen by the reader %lu; read %lu; %lu pages taken with missed events but no room for their count",
			   f->overrun, f->lost, f->read, f->uncounted_pages);
	for (i = 0; i < NEST_NR_LABELS; i++)
		all_label_writer[i] += f->label_writer[i];
}

static void print_paths(unsigned long events, const unsigned long *paths)
{
	ktap_print("events %lu: fast %lu, forced-absolute %lu, slow (interrupted before reserve) %lu, zero-delta %lu, time-extend %lu, page-start %lu, clock-back %lu",
		   events, paths[0], paths[1], paths[2], paths[3], paths[4],
		   paths[5], paths[6]);
}

/* The paths of the events written since @paths0 / @events0 were saved. */
static void print_paths_since(const unsigned long *paths0,
			      unsigned long events0)
{
	unsigned long d[7];

	for (int i = 0; i < 7; i++)
		d[i] = ctx.paths[i] - paths0[i];
	print_paths(ctx.events - events0, d);
}

static struct family *new_family(const char *name, bool overwrite, int ring,
				 unsigned long size, struct bounds b)
{
	struct family *f = calloc(1, sizeof(*f));
	struct rbn_config cfg = {
		.size = size, .clock = nest_clock, .nr_cpus = 1,
		.overwrite = overwrite, .abs_ts = b.abs_ts,
		.validate = b.validate,
	};

	if (!f)
		return NULL;
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->b = b;
	f->overwrite = overwrite;
	f->ring = ring;
	f->setup = overwrite ? setup_overwrite : setup_nest;
	f->buffer = rbn_alloc(&cfg);
	if (IS_ERR(f->buffer)) {
		free(f);
		return NULL;
	}
	if (b.swaps) {
		f->spare = rbn_alloc(&cfg);
		if (IS_ERR(f->spare)) {
			rbn_free(f->buffer);
			free(f);
			return NULL;
		}
	}
	return f;
}

static void free_family(struct family *f)
{
	rbn_free(f->spare);
	rbn_free(f->buffer);
	free(f);
}

/*
 * Producer/consumer mode: every position, on a big ring and (full, caught
 * up) on a small one. With @roots 2 every plan runs twice: its root commits
 * (a nested writer may discard), then its root discards.
 */
static bool family_nest(const char *name, struct bounds b, int roots)
{
	struct family *f = new_family(name, false, 0, 16 * 4096, b);
	struct family *full = new_family(name, false, 0, 3 * 4080, b);
	struct nest_plan p = { 0 };
	unsigned long paths0[8], events0;
	bool ok;

	if (!f || !full)
		return false;
	memcpy(paths0, ctx.paths, sizeof(paths0));
	events0 = ctx.events;
	for (int root = 0; root < roots; root++) {
		f->root_discard = root;
		full->root_discard = root;
		ctx.buffer = f->buffer;
		ctx.page = rbn_alloc_read_page(f->buffer, 0);
		for (f->pos = 0; f->pos < POS_FULL; f->pos++)
			if (b.discards || (f->pos != POS_SECOND_EXACT &&
					   f->pos != POS_SECOND_SHORT))
				explore(f, &p);
		rbn_free_read_page(f->buffer, 0, ctx.page);

		/* the full ring: a small one, the same family */
		ctx.buffer = full->buffer;
		ctx.page = rbn_alloc_read_page(full->buffer, 0);
		for (full->pos = POS_FULL; full->pos < NR_POS; full->pos++)
			explore(full, &p);
		rbn_free_read_page(full->buffer, 0, ctx.page);
		ctx.page = NULL;
	}
	for (int i = 0; i < NR_POS; i++)
		f->by_pos[i] += full->by_pos[i];
	for (int i = 0; i < NR_CLK; i++)
		f->by_clk[i] += full->by_clk[i];
	for (int i = 0; i <= MAX_WRITERS; i++)
		f->by_writers[i] += full->by_writers[i];
	for (int i = 0; i <= NEST_JUMP; i++)
		f->by_action[i] += full->by_action[i];
	for (int i = 0; i < NEST_NR_LABELS; i++) {
		f->label_writer[i] += full->label_writer[i];
		f->label_reader[i] += full->label_reader[i];
		for (int d = 0; d <= MAX_WRITERS; d++)
			for (int c = 0; c < NR_CLK; c++)
				for (int pos = POS_FULL; pos < NR_POS; pos++)
					f->combo[i][d][pos][c] |=
						full->combo[i][d][pos][c];
	}
	f->scenarios += full->scenarios;
	f->failed += full->failed;
	f->quick_skipped += full->quick_skipped;
	f->refused += full->refused;
	f->dropped += full->dropped;
	f->discarded += full->discarded;
	f->vchecked += full->vchecked;
	f->vskipped += full->vskipped;
	f->vfail += full->vfail;
	print_family(f);
	print_paths_since(paths0, events0);
	ok = f->failed == 0 && f->scenarios > 0 && full->dropped > 0 &&
	     ctx.paths[6] > paths0[6] && (!b.discards || f->discarded > 0) &&
	     (!b.validate || f->vchecked > 0);
	if (b.validate && !f->vchecked)
		ktap_print("  the validator checked nothing");
	if (validator_only)
		ok = !f->failed;
	if (!full->dropped)
		ktap_print("  the full ring refused nothing");
	if (ctx.paths[6] == paths0[6])
		ktap_print("  no clock-back event: the clocks stepping back did not");
	if (b.discards && !f->discarded)
		ktap_print("  nothing was discarded");
	free_family(f);
	free_family(full);
	return ok;
}

/*
 * Overwrite mode on full rings of 2, 3 and 4 sub-buffers: the head is
 * pushed by the root or by a nested writer, readers act at the points.
 */
static bool family_overwrite(const char *name, struct bounds b, int first_ring,
			     int roots)
{
	unsigned long paths0[8], events0;
	bool ok = true;

	b.jumps = false;
	memcpy(paths0, ctx.paths, sizeof(paths0));
	events0 = ctx.events;
	for (int ring = first_ring; ring <= 4; ring++) {
		struct family *f;
		struct nest_plan p = { 0 };
		char fname[32];

		snprintf(fname, sizeof(fname), "%s ring %d", name, ring);
		f = new_family(fname, true, ring, ring * 4080, b);
		if (!f)
			return false;
		ctx.buffer = f->buffer;
		ctx.page = rbn_alloc_read_page(f->buffer, 0);
		for (int root = 0; root < roots; root++) {
			f->root_discard = root;
			for (f->pos = 0; f->pos < NR_OW_POS; f->pos++)
				if (f->pos != OW_LAP || ring >= 3)
					explore(f, &p);
		}
		rbn_free_read_page(f->buffer, 0, ctx.page);
		ctx.page = NULL;
		print_family(f);
		if (validator_only ? f->failed :
		    f->failed || !f->scenarios || !f->overrun ||
		    (b.discards && !f->discarded) ||
		    (b.validate && !f->vchecked))
			ok = false;
		if (b.validate && !f->vchecked)
			ktap_print("  the validator checked nothing");
		if (!f->overrun)
			ktap_print("  nothing was overwritten");
		if (b.discards && !f->discarded)
			ktap_print("  nothing was discarded");
		free_family(f);
	}
	print_paths_since(paths0, events0);
	return ok;
}

/*
 * Swaps: the CPU's ring swapped with a spare buffer's at any point of a
 * plan of up to three writers, and writers nested inside the swap. A swap
 * must refuse (-EBUSY) exactly while a writer on the stack holds its
 * recursion bit (from its lock to the end of its commit); one before a
 * writer's lock succeeds and that writer writes into its new ring; the
 * writers nested in a swap write before or after it. The spare is read first:
 * every event written is read once, at its time, in time order.
 */
static bool family_swap(struct bounds b)
{
	static const int positions[] = {
		POS_START, POS_MID, POS_EXACT, POS_CROSS, POS_NESTED,
	};
	struct family *f = new_family("swap", false, 0, 16 * 4096, b);
	struct nest_plan p = { 0 };
	unsigned long paths0[8], events0;
	bool ok;

	if (!f)
		return false;
	memcpy(paths0, ctx.paths, sizeof(paths0));
	events0 = ctx.events;
	ctx.buffer = f->buffer;
	ctx.page = rbn_alloc_read_page(f->buffer, 0);
	for (unsigned int i = 0; i < sizeof(positions) / sizeof(positions[0]);
	     i++) {
		f->pos = positions[i];
		explore(f, &p);
	}
	rbn_free_read_page(f->buffer, 0, ctx.page);
	ctx.page = NULL;
	print_family(f);
	ktap_print("  swaps %lu: %lu refused (-EBUSY, a writer holding its bit), %lu done",
		   f->swaps, f->swaps_busy, f->swaps - f->swaps_busy);
	print_paths_since(paths0, events0);
	ok = !f->failed && f->scenarios && f->swaps_busy &&
	     f->swaps > f->swaps_busy;
	free_family(f);
	return ok;
}

/* Every label got a nested writer somewhere. */
static bool labels_reached(void)
{
	int missing = 0;

	for (int i = 0; i < NEST_NR_LABELS; i++) {
		if (all_label_writer[i])
			continue;
		ktap_print("label %s: no scenario put a nested writer there",
			   nest_label_name(i));
		missing++;
	}
	ktap_print("%d of %d labels (%d of the write path, %d of the reader's swap) had a writer",
		   NEST_NR_LABELS - missing, NEST_NR_LABELS, RBN_NR_LABELS,
		   RBN_NR_READER_LABELS);
	return !missing;
}

int main(void)
{
	const char *q = getenv("RBN_NEST_QUICK");
	int quick = q && atoi(q) > 0 ? atoi(q) : 0;

	/* up to four writers, one reader action, clock jumps */
	struct bounds nest_bounds = {
		.writes = MAX_WRITERS - 1, .readers = 1, .writes_reader = 2,
		.jumps = true, .writes_jump = 2, .quick = quick,
	};
	/*
	 * One writer of the plan discards its events: up to three writers,
	 * readers and clock jumps in plans of up to two.
	 */
	struct bounds discard_bounds = {
		.writes = MAX_WRITERS - 2, .readers = 1, .writes_reader = 1,
		.jumps = true, .writes_jump = 1, .quick = quick,
		.discards = true,
	};
	/* The same in absolute time-stamp mode. */
	struct bounds abs_bounds = discard_bounds;
	/* The discard families with the run-time validator on. */
	struct bounds val_bounds = discard_bounds;
	/* One swap per plan of up to three writers, no reader, no jump. */
	struct bounds swap_bounds = {
		.writes = MAX_WRITERS - 2, .quick = quick, .swaps = true,
	};

	abs_bounds.abs_ts = true;
	val_bounds.validate = true;
	nest_cur = &ctx;
	rbn_user_nr_cpus = 1;
	validator_only = getenv("RBN_NEST_VALIDATOR_ONLY") &&
			 atoi(getenv("RBN_NEST_VALIDATOR_ONLY"));

	if (validator_only) {
		/*
		 * What the validator catches on its own (make mutants
		 * VALIDATOR=1): a scenario fails only when it reported an
		 * event, whatever else went wrong.
		 */
		struct bounds val_abs_bounds = val_bounds;
		struct bounds val_nest_bounds = nest_bounds;

		val_abs_bounds.abs_ts = true;
		val_nest_bounds.validate = true;
		ktap_start(6);
		ktap_result(family_nest("nest validate", val_nest_bounds, 1),
			    "nest_exhaustive_validate");
		ktap_result(family_overwrite("overwrite nest validate",
					     val_nest_bounds, 2, 1),
			    "nest_overwrite_readers_validate");
		ktap_result(family_nest("validate", val_bounds, 2),
			    "nest_validate");
		ktap_result(family_overwrite("overwrite validate", val_bounds,
					     3, 2), "nest_overwrite_validate");
		ktap_result(family_nest("absolute validate", val_abs_bounds, 2),
			    "nest_absolute_validate");
		ktap_result(family_overwrite("overwrite absolute validate",
					     val_abs_bounds, 3, 2),
			    "nest_overwrite_absolute_validate");
		return ktap_finish();
	}
	ktap_start(10);
	ktap_print("plans of 1 to 4 writers (depth up to 4), 0-2 interrupts per writer at any of the points of %d labels (%d of the reader's swap) the code reaches%s",
		   NEST_NR_LABELS, RBN_NR_READER_LABELS,
		   quick ? ", quick sample of 4-writer plans" : "");
	ktap_result(family_nest("nest", nest_bounds, 1), "nest_exhaustive");
	ktap_result(family_overwrite("overwrite", nest_bounds, 2, 1),
		    "nest_overwrite_readers");
	ktap_result(family_nest("discard", discard_bounds, 2),
		    "nest_discard");
	ktap_result(family_overwrite("overwrite discard", discard_bounds, 3, 2),
		    "nest_overwrite_discard");
	ktap_result(family_nest("absolute", abs_bounds, 2), "nest_absolute");
	ktap_result(family_overwrite("overwrite absolute", abs_bounds, 3, 2),
		    "nest_overwrite_absolute");
	ktap_result(family_nest("validate", val_bounds, 2), "nest_validate");
	ktap_result(family_overwrite("overwrite validate", val_bounds, 3, 2),
		    "nest_overwrite_validate");
	ktap_result(family_swap(swap_bounds), "nest_swap");
	ktap_result(labels_reached(), "nest_every_label_reached");
	return ktap_finish();
}
