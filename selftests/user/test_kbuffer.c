// SPDX-License-Identifier: GPL-2.0
/*
 * test_kbuffer.c - pages of the real core decoded three ways.
 *
 * Every workload runs twice on fresh buffers with the same mock clock and
 * the same injected nested writers, so both runs write the very same
 * events with the very same time stamps:
 *
 *  run A is read with rbn_read_page(); each page is decoded by rbn_decode
 *        (the independent decoder) and by libtraceevent's kbuffer, and
 *        every byte past the commit must be zero;
 *  run B is read with rbn_peek()/rbn_consume().
 *
 * Each writer notes rbn_event_ts() and rbn_event_flags() between its
 * reserve and its commit, and puts a sequence number in its payload. All
 * readers must rebuild exactly the writer's time stamp, except for events
 * written with RBN_EV_ZERO_DELTA, which must show the time of the event
 * before them. Runs A and B must read the same events with the same time
 * stamps and the same lost counts.
 *
 * kbuffer has three known differences from the format, designed around
 * here and counted in the output:
 *  - it adds the delta of a discarded event (padding with a non-zero
 *    delta) to its clock: harmless only when no data event follows on the
 *    same page, which is asserted for every page;
 *  - it restores the upper 5 bits of an absolute stamp from the previous
 *    time without the 2^59 wrap: time stamps >= 2^59 on pages with
 *    absolute stamps are compared modulo 2^59 with kbuffer;
 *  - kbuffer_missed_events() reports 0 when the first entry of the page is
 *    not a data event (a time extend, say): such pages are expected to
 *    show 0 there.
 *
 * Everything is deterministic. With RBN_KB_DEBUG=1 in the environment every
 * failure is shown, each wrong time stamp with the events read before it
 * and their writers (nesting depth, label, flags).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kbuffer.h>

#include "rb_core.h"
#include "rbn_decode.h"
#include "ktap.h"

#define KB_MAX_CPUS	4
#define KB_SHOW_FAILS	(kb_debug ? 1000 : 8)
#define TS59		(1ULL << 59)
#define TS59_MASK	(TS59 - 1)
#define NO_LABEL	(-1)
#define SWEEP_TAIL	(3 * 64)	/* events after the 1..max sweep */
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

/* ------------------------------------------------------------------ */
/* The mock clock                                                     */
/* ------------------------------------------------------------------ */

static u64 mock_now;
static u64 mock_step;
static u64 mock_reads;
static unsigned int mock_jump_every;
static u64 mock_jump;

static u64 mock_clock(void)
{
	u64 t = mock_now;

	mock_reads++;
	mock_now += mock_step;
	if (mock_jump_every && !(mock_reads % mock_jump_every))
		mock_now += mock_jump;
	return t;
}

/* ------------------------------------------------------------------ */
/* Workloads                                                          */
/* ------------------------------------------------------------------ */

/**
 * struct wl - one workload
 * @name:	KTAP test case name
 * @order:	sub-buffer order
 * @overwrite:	overwrite mode
 * @abs_ts:	absolute time-stamp mode
 * @nr_cpus:	CPUs of the buffer (outer writers are spread over them)
 * @pages:	sub-buffers per CPU
 * @clock_start: first clock value
 * @clock_step:	clock increment per read
 * @jump_every:	every n-th clock read also jumps (0: never) ...
 * @jump:	... by this much
 * @nr_events:	outer events (0: rbn_max_event_size() + SWEEP_TAIL)
 * @len:	payload length of outer event @i
 * @gap:	added to the clock before outer event @i (may be NULL)
 * @nest_rate:	a label injects nested writers once in @nest_rate (0: never).
 *		A writer passes about 26 of the 57 labels, 11 when there
 *		were 23: the values are 2.5 times those chosen then, or
 *		three levels of nested writers fill the buffers many times
 * @nest_depth:	deepest nesting level injected (1..3)
 * @nest_label:	only inject at this label (NO_LABEL: at all of them)
 * @discard_rate: a writer (outer or nested) discards its event instead of
 *		committing it once in @discard_rate (0: never)
 * @drain_every: read everything after every n outer events (0: at the end)
 * @drain_bytes: or after about this many bytes were written
 * @full_first:	page reads first take whole sub-buffers only (full=true)
 * @by_order:	events are identified by their order (payloads < 4 bytes)
 * @bad_lens:	also check that lengths 0 and max + 1 are refused
 * @expect_abs_wrap: absolute stamps must cross a 2^59 boundary
 * @expect_missed: pages with and without a stored lost count must occur
 * @expect_extends: time extends must occur
 * @expect_drops: the buffer fills up (producer/consumer): reserves are
 *		refused, each counted in stats.dropped, and page_drop is
 *		reached; without it no reserve may be refused
 *
 * Nested writers must run at exactly the labels the workload can reach:
 * see want_labels().
 */
struct wl {
	const char *name;
	unsigned int order;
	bool overwrite;
	bool abs_ts;
	int nr_cpus;
	unsigned int pages;
	u64 clock_start;
	u64 clock_step;
	unsigned int jump_every;
	u64 jump;
	unsigned int nr_events;
	unsigned int (*len)(unsigned int i, unsigned int max);
	u64 (*gap)(unsigned int i, unsigned int max);
	unsigned int nest_rate;
	unsigned int nest_depth;
	int nest_label;
	unsigned int discard_rate;
	unsigned int drain_every;
	unsigned long drain_bytes;
	bool full_first;
	bool by_order;
	bool bad_lens;
	bool expect_abs_wrap;
	bool expect_missed;
	bool expect_extends;
	bool expect_drops;
	bool validate;		/* the run-time validator on */
};

/* What a writer wrote. */
struct wrec {
	u64 ts;
	u32 len;
	u32 outer;
	u8 flags;
	u8 cpu;
	u8 depth;
	signed char label;
	bool discarded;
};

/* What a reader read. */
struct rrec {
	u32 seq;
	u8 cpu;
	bool lost_known;
	u64 ts;
	unsigned long lost;
};

struct counts {
	unsigned long pages;
	unsigned long pages_full;
	unsigned long events;
	unsigned long extends;
	unsigned long abs;
	unsigned long paddings;
	unsigned long discards;
	unsigned long first_stamp;	/* pages starting with an extend/stamp */
	unsigned long pad_only;		/* pages with nothing but padding */
	unsigned long zero_delta;
	unsigned long zero_unchecked;
	unsigned long missed_pages;
	unsigned long missed_stored;
	unsigned long missed_sum;	/* stored counts (A) or lost (B) */
	unsigned long kb_ge59;		/* compared with kbuffer modulo 2^59 */
	unsigned long kb_off59;		/* ... and kbuffer was off by k * 2^59 */
	unsigned long kb_missed_quirk;
	unsigned long abs_wrap;		/* absolute stamps across a 2^59 step */
	unsigned long nested;
	unsigned long refused;
	unsigned long discarded;	/* writers that discarded their event */
	unsigned long written;
	unsigned long read;
	unsigned long overrun;
	unsigned long dropped;		/* stats: refused for lack of room */
	unsigned long pages_touched;	/* stats: sub-buffers moved onto */
};

struct run {
	const struct wl *wl;
	bool by_page;
	struct rbn_buffer *b;
	unsigned int subbuf;
	unsigned int max_len;
	int nr_cpus;

	struct wrec *w;
	unsigned int nr_w, cap_w;
	struct rrec *rd;
	unsigned int nr_rd, cap_rd;
	unsigned char *seen;

	/* reader state, per CPU */
	u64 last_ts[KB_MAX_CPUS];
	bool have_last[KB_MAX_CPUS];
	unsigned long pend_lost[KB_MAX_CPUS];
	bool pend_lost_known[KB_MAX_CPUS];
	bool pend_lost_set[KB_MAX_CPUS];
	u64 dec_prev[KB_MAX_CPUS];
	u32 next_seq[KB_MAX_CPUS];
	unsigned long nr_read[KB_MAX_CPUS];
	void *rpage[KB_MAX_CPUS];
	struct rbn_dec_event *dev;
	int max_dev;
	struct kbuffer *kb;

	/* nested writers */
	int depth;
	unsigned int outer;
	u64 rng;
	unsigned long inject[RBN_NR_LABELS];
	unsigned long max_depth;
	unsigned long vchecked, vskipped;	/* the validator's counts */

	struct counts cnt;
};

static bool kb_debug;

/* Failures of the current test case. */
static unsigned int case_fails;

static void __attribute__((format(printf, 1, 2))) failf(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (++case_fails > KB_SHOW_FAILS)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ktap_print("FAIL: %s", buf);
}

static u64 rnd(struct run *r)
{
	u64 x = r->rng;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	r->rng = x;
	return x;
}

static u32 mix32(u32 x)
{
	x ^= x >> 16;
	x *= 0x7feb352dU;
	x ^= x >> 15;
	x *= 0x846ca68bU;
	x ^= x >> 16;
	return x;
}

static u32 get_le32(const unsigned char *p)
{
	return (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24;
}

/* Payload byte @i of event @seq: the sequence number, then a pattern. */
static unsigned char pattern(u32 seq, unsigned int i)
{
	if (i < 4)
		return (seq >> (8 * i)) & 0xff;
	return (unsigned char)(seq * 131 + i * 7 + 1);
}

/* ------------------------------------------------------------------ */
/* Writers                                                            */
/* ------------------------------------------------------------------ */

static struct wrec *wrec_new(struct run *r)
{
	if (r->nr_w == r->cap_w) {
		unsigned int cap = r->cap_w ? 2 * r->cap_w : 4096;

		r->w = realloc(r->w, cap * sizeof(*r->w));
		r->seen = realloc(r->seen, cap);
		if (!r->w || !r->seen) {
			perror("realloc");
			exit(2);
		}
		memset(r->seen + r->cap_w, 0, cap - r->cap_w);
		r->cap_w = cap;
	}
	return &r->w[r->nr_w++];
}

/* Reserve, note the writer's time stamp, fill, commit. */
static void emit(struct run *r, unsigned int len, int depth, int label)
{
	struct rbn_event *ev;
	struct wrec *w;
	unsigned char *p;
	unsigned int i;
	u32 seq;

	ev = rbn_reserve(r->b, len);
	if (!ev) {
		r->cnt.refused++;
		return;
	}
	/* Writers nested in the reserve took their numbers already. */
	seq = r->nr_w;
	w = wrec_new(r);
	w->ts = rbn_event_ts(r->b, ev);
	w->flags = rbn_event_flags(r->b, ev);
	w->len = len;
	w->cpu = rbn_user_cpu;
	w->depth = depth;
	w->label = label;
	w->outer = r->outer;
	w->discarded = r->wl->discard_rate &&
		       !(rnd(r) % r->wl->discard_rate);
	p = rbn_event_data(ev);
	for (i = 0; i < len; i++)
		p[i] = pattern(seq, i);
	if (depth)
		r->cnt.nested++;
	/* Nested writers may run (and move r->w) in the commit. */
	if (w->discarded) {
		r->cnt.discarded++;
		rbn_discard(r->b, ev);
	} else {
		rbn_commit(r->b, ev);
	}
}

static unsigned int nested_len(struct run *r)
{
	u64 x = rnd(r);

	if (x % 5 == 0)
		return 113 + (x >> 8) % 300;	/* type_len 0 */
	return 4 + (x >> 8) % 100;
}

static void kb_hook(struct rbn_buffer *b, int cpu, int label, void *arg)
{
	struct run *r = arg;
	unsigned int n, k;
	int saved;

	(void)cpu;
	if (b != r->b || r->depth >= (int)r->wl->nest_depth)
		return;
	if (r->wl->nest_label != NO_LABEL && label != r->wl->nest_label)
		return;
	if (rnd(r) % r->wl->nest_rate)
		return;
	saved = rbn_user_context;
	r->depth++;
	if ((unsigned long)r->depth + 1 > r->max_depth)
		r->max_depth = r->depth + 1;
	/* An interrupt: a higher context than the writer it interrupts. */
	rbn_user_context = r->depth;
	n = 1 + rnd(r) % 2;
	for (k = 0; k < n; k++)
		emit(r, nested_len(r), r->depth, label);
	rbn_user_context = saved;
	r->depth--;
	if (label >= 0 && label < RBN_NR_LABELS)
		r->inject[label]++;
}

/* ------------------------------------------------------------------ */
/* Readers                                                            */
/* ------------------------------------------------------------------ */

static void rrec_add(struct run *r, u32 seq, int cpu, u64 ts)
{
	struct rrec *rr;

	if (r->nr_rd == r->cap_rd) {
		r->cap_rd = r->cap_rd ? 2 * r->cap_rd : 4096;
		r->rd = realloc(r->rd, r->cap_rd * sizeof(*r->rd));
		if (!r->rd) {
			perror("realloc");
			exit(2);
		}
	}
	rr = &r->rd[r->nr_rd++];
	rr->seq = seq;
	rr->cpu = cpu;
	rr->ts = ts;
	rr->lost = r->pend_lost[cpu];
	rr->lost_known = r->pend_lost_known[cpu] || !r->pend_lost_set[cpu];
	r->pend_lost[cpu] = 0;
	r->pend_lost_set[cpu] = false;
	r->pend_lost_known[cpu] = false;
}

/* Events lost before the next event read on @cpu. */
static void note_lost(struct run *r, int cpu, unsigned long lost, bool known)
{
	if (!r->pend_lost_set[cpu])
		r->pend_lost_known[cpu] = true;
	r->pend_lost_set[cpu] = true;
	r->pend_lost[cpu] += known ? lost : 0;
	if (!known)
		r->pend_lost_known[cpu] = false;
	r->have_last[cpu] = false;
}

static bool identify(struct run *r, int cpu, const unsigned char *p,
		     unsigned int dlen, u32 *seq)
{
	u32 s;

	if (r->wl->by_order) {
		/* No nesting and no loss: buffer order is write order. */
		s = r->next_seq[cpu];
		while (s < r->nr_w && r->w[s].cpu != cpu)
			s++;
		r->next_seq[cpu] = s + 1;
		*seq = s;
		return s < r->nr_w;
	}
	if (dlen < 4)
		return false;
	*seq = get_le32(p);
	return true;
}

static const char *label_name(int label)
{
	const char *name = rbn_label_name(label);

	return name ? name : "?";
}

static char kb_where[96];

static void dump_writer(const struct run *r, const char *tag, u32 seq, u64 ts)
{
	const struct wrec *w = &r->w[seq];

	ktap_print("  %s event %u: read %llu, writer %llu flags %#x depth %u label %s outer %u len %u",
		   tag, seq, (unsigned long long)ts,
		   (unsigned long long)w->ts, w->flags, w->depth,
		   w->label >= 0 ? label_name(w->label) : "-",
		   w->outer, w->len);
}

/* With RBN_KB_DEBUG set: the events read before a wrong one. */
static void dump_context(const struct run *r, int cpu, u32 seq, u64 ts)
{
	unsigned int i, shown = 0;

	if (!kb_debug || case_fails > KB_SHOW_FAILS)
		return;
	for (i = r->nr_rd; i-- > 0 && shown < 8;) {
		if (r->rd[i].cpu != cpu)
			continue;
		shown++;
	}
	for (i++; i < r->nr_rd; i++)
		if (r->rd[i].cpu == cpu)
			dump_writer(r, "before", r->rd[i].seq, r->rd[i].ts);
	dump_writer(r, "this", seq, ts);
	if (r->by_page)
		ktap_print("  (%s)", kb_where);
	for (i = seq + 1; i < r->nr_w && i < seq + 4; i++)
		dump_writer(r, "written after", i, 0);
}

/* Check one data event against its writer; returns its writer record. */
static const struct wrec *check_event(struct run *r, const char *who, int cpu,
				      u64 ts, const unsigned char *p,
				      unsigned int dlen)
{
	const struct wrec *w;
	unsigned int i;
	u32 seq;

	if (!identify(r, cpu, p, dlen, &seq) || seq >= r->nr_w) {
		failf("%s cpu %d: event of %u bytes at ts %llu matches no writer",
		      who, cpu, dlen, (unsigned long long)ts);
		return NULL;
	}
	w = &r->w[seq];
	if (w->discarded) {
		failf("%s cpu %d: event %u was discarded, and read", who, cpu,
		      seq);
		return NULL;
	}
	if (w->cpu != cpu) {
		failf("%s cpu %d: event %u was written on cpu %u", who, cpu,
		      seq, w->cpu);
		return NULL;
	}
	if (r->seen[seq]) {
		failf("%s cpu %d: event %u read twice", who, cpu, seq);
		return NULL;
	}
	r->seen[seq] = 1;
	r->nr_read[cpu]++;
	if (dlen != ALIGN(w->len, RBN_ALIGNMENT)) {
		failf("%s cpu %d: event %u has %u payload bytes, writer wrote %u",
		      who, cpu, seq, dlen, w->len);
	} else {
		for (i = 0; i < dlen; i++) {
			unsigned char want = i < w->len ? pattern(seq, i) : 0;

			if (p[i] != want) {
				failf("%s cpu %d: event %u payload byte %u is %#x, want %#x",
				      who, cpu, seq, i, p[i], want);
				break;
			}
		}
	}

	if (w->flags & RBN_EV_ZERO_DELTA) {
		r->cnt.zero_delta++;
		if (!r->have_last[cpu]) {
			r->cnt.zero_unchecked++;
		} else if (ts != r->last_ts[cpu]) {
			dump_context(r, cpu, seq, ts);
			failf("%s cpu %d: zero-delta event %u at %llu, event before it at %llu",
			      who, cpu, seq, (unsigned long long)ts,
			      (unsigned long long)r->last_ts[cpu]);
		}
	} else if (ts != w->ts) {
		dump_context(r, cpu, seq, ts);
		failf("%s cpu %d: event %u read at %llu, writer used %llu (diff %lld, flags %#x, depth %u)",
		      who, cpu, seq, (unsigned long long)ts,
		      (unsigned long long)w->ts, (long long)(ts - w->ts),
		      w->flags, w->depth);
	}

	if (r->have_last[cpu] && ts < r->last_ts[cpu])
		failf("%s cpu %d: event %u at %llu goes back from %llu", who,
		      cpu, seq, (unsigned long long)ts,
		      (unsigned long long)r->last_ts[cpu]);
	r->last_ts[cpu] = ts;
	r->have_last[cpu] = true;
	rrec_add(r, seq, cpu, ts);
	return w;
}

/* kbuffer's time agrees with ours (modulo 2^59 where kbuffer cannot). */
static void kb_compare_ts(struct run *r, int cpu, unsigned long page,
			  unsigned int i, const struct rbn_dec_page *pg,
			  u64 dts, u64 kts)
{
	if (dts >= TS59 && pg->nr_abs) {
		r->cnt.kb_ge59++;
		if (kts != dts && !((kts - dts) & TS59_MASK)) {
			r->cnt.kb_off59++;
			return;
		}
	}
	if (kts != dts)
		failf("cpu %d page %lu event %u: kbuffer ts %llu, rbn_decode ts %llu",
		      cpu, page, i, (unsigned long long)kts,
		      (unsigned long long)dts);
}

static void check_page(struct run *r, int cpu, void *page, int ret, bool full)
{
	unsigned long pno = r->cnt.pages;
	struct rbn_dec_page pg;
	struct rbn_dec_event *dev = r->dev;
	unsigned long long kts;
	long long want_missed;
	char err[160];
	void *kd;
	int n, i, kmissed;

	r->cnt.pages++;
	if (full)
		r->cnt.pages_full++;
	n = rbn_decode_page(page, r->subbuf, &r->dec_prev[cpu], &pg, dev,
			    r->max_dev, err, sizeof(err));
	if (n < 0) {
		failf("cpu %d page %lu: rbn_decode: %s", cpu, pno, err);
		return;
	}
	if ((u32)ret != pg.commit)
		failf("cpu %d page %lu: rbn_read_page returned %d, commit is %u",
		      cpu, pno, ret, pg.commit);
	if (rbn_decode_check_zero(page, r->subbuf, &pg, err, sizeof(err)))
		failf("cpu %d page %lu: %s", cpu, pno, err);
	if (pg.pad_dirty)
		failf("cpu %d page %lu: %u non-zero bytes inside padding",
		      cpu, pno, pg.pad_dirty);
	if (pg.nr_backwards)
		failf("cpu %d page %lu: %u events go back in time", cpu, pno,
		      pg.nr_backwards);
	if (!n)
		r->cnt.pad_only++;
	r->cnt.events += n;
	r->cnt.extends += pg.nr_extend;
	r->cnt.abs += pg.nr_abs;
	r->cnt.paddings += pg.nr_padding;
	r->cnt.discards += pg.nr_discard;
	if (pg.first_type == RBN_TYPE_TIME_EXTEND ||
	    pg.first_type == RBN_TYPE_TIME_STAMP)
		r->cnt.first_stamp++;
	if (pg.missed) {
		r->cnt.missed_pages++;
		if (pg.missed_stored) {
			r->cnt.missed_stored++;
			r->cnt.missed_sum += pg.missed_count;
		}
		note_lost(r, cpu, pg.missed_count, pg.missed_stored);
	}

	/* kbuffer on the same image. */
	if (kbuffer_load_subbuffer(r->kb, page)) {
		failf("cpu %d page %lu: kbuffer_load_subbuffer failed", cpu, pno);
		return;
	}
	kmissed = kbuffer_missed_events(r->kb);
	if (!pg.missed) {
		want_missed = 0;
	} else if (pg.first_type >= RBN_TYPE_PADDING &&
		   pg.first_type <= RBN_TYPE_TIME_STAMP) {
		/* kbuffer only reports it when data[0] is a data event. */
		want_missed = 0;
		r->cnt.kb_missed_quirk++;
	} else {
		want_missed = pg.missed_stored ? (long long)pg.missed_count : -1;
	}
	if (kmissed != want_missed)
		failf("cpu %d page %lu: kbuffer missed %d, expected %lld (flags %d/%d, count %lu)",
		      cpu, pno, kmissed, want_missed, pg.missed,
		      pg.missed_stored, pg.missed_count);
	if (kbuffer_subbuffer_size(r->kb) != (int)pg.commit)
		failf("cpu %d page %lu: kbuffer size %d, commit %u", cpu, pno,
		      kbuffer_subbuffer_size(r->kb), pg.commit);
	i = 0;
	for (kd = kbuffer_read_event(r->kb, &kts); kd;
	     kd = kbuffer_next_event(r->kb, &kts), i++) {
		if (i >= n) {
			failf("cpu %d page %lu: kbuffer finds more than %d events",
			      cpu, pno, n);
			break;
		}
		if (kd != dev[i].data ||
		    kbuffer_event_size(r->kb) != (int)dev[i].len)
			failf("cpu %d page %lu event %d: kbuffer payload at +%ld size %d, rbn_decode +%ld size %u",
			      cpu, pno, i,
			      (long)((char *)kd - (char *)page),
			      kbuffer_event_size(r->kb),
			      (long)((const char *)dev[i].data - (char *)page),
			      dev[i].len);
		kb_compare_ts(r, cpu, pno, i, &pg, dev[i].ts, kts);
	}
	if (i < n)
		failf("cpu %d page %lu: kbuffer found %d events, rbn_decode %d",
		      cpu, pno, i, n);

	/* Each event against its writer. */
	for (i = 0; i < n; i++) {
		const struct wrec *w;

		snprintf(kb_where, sizeof(kb_where),
			 "page %lu: event %d of %d at data[%u], commit %u",
			 pno, i, n, dev[i].offset, pg.commit);
		w = check_event(r, "page", cpu, dev[i].ts, dev[i].data,
				dev[i].len);
		if (!w)
			continue;
		if (dev[i].extend != !!(w->flags & RBN_EV_EXTEND) ||
		    dev[i].abs != !!(w->flags & RBN_EV_ABSOLUTE))
			failf("cpu %d page %lu event %d: extend %d abs %d on the page, writer flags %#x",
			      cpu, pno, i, dev[i].extend, dev[i].abs,
			      w->flags);
		/*
		 * Sandwich and page start: no time of its own, but in
		 * absolute mode the page start has its stamp (the page's).
		 */
		if ((w->flags & (RBN_EV_ZERO_DELTA | RBN_EV_PAGE_START)) &&
		    (dev[i].raw_delta ||
		     (dev[i].abs && !(r->wl->abs_ts &&
				      (w->flags & RBN_EV_PAGE_START) &&
				      dev[i].ts == pg.time_stamp)) ||
		     (dev[i].extend && dev[i].ext_delta)))
			failf("cpu %d page %lu event %d: flags %#x but delta %llu extend %llu abs %d",
			      cpu, pno, i, w->flags,
			      (unsigned long long)dev[i].raw_delta,
			      (unsigned long long)dev[i].ext_delta,
			      dev[i].abs);
		if (dev[i].abs && i > 0 &&
		    ((dev[i].ts ^ dev[i - 1].ts) & ~TS59_MASK))
			r->cnt.abs_wrap++;
		if (dev[i].abs && i == 0 &&
		    ((dev[i].ts ^ pg.time_stamp) & ~TS59_MASK))
			r->cnt.abs_wrap++;
	}
}

static void drain_pages(struct run *r, int cpu)
{
	bool full = r->wl->full_first;
	unsigned long guard = 4 * rbn_nr_subbufs(r->b) + 16;
	int ret;

	while (guard--) {
		ret = rbn_read_page(r->b, cpu, &r->rpage[cpu], r->subbuf, full);
		if (ret == -EAGAIN) {
			if (!full)
				return;
			full = false;
			continue;
		}
		if (ret < 0) {
			failf("cpu %d: rbn_read_page: %d", cpu, ret);
			return;
		}
		check_page(r, cpu, r->rpage[cpu], ret, full);
	}
	failf("cpu %d: rbn_read_page never ran dry", cpu);
}

static void drain_consume(struct run *r, int cpu)
{
	unsigned long guard = 1UL << 26;
	struct rbn_event *ev, *pev;
	unsigned long lost, plost;
	u64 ts, pts;

	while (guard--) {
		pev = rbn_peek(r->b, cpu, &pts, &plost);
		ev = rbn_consume(r->b, cpu, &ts, &lost);
		if (!ev) {
			if (pev)
				failf("cpu %d: rbn_peek found an event, rbn_consume none",
				      cpu);
			return;
		}
		if (pev != ev || pts != ts || plost != lost)
			failf("cpu %d: rbn_peek %p ts %llu lost %lu, rbn_consume %p ts %llu lost %lu",
			      cpu, (void *)pev, (unsigned long long)pts, plost,
			      (void *)ev, (unsigned long long)ts, lost);
		if (lost) {
			r->cnt.missed_pages++;
			r->cnt.missed_sum += lost;
			note_lost(r, cpu, lost, true);
		}
		r->cnt.events++;
		check_event(r, "consume", cpu, ts, rbn_event_data(ev),
			    rbn_event_data_length(ev));
	}
	failf("cpu %d: rbn_consume never ran dry", cpu);
}

static void drain(struct run *r)
{
	int cpu;

	for (cpu = 0; cpu < r->nr_cpus; cpu++) {
		if (r->by_page)
			drain_pages(r, cpu);
		else
			drain_consume(r, cpu);
	}
}

/* ------------------------------------------------------------------ */
/* One run                                                            */
/* ------------------------------------------------------------------ */

static void final_checks(struct run *r)
{
	const char *who = r->by_page ? "pages" : "consume";
	unsigned long flag_ext = 0, flag_abs = 0, flag_zero = 0;
	unsigned long per_cpu_w[KB_MAX_CPUS] = { 0 };
	unsigned long unseen[KB_MAX_CPUS] = { 0 };
	struct rbn_cpu_stats st;
	unsigned int s;
	unsigned long discarded = 0, kept_ext = 0, kept_abs = 0;
	int cpu;

	for (s = 0; s < r->nr_w; s++) {
		/* the path counters count reserves: discarded ones too */
		flag_ext += !!(r->w[s].flags & RBN_EV_EXTEND);
		flag_abs += !!(r->w[s].flags & RBN_EV_ABSOLUTE);
		flag_zero += !!(r->w[s].flags & RBN_EV_ZERO_DELTA);
		if (r->w[s].discarded)
			continue;
		kept_ext += !!(r->w[s].flags & RBN_EV_EXTEND);
		kept_abs += !!(r->w[s].flags & RBN_EV_ABSOLUTE);
		per_cpu_w[r->w[s].cpu]++;
		if (!r->seen[s])
			unseen[r->w[s].cpu]++;
	}
	for (cpu = 0; cpu < r->nr_cpus; cpu++) {
		if (rbn_cpu_stats(r->b, cpu, &st)) {
			failf("%s cpu %d: rbn_cpu_stats failed", who, cpu);
			continue;
		}
		r->cnt.written += st.written;
		r->cnt.read += r->nr_read[cpu];
		r->cnt.overrun += st.overrun;
		r->cnt.dropped += st.dropped;
		r->cnt.pages_touched += st.pages_touched;
		discarded += st.discarded;
		if (st.written != per_cpu_w[cpu])
			failf("%s cpu %d: stats.written %llu, writers committed %lu",
			      who, cpu, (unsigned long long)st.written,
			      per_cpu_w[cpu]);
		if (st.entries)
			failf("%s cpu %d: %llu entries left after draining",
			      who, cpu, (unsigned long long)st.entries);
		if (st.read != r->nr_read[cpu])
			failf("%s cpu %d: stats.read %llu, read %lu", who, cpu,
			      (unsigned long long)st.read, r->nr_read[cpu]);
		if (r->nr_read[cpu] + st.overrun != st.written)
			failf("%s cpu %d: read %lu + overrun %llu != written %llu",
			      who, cpu, r->nr_read[cpu],
			      (unsigned long long)st.overrun,
			      (unsigned long long)st.written);
		if (unseen[cpu] != st.overrun)
			failf("%s cpu %d: %lu events never read, overrun %llu",
			      who, cpu, unseen[cpu],
			      (unsigned long long)st.overrun);
		if (st.recursion || st.commit_overrun)
			failf("%s cpu %d: recursion %llu, commit_overrun %llu",
			      who, cpu, (unsigned long long)st.recursion,
			      (unsigned long long)st.commit_overrun);
		if (!r->wl->expect_drops && !r->wl->bad_lens && st.dropped)
			failf("%s cpu %d: %llu events dropped: buffer too small for the workload",
			      who, cpu, (unsigned long long)st.dropped);
		if (r->wl->bad_lens && cpu == 0 && st.dropped != 3)
			failf("%s cpu 0: stats.dropped %llu after 3 bad lengths",
			      who, (unsigned long long)st.dropped);
		if (st.max_depth > r->max_depth)
			r->max_depth = st.max_depth;
		/* The validator: every committed event checked, or skipped. */
		if (st.validate_fail)
			failf("%s cpu %d: the validator failed %llu events",
			      who, cpu, (unsigned long long)st.validate_fail);
		if (r->wl->validate &&
		    (st.validate_checked + st.validate_skipped < st.written ||
		     !st.validate_checked))
			failf("%s cpu %d: the validator checked %llu and skipped %llu of %llu events",
			      who, cpu, (unsigned long long)st.validate_checked,
			      (unsigned long long)st.validate_skipped,
			      (unsigned long long)st.written);
		r->vchecked += st.validate_checked;
		r->vskipped += st.validate_skipped;
	}
	/*
	 * Every refused reserve is one the core counted, and only a
	 * workload that fills the buffer has any. The bad lengths are
	 * refused outside emit(): three on CPU 0.
	 */
	{
		unsigned long counted = r->cnt.dropped -
					(r->wl->bad_lens ? 3 : 0);

		if (r->cnt.refused != counted)
			failf("%s: %lu reserves refused, the core counted %lu dropped",
			      who, r->cnt.refused, counted);
		if (r->wl->expect_drops && !r->cnt.refused)
			failf("%s: no reserve refused: the buffer never filled up",
			      who);
		if (!r->wl->expect_drops && r->cnt.refused)
			failf("%s: %lu reserves refused where none was planned",
			      who, r->cnt.refused);
	}
	if (discarded != r->cnt.discarded)
		failf("%s: stats.discarded %lu, writers discarded %lu", who,
		      discarded, r->cnt.discarded);
	/* The flags the writers saw add up to the core's counters. */
	{
		u64 ext = 0, abs = 0, zero = 0;

		for (cpu = 0; cpu < r->nr_cpus; cpu++) {
			rbn_cpu_stats(r->b, cpu, &st);
			ext += st.ts_extend;
			abs += st.ts_abs;
			zero += st.ts_zero;
		}
		if (ext != flag_ext || abs != flag_abs || zero != flag_zero)
			failf("%s: stats extend/abs/zero %llu/%llu/%llu, writer flags %lu/%lu/%lu",
			      who, (unsigned long long)ext,
			      (unsigned long long)abs,
			      (unsigned long long)zero, flag_ext, flag_abs,
			      flag_zero);
		/*
		 * A discarded event given back takes its stamp with it, one
		 * left in place keeps it: the pages hold the stamps of the
		 * committed events and some of the discarded ones'.
		 */
		if (r->by_page && !r->cnt.overrun &&
		    (r->cnt.extends < kept_ext || r->cnt.extends > flag_ext ||
		     r->cnt.abs < kept_abs || r->cnt.abs > flag_abs))
			failf("pages: %lu extends and %lu absolute stamps decoded, writers wrote %lu..%lu and %lu..%lu",
			      r->cnt.extends, r->cnt.abs, kept_ext, flag_ext,
			      kept_abs, flag_abs);
	}
	/* Every lost event is counted once. */
	if (r->cnt.missed_pages && r->by_page &&
	    r->cnt.missed_stored == r->cnt.missed_pages &&
	    r->cnt.missed_sum != r->cnt.overrun)
		failf("pages: stored lost counts add up to %lu, overrun %lu",
		      r->cnt.missed_sum, r->cnt.overrun);
	if (!r->by_page && r->cnt.missed_sum != r->cnt.overrun)
		failf("consume: lost counts add up to %lu, overrun %lu",
		      r->cnt.missed_sum, r->cnt.overrun);
	if (!r->cnt.overrun && r->cnt.missed_pages)
		failf("%s: %lu reads report lost events, overrun is 0", who,
		      r->cnt.missed_pages);
	if (rbn_user_warnings)
		failf("%s: %lu core warnings", who, rbn_user_warnings);
}

static bool run_workload(const struct wl *wl, bool by_page, struct run *r)
{
	unsigned long bytes = 0;
	struct rbn_config cfg = {
		.order		= wl->order,
		.overwrite	= wl->overwrite,
		.abs_ts		= wl->abs_ts,
		.clock		= mock_clock,
		.nr_cpus	= wl->nr_cpus,
		.validate	= wl->validate,
	};
	unsigned int i, n, data_size;
	int cpu;

	memset(r, 0, sizeof(*r));
	r->wl = wl;
	r->by_page = by_page;
	r->nr_cpus = wl->nr_cpus;
	r->rng = 0x9e3779b97f4a7c15ULL;
	data_size = (PAGE_SIZE << wl->order) - RBN_PAGE_HDR_SIZE;
	cfg.size = (unsigned long)wl->pages * data_size;

	mock_now = wl->clock_start;
	mock_step = wl->clock_step;
	mock_reads = 0;
	mock_jump_every = wl->jump_every;
	mock_jump = wl->jump;

	r->b = rbn_alloc(&cfg);
	if (IS_ERR(r->b)) {
		failf("rbn_alloc: %ld", PTR_ERR(r->b));
		r->b = NULL;
		return false;
	}
	r->subbuf = rbn_subbuf_size(r->b);
	r->max_len = rbn_max_event_size(r->b);
	if (by_page) {
		r->kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
		r->max_dev = r->subbuf / 8 + 1;
		r->dev = calloc(r->max_dev, sizeof(*r->dev));
		if (!r->kb || !r->dev) {
			failf("out of memory");
			return false;
		}
		for (cpu = 0; cpu < r->nr_cpus; cpu++) {
			r->rpage[cpu] = rbn_alloc_read_page(r->b, cpu);
			if (!r->rpage[cpu]) {
				failf("rbn_alloc_read_page failed");
				return false;
			}
		}
	}

	rbn_user_cpu = 0;
	rbn_user_context = 0;
	if (wl->bad_lens) {
		static unsigned char big[1 << (PAGE_SHIFT + RBN_MAX_ORDER)];

		if (rbn_reserve(r->b, 0) || rbn_reserve(r->b, r->max_len + 1) ||
		    rbn_write(r->b, r->max_len + 1, big) != -EINVAL)
			failf("lengths 0 and max + 1 (%u) not refused",
			      r->max_len + 1);
	}
	if (wl->nest_rate)
		rbn_test_set_hook(kb_hook, r);

	n = wl->nr_events ? wl->nr_events : r->max_len + SWEEP_TAIL;
	for (i = 0; i < n; i++) {
		unsigned int len;

		rbn_user_cpu = r->nr_cpus > 1 ? mix32(i) % r->nr_cpus : 0;
		r->outer = i;
		if (wl->gap)
			mock_now += wl->gap(i, r->max_len);
		len = wl->len(i, r->max_len);
		emit(r, len, 0, NO_LABEL);
		bytes += ALIGN(len, RBN_ALIGNMENT) + 16;
		if ((wl->drain_every && !((i + 1) % wl->drain_every)) ||
		    (wl->drain_bytes && bytes >= wl->drain_bytes)) {
			drain(r);
			bytes = 0;
		}
	}
	rbn_test_set_hook(NULL, NULL);
	rbn_user_cpu = 0;
	return true;
}

static void finish_run(struct run *r)
{
	drain(r);
	final_checks(r);
}

static void free_run(struct run *r)
{
	int cpu;

	if (r->b) {
		for (cpu = 0; cpu < r->nr_cpus; cpu++)
			rbn_free_read_page(r->b, cpu, r->rpage[cpu]);
		rbn_free(r->b);
	}
	if (r->kb)
		kbuffer_free(r->kb);
	free(r->dev);
	free(r->w);
	free(r->rd);
	free(r->seen);
	memset(r, 0, sizeof(*r));
}

/* Runs A and B wrote the same events and read the same ones, alike. */
static void compare_runs(const struct run *a, const struct run *b)
{
	unsigned int i;

	if (a->nr_w != b->nr_w) {
		failf("run A wrote %u events, run B %u: production is not deterministic",
		      a->nr_w, b->nr_w);
		return;
	}
	for (i = 0; i < a->nr_w; i++) {
		const struct wrec *x = &a->w[i], *y = &b->w[i];

		if (x->ts != y->ts || x->len != y->len ||
		    x->flags != y->flags || x->cpu != y->cpu) {
			failf("event %u differs between the runs: ts %llu/%llu flags %#x/%#x",
			      i, (unsigned long long)x->ts,
			      (unsigned long long)y->ts, x->flags, y->flags);
			return;
		}
	}
	if (a->nr_rd != b->nr_rd)
		failf("pages gave %u events, rbn_consume %u", a->nr_rd,
		      b->nr_rd);
	for (i = 0; i < a->nr_rd && i < b->nr_rd; i++) {
		const struct rrec *x = &a->rd[i], *y = &b->rd[i];

		if (x->seq != y->seq || x->cpu != y->cpu || x->ts != y->ts) {
			failf("read %u: pages give event %u cpu %u ts %llu, rbn_consume event %u cpu %u ts %llu",
			      i, x->seq, x->cpu, (unsigned long long)x->ts,
			      y->seq, y->cpu, (unsigned long long)y->ts);
			return;
		}
		if (x->lost_known ? x->lost != y->lost : !y->lost)
			failf("read %u (event %u): page says %lu lost%s, rbn_consume %lu",
			      i, x->seq, x->lost,
			      x->lost_known ? "" : " (count not stored)",
			      y->lost);
	}
}


static struct counts tot_a, tot_b;
static unsigned long tot_written;

/* Labels of an event that crosses the end of its sub-buffer. */
static const int page_switch_labels[] = {
	RBN_LABEL_PAGE_MOVE,
	RBN_LABEL_PAGE_CLAIM, RBN_LABEL_PAGE_TAIL, RBN_LABEL_PAGE_RESET_WRITE,
	RBN_LABEL_PAGE_RESET, RBN_LABEL_PAGE_ZERO, RBN_LABEL_PAGE_END,
	RBN_LABEL_PAD, RBN_LABEL_PAD_DONE, RBN_LABEL_PAGE_NEXT,
	RBN_LABEL_COMMIT_PAGE, RBN_LABEL_COMMIT_NEXT,
};

/* Labels of pushing the head page on (overwrite mode). */
static const int head_push_labels[] = {
	RBN_LABEL_PAGE_FULL, RBN_LABEL_HEAD_ENTRIES, RBN_LABEL_HEAD_FLAGGED,
	RBN_LABEL_HEAD_OVERRUN, RBN_LABEL_PAGE_HEAD, RBN_LABEL_PAGE_NEW_HEAD,
	RBN_LABEL_HEAD_TAIL, RBN_LABEL_HEAD_FIXED, RBN_LABEL_HEAD_DONE,
};

/*
 * The labels at which nested writers of @wl must run, and only those. By
 * the part of the write path a label is in:
 *
 *  - every reserve and commit: context .. reserved and entries .. unnest.
 *    The slow path's (slow_before .. f) need a writer nested between A
 *    and C, commit_recheck and commit_again one nested in the outermost
 *    commit after it read commits: nesting at every label gives both;
 *  - an event crossing the end of a sub-buffer (page_switch_labels):
 *    rb_move_tail(), the tail update, the padding of the old sub-buffer
 *    and the retry; then the outermost commit walks across the sub-buffer
 *    left behind (commit_page, commit_next). Every workload with nested
 *    writers fills many sub-buffers: stats.pages_touched must say so;
 *  - the head push (head_push_labels): overwrite mode only, when the
 *    tail catches up with the head: stats.overrun must say so;
 *  - page_drop: a reserve refused in rb_move_tail(). Producer/consumer
 *    with the buffer full (@expect_drops), or nested writers lapping the
 *    outermost commit (commit_overrun), which no workload plans.
 *
 * A workload with @nest_label set injects at that label only.
 */
static void want_labels(const struct wl *wl, bool want[RBN_NR_LABELS])
{
	unsigned int i;

	memset(want, 0, RBN_NR_LABELS * sizeof(*want));
	if (wl->nest_label != NO_LABEL) {
		want[wl->nest_label] = true;
		return;
	}
	for (i = 0; i < RBN_NR_LABELS; i++)
		want[i] = true;
	if (!wl->overwrite)
		for (i = 0; i < ARRAY_SIZE(head_push_labels); i++)
			want[head_push_labels[i]] = false;
	want[RBN_LABEL_PAGE_DROP] = wl->expect_drops;
	for (i = RBN_LABEL_DISCARD; i <= RBN_LABEL_DISCARD_DONE; i++)
		want[i] = wl->discard_rate;
	want[RBN_LABEL_VALIDATE_NOTE] = wl->validate;
	want[RBN_LABEL_VALIDATE] = wl->validate;
	/* no workload swaps buffers (test_unit and test_nest do) */
	want[RBN_LABEL_SWAP] = false;
	want[RBN_LABEL_SWAP_DONE] = false;
}

static bool want_any(const bool *want, const int *set, unsigned int n)
{
	while (n--)
		if (want[set[n]])
			return true;
	return false;
}

/* Nested writers ran at exactly the labels want_labels() gives. */
static void check_labels(const struct wl *wl, const struct run *a,
			 const struct run *b)
{
	bool want[RBN_NR_LABELS];
	unsigned int nr_want = 0, hit = 0, missing = 0, extra = 0;
	int i;

	want_labels(wl, want);
	for (i = 0; i < RBN_NR_LABELS; i++) {
		nr_want += want[i];
		if (a->inject[i] != b->inject[i])
			failf("label %s: %lu nested writers in run A, %lu in run B",
			      label_name(i), a->inject[i], b->inject[i]);
		if (want[i] && a->inject[i]) {
			hit++;
		} else if (want[i]) {
			missing++;
			failf("no nested writer ran at label %s",
			      label_name(i));
		} else if (a->inject[i]) {
			extra++;
			failf("%lu nested writers ran at label %s, which this workload cannot reach",
			      a->inject[i], label_name(i));
		}
	}
	ktap_print("labels: nested writers at %u of the %u this workload reaches (of %d), %u missing, %u elsewhere",
		   hit, nr_want, RBN_NR_LABELS, missing, extra);
	/* What the sets stand on happened. */
	ktap_print("labels: sub-buffers moved onto %lu, overrun %lu, refused %lu",
		   a->cnt.pages_touched, a->cnt.overrun, a->cnt.refused);
	if (want_any(want, page_switch_labels, ARRAY_SIZE(page_switch_labels)) &&
	    !a->cnt.pages_touched)
		failf("the writers never moved onto a new sub-buffer: the page switch labels are not reachable");
	if (want_any(want, head_push_labels, ARRAY_SIZE(head_push_labels)) &&
	    !a->cnt.overrun)
		failf("nothing overwritten: the head was never pushed");
	if (want[RBN_LABEL_PAGE_DROP] && !a->cnt.refused)
		failf("no reserve refused: page_drop is not reachable");
}

static void add_counts(struct counts *t, const struct counts *c)
{
	const unsigned long *s = (const unsigned long *)c;
	unsigned long *d = (unsigned long *)t;
	size_t i;

	for (i = 0; i < sizeof(*c) / sizeof(unsigned long); i++)
		d[i] += s[i];
}

static void test_workload(const struct wl *wl)
{
	unsigned long warn0 = rbn_user_warnings;
	struct run *a, *b;
	char buf[2048];
	size_t pos = 0;
	int l;

	case_fails = 0;
	a = calloc(1, sizeof(*a));
	b = calloc(1, sizeof(*b));
	if (!a || !b) {
		perror("calloc");
		exit(2);
	}
	if (run_workload(wl, true, a))
		finish_run(a);
	if (run_workload(wl, false, b))
		finish_run(b);
	compare_runs(a, b);

	ktap_print("pages %lu (%lu whole, %lu only padding), events %lu, extends %lu, abs stamps %lu, paddings %lu (%lu ending before the end of data[]), pages starting with a stamp %lu",
		   a->cnt.pages, a->cnt.pages_full, a->cnt.pad_only,
		   a->cnt.events, a->cnt.extends, a->cnt.abs,
		   a->cnt.paddings, a->cnt.discards, a->cnt.first_stamp);
	ktap_print("writers: committed %lu (%lu nested, depth <= %lu), discarded %lu, refused %lu, zero-delta %lu (%lu without an event before them to check), overrun %lu",
		   a->cnt.written, a->cnt.nested, a->max_depth,
		   a->cnt.discarded, a->cnt.refused, a->cnt.zero_delta, a->cnt.zero_unchecked,
		   a->cnt.overrun);
	ktap_print("missed: %lu pages (%lu with the count stored, sum %lu); rbn_consume: %lu events, %lu reports of lost events, sum %lu",
		   a->cnt.missed_pages, a->cnt.missed_stored,
		   a->cnt.missed_sum, b->cnt.events, b->cnt.missed_pages,
		   b->cnt.missed_sum);
	if (wl->validate)
		ktap_print("validator: %lu events checked, %lu skipped, 0 failed (both runs)",
			   a->vchecked + b->vchecked, a->vskipped + b->vskipped);
	if (a->cnt.kb_ge59 || a->cnt.abs_wrap || wl->clock_start >= TS59 / 2)
		ktap_print("kbuffer has no 59-bit wrap fix: %lu events >= 2^59 on pages with absolute stamps compared modulo 2^59, %lu of them off by k*2^59; absolute stamps across a 2^59 step: %lu",
			   a->cnt.kb_ge59, a->cnt.kb_off59, a->cnt.abs_wrap);
	if (a->cnt.kb_missed_quirk)
		ktap_print("kbuffer_missed_events() 0 on %lu pages whose first entry is not data",
			   a->cnt.kb_missed_quirk);
	if (wl->nest_rate) {
		int i;

		for (i = 0; i < RBN_NR_LABELS; i++) {
			if (!a->inject[i])
				continue;
			l = snprintf(buf + pos, sizeof(buf) - pos, " %s=%lu",
				     label_name(i), a->inject[i]);
			if (l < 0 || (size_t)l >= sizeof(buf) - pos)
				break;
			pos += l;
		}
		ktap_print("injections:%s", pos ? buf : " none");
		check_labels(wl, a, b);
	}
	if (wl->expect_abs_wrap && !a->cnt.abs_wrap)
		failf("no absolute stamp crossed a 2^59 step: the case tests nothing");
	if (wl->expect_missed &&
	    (!a->cnt.missed_stored ||
	     a->cnt.missed_stored == a->cnt.missed_pages))
		failf("missed events: %lu pages, %lu with a stored count: want both kinds",
		      a->cnt.missed_pages, a->cnt.missed_stored);
	if (wl->expect_extends && !a->cnt.extends)
		failf("no time extend on any page: the case tests nothing");
	if (!a->cnt.events)
		failf("no event read");
	if (rbn_user_warnings != warn0)
		failf("%lu core warnings", rbn_user_warnings - warn0);
	if (case_fails > KB_SHOW_FAILS)
		ktap_print("... %u failures in all", case_fails);

	add_counts(&tot_a, &a->cnt);
	add_counts(&tot_b, &b->cnt);
	tot_written += a->cnt.written + b->cnt.written;
	ktap_result(!case_fails, wl->name);
	free_run(a);
	free_run(b);
	free(a);
	free(b);
}

/* ------------------------------------------------------------------ */
/* Lengths and gaps                                                   */
/* ------------------------------------------------------------------ */

/* Mostly small, some type_len 0, a few up to the maximum. */
static unsigned int len_mix(unsigned int i, unsigned int max)
{
	u32 x = mix32(2 * i + 1);
	u32 y = x >> 8;

	switch (x % 10) {
	case 0 ... 6:
		return 4 + y % 60;
	case 7 ... 8:
		return 109 + y % 400;
	default:
		return 1000 + y % (max - 999);
	}
}

static unsigned int len_small(unsigned int i, unsigned int max)
{
	(void)max;
	return 4 + mix32(i) % 40;
}

/*
 * 1..max, then triples with clock gaps: a max-size event (it reserves room
 * for a time extend, does not fit behind anything and moves to the next
 * sub-buffer), a 5-byte event that does not fit in the 8 bytes the max one
 * left, and a near-max event right behind it that needs a time extend.
 */
static unsigned int len_sweep(unsigned int i, unsigned int max)
{
	unsigned int j;

	if (i < max)
		return i + 1;
	j = i - max;
	switch (j % 3) {
	case 0:
		return max;
	case 1:
		return 5;
	default:
		/* 4 + 4 + 8 + 8 + len <= data size: max - 12 */
		return max - 12 - j / 3;
	}
}

static u64 gap_sweep(unsigned int i, unsigned int max)
{
	unsigned int j;

	if (i < max)
		return 0;
	j = i - max;
	return j % 3 == 1 ? 0 : (1ULL << RBN_TS_SHIFT) + j;
}

#define B_STEP	100ULL
#define B_NR	20000

/* Deltas just under, at and above 2^27, and far above. */
static u64 gap_extend(unsigned int i, unsigned int max)
{
	static const u64 gaps[] = {
		0, 0, 0, 5,
		(1ULL << 27) - 1 - B_STEP,
		(1ULL << 27) - B_STEP,
		(1ULL << 27) + 1 - B_STEP,
		1ULL << 28,
		3ULL << 27,
		(1ULL << 32) + 5,
		(1ULL << 40) + 7,
		(1ULL << 44) + 3,
	};

	(void)max;
	if (i == B_NR / 2)
		return 1ULL << 56;
	return gaps[mix32(i + 7) % ARRAY_SIZE(gaps)];
}

/* Bursts that fill pages exactly, leave room, or mix. */
static unsigned int len_burst(unsigned int i, unsigned int max)
{
	switch ((i / 5000) % 3) {
	case 0:
		return 4;
	case 1:
		return len_mix(i, max);
	default:
		return 24;
	}
}

static const struct wl workloads[] = {
	{
		.name = "a: steady clock, small and large events, producer/consumer, order 0",
		.order = 0, .nr_cpus = 2, .pages = 256,
		.clock_start = 1000, .clock_step = 1000,
		.nr_events = 20000, .len = len_mix,
		.drain_every = 2500, .full_first = true,
	},
	{
		.name = "a: steady clock, small and large events, overwrite, order 0",
		.order = 0, .overwrite = true, .nr_cpus = 2, .pages = 16,
		.clock_start = 1000, .clock_step = 1000,
		.nr_events = 20000, .len = len_mix,
		.drain_every = 2500, .full_first = true,
	},
	{
		.name = "a: steady clock, small and large events, producer/consumer, order 1",
		.order = 1, .nr_cpus = 2, .pages = 256,
		.clock_start = 1000, .clock_step = 1000,
		.nr_events = 20000, .len = len_mix,
		.drain_every = 2500, .full_first = true,
	},
	{
		.name = "a: steady clock, small and large events, overwrite, order 1",
		.order = 1, .overwrite = true, .nr_cpus = 2, .pages = 16,
		.clock_start = 1000, .clock_step = 1000,
		.nr_events = 20000, .len = len_mix,
		.drain_every = 2500, .full_first = true,
	},
	{
		.name = "b: deltas around and above 2^27 (time extends)",
		.order = 0, .nr_cpus = 1, .pages = 256,
		.clock_start = 1, .clock_step = B_STEP,
		.nr_events = B_NR, .len = len_small, .gap = gap_extend,
		.expect_extends = true,
		.full_first = true,
	},
	{
		.name = "b: time extends, pages read while written (copies)",
		.order = 0, .nr_cpus = 1, .pages = 16,
		.clock_start = 1, .clock_step = B_STEP,
		.nr_events = B_NR, .len = len_small, .gap = gap_extend,
		.expect_extends = true,
		.drain_every = 7,
	},
	{
		.name = "c: nested writers at every label, validator on",
		.order = 0, .nr_cpus = 2, .pages = 512,
		.clock_start = 5000, .clock_step = 100,
		.nr_events = 6000, .len = len_mix,
		.nest_rate = 30, .nest_depth = 3, .nest_label = NO_LABEL,
		.discard_rate = 7,
		.drain_every = 1000, .full_first = true, .validate = true,
	},
	{
		.name = "c: nested writers, clock jumps of 2^27 (slow-path extends)",
		.order = 0, .nr_cpus = 2, .pages = 768,
		.clock_start = 5000, .clock_step = 100,
		.jump_every = 5, .jump = (1ULL << 27) + 17,
		.nr_events = 6000, .len = len_small,
		.nest_rate = 20, .nest_depth = 3, .nest_label = NO_LABEL,
		.discard_rate = 7,
		.drain_every = 1000,
	},
	{
		.name = "c: nested writers, overwrite, order 1",
		.order = 1, .overwrite = true, .nr_cpus = 2, .pages = 8,
		.clock_start = 5000, .clock_step = 100,
		.nr_events = 12000, .len = len_mix,
		.nest_rate = 30, .nest_depth = 3, .nest_label = NO_LABEL,
		.discard_rate = 7,
		.drain_every = 3000,
	},
	{
		.name = "c: nested writers, producer/consumer, buffer full (refusals)",
		.order = 0, .nr_cpus = 2, .pages = 96,
		.clock_start = 5000, .clock_step = 100,
		.nr_events = 6000, .len = len_mix,
		.nest_rate = 30, .nest_depth = 3, .nest_label = NO_LABEL,
		.discard_rate = 7,
		.drain_every = 1000, .expect_drops = true,
	},
	{
		.name = "d: clock just below 2^59",
		.order = 0, .nr_cpus = 2, .pages = 512,
		.clock_start = TS59 - (1ULL << 34), .clock_step = 1000,
		.nr_events = 3000, .len = len_small,
		.nest_rate = 15, .nest_depth = 3, .nest_label = NO_LABEL,
		.drain_every = 200,
	},
	{
		.name = "d: clock crossing 2^59",
		.order = 0, .nr_cpus = 2, .pages = 512,
		.clock_start = TS59 - (1ULL << 22), .clock_step = 1000,
		.nr_events = 6000, .len = len_small,
		.nest_rate = 25, .nest_depth = 3, .nest_label = NO_LABEL,
		.drain_every = 200,
		.expect_abs_wrap = true,
	},
	{
		.name = "d: absolute stamp right at 2^59",
		.order = 0, .nr_cpus = 1, .pages = 16,
		.clock_start = TS59 - (1ULL << 16), .clock_step = 1ULL << 12,
		.nr_events = 64, .len = len_small,
		.nest_rate = 1, .nest_depth = 1, .nest_label = RBN_LABEL_C,
		.expect_abs_wrap = true,
	},
	{
		.name = "d: clock crossing 2^60",
		.order = 0, .nr_cpus = 2, .pages = 512,
		.clock_start = 2 * TS59 - (1ULL << 22), .clock_step = 1000,
		.nr_events = 6000, .len = len_small,
		.nest_rate = 25, .nest_depth = 3, .nest_label = NO_LABEL,
		.drain_every = 200,
		.expect_abs_wrap = true,
	},
	{
		.name = "d: clock crossing 2^63",
		.order = 0, .nr_cpus = 2, .pages = 512,
		.clock_start = 16 * TS59 - (1ULL << 22), .clock_step = 1000,
		.nr_events = 6000, .len = len_small,
		.nest_rate = 25, .nest_depth = 3, .nest_label = NO_LABEL,
		.drain_every = 200,
		.expect_abs_wrap = true,
	},
	{
		.name = "e: payload sizes 1..max, order 0",
		.order = 0, .nr_cpus = 1, .pages = 64,
		.clock_start = 1, .clock_step = 10,
		.len = len_sweep, .gap = gap_sweep,
		.drain_bytes = 16 * 4096, .by_order = true, .bad_lens = true,
		.expect_extends = true,
	},
	{
		.name = "e: payload sizes 1..max, order 1",
		.order = 1, .nr_cpus = 1, .pages = 64,
		.clock_start = 1, .clock_step = 10,
		.len = len_sweep, .gap = gap_sweep,
		.drain_bytes = 16 * 8192, .by_order = true, .bad_lens = true,
		.expect_extends = true,
	},
	{
		.name = "f: overwrite, missed events stored and not stored",
		.order = 0, .overwrite = true, .nr_cpus = 2, .pages = 4,
		.clock_start = 1000, .clock_step = 333,
		.nr_events = 30000, .len = len_burst,
		.drain_every = 1700, .expect_missed = true,
	},
	{
		.name = "h: absolute mode, nested writers at every label, discards",
		.order = 0, .abs_ts = true, .nr_cpus = 2, .pages = 640,
		.clock_start = 5000, .clock_step = 100,
		.jump_every = 7, .jump = (1ULL << 27) + 17,
		.nr_events = 6000, .len = len_mix,
		.nest_rate = 30, .nest_depth = 3, .nest_label = NO_LABEL,
		.discard_rate = 7,
		.drain_every = 1000, .full_first = true,
	},
	{
		.name = "h: absolute mode, overwrite, clock crossing 2^59, validator on",
		.order = 1, .abs_ts = true, .overwrite = true, .nr_cpus = 2,
		.pages = 8, .clock_start = (1ULL << 59) - 3000000,
		.clock_step = 100,
		.nr_events = 12000, .len = len_mix,
		.nest_rate = 30, .nest_depth = 3, .nest_label = NO_LABEL,
		.discard_rate = 7,
		.drain_every = 3000, .validate = true,
	},
};

#define NR_WORKLOADS	((int)ARRAY_SIZE(workloads))

/* ------------------------------------------------------------------ */
/* Crafted pages: the decoder's checks and kbuffer's quirks           */
/* ------------------------------------------------------------------ */

#define CP_SIZE		4096U

static unsigned char cp[CP_SIZE];
static unsigned int cp_off;

static void cp_reset(u64 ts)
{
	memset(cp, 0, sizeof(cp));
	memcpy(cp, &ts, 8);
	cp_off = 0;
}

static void cp_word(u32 v)
{
	memcpy(cp + RBN_PAGE_HDR_SIZE + cp_off, &v, 4);
	cp_off += 4;
}

static void cp_hdr(unsigned int type_len, u32 delta)
{
	cp_word(type_len | delta << 5);
}

/* A data event of @words payload words (type_len 0 when @big). */
static void cp_data(u32 delta, unsigned int words, bool big)
{
	unsigned int i;

	if (big) {
		cp_hdr(0, delta);
		cp_word(words * 4 + 4);
	} else {
		cp_hdr(words, delta);
	}
	for (i = 0; i < words; i++)
		cp_word(0xa5a50000 + i);
}

static void cp_stamp(unsigned int type, u64 v)
{
	cp_hdr(type, v & RBN_TS_MASK);
	cp_word((v & RBN_ABS_TS_MASK) >> RBN_TS_SHIFT);
}

static void cp_pad(u32 delta, u32 a0)
{
	cp_hdr(RBN_TYPE_PADDING, delta);
	cp_word(a0);
	cp_off += a0 - 4;
}

static void cp_commit(u64 commit, u64 flags)
{
	u64 c = commit | flags;

	memcpy(cp + 8, &c, 8);
}

static int cp_decode(struct rbn_dec_page *pg, struct rbn_dec_event *ev,
		     int max, char *err, size_t errlen)
{
	return rbn_decode_page(cp, CP_SIZE, NULL, pg, ev, max, err, errlen);
}

static void expect_reject(const char *what, int max)
{
	struct rbn_dec_event ev[8];
	struct rbn_dec_page pg;
	char err[160];
	int n;

	n = cp_decode(&pg, ev, max, err, sizeof(err));
	if (n != -EINVAL || !err[0])
		failf("%s: decoded to %d (%s)", what, n, err);
	else
		ktap_print("rejected %s: %s", what, err);
}

/* Decode cp with both decoders; returns the decoder's event count. */
static int cp_both(struct kbuffer *kb, struct rbn_dec_page *pg,
		   struct rbn_dec_event *ev, unsigned long long *kts,
		   int *kmissed)
{
	char err[160];
	void *d;
	int n, i = 0;

	n = cp_decode(pg, ev, 8, err, sizeof(err));
	if (n < 0) {
		failf("crafted page not decoded: %s", err);
		return n;
	}
	kbuffer_load_subbuffer(kb, cp);
	*kmissed = kbuffer_missed_events(kb);
	for (d = kbuffer_read_event(kb, &kts[0]); d && i < 8;
	     d = kbuffer_next_event(kb, &kts[i])) {
		if (d != ev[i].data)
			failf("crafted page event %d: kbuffer payload elsewhere", i);
		i++;
	}
	if (i != n)
		failf("crafted page: kbuffer %d events, rbn_decode %d", i, n);
	return n;
}

static void test_crafted(void)
{
	const u64 T = 1000000;
	struct rbn_dec_event ev[8];
	struct rbn_dec_page pg;
	unsigned long long kts[9];
	struct kbuffer *kb;
	char err[160];
	int n, kmissed;

	case_fails = 0;
	kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	if (!kb) {
		ktap_skip("g: crafted pages", "kbuffer_alloc failed");
		return;
	}

	/* Malformed images. */
	cp_reset(T);
	cp_commit(CP_SIZE - RBN_PAGE_HDR_SIZE + 4, 0);
	expect_reject("commit past data[]", 8);
	cp_commit(6, 0);
	expect_reject("unaligned commit", 8);
	cp_reset(T);
	cp_data(0, 2, false);
	cp_hdr(0, 0);
	cp_commit(cp_off, 0);
	expect_reject("type_len 0 without its length word", 8);
	cp_reset(T);
	cp_hdr(0, 0);
	cp_word(4);
	cp_word(0);
	cp_commit(cp_off, 0);
	expect_reject("type_len 0 with array[0] 4", 8);
	cp_reset(T);
	cp_hdr(0, 0);
	cp_word(10);
	cp_word(0);
	cp_word(0);
	cp_commit(cp_off, 0);
	expect_reject("type_len 0 with unaligned array[0]", 8);
	cp_reset(T);
	cp_hdr(0, 0);
	cp_word(4000);
	cp_word(0);
	cp_commit(cp_off, 0);
	expect_reject("type_len 0 with array[0] past commit", 8);
	cp_reset(T);
	cp_data(0, 1, false);
	cp_hdr(28, 0);
	cp_commit(cp_off + 8, 0);
	expect_reject("type_len 28 past commit", 8);
	cp_reset(T);
	cp_data(0, 1, false);
	cp_hdr(RBN_TYPE_PADDING, 3);
	cp_word(0);
	cp_commit(cp_off, 0);
	expect_reject("discarded event of length 0", 8);
	cp_reset(T);
	cp_hdr(RBN_TYPE_PADDING, 3);
	cp_word(64);
	cp_commit(cp_off, 0);
	expect_reject("discarded event past commit", 8);
	cp_reset(T);
	cp_data(0, 1, false);
	cp_stamp(RBN_TYPE_TIME_EXTEND, 1ULL << 30);
	cp_commit(cp_off, 0);
	expect_reject("time extend at the end", 8);
	cp_reset(T);
	cp_stamp(RBN_TYPE_TIME_EXTEND, 1ULL << 30);
	cp_stamp(RBN_TYPE_TIME_STAMP, T);
	cp_data(0, 1, false);
	cp_commit(cp_off, 0);
	expect_reject("time extend then absolute stamp", 8);
	cp_reset(T);
	cp_stamp(RBN_TYPE_TIME_STAMP, T);
	cp_hdr(RBN_TYPE_PADDING, 0);
	cp_commit(cp_off, 0);
	expect_reject("absolute stamp before end padding", 8);
	cp_reset(T);
	cp_data(0, 1, false);
	cp_data(1, 1, false);
	cp_data(1, 1, false);
	cp_commit(cp_off, 0);
	expect_reject("more events than room", 2);
	cp_commit(cp_off, RBN_MISSED_STORED);
	expect_reject("RBN_MISSED_STORED alone", 8);
	cp_commit(CP_SIZE - RBN_PAGE_HDR_SIZE - 4, RBN_MISSED_FLAGS);
	expect_reject("stored count past the page", 8);
	if (rbn_decode_page(cp, 100, NULL, &pg, NULL, 0, err, sizeof(err)) !=
	    -EINVAL ||
	    rbn_decode_page(cp, 16, NULL, &pg, NULL, 0, err, sizeof(err)) !=
	    -EINVAL)
		failf("bad sub-buffer sizes accepted");

	/* A valid page with every entry type: both decoders agree. */
	cp_reset(T);
	cp_data(0, 2, false);
	cp_stamp(RBN_TYPE_TIME_EXTEND, (1ULL << 30) + 5);
	cp_data(3, 1, false);
	cp_stamp(RBN_TYPE_TIME_STAMP, 1ULL << 40);
	cp_data(0, 30, true);
	cp_data(7, 28, false);
	cp_pad(9, 12);
	cp_commit(cp_off, 0);
	n = cp_both(kb, &pg, ev, kts, &kmissed);
	if (n != 4 || ev[0].ts != T || ev[1].ts != T + (1ULL << 30) + 8 ||
	    ev[2].ts != 1ULL << 40 || ev[3].ts != (1ULL << 40) + 7 ||
	    ev[2].len != 120 || ev[3].len != 112 || !ev[1].extend ||
	    !ev[2].abs || pg.nr_discard != 1)
		failf("valid page decoded wrongly (%d events)", n);
	else if (kts[0] != ev[0].ts || kts[1] != ev[1].ts ||
		 kts[2] != ev[2].ts || kts[3] != ev[3].ts)
		failf("kbuffer disagrees on a valid page");
	if (rbn_decode_check_zero(cp, CP_SIZE, &pg, err, sizeof(err)))
		failf("zero check on a clean page: %s", err);
	cp[CP_SIZE - 1] = 1;
	if (!rbn_decode_check_zero(cp, CP_SIZE, &pg, err, sizeof(err)))
		failf("zero check missed a byte at the end of the page");

	/*
	 * A discarded event's delta is time, for kbuffer as for the core:
	 * data after one, one with delta 0 (not the end of the page), and
	 * one carrying the absolute stamp and the time extend it was
	 * written with.
	 */
	cp_reset(T);
	cp_data(0, 1, false);
	cp_pad(100, 8);
	cp_data(5, 1, false);
	cp_pad(0, 12);
	cp_data(2, 1, false);
	cp_stamp(RBN_TYPE_TIME_STAMP, T + 1000);
	cp_pad(0, 4);
	cp_data(3, 1, false);
	cp_stamp(RBN_TYPE_TIME_EXTEND, 1ULL << 28);
	cp_pad(6, 28);
	cp_data(1, 1, false);
	cp_commit(cp_off, 0);
	n = cp_both(kb, &pg, ev, kts, &kmissed);
	if (n == 5 && pg.nr_discard == 4 && pg.nr_padding == 4 &&
	    ev[1].ts == T + 105 && ev[2].ts == T + 107 &&
	    ev[3].ts == T + 1003 && ev[4].ts == T + 1010 + (1ULL << 28) &&
	    kts[1] == ev[1].ts && kts[2] == ev[2].ts && kts[3] == ev[3].ts &&
	    kts[4] == ev[4].ts)
		ktap_print("discarded events (delta 100, 0, after an absolute stamp, after an extend): rbn_decode and kbuffer agree, last at T + %llu",
			   (unsigned long long)(ev[4].ts - T));
	else
		failf("discarded events: %d events, %u discards; decoder %llu %llu %llu %llu, kbuffer %llu %llu %llu %llu",
		      n, pg.nr_discard, (unsigned long long)ev[1].ts,
		      (unsigned long long)ev[2].ts, (unsigned long long)ev[3].ts,
		      (unsigned long long)ev[4].ts, kts[1], kts[2], kts[3],
		      kts[4]);

	/* Quirk 2: no wrap fix for absolute stamps. */
	cp_reset(TS59 - 100);
	cp_data(0, 1, false);
	cp_stamp(RBN_TYPE_TIME_STAMP, TS59 + 50);
	cp_data(0, 1, false);
	cp_commit(cp_off, 0);
	n = cp_both(kb, &pg, ev, kts, &kmissed);
	if (n == 2 && ev[1].ts == TS59 + 50 && kts[1] == 50 &&
	    rbn_dec_fix_abs(50, TS59 - 100) == TS59 + 50 &&
	    rbn_dec_fix_abs(TS59 - 1, 2 * TS59 + 3) == 3 * TS59 - 1 &&
	    rbn_dec_fix_abs(5, 3 * TS59 - 1) == 3 * TS59 + 5)
		ktap_print("kbuffer quirk 2: absolute stamp 2^59+50 after 2^59-100: rbn_decode %llu, kbuffer %llu",
			   (unsigned long long)ev[1].ts, kts[1]);
	else
		failf("absolute stamp across 2^59: decoder %llu, kbuffer %llu",
		      (unsigned long long)ev[1].ts, kts[1]);

	/* Quirk 3: the missed count when data[0] is a time extend. */
	cp_reset(T);
	cp_stamp(RBN_TYPE_TIME_EXTEND, 1ULL << 28);
	cp_data(0, 1, false);
	cp_commit(cp_off, RBN_MISSED_FLAGS);
	{
		unsigned long cnt = 7;

		memcpy(cp + RBN_PAGE_HDR_SIZE + cp_off, &cnt, sizeof(cnt));
	}
	n = cp_both(kb, &pg, ev, kts, &kmissed);
	if (n == 1 && pg.missed && pg.missed_stored && pg.missed_count == 7 &&
	    kmissed == 0)
		ktap_print("kbuffer quirk 3: stored missed count 7 behind a leading time extend: kbuffer_missed_events() %d",
			   kmissed);
	else
		failf("missed count behind a time extend: decoder %lu, kbuffer %d",
		      pg.missed_count, kmissed);
	if (rbn_decode_check_zero(cp, CP_SIZE, &pg, err, sizeof(err)))
		failf("zero check counted the stored count: %s", err);
	cp[RBN_PAGE_HDR_SIZE + cp_off + sizeof(long)] = 1;
	if (!rbn_decode_check_zero(cp, CP_SIZE, &pg, err, sizeof(err)))
		failf("zero check missed a byte after the stored count");
	cp_reset(T);
	cp_data(0, 1, false);
	cp_commit(cp_off, RBN_MISSED_FLAGS);
	{
		unsigned long cnt = 7;

		memcpy(cp + RBN_PAGE_HDR_SIZE + cp_off, &cnt, sizeof(cnt));
	}
	n = cp_both(kb, &pg, ev, kts, &kmissed);
	if (n != 1 || kmissed != 7 || pg.missed_count != 7)
		failf("missed count 7 with data first: kbuffer %d", kmissed);
	cp_commit(cp_off, RBN_MISSED_EVENTS);
	n = cp_both(kb, &pg, ev, kts, &kmissed);
	if (n != 1 || kmissed != -1 || !pg.missed || pg.missed_stored)
		failf("missed events without a count: kbuffer %d", kmissed);

	kbuffer_free(kb);
	ktap_result(!case_fails, "g: crafted pages: decoder checks and kbuffer quirks");
}

int main(void)
{
	int i;

	kb_debug = getenv("RBN_KB_DEBUG");
	ktap_start(NR_WORKLOADS + 1);
	for (i = 0; i < NR_WORKLOADS; i++)
		test_workload(&workloads[i]);
	test_crafted();

	ktap_print("totals: pages %lu, events %lu (pages) + %lu (rbn_consume) of %lu written, extends %lu, abs stamps %lu, paddings %lu, missed pages %lu (%lu stored)",
		   tot_a.pages, tot_a.events, tot_b.events, tot_written,
		   tot_a.extends, tot_a.abs, tot_a.paddings, tot_a.missed_pages,
		   tot_a.missed_stored);
	ktap_print("totals: kbuffer compared modulo 2^59 on %lu events (%lu off by k*2^59), kbuffer missed-count quirk pages %lu, zero-delta events %lu",
		   tot_a.kb_ge59, tot_a.kb_off59, tot_a.kb_missed_quirk,
		   tot_a.zero_delta);
	return ktap_finish();
}
