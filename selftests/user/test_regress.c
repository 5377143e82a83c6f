// SPDX-License-Identifier: GPL-2.0
/*
 * test_regress.c - named regression scenarios of the nested timestamp
 * algorithm, one test each, on the real rb_core.c.
 *
 * Each scenario is a small tree of writers (see nest_harness.h) that
 * reproduces the interleaving behind a fix in the ftrace ring buffer, plus
 * a plain event written afterwards in task context: the bugs these fixes
 * closed showed up as that later event being shown at the wrong time.
 *
 * Beyond the invariants every scenario checks (run_tree()), each one
 * checks the path it is named after: the flags the core gave the events
 * (rbn_event_flags()), its counters, and the sub-buffers read back with
 * rbn_read_page() and decoded independently (rbn_decode.c): the order
 * of the events, the delta, time extend or absolute stamp in front of
 * each, page time stamps, commits and padding. A check whose scenario
 * did not go where it should fails like any other.
 */
#include "ktap.h"
#include "nest_harness.h"
#include "rbn_decode.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define RG_MAX_PAGES	16
#define RG_MAX_DEC	1024

static struct nest_ctx ctx;
/* Clock advance per read; 1 ns unless a scenario needs more. */
static u64 clock_step = 1;
/* Where the clock jumps instead of at a hook call: label, occurrence. */
static int jump_label = -1, jump_nth;
/* Fillers of @prefill bytes written before the tree; 1 unless told. */
static unsigned int nr_fillers = 1;
/* Reserves of the tree that are meant to be refused; 0 unless told. */
static unsigned int planned_refusals;
/* The buffers of run_tree() are in absolute time-stamp mode. */
static bool abs_mode;

/*
 * What the scenario left in the buffer, read back page by page:
 * rbn_read_page() and the independent decoder (rbn_decode.c) give every
 * event with the time extend or absolute stamp in front of it, and every
 * page with its time stamp, commit and padding.
 */
struct rg_event {
	int page;			/* index in rg_pages[] */
	struct rbn_dec_event dec;	/* .data not kept */
};

struct rg_page {
	struct rbn_dec_page pg;
	unsigned int first;		/* ctx.rd[] index of its first event */
};

static struct rg_event rg_ev[NEST_MAX_EVENTS];	/* parallel to ctx.rd[] */
static struct rg_page rg_pages[RG_MAX_PAGES];
static unsigned int rg_nr_pages;
static struct rbn_dec_event rg_dec[RG_MAX_DEC];
static void *rg_page;

/*
 * The first sub-buffer as the writers left it, copied before it is read:
 * a reader that takes a whole sub-buffer cuts the padding off and clears
 * it, so the discarded event that ends it is only seen here.
 */
static unsigned char rg_first[PAGE_SIZE];
static struct rbn_dec_page rg_first_pg;
static bool rg_first_ok;
static u64 rg_filler_ts;

/* The named path of a scenario: each check counted, a failed one shown. */
static unsigned int path_checks, path_fails;

static void path_begin(void)
{
	path_checks = 0;
	path_fails = 0;
}

static __printf(3, 4) bool path_check(bool ok, int line, const char *fmt, ...)
{
	va_list ap;

	path_checks++;
	if (ok)
		return true;
	path_fails++;
	printf("#   FAILED path check (line %d): ", line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return false;
}

#define PATH(cond, fmt, ...)	path_check(!!(cond), __LINE__, fmt, ##__VA_ARGS__)

static bool path_end(const char *what)
{
	ktap_print("  path %s: %u checks, %u failed", what, path_checks,
		   path_fails);
	return !path_fails;
}

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
 * A filler event of @total bytes in task context, hook off. The first
 * one of a fresh buffer is the first event of its first sub-buffer: its
 * header is right behind the page header.
 */
static struct rbn_event *filler(unsigned int total, u64 *ts,
			       unsigned int *flags)
{
	unsigned int len = total - RBN_EVENT_HDR_SIZE;
	struct rbn_event *ev;
	bool whole;

	if (len > RBN_ALIGNMENT * RBN_TYPE_DATA_MAX)
		len -= sizeof(u32);
	ev = rbn_reserve(ctx.buffer, len);
	if (!ev)
		return NULL;
	*ts = rbn_event_ts(ctx.buffer, ev);
	*flags = rbn_event_flags(ctx.buffer, ev);
	whole = rbn_event_length(ev) == total;
	nest_fill(rbn_event_data(ev), NEST_FILLER_ID, len, 0);
	rbn_commit(ctx.buffer, ev);
	return whole ? ev : NULL;
}

/* Copy and decode the first sub-buffer in place (see rg_first). */
static void snapshot_first(const struct rbn_event *first)
{
	char err[160];

	memcpy(rg_first, (const char *)first - RBN_PAGE_HDR_SIZE,
	       rbn_subbuf_size(ctx.buffer));
	rg_first_ok = rbn_decode_page(rg_first, rbn_subbuf_size(ctx.buffer),
				      NULL, &rg_first_pg, NULL, 0, err,
				      sizeof(err)) >= 0;
	if (!rg_first_ok)
		ktap_print("  first sub-buffer in place does not decode: %s",
			   err);
}

/*
 * Read everything back with rbn_read_page(), oldest sub-buffer first,
 * each decoded by rbn_decode; nothing may be left for rbn_consume()
 * afterwards.
 */
static bool read_back(void)
{
	unsigned int size = rbn_subbuf_size(ctx.buffer), before;
	u64 prev = 0;
	char err[160];
	int ret, n, i;

	rg_nr_pages = 0;
	for (;;) {
		struct rg_page *rp;

		ret = rbn_read_page(ctx.buffer, 0, &rg_page, size, false);
		if (ret == -EAGAIN)
			break;
		if (ret < 0 || rg_nr_pages >= RG_MAX_PAGES) {
			snprintf(ctx.err, sizeof(ctx.err),
				 "rbn_read_page: %d after %u pages", ret,
				 rg_nr_pages);
			return false;
		}
		rp = &rg_pages[rg_nr_pages];
		n = rbn_decode_page(rg_page, size, &prev, &rp->pg, rg_dec,
				    RG_MAX_DEC, err, sizeof(err));
		if (n < 0) {
			snprintf(ctx.err, sizeof(ctx.err),
				 "page %u does not decode: %s", rg_nr_pages,
				 err);
			return false;
		}
		rp->first = ctx.nr_read;
		if (rp->pg.missed) {
			if (!rp->pg.missed_stored) {
				snprintf(ctx.err, sizeof(ctx.err),
					 "page %u: events lost, count not stored",
					 rg_nr_pages);
				return false;
			}
			ctx.lost += rp->pg.missed_count;
		}
		for (i = 0; i < n && ctx.nr_read < NEST_MAX_EVENTS; i++) {
			struct nest_read *r = &ctx.rd[ctx.nr_read];

			r->ts = rg_dec[i].ts;
			r->lost = 0;
			memcpy(&r->id, rg_dec[i].data, sizeof(r->id));
			nest_check_payload(&ctx, r->id, rg_dec[i].data);
			rg_ev[ctx.nr_read].page = rg_nr_pages;
			rg_ev[ctx.nr_read].dec = rg_dec[i];
			rg_ev[ctx.nr_read].dec.data = NULL;
			ctx.nr_read++;
		}
		rg_nr_pages++;
	}
	before = ctx.nr_read;
	nest_drain(&ctx);
	for (i = before; i < (int)ctx.nr_read; i++) {
		rg_ev[i].page = -1;
		memset(&rg_ev[i].dec, 0, sizeof(rg_ev[i].dec));
	}
	if (ctx.nr_read != before) {
		snprintf(ctx.err, sizeof(ctx.err),
			 "%u events left to rbn_consume() after rbn_read_page() ran dry",
			 ctx.nr_read - before);
		return false;
	}
	return true;
}

static const char *flag_names(unsigned int f)
{
	static char buf[128];

	snprintf(buf, sizeof(buf), "%s%s%s%s%s%s%s",
		 f & RBN_EV_FAST ? " fast" : "",
		 f & RBN_EV_ABSOLUTE ? " absolute" : "",
		 f & RBN_EV_SLOW ? " slow" : "",
		 f & RBN_EV_ZERO_DELTA ? " zero-delta" : "",
		 f & RBN_EV_EXTEND ? " extend" : "",
		 f & RBN_EV_PAGE_START ? " page-start" : "",
		 f & RBN_EV_CLOCK_BACK ? " clock-back" : "");
	return buf;
}

/*
 * Run @t from node 0, then node @follow (not a child of anybody) as a
 * later task-context event if @follow > 0; read everything back and check
 * the invariants: every event at its writer's time (or, sandwiched, at
 * the time of the one before it), time never back, nothing lost, every
 * planned interrupt fired, and no reserve refused but planned_refusals,
 * each of them counted by the core.
 */
static bool run_tree(const char *name, struct nest_tree *t, int follow,
		     unsigned int prefill, u64 base, u64 jump, long jump_at,
		     bool overwrite)
{
	struct rbn_config cfg = {
		.size = 8 * 4080, .clock = nest_clock, .nr_cpus = 1,
		.overwrite = overwrite, .abs_ts = abs_mode,
	};
	unsigned int subbuf, i, fillers = prefill ? nr_fillers : 0;
	unsigned int refused = 0;
	struct rbn_event *first = NULL;
	struct rbn_cpu_stats st;
	u64 counted;
	bool ok = true;

	ctx.buffer = rbn_alloc(&cfg);
	if (IS_ERR(ctx.buffer)) {
		ctx.buffer = NULL;
		return false;
	}
	rg_page = rbn_alloc_read_page(ctx.buffer, 0);
	subbuf = rbn_subbuf_size(ctx.buffer) - RBN_PAGE_HDR_SIZE;
	nest_begin(&ctx, t, base, clock_step, jump, jump_at);
	ctx.jump_label = jump_label;
	ctx.jump_nth = jump_nth;
	/* nest_check() fails a refusal unless the scenario plans one. */
	ctx.drop_planned = planned_refusals > 0;
	/* nest_begin() leaves the records of the last scenario behind. */
	memset(ctx.rec, 0, sizeof(ctx.rec));
	rg_first_ok = false;
	rg_filler_ts = 0;
	rg_nr_pages = 0;
	for (i = 0; ok && i < fillers; i++) {
		unsigned int flags = 0;

		if (!i) {
			first = filler(prefill, &rg_filler_ts, &flags);
			ok = first != NULL;
			/* It opens the first sub-buffer: see rg_first. */
			if (!(flags & RBN_EV_PAGE_START) || abs_mode)
				first = NULL;
		} else {
			ok = nest_filler(&ctx, prefill);
		}
		if (!ok)
			snprintf(ctx.err, sizeof(ctx.err),
				 "filler %u of %u bytes refused or cut", i,
				 prefill);
	}
	if (!rg_page) {
		snprintf(ctx.err, sizeof(ctx.err), "no reader page");
		ok = false;
	}
	if (ok) {
		nest_run(&ctx);
		if (follow > 0) {
			rbn_test_set_hook(nest_hook, &ctx);
			nest_run_node(&ctx, follow);
			rbn_test_set_hook(NULL, NULL);
		}
		if (first)
			snapshot_first(first);
		ok = read_back() && nest_check(&ctx, fillers);
	}
	ktap_print("%s: %d writers, %u events read in %u pages, %d of %d interrupts fired (sub-buffer %u bytes, %u fillers of %u)",
		   name, t->nr, ctx.nr_read, rg_nr_pages, ctx.fired_total,
		   ctx.planned, subbuf, fillers, prefill);
	for (i = 0; i < ctx.nr_read; i++) {
		const struct rbn_dec_event *d = &rg_ev[i].dec;
		unsigned int id = ctx.rd[i].id;

		if (id == NEST_FILLER_ID) {
			ktap_print("  filler          ts %" PRIu64, ctx.rd[i].ts);
			continue;
		}
		ktap_print("  id %u depth %u ts %" PRIu64 " writer %" PRIu64 " flags%s; page %d delta %" PRIu64 "%s%s",
			   id, ctx.rec[id].depth, ctx.rd[i].ts, ctx.rec[id].ts,
			   flag_names(ctx.rec[id].flags), rg_ev[i].page,
			   d->raw_delta, d->extend ? ", extend" : "",
			   d->abs ? ", absolute stamp" : "");
	}
	for (i = 0; i < ctx.nr_ids; i++) {
		if (ctx.rec[i].discarded) {
			ktap_print("  id %u depth %u writer %" PRIu64 " flags%s: discarded",
				   i, ctx.rec[i].depth, ctx.rec[i].ts,
				   flag_names(ctx.rec[i].flags));
			continue;
		}
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
	if (rg_page)
		rbn_free_read_page(ctx.buffer, 0, rg_page);
	rg_page = NULL;
	rbn_free(ctx.buffer);
	ctx.buffer = NULL;
}

/* Flags of the writer of node @idx's event (ids follow the run order). */
static unsigned int flags_of(unsigned int id)
{
	return id < ctx.nr_ids ? ctx.rec[id].flags : 0;
}

static u64 ts_of(unsigned int id)
{
	return id < ctx.nr_ids ? ctx.rec[id].ts : 0;
}

/* The 59 bits of @ts an absolute stamp keeps. */
static u64 abs_bits(u64 ts)
{
	return ts & RBN_ABS_TS_MASK;
}

/* Where the event of @id was read in ctx.rd[], -1 if it was not. */
static int rd_of(unsigned int id)
{
	unsigned int i;

	for (i = 0; i < ctx.nr_read; i++)
		if (ctx.rd[i].id == id)
			return i;
	return -1;
}

/* The event of @id as decoded from its page; NULL if it was not read. */
static const struct rbn_dec_event *dec_of(unsigned int id)
{
	int i = rd_of(id);

	return i < 0 ? NULL : &rg_ev[i].dec;
}

/* The events of @ids were read one right after the other, in this order. */
static bool read_in_order(const unsigned int *ids, unsigned int n)
{
	int first = rd_of(ids[0]);
	unsigned int i;

	if (first < 0 || first + n > ctx.nr_read)
		return false;
	for (i = 1; i < n; i++)
		if (ctx.rd[first + i].id != ids[i])
			return false;
	return true;
}

#define IN_ORDER(...)							\
	({								\
		static const unsigned int __ids[] = { __VA_ARGS__ };	\
		read_in_order(__ids, ARRAY_SIZE(__ids));		\
	})

/* The page (time extend or absolute stamp) part of a path. */
#define PATH_DELTA(id, delta)						\
	({								\
		const struct rbn_dec_event *__d = dec_of(id);		\
		PATH(__d && !__d->extend && !__d->abs &&		\
		     __d->raw_delta == (delta),				\
		     "id %u on the page: delta %" PRIu64 "%s%s, want a plain delta %" PRIu64, \
		     (id), __d ? __d->raw_delta : 0,			\
		     __d && __d->extend ? " after an extend" : "",	\
		     __d && __d->abs ? " after an absolute stamp" : "",	\
		     (u64)(delta));					\
	})

#define PATH_ABS(id)							\
	({								\
		const struct rbn_dec_event *__d = dec_of(id);		\
		PATH(__d && __d->abs && !__d->raw_delta &&		\
		     __d->abs_raw == abs_bits(ts_of(id)),		\
		     "id %u on the page: %s %#" PRIx64 ", want the absolute stamp %#" PRIx64, \
		     (id), __d && __d->abs ? "absolute stamp" : "no absolute stamp", \
		     __d ? __d->abs_raw : 0, abs_bits(ts_of(id)));	\
	})

/*
 * Seed 001: the task's event and the event of an interrupt both see a
 * delta over 2^27 (here every clock read advances 2^27 ns) and reserve a
 * time extend. The interrupt comes before the task reads its stamps, its
 * event lands in front of the task's, and the task's event ends up with
 * the zero delta, shown at the interrupt's time. Its time extend must be
 * written as zero, or it and everything after it on the page jump 2^27 ns
 * and more into the future.
 *
 * Path: the interrupt's event with a time extend of its real delta, right
 * in front of the task's, which took the slow path with the zero delta,
 * and whose time extend on the page is zero.
 */
static bool seed001_nested_time_extends(void)
{
	const struct rbn_dec_event *d;
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
	ktap_print("  time extends written %" PRIu64 ", zero deltas %" PRIu64 ", slow paths %" PRIu64,
		   st.ts_extend, st.ts_zero, st.ts_slow);
	path_begin();
	PATH(IN_ORDER(1, 0, 2), "read order: nested event, task's, later event");
	PATH((flags_of(1) & RBN_EV_EXTEND) && ctx.rec[1].depth == 2,
	     "nested event: flags%s depth %u", flag_names(flags_of(1)),
	     ctx.rec[1].depth);
	PATH((flags_of(0) & (RBN_EV_SLOW | RBN_EV_ZERO_DELTA | RBN_EV_EXTEND)) ==
	     (RBN_EV_SLOW | RBN_EV_ZERO_DELTA | RBN_EV_EXTEND),
	     "task's event: flags%s", flag_names(flags_of(0)));
	d = dec_of(1);
	PATH(d && d->extend && d->ext_delta == ts_of(1) - rg_filler_ts,
	     "nested event's time extend %" PRIu64 ", want %" PRIu64,
	     d ? d->ext_delta : 0, ts_of(1) - rg_filler_ts);
	d = dec_of(0);
	PATH(d && d->extend && !d->ext_delta && !d->raw_delta,
	     "task's event: time extend %s%" PRIu64 ", delta %" PRIu64 ", want both 0",
	     d && d->extend ? "" : "missing ", d ? d->ext_delta : 0,
	     d ? d->raw_delta : 0);
	PATH(st.ts_extend == 2 && st.ts_zero == 1 && st.ts_slow == 1,
	     "stats: extends %" PRIu64 " zero %" PRIu64 " slow %" PRIu64,
	     st.ts_extend, st.ts_zero, st.ts_slow);
	ok = path_end("nested extend, then zero extend of the task") && ok;
	done();
	return ok;
}

/*
 * An interrupt between the task's A and B (here right after its clock
 * read): B leaves before_stamp alone because it changed since A, so the
 * slow path finds both stamps at the interrupt's time and computes an
 * exact delta instead of the zero delta.
 *
 * Path: the task's event in the slow path with a plain delta from the
 * interrupt's event in front of it.
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
	path_begin();
	PATH(IN_ORDER(1, 0, 2), "read order: nested event, task's, later event");
	PATH((flags_of(1) & RBN_EV_FAST) && !(flags_of(1) & RBN_EV_ABSOLUTE),
	     "nested event: flags%s", flag_names(flags_of(1)));
	PATH((flags_of(0) & RBN_EV_SLOW) && !(flags_of(0) & RBN_EV_ZERO_DELTA),
	     "task's event: flags%s", flag_names(flags_of(0)));
	PATH(ts_of(0) > ts_of(1), "task at %" PRIu64 ", nested at %" PRIu64,
	     ts_of(0), ts_of(1));
	PATH_DELTA(0, ts_of(0) - ts_of(1));
	PATH(st.ts_slow == 1 && st.ts_zero == 0,
	     "stats: slow %" PRIu64 " zero %" PRIu64, st.ts_slow, st.ts_zero);
	ok = path_end("slow path with an exact delta") && ok;
	done();
	return ok;
}

/*
 * Seed 003: an event nested in the slow path after the delta was decided
 * but before the stamps were settled. In this algorithm the slow path sets
 * before_stamp before it decides (E, F), so the nested event sees the
 * stamps differ and writes an absolute stamp; the interrupted event keeps
 * its exact delta.
 *
 * Path: the task in the slow path with a plain delta from the first
 * interrupt's event; the second interrupt's event behind it with an
 * absolute stamp.
 */
static bool seed003_nested_after_slow_delta(void)
{
	struct nest_tree t = { 0 };
	struct rbn_cpu_stats st;
	bool ok;

	node(&t, 0, 24);
	node(&t, 1, 40);
	node(&t, 2, 40);
	node(&t, 3, 24);
	irq_at(&t, 0, RBN_LABEL_B, 1);	/* sends the task to the slow path */
	irq_at(&t, 0, RBN_LABEL_F, 2);	/* after its delta was decided */
	ok = run_tree("seed003", &t, 3, 200, 1000, 0, -1, false);
	st = stats();
	path_begin();
	PATH(IN_ORDER(1, 0, 2, 3), "read order: first interrupt, task, second interrupt, later event");
	PATH((flags_of(0) & RBN_EV_SLOW) && !(flags_of(0) & RBN_EV_ZERO_DELTA),
	     "task's event: flags%s", flag_names(flags_of(0)));
	PATH_DELTA(0, ts_of(0) - ts_of(1));
	PATH(flags_of(2) & RBN_EV_ABSOLUTE, "second interrupt: flags%s",
	     flag_names(flags_of(2)));
	PATH_ABS(2);
	PATH(st.ts_slow == 1 && st.ts_zero == 0,
	     "stats: slow %" PRIu64 " zero %" PRIu64, st.ts_slow, st.ts_zero);
	ok = path_end("exact slow delta, absolute stamp behind it") && ok;
	done();
	return ok;
}

/*
 * The same, with the second interrupt between the stamp update and F: now
 * something was written behind the task's event, the sandwich case, and
 * only there a zero delta is written.
 *
 * Path: the task's event between the two interrupts' events, with the
 * zero delta on the page, shown at the time of the event in front.
 */
static bool sandwich_between_stamp_update_and_f(void)
{
	struct nest_tree t = { 0 };
	struct rbn_cpu_stats st;
	int i0, i1;
	bool ok;

	node(&t, 0, 24);
	node(&t, 1, 40);
	node(&t, 2, 40);
	node(&t, 3, 24);
	irq_at(&t, 0, RBN_LABEL_B, 1);
	irq_at(&t, 0, RBN_LABEL_SLOW_SET, 2);
	ok = run_tree("sandwich", &t, 3, 200, 1000, 0, -1, false);
	st = stats();
	i0 = rd_of(0);
	i1 = rd_of(1);
	path_begin();
	PATH(IN_ORDER(1, 0, 2, 3), "read order: first interrupt, task, second interrupt, later event");
	PATH((flags_of(0) & (RBN_EV_SLOW | RBN_EV_ZERO_DELTA)) ==
	     (RBN_EV_SLOW | RBN_EV_ZERO_DELTA),
	     "task's event: flags%s", flag_names(flags_of(0)));
	PATH_DELTA(0, 0);
	PATH(i0 >= 0 && i1 >= 0 && ctx.rd[i0].ts == ctx.rd[i1].ts &&
	     ctx.rd[i0].ts < ts_of(0),
	     "task's event read at the first interrupt's time, before its own");
	PATH(flags_of(2) & RBN_EV_ABSOLUTE, "second interrupt: flags%s",
	     flag_names(flags_of(2)));
	PATH_ABS(2);
	PATH(st.ts_zero == 1, "stats: zero %" PRIu64, st.ts_zero);
	ok = path_end("sandwich: zero delta") && ok;
	done();
	return ok;
}

/*
 * A writer that comes in after F read the write index is behind the
 * event, but F already saw nothing behind it: the event in front (the
 * first interrupt, undisturbed) gives an exact delta, and the late writer
 * writes an absolute stamp (before_stamp, the task's slow time, differs
 * from write_stamp). A zero delta here would be correct but needless: F
 * reads the write index before the label f_write, not after.
 *
 * Path: first interrupt, task, second interrupt on the page in this
 * order; the task's event slow and exact (no zero delta, its own time),
 * the second interrupt's absolute.
 */
static bool writer_after_f_read_keeps_exact_delta(void)
{
	struct nest_tree t = { 0 };
	struct rbn_cpu_stats st;
	bool ok;

	node(&t, 0, 24);
	node(&t, 1, 40);
	node(&t, 2, 40);
	node(&t, 3, 24);
	irq_at(&t, 0, RBN_LABEL_B, 1);
	irq_at(&t, 0, RBN_LABEL_F_WRITE, 2);
	ok = run_tree("after_f_read", &t, 3, 200, 1000, 0, -1, false);
	st = stats();
	path_begin();
	PATH(IN_ORDER(1, 0, 2, 3), "read order: first interrupt, task, second interrupt, later event");
	PATH((flags_of(0) & (RBN_EV_SLOW | RBN_EV_ZERO_DELTA)) == RBN_EV_SLOW,
	     "task's event: flags%s", flag_names(flags_of(0)));
	PATH_DELTA(0, ts_of(0) - ts_of(1));
	PATH(flags_of(2) & RBN_EV_ABSOLUTE, "second interrupt: flags%s",
	     flag_names(flags_of(2)));
	PATH_ABS(2);
	PATH(st.ts_zero == 0, "stats: zero %" PRIu64, st.ts_zero);
	ok = path_end("after F's read: exact delta") && ok;
	done();
	return ok;
}

/*
 * "Fix slowpath of interrupted event": a task interrupted between B and C
 * by a softirq writer that is itself interrupted between its C and its D
 * by a hardirq writer. The softirq event's stamps are not settled when the
 * hardirq writes; the task's slow path must not take write_stamp for the
 * time of the event in front of it.
 *
 * Path: softirq's event, hardirq's event, task's event on the page in
 * this order, the hardirq's absolute; the task's write_stamp is the
 * softirq's time, not the hardirq's: it gets the zero delta and shows the
 * hardirq's time.
 */
static bool fix_slowpath_of_interrupted_event(void)
{
	struct nest_tree t = { 0 };
	int i0;
	bool ok;

	node(&t, 0, 24);
	node(&t, 1, 40);
	node(&t, 2, 120);
	node(&t, 3, 24);
	irq_at(&t, 0, RBN_LABEL_B, 1);
	irq_at(&t, 1, RBN_LABEL_C, 2);
	ok = run_tree("fix_slowpath", &t, 3, 200, 1000, 0, -1, false);
	i0 = rd_of(0);
	path_begin();
	PATH(IN_ORDER(1, 2, 0, 3), "read order: softirq, hardirq, task, later event");
	PATH(ctx.rec[2].depth == 3 && (flags_of(2) & RBN_EV_ABSOLUTE),
	     "hardirq event: depth %u flags%s", ctx.rec[2].depth,
	     flag_names(flags_of(2)));
	PATH_ABS(2);
	PATH((flags_of(0) & (RBN_EV_SLOW | RBN_EV_ZERO_DELTA)) ==
	     (RBN_EV_SLOW | RBN_EV_ZERO_DELTA),
	     "task's event: flags%s", flag_names(flags_of(0)));
	PATH_DELTA(0, 0);
	PATH(i0 >= 0 && ctx.rd[i0].ts == ts_of(2),
	     "task's event read at %" PRIu64 ", the hardirq's time is %" PRIu64,
	     i0 >= 0 ? ctx.rd[i0].ts : 0, ts_of(2));
	ok = path_end("no delta from an unsettled write_stamp") && ok;
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
 *
 * Path: the later event's plain delta counts from the hardirq's event
 * right in front of it, not from the task's.
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
	path_begin();
	PATH(IN_ORDER(1, 0, 2, 3), "read order: first interrupt, task, second interrupt, later event");
	PATH((flags_of(0) & RBN_EV_SLOW) && !(flags_of(0) & RBN_EV_ZERO_DELTA),
	     "task's event: flags%s", flag_names(flags_of(0)));
	PATH_DELTA(0, ts_of(0) - ts_of(1));
	PATH(flags_of(2) & RBN_EV_ABSOLUTE, "second interrupt: flags%s",
	     flag_names(flags_of(2)));
	PATH_ABS(2);
	PATH((flags_of(3) & RBN_EV_FAST) && !(flags_of(3) & RBN_EV_ABSOLUTE),
	     "later event: flags%s", flag_names(flags_of(3)));
	PATH_DELTA(3, ts_of(3) - ts_of(2));
	ok = path_end("later delta from the event in front") && ok;
	done();
	return ok;
}

/*
 * "Update write stamp with the correct ts": the fast path sets write_stamp
 * to the time it used for the event. A writer between C and D sets it to
 * its own time first; the later event must still come out exact.
 *
 * Path: the task's fast path with a plain delta, the interrupt between
 * its C and D behind it with an absolute stamp, and the later event
 * forced absolute too, since the task's D left write_stamp at the task's
 * time and before_stamp at the interrupt's.
 */
static bool write_stamp_correct_ts(void)
{
	struct nest_tree t = { 0 };
	struct rbn_cpu_stats st;
	bool ok;

	node(&t, 0, 24);
	node(&t, 1, 40);
	node(&t, 2, 24);
	irq_at(&t, 0, RBN_LABEL_C, 1);
	ok = run_tree("write_stamp_ts", &t, 2, 200, 1000, 0, -1, false);
	st = stats();
	path_begin();
	PATH(IN_ORDER(0, 1, 2), "read order: task, interrupt, later event");
	PATH((flags_of(0) & RBN_EV_FAST) && !(flags_of(0) & RBN_EV_ABSOLUTE),
	     "task's event: flags%s", flag_names(flags_of(0)));
	PATH_DELTA(0, ts_of(0) - rg_filler_ts);
	PATH(flags_of(1) & RBN_EV_ABSOLUTE, "interrupt: flags%s",
	     flag_names(flags_of(1)));
	PATH_ABS(1);
	PATH(flags_of(2) & RBN_EV_ABSOLUTE, "later event: flags%s",
	     flag_names(flags_of(2)));
	PATH_ABS(2);
	PATH(st.ts_abs == 2, "stats: absolute %" PRIu64, st.ts_abs);
	ok = path_end("interrupt between C and D") && ok;
	done();
	return ok;
}

/*
 * Page switches ("Do not update before stamp when switching sub-buffers"
 * and the interrupted page crossing): the task's event does not fit, and a
 * nested writer runs at each step of the switch. The first event of the
 * new sub-buffer takes the page stamp; nothing moves in time.
 *
 * Path, whoever crosses first (the interrupt at a_tail and b, the task
 * otherwise): the old sub-buffer ends with one discarded event over the
 * 24 bytes left, with a non-zero delta, and its commit covers it; the
 * tail moved on once; the interrupt's event opens the new sub-buffer
 * with delta 0 and its time in the page header, and the task follows it
 * there. Read as a whole, the old sub-buffer's commit stops where the
 * padding starts; except when the task comes to the page after the
 * interrupt padded it: its reserve then starts right at the end, which
 * rb_reset_tail() takes for a page filled to the end (real_end 0, as in
 * mainline), and the reader gets the discarded event too.
 */
static bool page_switch_cases(void)
{
	static const int labels[] = {
		RBN_LABEL_C, RBN_LABEL_PAGE_TAIL, RBN_LABEL_PAGE_END,
		RBN_LABEL_PAGE_NEXT, RBN_LABEL_A_TAIL, RBN_LABEL_B,
	};
	const unsigned int left = 24, tail = 4080 - left;
	unsigned int checks = 0;
	bool ok = true;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(labels); i++) {
		const struct rbn_dec_event *d;
		const struct rbn_event *pad;
		struct nest_tree t = { 0 };
		struct rbn_cpu_stats st;
		unsigned int nr_start = 0, k;
		char name[64];
		int i1;
		bool one;

		node(&t, 0, 24);
		node(&t, 1, 40);
		node(&t, 2, 24);
		irq_at(&t, 0, labels[i], 1);
		snprintf(name, sizeof(name), "page_switch at %s",
			 rbn_label_name(labels[i]));
		/* 24 bytes left: the task's 28-byte event crosses */
		one = run_tree(name, &t, 2, tail, 1000, 0, -1, false);
		st = stats();
		for (k = 0; k < ctx.nr_ids; k++)
			nr_start += !!(flags_of(k) & RBN_EV_PAGE_START);
		pad = (const void *)(rg_first + RBN_PAGE_HDR_SIZE + tail);
		i1 = rd_of(1);
		d = dec_of(1);
		ktap_print("  first sub-buffer in place: time stamp %" PRIu64 ", commit %u, %u events, %u paddings (%u bytes, delta %u); pages touched %" PRIu64,
			   rg_first_pg.time_stamp, rg_first_pg.commit,
			   rg_first_pg.nr_events, rg_first_pg.nr_padding,
			   pad->type_len == RBN_TYPE_PADDING ?
			   pad->array[0] + RBN_EVENT_HDR_SIZE : 0,
			   pad->time_delta, st.pages_touched);
		path_begin();
		PATH(rg_first_ok && rg_first_pg.time_stamp == rg_filler_ts &&
		     rg_first_pg.nr_events == 1,
		     "first sub-buffer: decoded %d, stamp %" PRIu64 " (filler %" PRIu64 "), %u events",
		     rg_first_ok, rg_first_pg.time_stamp, rg_filler_ts,
		     rg_first_pg.nr_events);
		PATH(rg_first_ok && rg_first_pg.commit == 4080 &&
		     rg_first_pg.nr_padding == 1 && !rg_first_pg.pad_dirty &&
		     pad->type_len == RBN_TYPE_PADDING && pad->time_delta &&
		     pad->array[0] + RBN_EVENT_HDR_SIZE == left,
		     "first sub-buffer: commit %u, %u paddings, entry at %u type %u delta %u",
		     rg_first_pg.commit, rg_first_pg.nr_padding, tail,
		     pad->type_len, pad->time_delta);
		PATH(rg_nr_pages == 2 && rg_pages[0].pg.nr_events == 1 &&
		     ((rg_pages[0].pg.commit == tail &&
		       !rg_pages[0].pg.nr_padding) ||
		      (rg_pages[0].pg.commit == 4080 &&
		       rg_pages[0].pg.nr_padding == 1)),
		     "read back: %u pages, the first with commit %u, %u events, %u paddings",
		     rg_nr_pages, rg_pages[0].pg.commit,
		     rg_pages[0].pg.nr_events, rg_pages[0].pg.nr_padding);
		PATH(st.pages_touched == 1, "pages touched %" PRIu64,
		     st.pages_touched);
		PATH(nr_start == 1 && (flags_of(1) & RBN_EV_PAGE_START),
		     "%u page-start events, interrupt's flags%s", nr_start,
		     flag_names(flags_of(1)));
		PATH(i1 >= 0 && rg_ev[i1].page == 1 &&
		     (unsigned int)i1 == rg_pages[1].first &&
		     rg_pages[1].pg.time_stamp == ts_of(1) && d &&
		     !d->raw_delta && !d->extend && !d->abs,
		     "interrupt's event: page %d, %s of it, page stamp %" PRIu64 " for its %" PRIu64,
		     i1 >= 0 ? rg_ev[i1].page : -1,
		     i1 >= 0 && rg_nr_pages > 1 &&
		     (unsigned int)i1 == rg_pages[1].first ? "first" : "not first",
		     rg_nr_pages > 1 ? rg_pages[1].pg.time_stamp : 0,
		     ts_of(1));
		PATH(IN_ORDER(1, 0, 2), "read order: interrupt, task, later event");
		one = path_end("discarded event, then page start") && one;
		checks += path_checks;
		ok = ok && one;
		done();
	}
	ktap_print("page_switch: %u labels, %u path checks", i, checks);
	return ok;
}

/*
 * "Fix writing to the buffer with max_data_size": the largest event with a
 * delta that needs a time extend still fits a sub-buffer (no endless page
 * switching), one byte more is refused and counted.
 *
 * Path: the largest event reserves its time extend behind the first
 * event, does not fit, moves to the next sub-buffer, and there, first on
 * the page, goes in without the extend.
 */
static bool max_data_size(void)
{
	struct rbn_config cfg = {
		.size = 4 * 4080, .clock = nest_clock, .nr_cpus = 1,
	};
	unsigned int max, refused = 0, flags = 0;
	struct rbn_cpu_stats st;
	struct rbn_event *ev;
	u64 ts, ts_max = 0;
	bool ok;

	ctx.buffer = rbn_alloc(&cfg);
	if (IS_ERR(ctx.buffer)) {
		ctx.buffer = NULL;
		return false;
	}
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
		ts_max = rbn_event_ts(ctx.buffer, ev);
		flags = rbn_event_flags(ctx.buffer, ev);
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
	ok = ok && ev && rbn_event_data_length(ev) >= max && ts == ts_max;
	ktap_print("max_data_size: sub-buffer %u bytes, max payload %u written after a 2^30 ns gap (flags%s, read at its time %d), max+1 refused; refusals %u, dropped %" PRIu64,
		   rbn_subbuf_size(ctx.buffer), max, flag_names(flags),
		   ev && ts == ts_max, refused, st.dropped);
	path_begin();
	PATH((flags & RBN_EV_PAGE_START) && !(flags & RBN_EV_EXTEND),
	     "largest event: flags%s", flag_names(flags));
	PATH(st.pages_touched == 1 && st.ts_extend == 0,
	     "pages touched %" PRIu64 ", extends %" PRIu64, st.pages_touched,
	     st.ts_extend);
	ok = path_end("extend dropped on the new sub-buffer") && ok;
	done();
	return ok && !rbn_user_warnings;
}

/*
 * "Have absolute time stamps handle large numbers": forced absolute stamps
 * with clock values far above 2^59 keep their upper bits.
 *
 * Path: the interrupt's event with an absolute stamp on the page that
 * holds only the 59 low bits of a time above 2^59; read back whole.
 */
static bool absolute_large_numbers(void)
{
	struct nest_tree t = { 0 };
	int i1;
	bool ok;

	node(&t, 0, 24);
	node(&t, 1, 40);
	node(&t, 2, 24);
	irq_at(&t, 0, RBN_LABEL_B, 1);
	ok = run_tree("abs_large", &t, 2, 200, (1ULL << 62) + 12345, 0, -1,
		      false);
	i1 = rd_of(1);
	path_begin();
	PATH(ts_of(1) > (1ULL << 62), "interrupt's time %" PRIu64, ts_of(1));
	PATH(flags_of(1) & RBN_EV_ABSOLUTE, "interrupt: flags%s",
	     flag_names(flags_of(1)));
	PATH_ABS(1);
	PATH(i1 >= 0 && ctx.rd[i1].ts == ts_of(1),
	     "interrupt's event read at %" PRIu64,
	     i1 >= 0 ? ctx.rd[i1].ts : 0);
	ok = path_end("absolute stamp above 2^59") && ok;
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
 *
 * Path: the event behind in the fast path, with a plain delta of 0 on the
 * page, no time extend.
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
	path_begin();
	PATH(IN_ORDER(0, 1, 2), "read order");
	PATH((flags_of(1) & (RBN_EV_FAST | RBN_EV_CLOCK_BACK)) ==
	     (RBN_EV_FAST | RBN_EV_CLOCK_BACK),
	     "event behind: flags%s", flag_names(flags_of(1)));
	PATH_DELTA(1, 0);
	PATH_DELTA(2, ts_of(2) - ts_of(0));
	ok = path_end("clock behind on the fast path") && ok;
	done();
	return ok;
}

/*
 * A clock behind on the slow path, with nothing written behind the event:
 * the task is interrupted between B and C, and its second clock read
 * comes back 1 ns below the interrupt's time, which rb_clock_read() gives
 * it instead. write_stamp and before_stamp both hold the interrupt's time
 * and nothing came after C, so F's delta from write_stamp is exact: zero.
 * Mainline's test there ("after < ts") took that for a sandwich; here the
 * event is flagged for its clock, as on the fast path, and not counted as
 * a zero delta it did not lose.
 *
 * Path: interrupt, task, later event; the task's event slow, clock-back,
 * not zero-delta, a delta of 0 on the page, read at the interrupt's time.
 */
static bool clock_back_slow_path_exact(void)
{
	struct nest_tree t = { 0 };
	struct rbn_cpu_stats st;
	int i0;
	bool ok;

	node(&t, 0, 24);
	node(&t, 1, 40);
	node(&t, 2, 24);	/* later task event */
	irq_at(&t, 0, RBN_LABEL_B, 1);
	/* the task's slow path: its clock 1 ns behind the interrupt's */
	jump_label = RBN_LABEL_SLOW_BEFORE;
	jump_nth = 0;
	ok = run_tree("clock_back_slow", &t, 2, 200, 1ULL << 40, -2ULL, -1,
		      false);
	jump_label = -1;
	st = stats();
	i0 = rd_of(0);
	ktap_print("  ts_clock_back %" PRIu64 ", ts_zero %" PRIu64 ", ts_slow %" PRIu64,
		   st.ts_clock_back, st.ts_zero, st.ts_slow);
	path_begin();
	PATH(IN_ORDER(1, 0, 2), "read order: interrupt, task, later event");
	PATH((flags_of(0) & (RBN_EV_SLOW | RBN_EV_ZERO_DELTA |
			     RBN_EV_CLOCK_BACK)) ==
	     (RBN_EV_SLOW | RBN_EV_CLOCK_BACK),
	     "task's event: flags%s", flag_names(flags_of(0)));
	PATH_DELTA(0, 0);
	PATH(i0 >= 0 && ctx.rd[i0].ts == ts_of(1) && ts_of(0) + 1 == ts_of(1),
	     "task's event (its clock 1 ns behind) read at the interrupt's time");
	PATH(st.ts_zero == 0 && st.ts_clock_back == 1 && st.ts_slow == 1,
	     "stats: zero %" PRIu64 " clock-back %" PRIu64 " slow %" PRIu64,
	     st.ts_zero, st.ts_clock_back, st.ts_slow);
	ok = path_end("clock behind on the slow path: exact, no sandwich") && ok;
	done();
	return ok;
}

/*
 * An NMI whose clock reads behind the event it interrupted between that
 * event's reserve and D: it is forced absolute, and its stamp, below the
 * time before it on the page, was read back with a carry of 2^59. It is
 * now stored at the interrupted event's time, flagged and counted. The
 * clock stays behind for the task's next event, which is counted too.
 *
 * Path: the NMI's absolute stamp on the page is the interrupted event's
 * time, not its own clock.
 */
static bool clock_back_nmi_absolute(void)
{
	const struct rbn_dec_event *d;
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
	d = dec_of(1);
	path_begin();
	PATH(IN_ORDER(0, 1, 2), "read order: task, NMI, later event");
	PATH(ts_of(1) < ts_of(0), "NMI's clock %" PRIu64 ", task's %" PRIu64,
	     ts_of(1), ts_of(0));
	PATH(d && d->abs && d->abs_raw == abs_bits(ts_of(0)),
	     "NMI's absolute stamp %#" PRIx64 ", want the task's time %#" PRIx64,
	     d ? d->abs_raw : 0, abs_bits(ts_of(0)));
	ok = path_end("NMI behind, stored at the interrupted time") && ok;
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
	path_begin();
	PATH(!ctx.rec[0].written && !ctx.rec[1].written,
	     "task's and nested reserves refused: %d %d",
	     !ctx.rec[0].written, !ctx.rec[1].written);
	PATH(st.dropped == 2 && st.written == 16 && st.read == 16,
	     "dropped %" PRIu64 ", written %" PRIu64 ", read %" PRIu64,
	     st.dropped, st.written, st.read);
	PATH(rg_nr_pages == 8, "%u sub-buffers read", rg_nr_pages);
	/* Read: room for the next event. */
	ctx.now += 10;
	ok = !rbn_write(ctx.buffer, 24, "after the buffer was read") && ok;
	ev = rbn_consume(ctx.buffer, 0, &ts, &lost);
	PATH(ev && ts == ctx.now && !lost,
	     "event after reading: %s at %" PRIu64 " (clock %" PRIu64 "), lost %lu",
	     ev ? "read" : "not read", ts, ctx.now, lost);
	ok = path_end("refusals counted") && ok;
	done();
	return ok;
}

/* Node @i of @t discards its event instead of committing it. */
static void discards(struct nest_tree *t, int i)
{
	t->n[i].action = NEST_WRITE_DISCARD;
}

/*
 * Mainline's "force absolute timestamp on discard of event": the task
 * discards an event that nothing was written behind, and its bytes are
 * given back. write_stamp still holds the discarded event's time; the
 * next event, written where the discarded one was, must not take its
 * delta from it: it would be read 10^6 ns early here (the clock jumps
 * 10^6 ns before the discarded event reads it).
 *
 * Path: the filler, then the next event's absolute stamp at the discarded
 * one's offset; nothing of the discarded event on the page; stats count
 * it as discarded only.
 */
static bool discard_given_back_next_absolute(void)
{
	struct nest_tree t = { 0 };
	const struct rbn_dec_event *d;
	struct rbn_cpu_stats st;
	bool ok;

	node(&t, 0, 24);
	discards(&t, 0);
	node(&t, 1, 24);	/* the next event */
	jump_label = RBN_LABEL_A_AFTER;
	jump_nth = 0;
	ok = run_tree("discard_given_back", &t, 1, 200, 1000, 1000000, -1,
		      false);
	jump_label = -1;
	st = stats();
	d = dec_of(1);
	ktap_print("  entries %" PRIu64 " written %" PRIu64 " discarded %" PRIu64 " bytes %" PRIu64 " (read %u), ts_abs %" PRIu64,
		   st.entries, st.written, st.discarded, st.bytes,
		   ctx.nr_read, st.ts_abs);
	path_begin();
	PATH(rd_of(0) < 0 && IN_ORDER(NEST_FILLER_ID, 1),
	     "read: the filler, then the next event; the discarded one never");
	PATH(d && d->offset == 200 + RBN_LEN_TIME_STAMP,
	     "next event's stamp at data[%u], where the discarded event was",
	     d ? d->offset - RBN_LEN_TIME_STAMP : 0);
	PATH(flags_of(1) & RBN_EV_ABSOLUTE, "next event: flags%s",
	     flag_names(flags_of(1)));
	PATH_ABS(1);
	PATH(rg_nr_pages == 1 && !rg_pages[0].pg.nr_padding,
	     "%u pages read, %u paddings on the first", rg_nr_pages,
	     rg_nr_pages ? rg_pages[0].pg.nr_padding : 0);
	PATH(st.discarded == 1 && st.written == 2 && !st.overrun &&
	     !st.dropped && st.read == 2,
	     "stats: discarded %" PRIu64 ", written %" PRIu64 ", read %" PRIu64,
	     st.discarded, st.written, st.read);
	ok = path_end("discarded event given back: the next one absolute") && ok;
	done();
	return ok;
}

/*
 * An interrupt writes behind the task's event after its reserve, taking
 * its delta from the task's stamp; then the task discards. Its bytes stay
 * on the page as padding with the task's delta, which every reader adds:
 * the interrupt's event is read at its own time. A reader that skipped
 * the padding's delta would read it 10^6 + 1 ns early.
 *
 * Path: the padding at the task's offset with the task's delta; the
 * interrupt right behind it with a plain delta.
 */
static bool discard_in_place_delta_is_time(void)
{
	struct nest_tree t = { 0 };
	const struct rbn_dec_event *d;
	struct rbn_cpu_stats st;
	bool ok;

	node(&t, 0, 24);
	discards(&t, 0);
	node(&t, 1, 40);
	node(&t, 2, 24);	/* a later task event */
	irq_at(&t, 0, RBN_LABEL_RESERVED, 1);
	/* the task's clock 10^6 + 1 ns after the filler's */
	jump_label = RBN_LABEL_A_AFTER;
	jump_nth = 0;
	ok = run_tree("discard_in_place", &t, 2, 200, 1000, 1000000, -1,
		      false);
	jump_label = -1;
	st = stats();
	d = dec_of(1);
	ktap_print("  discarded %" PRIu64 ", paddings on the page %u (discarded events %u), bytes %" PRIu64,
		   st.discarded, rg_nr_pages ? rg_pages[0].pg.nr_padding : 0,
		   rg_nr_pages ? rg_pages[0].pg.nr_discard : 0, st.bytes);
	path_begin();
	PATH(rd_of(0) < 0 && IN_ORDER(NEST_FILLER_ID, 1, 2),
	     "read: filler, interrupt, later event; the discarded one never");
	PATH(rg_nr_pages && rg_pages[0].pg.nr_discard == 1,
	     "the discarded event stays on the page as padding");
	PATH(d && d->offset == 200 + 28 && !d->abs && !d->extend &&
	     d->raw_delta == ts_of(1) - ts_of(0),
	     "interrupt at data[%u], delta %" PRIu64 " from the discarded event's time",
	     d ? d->offset : 0, d ? d->raw_delta : 0);
	PATH(st.discarded == 1 && st.written == 3 && st.read == 3,
	     "stats: discarded %" PRIu64 ", written %" PRIu64 ", read %" PRIu64,
	     st.discarded, st.written, st.read);
	ok = path_end("discarded event in place: its delta is time") && ok;
	done();
	return ok;
}

/*
 * Found by test_nest: the task is on its slow path (an interrupt wrote in
 * front of it between its A and C) and has read before_stamp; a second
 * interrupt, whose clock reads 1 ns back and so gets last_ts, the task's
 * own time from A, reserves and discards, giving its bytes back. With
 * mainline's before_stamp = 0, write_stamp keeps that time, equal to the
 * before_stamp the task read: the task's E and F find nothing changed and
 * it takes a delta from a time no longer on the page, read 1 ns early.
 * Clearing write_stamp instead makes the task's F fail: it is shown at
 * the first interrupt's time with the zero delta (sandwich).
 */
static bool discard_in_slow_path_clears_write_stamp(void)
{
	struct nest_tree t = { 0 };
	int i0, i1;
	bool ok;

	node(&t, 0, 24);
	node(&t, 1, 40);
	node(&t, 2, 24);
	discards(&t, 2);
	node(&t, 3, 24);	/* a later task event */
	irq_at(&t, 0, RBN_LABEL_A_TAIL, 1);
	irq_at(&t, 0, RBN_LABEL_SLOW_BEFORE, 2);
	/* the second interrupt's clock 1 ns back: the third context label */
	jump_label = RBN_LABEL_CONTEXT;
	jump_nth = 2;
	ok = run_tree("discard_in_slow_path", &t, 3, 200, 1ULL << 40, -2ULL,
		      -1, false);
	jump_label = -1;
	i0 = rd_of(0);
	i1 = rd_of(1);
	path_begin();
	PATH(IN_ORDER(1, 0, 3) && rd_of(2) < 0,
	     "read: first interrupt, task, later event; the discarded one never");
	PATH(ctx.rec[2].discarded && (ctx.rec[2].flags & RBN_EV_CLOCK_BACK),
	     "second interrupt: discarded, flags%s", flag_names(ctx.rec[2].flags));
	PATH((flags_of(0) & (RBN_EV_SLOW | RBN_EV_ZERO_DELTA)) ==
	     (RBN_EV_SLOW | RBN_EV_ZERO_DELTA),
	     "task's event: flags%s", flag_names(flags_of(0)));
	PATH(i0 >= 0 && i1 >= 0 && ctx.rd[i0].ts == ctx.rd[i1].ts,
	     "task's event read at the first interrupt's time");
	ok = path_end("discard nested in a slow path: the task's delta not from its stamp") && ok;
	done();
	return ok;
}

/*
 * Found by a review, then by test_nest's second-exact position: an
 * interrupt (W) nested in the task before the task's reserve writes an
 * event that fills the sub-buffer exactly, and discards it. In W's
 * discard, at @label, a third writer (X) does not fit, moves the tail on
 * and gives its reserve back: the page's write index is W's end again.
 * Without the update count bumped there, W's cmpxchg of the index
 * succeeds on a page the tail has left; the task then finds the index
 * where its A read it and writes there, on the old page, in front of X
 * whose time is earlier: read back, time goes backwards.
 *
 * Path: W's event stays in place (as padding), X and the task are on the
 * next sub-buffer in that order.
 */
static bool discard_aba_at(int label)
{
	struct nest_tree t = { 0 };
	struct rbn_cpu_stats st;
	char name[64];
	bool ok;

	node(&t, 0, 24);
	node(&t, 1, 40);
	discards(&t, 1);
	node(&t, 2, 24);
	irq_at(&t, 0, RBN_LABEL_A_AFTER, 1);
	irq_at(&t, 1, label, 2);
	snprintf(name, sizeof(name), "discard_aba at %s", rbn_label_name(label));
	/* the filler leaves exactly W's 44 bytes */
	ok = run_tree(name, &t, -1, 4080 - 44, 1000, 0, -1, false);
	st = stats();
	path_begin();
	PATH(IN_ORDER(NEST_FILLER_ID, 2, 0) && rd_of(1) < 0,
	     "read: filler, the crossing writer, the task; the discarded one never");
	PATH(rg_nr_pages == 2 && rg_pages[0].pg.nr_padding == 1 &&
	     rg_pages[1].pg.nr_events == 2,
	     "%u pages: the discarded event in place on the first (%u paddings), %u events on the second",
	     rg_nr_pages, rg_nr_pages ? rg_pages[0].pg.nr_padding : 0,
	     rg_nr_pages > 1 ? rg_pages[1].pg.nr_events : 0);
	PATH(ts_of(0) > ts_of(2), "the task's time %" PRIu64 " after the crossing writer's %" PRIu64,
	     ts_of(0), ts_of(2));
	PATH(st.discarded == 1 && st.written == 3 && !st.bytes,
	     "stats: discarded %" PRIu64 ", written %" PRIu64 ", bytes left %" PRIu64,
	     st.discarded, st.written, st.bytes);
	ok = path_end("discard on a page the tail left: bytes not given back") && ok;
	done();
	return ok;
}

static bool discard_on_left_page_not_given_back(void)
{
	bool ok = discard_aba_at(RBN_LABEL_DISCARD_TAIL);

	return discard_aba_at(RBN_LABEL_DISCARD_STAMP) && ok;
}

/*
 * Absolute mode, slow path: an interrupt writes in front of the task
 * between its A and C. Nothing comes behind the task before its F, so
 * its clock, read again after the interrupt, is its time: an absolute
 * stamp of that value. Mainline (6.12) takes the slow path's delta
 * (ts - write_stamp) and writes it as the absolute stamp: the task's
 * event would be read near 0.
 *
 * Path: both events behind their own absolute stamps, the task's the
 * later one; no zero delta.
 */
static bool abs_mode_slow_path_own_time(void)
{
	struct nest_tree t = { 0 };
	bool ok;

	node(&t, 0, 24);
	node(&t, 1, 40);
	irq_at(&t, 0, RBN_LABEL_A_TAIL, 1);
	abs_mode = true;
	ok = run_tree("abs_slow_path", &t, -1, 200, 1000, 0, -1, false);
	abs_mode = false;
	path_begin();
	PATH(IN_ORDER(NEST_FILLER_ID, 1, 0), "read: filler, interrupt, task");
	PATH((flags_of(0) & (RBN_EV_SLOW | RBN_EV_ABSOLUTE | RBN_EV_ZERO_DELTA)) ==
	     (RBN_EV_SLOW | RBN_EV_ABSOLUTE), "task's event: flags%s",
	     flag_names(flags_of(0)));
	PATH_ABS(1);
	PATH_ABS(0);
	PATH(ts_of(0) > ts_of(1), "task's time %" PRIu64 " after the interrupt's %" PRIu64,
	     ts_of(0), ts_of(1));
	ok = path_end("absolute mode, slow path: the task's own clock") && ok;
	done();
	return ok;
}

/*
 * Absolute mode, sandwich: an interrupt in front of the task (between its
 * A and C) and one behind it (right after its C). The one behind took an
 * earlier time than the task's slow-path clock, so the task must not
 * have a stamp of its own: it is shown at the first interrupt's time (the
 * zero delta, after a time extend of 0 in the room its stamp had), and
 * time never goes back.
 */
static bool abs_mode_sandwich(void)
{
	struct nest_tree t = { 0 };
	const struct rbn_dec_event *d;
	int i0, i1;
	bool ok;

	node(&t, 0, 24);
	node(&t, 1, 40);
	node(&t, 2, 24);
	irq_at(&t, 0, RBN_LABEL_A_TAIL, 1);
	irq_at(&t, 0, RBN_LABEL_C, 2);
	abs_mode = true;
	ok = run_tree("abs_sandwich", &t, -1, 200, 1000, 0, -1, false);
	abs_mode = false;
	i0 = rd_of(0);
	i1 = rd_of(1);
	d = dec_of(0);
	path_begin();
	PATH(IN_ORDER(NEST_FILLER_ID, 1, 0, 2), "read: filler, first interrupt, task, second interrupt");
	PATH((flags_of(0) & (RBN_EV_SLOW | RBN_EV_ABSOLUTE | RBN_EV_ZERO_DELTA)) ==
	     (RBN_EV_SLOW | RBN_EV_ZERO_DELTA), "task's event: flags%s",
	     flag_names(flags_of(0)));
	PATH(d && d->extend && !d->ext_delta && !d->raw_delta && !d->abs,
	     "task on the page: %s of %" PRIu64 ", delta %" PRIu64,
	     d && d->abs ? "absolute stamp" : d && d->extend ? "time extend" : "nothing",
	     d ? d->ext_delta : 0, d ? d->raw_delta : 0);
	PATH(i0 >= 0 && i1 >= 0 && ctx.rd[i0].ts == ctx.rd[i1].ts,
	     "task read at the first interrupt's time");
	PATH_ABS(1);
	PATH_ABS(2);
	ok = path_end("absolute mode, sandwich: zero delta, no stamp") && ok;
	done();
	return ok;
}

/*
 * The reader resets the old reader page before its swap puts it back into
 * the ring (as mainline does): a writer pushing the head can come to that
 * page before the tail does, and the push takes the page's entries off as
 * overrun and its commit off the bytes.
 *
 * Overwrite mode, a ring of three sub-buffers p1, p2, p3 and the reader
 * page R; fillers F0, F1, ... of half a sub-buffer each, written with the
 * hook off; the hook is on in step 4 only.
 *  1. F0..F5 fill p1, p2, p3: the tail is on p3, the head is p1.
 *  2. The reader consumes F0 and F1: it swaps p1 out (R goes in its place,
 *     the HEAD flag on R's next, head_page p2) and reads p1 to its end.
 *     p1 is used up and still holds its two entries.
 *  3. F6, F7 on R; F8 pushes the head to p3 (F2, F3 lost) and goes on p2
 *     with F9; F10 pushes it to R (F4, F5 lost) and goes on p3 with F11.
 *     The tail is on the full p3, the head is R, and head_page is still
 *     p2: no reader call since step 2.
 *  4. The task's event (id 0) does not fit on p3 and pushes the head: p3's
 *     next HEAD -> UPDATE, F6 and F7 counted lost. At page_head, two
 *     interrupts:
 *     a. a writer (id 1) finds the UPDATE flag and helps: R's next
 *        p2 -> p2|HEAD; it moves the tail to R (resetting it) and writes
 *        there;
 *     b. a reader consumes one event: p1 is used up, so it looks for the
 *        head from head_page p2, finds the flag on R's next and swaps p2
 *        out. p1 goes back into the ring in p2's place, between R and p3,
 *        with the HEAD flag on its next. It reads F8: F2..F7 lost.
 *     The task goes on: the page after R is p1 now, and its cmpxchg()
 *     sets R's next p1 -> p1|HEAD, a second HEAD flag. The tail is on R,
 *     the page it pushed: nothing to fix up. It writes behind id 1 on R.
 *  5. F12 on R; F13 does not fit and pushes the head p1, which the tail
 *     never came to since step 4. The push takes p1's entries and commit
 *     off: 0 when the reader reset them; left as they were, F0 and F1,
 *     read already, are counted lost again and their bytes gone twice.
 *  6. Drain: F9, F10, F11 (p3 is the head), ids 1 and 0, F12, F13.
 *
 * Path: the reads in that order, each at its writer's time; F2..F7
 * reported lost with F8 and nothing else lost; the overrun is those 6,
 * and nothing is left: entries and bytes 0.
 */
static bool reader_page_reset_before_reuse(void)
{
	static const struct {
		unsigned int id;
		unsigned int filler;	/* its number, for a filler */
	} want[] = {
		{ NEST_FILLER_ID, 0 }, { NEST_FILLER_ID, 1 },
		{ NEST_FILLER_ID, 8 }, { NEST_FILLER_ID, 9 },
		{ NEST_FILLER_ID, 10 }, { NEST_FILLER_ID, 11 },
		{ 1, 0 }, { 0, 0 },
		{ NEST_FILLER_ID, 12 }, { NEST_FILLER_ID, 13 },
	};
	struct rbn_config cfg = {
		.size = 3 * 4080, .clock = nest_clock, .nr_cpus = 1,
		.overwrite = true,
	};
	unsigned int i, fillers = 0, read_mid, lost_f8 = 0, lost_else = 0;
	struct rbn_cpu_stats mid, st;
	struct nest_tree t = { 0 };
	bool ok = true, order;

	ctx.buffer = rbn_alloc(&cfg);
	if (IS_ERR(ctx.buffer)) {
		ctx.buffer = NULL;
		return false;
	}
	node(&t, 0, 24);
	node(&t, 1, 40);
	t.n[2].action = NEST_CONSUME;
	t.nr = 3;
	irq_at(&t, 0, RBN_LABEL_PAGE_HEAD, 1);
	irq_at(&t, 0, RBN_LABEL_PAGE_HEAD, 2);
	nest_begin(&ctx, &t, 1000, 1, 0, -1);
	memset(ctx.rec, 0, sizeof(ctx.rec));
	/* 1 */
	for (i = 0; i < 6; i++, fillers++)
		ok = nest_filler(&ctx, 2040) && ok;
	/* 2 */
	nest_consume_one(&ctx);
	nest_consume_one(&ctx);
	/* 3: no reader call, stats() included, may move head_page */
	for (i = 0; i < 6; i++, fillers++)
		ok = nest_filler(&ctx, 2040) && ok;
	/* 4 */
	nest_run(&ctx);
	read_mid = ctx.nr_read;
	mid = stats();
	/* 5 */
	for (i = 0; i < 2; i++, fillers++)
		ok = nest_filler(&ctx, 2040) && ok;
	/* 6 */
	nest_drain(&ctx);
	if (!ok)
		snprintf(ctx.err, sizeof(ctx.err), "a filler was refused or cut");
	ok = ok && nest_check(&ctx, fillers);
	st = stats();

	order = ctx.nr_read == ARRAY_SIZE(want);
	for (i = 0; i < ctx.nr_read; i++) {
		const struct nest_read *r = &ctx.rd[i];

		if (r->id == NEST_FILLER_ID)
			ktap_print("  filler          ts %" PRIu64 " lost %lu",
				   r->ts, r->lost);
		else
			ktap_print("  id %u depth %u ts %" PRIu64 " writer %" PRIu64 " lost %lu",
				   r->id, ctx.rec[r->id].depth, r->ts,
				   ts_of(r->id), r->lost);
		if (i >= ARRAY_SIZE(want) || r->id != want[i].id)
			order = false;
		else if (r->id == NEST_FILLER_ID)
			order = order && r->ts == ctx.filler_ts[want[i].filler];
		else
			order = order && r->ts == ts_of(r->id);
		if (i == 2)
			lost_f8 = r->lost;
		else
			lost_else += r->lost;
	}
	ktap_print("reader_page_reset: %u fillers, %u events, %u read (%u by step 4), %lu lost",
		   fillers, ctx.nr_ids, ctx.nr_read, read_mid, ctx.lost);
	ktap_print("  after step 4: overrun %" PRIu64 ", entries %lld",
		   mid.overrun, (long long)mid.entries);
	ktap_print("  at the end: written %" PRIu64 ", read %" PRIu64 ", overrun %" PRIu64,
		   st.written, st.read, st.overrun);
	ktap_print("  left: entries %lld, bytes %lld", (long long)st.entries,
		   (long long)st.bytes);
	if (!ok)
		ktap_print("  FAILED: %s", ctx.err);
	path_begin();
	PATH(read_mid == 3 && mid.overrun == 6 && mid.entries == 5,
	     "after step 4: %u read, overrun %" PRIu64 ", entries %lld (want 3, 6, 5)",
	     read_mid, mid.overrun, (long long)mid.entries);
	PATH(order,
	     "read: F0 F1 F8 F9 F10 F11, the interrupt, the task, F12 F13, each at its time");
	PATH(lost_f8 == 6 && !lost_else,
	     "lost reported with F8: %u (want 6), with the others: %u (want 0)",
	     lost_f8, lost_else);
	PATH(st.written == 16 && st.read == 10 && st.overrun == 6 &&
	     ctx.lost == st.overrun,
	     "written %" PRIu64 ", read %" PRIu64 ", overrun %" PRIu64 ", lost %lu: want 16 10 6 6",
	     st.written, st.read, st.overrun, ctx.lost);
	PATH(!st.entries && !st.bytes,
	     "left in the buffer: entries %lld, bytes %lld (want 0, 0)",
	     (long long)st.entries, (long long)st.bytes);
	ok = path_end("old reader page reset before a push comes to it") && ok;
	done();
	return ok;
}

int main(void)
{
	nest_cur = &ctx;
	rbn_user_nr_cpus = 1;

	ktap_start(23);
	ktap_result(seed001_nested_time_extends(), "seed001_nested_time_extends");
	ktap_result(interrupt_between_a_and_b_keeps_time(), "interrupt_between_a_and_b_keeps_time");
	ktap_result(seed003_nested_after_slow_delta(), "seed003_nested_after_slow_delta");
	ktap_result(sandwich_between_stamp_update_and_f(), "sandwich_zero_delta_only_when_written_behind");
	ktap_result(writer_after_f_read_keeps_exact_delta(), "writer_after_f_read_keeps_exact_delta");
	ktap_result(fix_slowpath_of_interrupted_event(), "fix_slowpath_of_interrupted_event");
	ktap_result(do_not_put_back_write_stamp(), "do_not_put_back_write_stamp");
	ktap_result(write_stamp_correct_ts(), "update_write_stamp_with_correct_ts");
	ktap_result(page_switch_cases(), "page_switch_cases");
	ktap_result(max_data_size(), "max_data_size_with_time_extend");
	ktap_result(absolute_large_numbers(), "absolute_stamps_large_numbers");
	ktap_result(clock_back_fast_path(), "clock_back_fast_path");
	ktap_result(clock_back_slow_path_exact(), "clock_back_slow_path_exact");
	ktap_result(clock_back_nmi_absolute(), "clock_back_nmi_absolute");
	ktap_result(full_buffer_refusals_counted(), "full_buffer_refusals_counted");
	ktap_result(discard_given_back_next_absolute(), "discard_given_back_next_absolute");
	ktap_result(discard_in_place_delta_is_time(), "discard_in_place_delta_is_time");
	ktap_result(discard_in_slow_path_clears_write_stamp(), "discard_in_slow_path_clears_write_stamp");
	ktap_result(abs_mode_slow_path_own_time(), "abs_mode_slow_path_own_time");
	ktap_result(abs_mode_sandwich(), "abs_mode_sandwich");
	ktap_result(discard_on_left_page_not_given_back(), "discard_on_left_page_not_given_back");
	ktap_result(reader_page_reset_before_reuse(), "reader_page_reset_before_reuse");
	ktap_result(rbn_user_warnings == 0, "no_core_warnings");
	return ktap_finish();
}
