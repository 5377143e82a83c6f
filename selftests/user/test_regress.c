// SPDX-License-Identifier: GPL-2.0
/*
 * test_regress.c - named regression scenarios of the nested timestamp
 * algorithm, one test each, on the real rb_core.c.
 *
 * Each scenario is a small tree of writers (see nest_harness.h) that
 * reproduces the interleaving behind a fix in the ftrace ring buffer, plus
 * a plain event written afterwards in task context: the bugs these fixes
 * closed showed up as that later event being shown at the wrong time.
 */
#include "ktap.h"
#include "nest_harness.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static struct nest_ctx ctx;
/* Clock advance per read; 1 ns unless a scenario needs more. */
static u64 clock_step = 1;
/* Where the clock jumps instead of at a hook call: label, occurrence. */
static int jump_label = -1, jump_nth;
/* Fillers of @prefill bytes written before the tree; 1 unless told. */
static unsigned int nr_fillers = 1;
/* Reserves of the tree that are meant to be refused; 0 unless told. */
static unsigned int planned_refusals;

/* Node helpers: a writer with @len bytes, interrupted at up to two labels. */
static void node(struct nest_tree *t, int i, unsigned int len)
{
	t->n[i].len = len;
	t->n[i].action = NEST_WRITE;
	if (i + 1 > t->nr)
		t->nr = i + 1;
}

static void irq_at(struct nest_tree *t, int parent, int label, int child)
{
	struct nest_node *p = &t->n[parent];

	p->label[p->nr_child] = label;
	p->child[p->nr_child] = child;
	p->nr_child++;
}

/*
 * Run @t from node 0, then node @follow (not a child of anybody) as a
 * later task-context event if @follow > 0; drain and check the
 * invariants: every event at its writer's time (or, sandwiched, at the
 * time of the one before it), time never back, nothing lost, every
 * planned interrupt fired, and no reserve refused but planned_refusals,
 * each of them counted by the core.
 */
static bool run_tree(const char *name, struct nest_tree *t, int follow,
		     unsigned int prefill, u64 base, u64 jump, long jump_at,
		     bool overwrite)
{
	struct rbn_config cfg = {
		.size = 8 * 4080, .clock = nest_clock, .nr_cpus = 1,
		.overwrite = overwrite,
	};
	unsigned int subbuf, i, fillers = prefill ? nr_fillers : 0;
	unsigned int refused = 0;
	struct rbn_cpu_stats st;
	u64 counted;
	bool ok = true;

	ctx.buffer = rbn_alloc(&cfg);
	if (IS_ERR(ctx.buffer))
		return false;
	subbuf = rbn_subbuf_size(ctx.buffer) - RBN_PAGE_HDR_SIZE;
	nest_begin(&ctx, t, base, clock_step, jump, jump_at);
	ctx.jump_label = jump_label;
	ctx.jump_nth = jump_nth;
	/* nest_begin() leaves the records of the last scenario behind. */
	memset(ctx.rec, 0, sizeof(ctx.rec));
	for (i = 0; ok && i < fillers; i++) {
		ok = nest_filler(&ctx, prefill);
		if (!ok)
			snprintf(ctx.err, sizeof(ctx.err),
				 "filler %u of %u bytes refused or cut", i,
				 prefill);
	}
	if (ok) {
		nest_run(&ctx);
		if (follow > 0) {
			rbn_test_set_hook(nest_hook, &ctx);
			nest_run_node(&ctx, follow);
			rbn_test_set_hook(NULL, NULL);
		}
		nest_drain(&ctx);
		ok = nest_check(&ctx, fillers);
	}
	ktap_print("%s: %d writers, %u events read, %d of %d interrupts fired (sub-buffer %u bytes, %u fillers of %u)",
		   name, t->nr, ctx.nr_read, ctx.fired_total, ctx.planned,
		   subbuf, fillers, prefill);
	for (i = 0; i < ctx.nr_read; i++) {
		unsigned int id = ctx.rd[i].id;

		if (id == NEST_FILLER_ID) {
			ktap_print("  filler          ts %" PRIu64, ctx.rd[i].ts);
			continue;
		}
		ktap_print("  id %u depth %u ts %" PRIu64 " writer %" PRIu64 " flags%s%s%s%s%s%s%s",
			   id, ctx.rec[id].depth, ctx.rd[i].ts, ctx.rec[id].ts,
			   ctx.rec[id].flags & RBN_EV_FAST ? " fast" : "",
			   ctx.rec[id].flags & RBN_EV_ABSOLUTE ? " absolute" : "",
			   ctx.rec[id].flags & RBN_EV_SLOW ? " slow" : "",
			   ctx.rec[id].flags & RBN_EV_ZERO_DELTA ? " zero-delta" : "",
			   ctx.rec[id].flags & RBN_EV_EXTEND ? " extend" : "",
			   ctx.rec[id].flags & RBN_EV_PAGE_START ? " page-start" : "",
			   ctx.rec[id].flags & RBN_EV_CLOCK_BACK ? " clock-back" : "");
	}
	for (i = 0; i < ctx.nr_ids; i++) {
		if (ctx.rec[i].written)
			continue;
		refused++;
		ktap_print("  id %u: reserve refused", i);
	}
	rbn_cpu_stats(ctx.buffer, 0, &st);
	counted = st.dropped + st.commit_overrun + st.recursion;
	ktap_print("  reserves %u, refused %u (planned %u); the core counted %" PRIu64 " (dropped %" PRIu64 ", commit_overrun %" PRIu64 ", recursion %" PRIu64 ")",
		   ctx.nr_ids, refused, planned_refusals, counted, st.dropped,
		   st.commit_overrun, st.recursion);
	if (!ok)
		ktap_print("  FAILED: %s", ctx.err);
	if (ctx.fired_total != ctx.planned) {
		ktap_print("  FAILED: only %d of %d planned interrupts fired",
			   ctx.fired_total, ctx.planned);
		ok = false;
	}
	if (refused != planned_refusals || counted != refused) {
		ktap_print("  FAILED: %u reserves refused, %u planned, %" PRIu64 " counted",
			   refused, planned_refusals, counted);
		ok = false;
	}
	return ok;
}

static struct rbn_cpu_stats stats(void)
{
	struct rbn_cpu_stats st;

	rbn_cpu_stats(ctx.buffer, 0, &st);
	return st;
}

static void done(void)
{
	rbn_free(ctx.buffer);
	ctx.buffer = NULL;
}

/* Flags of the writer of node @idx's event (ids follow the run order). */
static unsigned int flags_of(unsigned int id)
{
	return id < ctx.nr_ids ? ctx.rec[id].flags : 0;
}

/*
 * Seed 001: the task's event and the event of an interrupt both see a
 * delta over 2^27 (here every clock read advances 2^27 ns) and reserve a
 * time extend. The interrupt comes before the task reads its stamps, its
 * event lands in front of the task's, and the task's event ends up with
 * the zero delta, shown at the interrupt's time. Its time extend must be
 * written as zero, or it and everything after it on the page jump 2^27 ns
 * and more into the future.
 */
static bool seed001_nested_time_extends(void)
{
	struct nest_tree t = { 0 };
	struct rbn_cpu_stats st;
	bool ok;

	node(&t, 0, 24);
	node(&t, 1, 40);
	node(&t, 2, 24);	/* later task event */
	irq_at(&t, 0, RBN_LABEL_A_TAIL, 1);
	clock_step = 1ULL << 27;
	ok = run_tree("seed001", &t, 2, 200, 1000, 0, -1, false);
	clock_step = 1;
	st = stats();
	ktap_print("  time extends written %" PRIu64 ", zero deltas %" PRIu64,
		   st.ts_extend, st.ts_zero);
	ok = ok && st.ts_extend == 2 && (flags_of(0) & RBN_EV_ZERO_DELTA) &&
	     (flags_of(0) & RBN_EV_EXTEND) && (flags_of(1) & RBN_EV_EXTEND);
	done();
	return ok;
}

/*
 * An interrupt between the task's A and B (here right after its clock
 * read): B leaves before_stamp alone because it changed since A, so the
 * slow path finds both stamps at the interrupt's time and computes an
 * exact delta instead of the zero delta.
 */
static bool interrupt_between_a_and_b_keeps_time(void)
{
	struct nest_tree t = { 0 };
	struct rbn_cpu_stats st;
	bool ok;

	node(&t, 0, 24);
	node(&t, 1, 40);
	node(&t, 2, 24);
	irq_at(&t, 0, RBN_LABEL_A, 1);
	ok = run_tree("a_to_b", &t, 2, 200, 1000, 0, -1, false);
	st = stats();
	ok = ok && (flags_of(0) & RBN_EV_SLOW) &&
	     !(flags_of(0) & RBN_EV_ZERO_DELTA) && st.ts_zero == 0;
	done();
	return ok;
}

/*
 * Seed 003: an event nested in the slow path after the delta was decided
 * but before the stamps were settled. In this algorithm the slow path sets
 * before_stamp before it decides (E, F), so the nested event sees the
 * stamps differ and writes an absolute stamp; the interrupted event keeps
 * its exact delta.
 */
static bool seed003_nested_after_slow_delta(void)
{
	struct nest_tree t = { 0 };
	bool ok;

	node(&t, 0, 24);
	node(&t, 1, 40);
	node(&t, 2, 40);
	node(&t, 3, 24);
	irq_at(&t, 0, RBN_LABEL_B, 1);	/* sends the task to the slow path */
	irq_at(&t, 0, RBN_LABEL_F, 2);	/* after its delta was decided */
	ok = run_tree("seed003", &t, 3, 200, 1000, 0, -1, false);
	ok = ok && (flags_of(0) & RBN_EV_SLOW) &&
	     !(flags_of(0) & RBN_EV_ZERO_DELTA) &&
	     (flags_of(2) & RBN_EV_ABSOLUTE);
	done();
	return ok;
}

/*
 * The same, with the second interrupt between the stamp update and F: now
 * something was written behind the task's event, the sandwich case, and
 * only there a zero delta is written.
 */
static bool sandwich_between_stamp_update_and_f(void)
{
	struct nest_tree t = { 0 };
	struct rbn_cpu_stats st;
	bool ok;

	node(&t, 0, 24);
	node(&t, 1, 40);
	node(&t, 2, 40);
	node(&t, 3, 24);
	irq_at(&t, 0, RBN_LABEL_B, 1);
	irq_at(&t, 0, RBN_LABEL_SLOW_SET, 2);
	ok = run_tree("sandwich", &t, 3, 200, 1000, 0, -1, false);
	st = stats();
	ok = ok && (flags_of(0) & RBN_EV_ZERO_DELTA) && st.ts_zero == 1 &&
	     (flags_of(2) & RBN_EV_ABSOLUTE);
	done();
	return ok;
}

/*
 * "Fix slowpath of interrupted event": a task interrupted between B and C
 * by a softirq writer that is itself interrupted between its C and its D
 * by a hardirq writer. The softirq event's stamps are not settled when the
 * hardirq writes; the task's slow path must not take write_stamp for the
 * time of the event in front of it.
 */
static bool fix_slowpath_of_interrupted_event(void)
{
	struct nest_tree t = { 0 };
	bool ok;

	node(&t, 0, 24);
	node(&t, 1, 40);
	node(&t, 2, 120);
	node(&t, 3, 24);
	irq_at(&t, 0, RBN_LABEL_B, 1);
	irq_at(&t, 1, RBN_LABEL_C, 2);
	ok = run_tree("fix_slowpath", &t, 3, 200, 1000, 0, -1, false);
	ok = ok && (flags_of(0) & RBN_EV_SLOW) && (flags_of(2) & RBN_EV_ABSOLUTE);
	done();
	return ok;
}

/*
 * "Do not try to put back write_stamp": the task's slow path must not
 * write its new time into write_stamp. A hardirq that writes after the
 * task's event was placed (here: right after its header is written) is
 * behind it; a write_stamp put back to the task's time would make the
 * next event's delta count from the wrong event. The first interrupt
 * comes between B and C, where the slow path can still compute an exact
 * delta (between A and B the task's B overwrites the interrupt's
 * before_stamp and the task's event gets the zero delta).
 */
static bool do_not_put_back_write_stamp(void)
{
	struct nest_tree t = { 0 };
	bool ok;

	node(&t, 0, 24);
	node(&t, 1, 40);
	node(&t, 2, 40);
	node(&t, 3, 24);
	irq_at(&t, 0, RBN_LABEL_B, 1);
	irq_at(&t, 0, RBN_LABEL_EVENT, 2);
	ok = run_tree("put_back_write_stamp", &t, 3, 200, 1000, 0, -1, false);
	ok = ok && (flags_of(0) & RBN_EV_SLOW) &&
	     !(flags_of(0) & RBN_EV_ZERO_DELTA) &&
	     (flags_of(2) & RBN_EV_ABSOLUTE) && !(flags_of(3) & RBN_EV_ABSOLUTE);
	done();
	return ok;
}

/*
 * "Update write stamp with the correct ts": the fast path sets write_stamp
 * to the time it used for the event. A writer between C and D sets it to
 * its own time first; the later event must still come out exact.
 */
static bool write_stamp_correct_ts(void)
{
	struct nest_tree t = { 0 };
	bool ok;

	node(&t, 0, 24);
	node(&t, 1, 40);
	node(&t, 2, 24);
	irq_at(&t, 0, RBN_LABEL_C, 1);
	ok = run_tree("write_stamp_ts", &t, 2, 200, 1000, 0, -1, false);
	ok = ok && (flags_of(0) & RBN_EV_FAST) && (flags_of(1) & RBN_EV_ABSOLUTE);
	done();
	return ok;
}

/*
 * Page switches ("Do not update before stamp when switching sub-buffers"
 * and the interrupted page crossing): the task's event does not fit, and a
 * nested writer runs at each step of the switch. The first event of the
 * new sub-buffer takes the page stamp; nothing moves in time.
 */
static bool page_switch_cases(void)
{
	static const int labels[] = {
		RBN_LABEL_C, RBN_LABEL_PAGE_TAIL, RBN_LABEL_PAGE_END,
		RBN_LABEL_PAGE_NEXT, RBN_LABEL_A_TAIL, RBN_LABEL_B,
	};
	bool ok = true;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(labels); i++) {
		struct nest_tree t = { 0 };
		char name[64];
		bool one;

		node(&t, 0, 24);
		node(&t, 1, 40);
		node(&t, 2, 24);
		irq_at(&t, 0, labels[i], 1);
		snprintf(name, sizeof(name), "page_switch at label %d", labels[i]);
		/* 24 bytes left: the task's 28-byte event crosses */
		one = run_tree(name, &t, 2, 4080 - 24, 1000, 0, -1, false);
		one = one && stats().pages_touched >= 1;
		ok = ok && one;
		done();
	}
	return ok;
}

/*
 * "Fix writing to the buffer with max_data_size": the largest event with a
 * delta that needs a time extend still fits a sub-buffer (no endless page
 * switching), one byte more is refused and counted.
 */
static bool max_data_size(void)
{
	struct rbn_config cfg = {
		.size = 4 * 4080, .clock = nest_clock, .nr_cpus = 1,
	};
	unsigned int max, refused = 0;
	struct rbn_cpu_stats st;
	struct rbn_event *ev;
	u64 ts;
	bool ok;

	ctx.buffer = rbn_alloc(&cfg);
	if (IS_ERR(ctx.buffer))
		return false;
	ctx.now = 1000;
	ctx.step = 1;
	max = rbn_max_event_size(ctx.buffer);
	ok = !rbn_write(ctx.buffer, 8, "12345678");
	refused += !ok;
	ctx.now += 1ULL << 30;	/* the next delta needs a time extend */
	ev = rbn_reserve(ctx.buffer, max);
	refused += !ev;
	ok = ok && ev;
	if (ev) {
		memset(rbn_event_data(ev), 0x5a, max);
		rbn_commit(ctx.buffer, ev);
	}
	/* The one refusal planned. */
	ev = rbn_reserve(ctx.buffer, max + 1);
	refused += !ev;
	if (ev)
		rbn_commit(ctx.buffer, ev);
	st = stats();
	ok = ok && refused == 1 && st.dropped == refused && st.written == 2;
	ok = ok && rbn_consume(ctx.buffer, 0, &ts, NULL);
	ev = rbn_consume(ctx.buffer, 0, &ts, NULL);
	ok = ok && ev && rbn_event_data_length(ev) >= max;
	ktap_print("max_data_size: sub-buffer %u bytes, max payload %u written after a 2^30 ns gap, max+1 refused; refusals %u, dropped %" PRIu64,
		   rbn_subbuf_size(ctx.buffer), max, refused, st.dropped);
	done();
	return ok && !rbn_user_warnings;
}

/*
 * "Have absolute time stamps handle large numbers": forced absolute stamps
 * with clock values far above 2^59 keep their upper bits.
 */
static bool absolute_large_numbers(void)
{
	struct nest_tree t = { 0 };
	bool ok;

	node(&t, 0, 24);
	node(&t, 1, 40);
	node(&t, 2, 24);
	irq_at(&t, 0, RBN_LABEL_B, 1);
	ok = run_tree("abs_large", &t, 2, 200, (1ULL << 62) + 12345, 0, -1,
		      false);
	ok = ok && ctx.nr_read == 4 && ctx.rd[1].ts > (1ULL << 62);
	done();
	return ok;
}

/*
 * A clock 1 ns behind the event before it (trace_clock=mono or boot in an
 * NMI, local_clock() after a TSC resync), on the fast path: the delta
 * was computed unsigned and stored as a time extend of 2^59 - 1 ns, and
 * every later event of the sub-buffer was read about 18 years ahead. The
 * event is now stored at the time of the event before it, flagged and
 * counted; the event after it is exact again.
 */
static bool clock_back_fast_path(void)
{
	struct nest_tree t = { 0 };
	struct rbn_cpu_stats st;
	bool ok;

	node(&t, 0, 24);
	node(&t, 1, 24);	/* later task events, the first one behind */
	t.n[1].repeat = 1;
	/* the second A_AFTER is the later event's, right before its clock */
	jump_label = RBN_LABEL_A_AFTER;
	jump_nth = 1;
	ok = run_tree("clock_back_fast", &t, 1, 200, 1ULL << 40, -2ULL, -1,
		      false);
	jump_label = -1;
	st = stats();
	ktap_print("  ts_clock_back %" PRIu64 ", ts_extend %" PRIu64,
		   st.ts_clock_back, st.ts_extend);
	ok = ok && ctx.nr_read == 4 && (flags_of(1) & RBN_EV_CLOCK_BACK) &&
	     ctx.rd[2].ts == ctx.rd[1].ts && ctx.rd[3].ts == ctx.rec[2].ts &&
	     st.ts_clock_back == 1 && st.ts_extend == 0;
	done();
	return ok;
}

/*
 * An NMI whose clock reads behind the event it interrupted between that
 * event's reserve and D: it is forced absolute, and its stamp, below the
 * time before it on the page, was read back with a carry of 2^59. It is
 * now stored at the interrupted event's time, flagged and counted. The
 * clock stays behind for the task's next event, which is counted too.
 */
static bool clock_back_nmi_absolute(void)
{
	struct nest_tree t = { 0 };
	struct rbn_cpu_stats st;
	bool ok;

	node(&t, 0, 24);
	node(&t, 1, 40);
	node(&t, 2, 24);	/* later task event */
	irq_at(&t, 0, RBN_LABEL_C, 1);
	/* the NMI's A_AFTER: its clock 5 ns behind the task's */
	jump_label = RBN_LABEL_A_AFTER;
	jump_nth = 1;
	ok = run_tree("clock_back_nmi", &t, 2, 200, 1ULL << 40, -6ULL, -1,
		      false);
	jump_label = -1;
	st = stats();
	ktap_print("  ts_clock_back %" PRIu64 ", ts_abs %" PRIu64,
		   st.ts_clock_back, st.ts_abs);
	ok = ok && ctx.nr_read == 4 && (flags_of(1) & RBN_EV_ABSOLUTE) &&
	     (flags_of(1) & RBN_EV_CLOCK_BACK) &&
	     ctx.rd[2].ts == ctx.rec[0].ts && ctx.rd[3].ts == ctx.rec[0].ts &&
	     (flags_of(2) & RBN_EV_CLOCK_BACK) && st.ts_clock_back == 2 &&
	     st.ts_abs >= 1;
	done();
	return ok;
}

/*
 * Nothing is lost silently: in producer/consumer mode a full buffer
 * refuses the event that would cross into the unread head, and a writer
 * nested right there (page_drop) is refused as well. Both refusals are
 * planned, and both are counted in stats.dropped; once the buffer is
 * read, there is room again.
 */
static bool full_buffer_refusals_counted(void)
{
	struct nest_tree t = { 0 };
	struct rbn_cpu_stats st;
	unsigned long lost = 0;
	struct rbn_event *ev;
	u64 ts = 0;
	bool ok;

	node(&t, 0, 24);
	node(&t, 1, 40);
	irq_at(&t, 0, RBN_LABEL_PAGE_DROP, 1);
	/* 8 sub-buffers of 4080 bytes, two 2040-byte fillers each: full */
	nr_fillers = 16;
	planned_refusals = 2;
	ok = run_tree("full_buffer", &t, 0, 2040, 1000, 0, -1, false);
	nr_fillers = 1;
	planned_refusals = 0;
	st = stats();
	ok = ok && !ctx.rec[0].written && !ctx.rec[1].written &&
	     st.dropped == 2 && st.written == 16 && st.read == 16;
	/* Read: room for the next event. */
	ctx.now += 10;
	ok = !rbn_write(ctx.buffer, 24, "after the buffer was read") && ok;
	ev = rbn_consume(ctx.buffer, 0, &ts, &lost);
	ok = ok && ev && ts == ctx.now && !lost;
	ktap_print("  dropped %" PRIu64 ", written %" PRIu64 ", read %" PRIu64 "; an event after reading %s at %" PRIu64 " (clock %" PRIu64 ")",
		   st.dropped, st.written, st.read, ev ? "read" : "not read",
		   ts, ctx.now);
	done();
	return ok;
}

int main(void)
{
	nest_cur = &ctx;
	rbn_user_nr_cpus = 1;

	ktap_start(14);
	ktap_result(seed001_nested_time_extends(), "seed001_nested_time_extends");
	ktap_result(interrupt_between_a_and_b_keeps_time(), "interrupt_between_a_and_b_keeps_time");
	ktap_result(seed003_nested_after_slow_delta(), "seed003_nested_after_slow_delta");
	ktap_result(sandwich_between_stamp_update_and_f(), "sandwich_zero_delta_only_when_written_behind");
	ktap_result(fix_slowpath_of_interrupted_event(), "fix_slowpath_of_interrupted_event");
	ktap_result(do_not_put_back_write_stamp(), "do_not_put_back_write_stamp");
	ktap_result(write_stamp_correct_ts(), "update_write_stamp_with_correct_ts");
	ktap_result(page_switch_cases(), "page_switch_cases");
	ktap_result(max_data_size(), "max_data_size_with_time_extend");
	ktap_result(absolute_large_numbers(), "absolute_stamps_large_numbers");
	ktap_result(clock_back_fast_path(), "clock_back_fast_path");
	ktap_result(clock_back_nmi_absolute(), "clock_back_nmi_absolute");
	ktap_result(full_buffer_refusals_counted(), "full_buffer_refusals_counted");
	ktap_result(rbn_user_warnings == 0, "no_core_warnings");
	return ktap_finish();
}
