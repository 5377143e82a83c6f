// SPDX-License-Identifier: GPL-2.0
/*
 * test_unit.c - single-threaded unit tests of the rbnest core.
 *
 * Every test case runs on the real rb_core.c with a deterministic mock
 * clock and checks one part of the contract: event encoding, the page
 * format, time extends, absolute stamps, producer/consumer and overwrite
 * modes, resize, reset, record on/off, statistics, the recursion guard,
 * zeroing of pages handed to readers and per-CPU separation.
 *
 * Pages are decoded by a small local decoder written from the format
 * description, independent of the core's own reader.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_core.h"
#include "ktap.h"

/* ------------------------------------------------------------------ */
/* Mock clock and checking                                             */
/* ------------------------------------------------------------------ */

static u64 mock_now;

static u64 mock_clock(void)
{
	return mock_now;
}

static int t_fail;	/* failed checks in the current test case */

#define CHECK(cond, fmt, ...)						\
	({								\
		bool __ok = !!(cond);					\
		if (!__ok) {						\
			t_fail++;					\
			ktap_print("FAIL line %d: %s: " fmt, __LINE__,	\
				   #cond, ##__VA_ARGS__);		\
		}							\
		__ok;							\
	})

/* Stop printing the same kind of failure over and over in long loops. */
#define CHECK_Q(cond, fmt, ...)						\
	({								\
		bool __okq = !!(cond);					\
		if (!__okq) {						\
			if (t_fail < 20)				\
				CHECK(cond, fmt, ##__VA_ARGS__);	\
			else						\
				t_fail++;				\
		}							\
		__okq;							\
	})

#define ARRAY_SIZE_LENS(a)	(sizeof(a) / sizeof((a)[0]))
#define SUBBUF_BYTES(order)	(PAGE_SIZE << (order))
#define DATA_BYTES(order)	(SUBBUF_BYTES(order) - RBN_PAGE_HDR_SIZE)
#define COMMIT_MASK		0xfffffUL
#define MAX_SMALL		112U

static struct rbn_buffer *mkbuf(unsigned long nr_subbufs, unsigned int order,
				bool overwrite, int nr_cpus)
{
	struct rbn_config cfg = {
		.size = nr_subbufs * DATA_BYTES(order),
		.order = order,
		.overwrite = overwrite,
		.clock = mock_clock,
		.nr_cpus = nr_cpus,
	};
	struct rbn_buffer *b = rbn_alloc(&cfg);

	if (IS_ERR_OR_NULL(b)) {
		CHECK(0, "rbn_alloc(%lu subbufs, order %u) = %ld", nr_subbufs,
		      order, IS_ERR(b) ? PTR_ERR(b) : 0L);
		return NULL;
	}
	return b;
}

static struct rbn_cpu_stats get_stats(struct rbn_buffer *b, int cpu)
{
	struct rbn_cpu_stats st;

	memset(&st, 0xff, sizeof(st));
	CHECK(rbn_cpu_stats(b, cpu, &st) == 0, "cpu %d", cpu);
	return st;
}

/* Bytes an event with @len payload bytes takes on a page (no stamp). */
static unsigned int ev_size(unsigned int len)
{
	unsigned int p = ALIGN(len, RBN_ALIGNMENT);

	return p <= MAX_SMALL ? RBN_EVENT_HDR_SIZE + p :
				RBN_EVENT_HDR_SIZE + 4 + p;
}

/* A payload length whose event takes exactly @size bytes (8..116, 124..). */
static unsigned int len_for_size(unsigned int size)
{
	if (size <= MAX_SMALL + RBN_EVENT_HDR_SIZE)
		return size - RBN_EVENT_HDR_SIZE;
	return size - RBN_EVENT_HDR_SIZE - 4;
}

/* ------------------------------------------------------------------ */
/* Payloads                                                            */
/* ------------------------------------------------------------------ */

static unsigned char pattern_byte(u32 seq, unsigned int i)
{
	return (unsigned char)(seq * 7 + i * 13 + 1) | 0x01;
}

static void make_payload(unsigned char *buf, unsigned int len, u32 seq)
{
	unsigned int i;

	for (i = 0; i < len; i++)
		buf[i] = pattern_byte(seq, i);
	if (len >= 4)
		memcpy(buf, &seq, 4);
}

/* Payload of @len bytes for @seq, then zeroes up to the rounded length. */
static bool payload_ok(const unsigned char *p, unsigned int rounded,
		       unsigned int len, u32 seq)
{
	static unsigned char exp[1 << 17];
	unsigned int i;

	if (rounded != ALIGN(len, RBN_ALIGNMENT) || len > sizeof(exp))
		return false;
	make_payload(exp, len, seq);
	if (memcmp(p, exp, len))
		return false;
	for (i = len; i < rounded; i++)
		if (p[i])
			return false;
	return true;
}

static unsigned char wbuf[1 << 17];

static int wr(struct rbn_buffer *b, unsigned int len, u32 seq)
{
	make_payload(wbuf, len, seq);
	return rbn_write(b, len, wbuf);
}

/* A log of what the writer did, to compare with what readers return. */
struct wrec {
	u32 seq;
	unsigned int len;
	u64 ts;
};

struct wlog {
	struct wrec *w;
	unsigned int n, max;
};

static void wlog_init(struct wlog *l, unsigned int max)
{
	l->w = calloc(max, sizeof(*l->w));
	l->n = 0;
	l->max = max;
}

static void wlog_free(struct wlog *l)
{
	free(l->w);
	l->w = NULL;
}

/* Write one event at the mock time, log it when it went in. */
static int wr_log(struct rbn_buffer *b, struct wlog *l, unsigned int len)
{
	u32 seq = l->n;
	int ret;

	if (l->n >= l->max)
		return -ENOSPC;
	ret = wr(b, len, seq);
	if (!ret) {
		l->w[l->n].seq = seq;
		l->w[l->n].len = len;
		l->w[l->n].ts = mock_now;
		l->n++;
	}
	return ret;
}

/*
 * Write events adding up to exactly @bytes (a multiple of 4, 0 or >= 8),
 * one clock tick apart, so that no time extend is needed.
 */
static unsigned int fill_bytes(struct rbn_buffer *b, struct wlog *l,
			       unsigned int bytes)
{
	unsigned int n = 0, take;

	while (bytes) {
		if (bytes == MAX_SMALL + 4 || bytes >= MAX_SMALL + 4 + 8)
			take = MAX_SMALL + 4;
		else if (bytes <= MAX_SMALL + 4)
			take = bytes;
		else
			take = bytes - 8;
		mock_now += 3;
		if (CHECK_Q(wr_log(b, l, len_for_size(take)) == 0,
			    "fill write of %u bytes", take))
			n++;
		bytes -= take;
	}
	return n;
}

/* ------------------------------------------------------------------ */
/* A local page decoder                                                */
/* ------------------------------------------------------------------ */

struct dent {
	unsigned int off;	/* offset in data[] */
	unsigned int type;	/* type_len */
	unsigned int delta;	/* time_delta field */
	u32 array0;
	unsigned int size;	/* bytes on the page */
	unsigned int plen;	/* payload bytes (rounded), data events */
	const unsigned char *data;
	u64 ts;			/* rebuilt time after this entry */
	u64 stamp;		/* value of an extend or absolute stamp */
};

struct dpage {
	u64 time_stamp;
	unsigned long commit_word;
	unsigned int commit;
	unsigned long missed;	/* stored missed count, if any */
	unsigned int n;		/* entries */
	unsigned int n_data;
	struct dent e[2048 * 4];
	bool bad;
};

#define ARRAY_LEN_DENT	(sizeof(((struct dpage *)0)->e) / sizeof(struct dent))

static u64 my_fix_abs(u64 abs, u64 prev)
{
	u64 ts = abs | (prev & RBN_TS_MSB);

	if (ts < prev)
		ts += 1ULL << 59;
	return ts;
}

static u32 rd32(const unsigned char *p)
{
	u32 v;

	memcpy(&v, p, 4);
	return v;
}

/*
 * Decode the sub-buffer @page of @data_bytes data bytes into @d. Checks
 * the format while at it (failures count in the current test case).
 * A @fresh page is one the writer started (not a reader's partial copy):
 * its first entry has delta 0 and no time extend value.
 */
static void decode_page(const void *page, unsigned int data_bytes,
			struct dpage *d, bool fresh)
{
	const struct rbn_page *pg = page;
	const unsigned char *data = pg->data;
	unsigned int off = 0;
	u64 ts;

	memset(d, 0, offsetof(struct dpage, e));
	d->bad = false;
	d->time_stamp = pg->time_stamp;
	d->commit_word = (unsigned long)local_read(&pg->commit);
	d->commit = d->commit_word & COMMIT_MASK;
	ts = d->time_stamp;
	if (!CHECK(d->commit <= data_bytes, "commit %u > %u", d->commit,
		   data_bytes)) {
		d->bad = true;
		return;
	}
	if ((d->commit_word & RBN_MISSED_STORED) &&
	    CHECK(d->commit + sizeof(unsigned long) <= data_bytes,
		  "stored missed count past the page, commit %u", d->commit))
		memcpy(&d->missed, data + d->commit, sizeof(unsigned long));

	while (off < d->commit && d->n < ARRAY_LEN_DENT) {
		struct dent *e = &d->e[d->n];
		u32 hdr;

		if (!CHECK(d->commit - off >= 4, "partial header at %u", off))
			goto bad;
		hdr = rd32(data + off);
		memset(e, 0, sizeof(*e));
		e->off = off;
		e->type = hdr & 0x1f;
		e->delta = hdr >> 5;
		if (e->type == 0 || e->type >= RBN_TYPE_PADDING) {
			/* a bare end marker: no room for a length word */
			if (e->type == RBN_TYPE_PADDING && d->commit - off < 8) {
				e->size = d->commit - off;
				e->ts = ts;
				d->n++;
				break;
			}
			if (!CHECK(d->commit - off >= 8,
				   "type %u at %u cut by commit %u", e->type,
				   off, d->commit))
				goto bad;
			e->array0 = rd32(data + off + 4);
		}
		switch (e->type) {
		case 0:
			if (!CHECK(e->array0 >= 4 + MAX_SMALL + 1 &&
				   !(e->array0 & 3),
				   "large event at %u with array[0] %u", off,
				   e->array0))
				goto bad;
			e->size = 4 + e->array0;
			e->plen = e->array0 - 4;
			e->data = data + off + 8;
			ts += e->delta;
			d->n_data++;
			break;
		case RBN_TYPE_PADDING:
			/* a discarded event's delta is time */
			ts += e->delta;
			e->size = e->array0 + 4;
			if (!CHECK(e->array0 >= 4 && !(e->array0 & 3),
				   "discard at %u with array[0] %u", off,
				   e->array0))
				goto bad;
			break;
		case RBN_TYPE_TIME_EXTEND:
			e->size = RBN_LEN_TIME_EXTEND;
			e->stamp = ((u64)e->array0 << RBN_TS_SHIFT) | e->delta;
			ts += e->stamp;
			break;
		case RBN_TYPE_TIME_STAMP:
			e->size = RBN_LEN_TIME_STAMP;
			e->stamp = ((u64)e->array0 << RBN_TS_SHIFT) | e->delta;
			ts = my_fix_abs(e->stamp, ts);
			break;
		default:
			e->size = 4 + e->type * 4;
			e->plen = e->type * 4;
			e->data = data + off + 4;
			ts += e->delta;
			d->n_data++;
			break;
		}
		if (!CHECK(off + e->size <= d->commit,
			   "entry type %u at %u size %u past commit %u",
			   e->type, off, e->size, d->commit))
			goto bad;
		e->ts = ts;
		off += e->size;
		d->n++;
	}
	if (!fresh)
		return;
	/* The first entry of a page never carries a time extend. */
	if (d->n && d->e[0].type == RBN_TYPE_TIME_EXTEND)
		CHECK(d->e[0].stamp == 0,
		      "time extend first on the page has value %" PRIu64,
		      d->e[0].stamp);
	if (d->n && d->e[0].type && d->e[0].type <= RBN_TYPE_DATA_MAX)
		CHECK(d->e[0].delta == 0, "first event delta %u",
		      d->e[0].delta);
	return;
bad:
	d->bad = true;
}

static struct rbn_event *page_event(void *page, unsigned int off)
{
	return (struct rbn_event *)(((struct rbn_page *)page)->data + off);
}

/* Every byte past commit (and the stored missed count) is zero. */
static bool tail_zero(const void *page, unsigned int data_bytes,
		      unsigned int *where)
{
	const struct rbn_page *pg = page;
	unsigned long cw = (unsigned long)local_read(&pg->commit);
	unsigned int i = cw & COMMIT_MASK;

	if (cw & RBN_MISSED_STORED)
		i += sizeof(unsigned long);
	for (; i < data_bytes; i++) {
		if (pg->data[i]) {
			*where = i;
			return false;
		}
	}
	return true;
}

/* ------------------------------------------------------------------ */
/* Readers                                                             */
/* ------------------------------------------------------------------ */

struct rrec {
	u32 seq;
	unsigned int plen;	/* rounded */
	u64 ts;
	unsigned long lost;	/* reported just before this event */
	bool data_ok;
};

struct rlog {
	struct rrec *r;
	unsigned int n, max;
	unsigned int pages;
	unsigned int swapped;		/* pages handed over without a copy */
	unsigned long missed_flags;	/* pages with RBN_MISSED_EVENTS */
	unsigned long missed_stored;	/* sum of stored counts */
	unsigned long missed_stored_pages;
	unsigned long lost;		/* sum of lost reported by consume */
};

/* A page said events were lost before it but had no room for the count. */
#define LOST_UNKNOWN	(~0UL)

static void rlog_init(struct rlog *r, unsigned int max)
{
	memset(r, 0, sizeof(*r));
	r->r = calloc(max, sizeof(*r->r));
	r->max = max;
}

static void rlog_free(struct rlog *r)
{
	free(r->r);
	r->r = NULL;
}

static void rlog_add(struct rlog *r, const struct wlog *l,
		     const unsigned char *p, unsigned int plen, u64 ts,
		     unsigned long lost)
{
	struct rrec *x;
	u32 seq;

	if (!CHECK_Q(r->n < r->max, "more events read than expected"))
		return;
	x = &r->r[r->n++];
	seq = plen >= 4 ? rd32(p) : 0xffffffff;
	x->seq = seq;
	x->plen = plen;
	x->ts = ts;
	x->lost = lost;
	x->data_ok = l && seq < l->n &&
		     payload_ok(p, plen, l->w[seq].len, seq);
	if (lost != LOST_UNKNOWN)
		r->lost += lost;
}

static struct dpage dp;

/* Read every page of @cpu with rbn_read_page into @r. */
static void read_pages(struct rbn_buffer *b, int cpu, unsigned int order,
		       const struct wlog *l, struct rlog *r, bool full,
		       bool dirty)
{
	void *page = rbn_alloc_read_page(b, cpu), *old;
	unsigned int i, where;
	unsigned long lost;
	int ret;

	if (!CHECK(!IS_ERR_OR_NULL(page), "rbn_alloc_read_page"))
		return;
	for (;;) {
		if (dirty)
			memset(page, 0xee, SUBBUF_BYTES(order));
		old = page;
		ret = rbn_read_page(b, cpu, &page, rbn_subbuf_size(b), full);
		if (ret == -EAGAIN)
			break;
		if (!CHECK(ret >= 0, "rbn_read_page = %d", ret))
			break;
		r->pages++;
		if (page != old)
			r->swapped++;
		decode_page(page, DATA_BYTES(order), &dp, page != old);
		CHECK_Q((unsigned int)ret == dp.commit,
			"read_page returned %d, commit %u", ret, dp.commit);
		CHECK_Q(tail_zero(page, DATA_BYTES(order), &where),
			"page %u: byte %u past commit %u is not zero",
			r->pages, where, dp.commit);
		if (dp.commit_word & RBN_MISSED_EVENTS)
			r->missed_flags++;
		if (dp.commit_word & RBN_MISSED_STORED) {
			r->missed_stored += dp.missed;
			r->missed_stored_pages++;
		}
		lost = 0;
		if (dp.commit_word & RBN_MISSED_EVENTS)
			lost = dp.commit_word & RBN_MISSED_STORED ?
			       dp.missed : LOST_UNKNOWN;
		for (i = 0; i < dp.n; i++) {
			struct dent *e = &dp.e[i];

			if (e->type > RBN_TYPE_DATA_MAX)
				continue;
			rlog_add(r, l, e->data, e->plen, e->ts, lost);
			lost = 0;
		}
		if (r->pages > 100000)
			break;
	}
	rbn_free_read_page(b, cpu, page);
}

/* Consume every event of @cpu into @r. */
static void consume_all(struct rbn_buffer *b, int cpu, const struct wlog *l,
			struct rlog *r)
{
	struct rbn_event *ev;
	unsigned long lost;
	u64 ts;

	while ((ev = rbn_consume(b, cpu, &ts, &lost))) {
		rlog_add(r, l, rbn_event_data(ev), rbn_event_data_length(ev),
			 ts, lost);
		if (r->n >= r->max)
			break;
	}
}

/*
 * What was read is exactly the writes from @first on: in order, with the
 * clock value of the writer and the payload written.
 */
static void check_read(const struct wlog *l, const struct rlog *r,
		       unsigned int first, const char *what)
{
	unsigned int i, bad_seq = 0, bad_ts = 0, bad_data = 0;

	CHECK(r->n + first == l->n, "%s: read %u + first %u != written %u",
	      what, r->n, first, l->n);
	for (i = 0; i < r->n && first + i < l->n; i++) {
		const struct wrec *w = &l->w[first + i];
		const struct rrec *x = &r->r[i];

		if (x->seq != w->seq) {
			if (!bad_seq++)
				ktap_print("%s: event %u has seq %u, expected %u",
					   what, i, x->seq, w->seq);
			continue;
		}
		if (x->ts != w->ts && !bad_ts++)
			ktap_print("%s: seq %u ts %" PRIu64 ", expected %"
				   PRIu64, what, x->seq, x->ts, w->ts);
		if (!x->data_ok && !bad_data++)
			ktap_print("%s: seq %u payload differs (len %u, read %u)",
				   what, x->seq, w->len, x->plen);
	}
	CHECK(!bad_seq && !bad_ts && !bad_data,
	      "%s: %u out of order, %u bad stamps, %u bad payloads", what,
	      bad_seq, bad_ts, bad_data);
}

/*
 * Overwrite mode: what was read is the writes from @first on, in order,
 * minus gaps that are exactly the lost counts reported right after them,
 * up to the last write.
 */
static void check_read_gaps(const struct wlog *l, const struct rlog *r,
			    unsigned int first, const char *what)
{
	unsigned int i, next = first, bad = 0, gaps = 0;
	unsigned long lost = 0;

	for (i = 0; i < r->n; i++) {
		const struct rrec *x = &r->r[i];
		bool ok;

		if (x->lost == LOST_UNKNOWN)
			ok = x->seq > next;
		else
			ok = x->seq == next + x->lost;
		if (x->lost) {
			gaps++;
			if (x->lost != LOST_UNKNOWN)
				lost += x->lost;
		}
		ok = ok && x->seq < l->n && x->ts == l->w[x->seq].ts &&
		     x->data_ok;
		if (!ok && !bad++)
			ktap_print("%s: read %u: seq %u (expected %u + lost %lu), ts %"
				   PRIu64 ", payload %s", what, i, x->seq, next,
				   x->lost, x->ts, x->data_ok ? "ok" : "bad");
		next = x->seq + 1;
	}
	CHECK(!bad, "%s: %u events out of place", what, bad);
	CHECK(next == l->n, "%s: last read seq %u, last written %u", what,
	      next - 1, l->n - 1);
	ktap_print("%s: %u read, %u gaps, %lu reported lost, seq %u..%u",
		   what, r->n, gaps, lost, first, l->n - 1);
}

/* Fill the whole ring with recognizable garbage, then forget it. */
static void dirty_buffer(struct rbn_buffer *b, int cpu)
{
	struct rbn_event *ev;
	unsigned long lost;
	unsigned int i, len = 100;
	int saved = rbn_user_cpu;
	u64 ts;

	rbn_user_cpu = cpu;
	for (i = 0; i < rbn_nr_subbufs(b) * 60; i++) {
		mock_now += 2;
		ev = rbn_reserve(b, len);
		if (!ev)
			break;
		memset(rbn_event_data(ev), 0xee, len);
		rbn_commit(b, ev);
	}
	/* Drain it (producer/consumer mode may have filled up). */
	while (rbn_consume(b, cpu, &ts, &lost))
		;
	rbn_reset(b);
	rbn_user_cpu = saved;
}

/* ------------------------------------------------------------------ */
/* 1. Encoding                                                         */
/* ------------------------------------------------------------------ */

static void t_header_layout(void)
{
	union {
		struct rbn_event ev;
		u32 raw;
	} u;

	memset(&u, 0, sizeof(u));
	u.ev.type_len = 5;
	u.ev.time_delta = 0x5a5a5a5;
	ktap_print("type_len 5, time_delta 0x5a5a5a5 -> raw 0x%08x", u.raw);
	CHECK(u.raw == (5U | (0x5a5a5a5U << 5)), "raw 0x%08x", u.raw);
	u.raw = 0xffffffe0;
	CHECK(u.ev.type_len == 0 && u.ev.time_delta == RBN_TS_MASK,
	      "type_len %u delta 0x%x", u.ev.type_len, u.ev.time_delta);
	u.raw = 0x1f;
	CHECK(u.ev.type_len == 31 && u.ev.time_delta == 0,
	      "type_len %u delta 0x%x", u.ev.type_len, u.ev.time_delta);
	CHECK(sizeof(struct rbn_event) == 4, "%zu", sizeof(struct rbn_event));
	CHECK(RBN_PAGE_HDR_SIZE == 16, "%zu", (size_t)RBN_PAGE_HDR_SIZE);
	CHECK(offsetof(struct rbn_page, commit) == 8, "commit at %zu",
	      offsetof(struct rbn_page, commit));
}

/* Reserve @len, check the in-place encoding, fill, commit. */
static void reserve_and_check(struct rbn_buffer *b, unsigned int len,
			      u32 seq, unsigned int *nbad)
{
	unsigned int rounded = ALIGN(len, RBN_ALIGNMENT), i;
	struct rbn_event *ev = rbn_reserve(b, len);
	unsigned char *p;
	bool ok = true;

	if (!CHECK_Q(ev, "rbn_reserve(%u)", len)) {
		(*nbad)++;
		return;
	}
	p = rbn_event_data(ev);
	if (rounded <= MAX_SMALL) {
		ok &= CHECK_Q(ev->type_len == rounded / 4,
			      "len %u: type_len %u", len, ev->type_len);
		ok &= CHECK_Q(p == (unsigned char *)ev->array,
			      "len %u: data not at array[0]", len);
	} else {
		ok &= CHECK_Q(ev->type_len == 0, "len %u: type_len %u", len,
			      ev->type_len);
		ok &= CHECK_Q(ev->array[0] == rounded + 4,
			      "len %u: array[0] %u, expected %u", len,
			      ev->array[0], rounded + 4);
		ok &= CHECK_Q(p == (unsigned char *)&ev->array[1],
			      "len %u: data not at array[1]", len);
	}
	for (i = len; i < rounded; i++)
		ok &= CHECK_Q(p[i] == 0, "len %u: pad byte %u = 0x%02x", len,
			      i, p[i]);
	ok &= CHECK_Q(rbn_event_data_length(ev) == rounded,
		      "len %u: rbn_event_data_length %u", len,
		      rbn_event_data_length(ev));
	ok &= CHECK_Q(rbn_event_length(ev) == ev_size(len),
		      "len %u: rbn_event_length %u, expected %u", len,
		      rbn_event_length(ev), ev_size(len));
	make_payload(p, len, seq);
	rbn_commit(b, ev);
	if (!ok)
		(*nbad)++;
}

static void t_encoding_small(void)
{
	static const unsigned int lens[] = {
		1, 2, 3, 4, 5, 7, 8, 9, 13, 64, 100, 109, 110, 111, 112,
	};
	struct rbn_buffer *b = mkbuf(4, 0, false, 1);
	unsigned int i, nbad = 0, where;
	struct wlog l;
	void *page;
	u32 raw;
	int ret;

	if (!b)
		return;
	wlog_init(&l, 64);
	dirty_buffer(b, 0);
	mock_now = 1000;
	for (i = 0; i < ARRAY_SIZE_LENS(lens); i++) {
		mock_now += 10;
		reserve_and_check(b, lens[i], i, &nbad);
		l.w[l.n].seq = i;
		l.w[l.n].len = lens[i];
		l.w[l.n].ts = mock_now;
		l.n++;
	}
	ktap_print("%u small events (len 1..112), %u with encoding errors",
		   l.n, nbad);

	page = rbn_alloc_read_page(b, 0);
	memset(page, 0xee, SUBBUF_BYTES(0));
	ret = rbn_read_page(b, 0, &page, rbn_subbuf_size(b), false);
	CHECK(ret > 0, "rbn_read_page = %d", ret);
	if (ret > 0) {
		decode_page(page, DATA_BYTES(0), &dp, true);
		CHECK(dp.n == l.n && dp.n_data == l.n,
		      "%u entries, %u data, %u written", dp.n, dp.n_data, l.n);
		for (i = 0; i < dp.n && i < l.n; i++) {
			struct dent *e = &dp.e[i];
			unsigned int len = l.w[i].len;

			raw = rd32((unsigned char *)((struct rbn_page *)page)->data +
				   e->off);
			CHECK_Q(e->type == ALIGN(len, 4) / 4,
				"event %u: type_len %u (raw 0x%08x)", i,
				e->type, raw);
			CHECK_Q((raw & 0x1f) == e->type && raw >> 5 == e->delta,
				"raw header 0x%08x", raw);
			CHECK_Q(e->delta == (i ? 10U : 0U),
				"event %u: delta %u", i, e->delta);
			CHECK_Q(payload_ok(e->data, e->plen, len, i),
				"event %u: payload of len %u", i, len);
			CHECK_Q(e->ts == l.w[i].ts, "event %u ts %" PRIu64, i,
				e->ts);
		}
		ktap_print("page: commit %u, %u events, deltas 0,10,...",
			   dp.commit, dp.n);
		CHECK(tail_zero(page, DATA_BYTES(0), &where),
		      "byte %u past commit", where);
	}
	rbn_free_read_page(b, 0, page);
	CHECK(nbad == 0, "%u events badly encoded", nbad);
	wlog_free(&l);
	rbn_free(b);
}

static void t_encoding_large(void)
{
	static const unsigned int lens[] = {
		113, 114, 115, 116, 117, 200, 1000, 1001, 2047,
	};
	struct rbn_buffer *b = mkbuf(8, 0, false, 1);
	unsigned int i, nbad = 0;
	struct wlog l;
	struct rlog r;

	if (!b)
		return;
	wlog_init(&l, 64);
	rlog_init(&r, 64);
	dirty_buffer(b, 0);
	mock_now = 5000;
	for (i = 0; i < ARRAY_SIZE_LENS(lens); i++) {
		mock_now += 7;
		reserve_and_check(b, lens[i], i, &nbad);
		l.w[l.n].seq = i;
		l.w[l.n].len = lens[i];
		l.w[l.n].ts = mock_now;
		l.n++;
	}
	read_pages(b, 0, 0, &l, &r, false, true);
	ktap_print("%u large events (len 113..2047): %u badly encoded, %u read in %u pages",
		   l.n, nbad, r.n, r.pages);
	check_read(&l, &r, 0, "large");
	CHECK(nbad == 0, "%u events badly encoded", nbad);
	wlog_free(&l);
	rlog_free(&r);
	rbn_free(b);
}

/* Every length from 1 to the maximum, reserved then consumed at once. */
static void t_encoding_all_lengths(void)
{
	struct rbn_buffer *b = mkbuf(3, 0, false, 1);
	unsigned int len, max, nbad = 0, nread = 0, nlen = 0;
	struct rbn_event *ev;
	unsigned long lost;
	u64 ts;

	if (!b)
		return;
	dirty_buffer(b, 0);
	max = rbn_max_event_size(b);
	mock_now = 100;
	for (len = 1; len <= max; len++) {
		mock_now += 1;
		reserve_and_check(b, len, len, &nbad);
		ev = rbn_consume(b, 0, &ts, &lost);
		if (!CHECK_Q(ev, "len %u: nothing to consume", len))
			continue;
		nread++;
		if (!CHECK_Q(rbn_event_data_length(ev) == ALIGN(len, 4) &&
			     payload_ok(rbn_event_data(ev), ALIGN(len, 4), len,
					len) &&
			     ts == mock_now && !lost,
			     "len %u read back as %u bytes, ts %" PRIu64
			     ", lost %lu", len, rbn_event_data_length(ev), ts,
			     lost))
			nbad++;
		if (rbn_event_length(ev) == ev_size(len))
			nlen++;
	}
	ktap_print("lengths 1..%u: %u read back, %u bad, %u with the right rbn_event_length on read",
		   max, nread, nbad, nlen);
	CHECK(nread == max && nbad == 0 && nlen == max, "%u %u %u", nread,
	      nbad, nlen);
	rbn_free(b);
}

/* ------------------------------------------------------------------ */
/* 2. First event of a page; deltas                                    */
/* ------------------------------------------------------------------ */

static void t_page_first_event(void)
{
	static const u64 gaps[] = { 0, 1, 10, 999, 0, 123456, 7 };
	struct rbn_buffer *b = mkbuf(4, 0, false, 1);
	struct rbn_event *ev;
	unsigned int i;
	struct wlog l;
	struct rlog r;
	void *page;
	int ret;

	if (!b)
		return;
	wlog_init(&l, 256);
	rlog_init(&r, 256);
	mock_now = 1000000;
	for (i = 0; i < ARRAY_SIZE_LENS(gaps); i++) {
		mock_now += gaps[i];
		ev = rbn_reserve(b, 16);
		if (!CHECK(ev, "reserve %u", i))
			continue;
		CHECK(rbn_event_ts(b, ev) == mock_now,
		      "rbn_event_ts %" PRIu64, rbn_event_ts(b, ev));
		CHECK((rbn_event_flags(b, ev) & RBN_EV_PAGE_START) == (i ? 0 : RBN_EV_PAGE_START),
		      "event %u flags 0x%x", i, rbn_event_flags(b, ev));
		CHECK(rbn_event_flags(b, ev) & RBN_EV_FAST, "flags 0x%x",
		      rbn_event_flags(b, ev));
		make_payload(rbn_event_data(ev), 16, i);
		rbn_commit(b, ev);
		/* Committed: no longer being written here. */
		CHECK(rbn_event_ts(b, ev) == 0 && rbn_event_flags(b, ev) == 0,
		      "after commit: ts %" PRIu64 " flags 0x%x",
		      rbn_event_ts(b, ev), rbn_event_flags(b, ev));
		l.w[l.n++] = (struct wrec){ i, 16, mock_now };
	}
	page = rbn_alloc_read_page(b, 0);
	ret = rbn_read_page(b, 0, &page, rbn_subbuf_size(b), false);
	if (CHECK(ret > 0, "read_page %d", ret)) {
		decode_page(page, DATA_BYTES(0), &dp, true);
		CHECK(dp.time_stamp == l.w[0].ts, "page time_stamp %" PRIu64
		      ", first event at %" PRIu64, dp.time_stamp, l.w[0].ts);
		CHECK(dp.n == l.n, "%u entries", dp.n);
		for (i = 0; i < dp.n && i < l.n; i++) {
			CHECK(dp.e[i].delta == gaps[i] * !!i,
			      "event %u delta %u, expected %" PRIu64, i,
			      dp.e[i].delta, gaps[i] * !!i);
			CHECK(dp.e[i].ts == l.w[i].ts, "event %u ts", i);
		}
		ktap_print("page time_stamp %" PRIu64 " = first ts; %u deltas exact",
			   dp.time_stamp, dp.n);
	}
	rbn_free_read_page(b, 0, page);

	/* Complete the page exactly; the next event starts a new page. */
	l.n = 0;
	mock_now += 500;
	fill_bytes(b, &l, DATA_BYTES(0) - 7 * 20);
	mock_now += 77;
	CHECK(wr_log(b, &l, 20) == 0, "write after a full page");
	read_pages(b, 0, 0, &l, &r, false, true);
	check_read(&l, &r, 0, "two pages");
	ktap_print("rest of the page filled by %u events, then one more: %u pages read",
		   l.n - 1, r.pages);
	CHECK(r.pages == 2, "%u pages", r.pages);
	/* decode_page() checked delta 0 for each page's first event. */
	CHECK(dp.time_stamp == l.w[l.n - 1].ts && dp.e[0].delta == 0,
	      "second page time_stamp %" PRIu64 " delta %u", dp.time_stamp,
	      dp.e[0].delta);
	wlog_free(&l);
	rlog_free(&r);
	rbn_free(b);
}

/* ------------------------------------------------------------------ */
/* 3. Page crossing and padding                                        */
/* ------------------------------------------------------------------ */

/*
 * Fill a fresh page so that @left bytes remain, then write an event of
 * @next bytes that does not fit. Check the old page, the new one, and a
 * consumer's view.
 */
static void cross_page(unsigned int order, unsigned int left,
		       unsigned int next, bool use_copy)
{
	unsigned int data_bytes = DATA_BYTES(order), tail, where, shift = 0;
	struct rbn_buffer *b = mkbuf(4, order, false, 1);
	struct dent *last;
	struct wlog l;
	void *page, *old;
	int ret;

	if (!b)
		return;
	wlog_init(&l, 4096);
	dirty_buffer(b, 0);
	mock_now = 7000;
	tail = data_bytes - left;
	fill_bytes(b, &l, tail);
	mock_now += 11;
	CHECK(wr_log(b, &l, len_for_size(next)) == 0, "crossing write");

	page = rbn_alloc_read_page(b, 0);
	if (use_copy) {
		/* Consume one event so the reader must copy the rest. */
		struct rbn_event *ev;
		unsigned long lost;
		u64 ts;

		ev = rbn_consume(b, 0, &ts, &lost);
		CHECK(ev && ts == l.w[0].ts, "consume first");
		/* Offsets in the copy start after the consumed event. */
		shift = ev_size(l.w[0].len);
	}
	memset(page, 0xee, SUBBUF_BYTES(order));
	old = page;
	ret = rbn_read_page(b, 0, &page, rbn_subbuf_size(b), false);
	if (!CHECK(ret > 0, "old page: read_page %d", ret))
		goto out;
	decode_page(page, data_bytes, &dp, !use_copy);
	last = dp.n ? &dp.e[dp.n - 1] : NULL;
	CHECK(tail_zero(page, data_bytes, &where),
	      "old page: byte %u past commit %u not zero", where, dp.commit);
	CHECK(dp.n_data == l.n - 1 - use_copy,
	      "old page: %u data events, %u expected", dp.n_data,
	      l.n - 1 - use_copy);
	CHECK((page != old) == !use_copy, "old page %s",
	      use_copy ? "swapped although partly read" : "copied although full");
	if (!use_copy) {
		CHECK(dp.time_stamp == l.w[0].ts, "old page time_stamp");
		/*
		 * A whole sub-buffer handed over: its commit ends where the
		 * padding starts (the rest is room for a missed count).
		 */
		CHECK(dp.commit == tail && last &&
		      last->type <= RBN_TYPE_DATA_MAX,
		      "left %u: swapped page commit %u, tail %u, last type %u",
		      left, dp.commit, tail, last ? last->type : 99);
		ktap_print("left %u: swapped old page: commit %u = old tail, %u events, zero after",
			   left, dp.commit, dp.n_data);
	} else if (left < 8) {
		/* Nothing fits in the end: its padding is not committed. */
		CHECK(dp.commit == tail - shift && last &&
		      last->type <= RBN_TYPE_DATA_MAX,
		      "left %u: copy commit %u, expected %u, last type %u",
		      left, dp.commit, tail - shift, last ? last->type : 99);
		ktap_print("left %u: copied rest: commit %u (old tail %u - %u read), no padding",
			   left, dp.commit, tail, shift);
	} else {
		CHECK(last && last->off == tail - shift &&
		      last->type == RBN_TYPE_PADDING && last->delta != 0 &&
		      last->array0 + 4 == left &&
		      last->off + last->size == data_bytes - shift,
		      "left %u: last entry type %u at %u delta %u array[0] %u",
		      left, last ? last->type : 99, last ? last->off : 0,
		      last ? last->delta : 0, last ? last->array0 : 0);
		CHECK(dp.commit == data_bytes - shift,
		      "left %u: copy commit %u, expected %u", left, dp.commit,
		      data_bytes - shift);
		if (last && last->type == RBN_TYPE_PADDING) {
			unsigned int i;

			for (i = 8; i < last->size; i++)
				CHECK_Q(!((struct rbn_page *)page)->data[last->off + i],
					"discard byte %u not zero", i);
		}
		ktap_print("left %u: copied rest: discard type %u at old tail %u, delta %u, array[0] %u, commit %u (+%u read)",
			   left, last ? last->type : 99, tail,
			   last ? last->delta : 0, last ? last->array0 : 0,
			   dp.commit, shift);
	}
	/* The new page. */
	memset(page, 0xee, SUBBUF_BYTES(order));
	ret = rbn_read_page(b, 0, &page, rbn_subbuf_size(b), false);
	if (CHECK(ret > 0, "new page: read_page %d", ret)) {
		decode_page(page, data_bytes, &dp, true);
		CHECK(dp.time_stamp == l.w[l.n - 1].ts,
		      "new page time_stamp %" PRIu64 ", event at %" PRIu64,
		      dp.time_stamp, l.w[l.n - 1].ts);
		CHECK(dp.n == 1 && dp.e[0].delta == 0 &&
		      dp.e[0].ts == l.w[l.n - 1].ts &&
		      payload_ok(dp.e[0].data, dp.e[0].plen, l.w[l.n - 1].len,
				 l.w[l.n - 1].seq),
		      "new page: %u entries, first delta %u", dp.n,
		      dp.n ? dp.e[0].delta : 0);
		CHECK(dp.commit == next, "new page commit %u, expected %u",
		      dp.commit, next);
		CHECK(tail_zero(page, data_bytes, &where),
		      "new page: byte %u past commit not zero", where);
		ktap_print("new page: time_stamp %" PRIu64 ", commit %u, first delta 0",
			   dp.time_stamp, dp.commit);
	}
	CHECK(rbn_read_page(b, 0, &page, rbn_subbuf_size(b), false) == -EAGAIN,
	      "nothing more to read");
out:
	rbn_free_read_page(b, 0, page);
	wlog_free(&l);
	rbn_free(b);
}

static void t_page_cross_small_left(void)
{
	ktap_print("order 0: 4 bytes left, an 8-byte event does not fit");
	cross_page(0, 4, 8, false);
	ktap_print("order 1: 4 bytes left, a 116-byte event does not fit");
	cross_page(1, 4, 116, false);
	ktap_print("order 0: 4 bytes left, old page partly consumed");
	cross_page(0, 4, 8, true);
}

static void t_page_cross_discard(void)
{
	static const unsigned int left[] = { 8, 12, 60, 116, 200 };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE_LENS(left); i++)
		cross_page(0, left[i], left[i] + 4 + (left[i] > 100 ? 4 : 0),
			   false);
	ktap_print("order 2: 40 bytes left");
	cross_page(2, 40, 44, false);
	ktap_print("old page partly consumed: the rest is copied");
	for (i = 0; i < ARRAY_SIZE_LENS(left); i++)
		cross_page(0, left[i], left[i] + 4 + (left[i] > 100 ? 4 : 0),
			   true);
}

static void t_page_cross_consume(void)
{
	static const unsigned int left[] = { 4, 8, 48 };
	struct rbn_buffer *b;
	unsigned int i, k;
	struct wlog l;
	struct rlog r;

	for (i = 0; i < ARRAY_SIZE_LENS(left); i++) {
		b = mkbuf(8, 0, false, 1);
		if (!b)
			return;
		wlog_init(&l, 4096);
		rlog_init(&r, 4096);
		mock_now = 1;
		fill_bytes(b, &l, DATA_BYTES(0) - left[i]);
		for (k = 0; k < 3; k++) {
			/* @left bytes left: this one goes to the next page */
			mock_now += 5;
			CHECK(wr_log(b, &l, len_for_size(left[i] + 4)) == 0,
			      "crossing write");
			fill_bytes(b, &l, DATA_BYTES(0) - 2 * left[i] - 4);
		}
		consume_all(b, 0, &l, &r);
		ktap_print("left %u, 3 crossings: %u written, %u consumed",
			   left[i], l.n, r.n);
		check_read(&l, &r, 0, "consume across pages");
		CHECK(r.lost == 0, "lost %lu", r.lost);
		wlog_free(&l);
		rlog_free(&r);
		rbn_free(b);
	}
}

/* ------------------------------------------------------------------ */
/* 4. Time extends                                                     */
/* ------------------------------------------------------------------ */

static void t_time_extend(void)
{
	static const u64 gaps[] = {
		(1ULL << 27) - 1, 1ULL << 27, 1, (1ULL << 27) + 1, 5,
		0xfffffffffULL, (1ULL << 40) + 3, 0, (1ULL << 58) + 12345,
		(1ULL << 27) - 1,
	};
	struct rbn_buffer *b = mkbuf(4, 0, false, 1);
	unsigned int i, j, nextend = 0, flags_bad = 0;
	struct rbn_cpu_stats st;
	struct rbn_event *ev;
	struct wlog l;
	struct rlog r;
	void *page;

	if (!b)
		return;
	wlog_init(&l, 64);
	rlog_init(&r, 64);
	mock_now = 1000;
	CHECK(wr_log(b, &l, 8) == 0, "first");
	for (i = 0; i < ARRAY_SIZE_LENS(gaps); i++) {
		bool ext = gaps[i] >> 27;

		mock_now += gaps[i];
		nextend += ext;
		ev = rbn_reserve(b, 8);
		if (!CHECK(ev, "reserve"))
			continue;
		if (!!(rbn_event_flags(b, ev) & RBN_EV_EXTEND) != ext)
			flags_bad++;
		make_payload(rbn_event_data(ev), 8, l.n);
		rbn_commit(b, ev);
		l.w[l.n] = (struct wrec){ l.n, 8, mock_now };
		l.n++;
	}
	CHECK(flags_bad == 0, "%u events with a wrong RBN_EV_EXTEND flag",
	      flags_bad);
	page = rbn_alloc_read_page(b, 0);
	if (CHECK(rbn_read_page(b, 0, &page, rbn_subbuf_size(b), false) > 0,
		  "read_page")) {
		decode_page(page, DATA_BYTES(0), &dp, true);
		CHECK(dp.n == l.n + nextend, "%u entries, %u events + %u extends",
		      dp.n, l.n, nextend);
		/* Walk entries alongside the gaps. */
		for (i = 1, j = 1; i < l.n && j < dp.n; i++, j++) {
			u64 gap = gaps[i - 1];

			if (gap >> 27) {
				CHECK(dp.e[j].type == RBN_TYPE_TIME_EXTEND &&
				      dp.e[j].stamp == gap,
				      "gap %" PRIu64 ": entry type %u value %" PRIu64,
				      gap, dp.e[j].type, dp.e[j].stamp);
				CHECK(dp.e[j].delta == (gap & RBN_TS_MASK) &&
				      dp.e[j].array0 == (u32)(gap >> 27),
				      "extend split %u / %u", dp.e[j].delta,
				      dp.e[j].array0);
				CHECK(rbn_event_time_delta(page_event(page, dp.e[j].off)) == gap,
				      "rbn_event_time_delta of the extend %" PRIu64,
				      rbn_event_time_delta(page_event(page, dp.e[j].off)));
				j++;
				CHECK(j < dp.n && dp.e[j].delta == 0,
				      "event after extend has delta %u",
				      j < dp.n ? dp.e[j].delta : 99);
			} else {
				CHECK(dp.e[j].type == 2 && dp.e[j].delta == gap,
				      "gap %" PRIu64 ": type %u delta %u", gap,
				      dp.e[j].type, dp.e[j].delta);
			}
			if (j < dp.n)
				CHECK(rbn_event_time_delta(page_event(page, dp.e[j].off)) ==
				      dp.e[j].delta,
				      "rbn_event_time_delta of event %u", i);
			if (j < dp.n)
				CHECK(dp.e[j].ts == l.w[i].ts,
				      "event %u ts %" PRIu64 " expected %" PRIu64,
				      i, dp.e[j].ts, l.w[i].ts);
		}
		ktap_print("%u gaps (2^27-1 .. 2^58+12345): %u extends, every ts exact",
			   (unsigned int)ARRAY_SIZE_LENS(gaps), nextend);
	}
	rbn_free_read_page(b, 0, page);
	st = get_stats(b, 0);
	ktap_print("stats: ts_extend %" PRIu64 " (expected %u)", st.ts_extend,
		   nextend);
	CHECK(st.ts_extend == nextend, "ts_extend %" PRIu64, st.ts_extend);

	/* The same through the consumer. */
	rbn_reset(b);
	l.n = 0;
	mock_now = 50;
	for (i = 0; i < ARRAY_SIZE_LENS(gaps); i++) {
		mock_now += gaps[i];
		wr_log(b, &l, 40);
	}
	consume_all(b, 0, &l, &r);
	check_read(&l, &r, 0, "extends via consume");
	wlog_free(&l);
	rlog_free(&r);
	rbn_free(b);
}

/* A big gap right when the page is full: the new page carries the time. */
static void t_time_extend_page_start(void)
{
	static const unsigned int left[] = { 4, 8, 12, 16, 20 };
	unsigned int i, k, nx;
	struct rbn_cpu_stats st;
	struct rbn_buffer *b;
	struct wlog l;
	struct rlog r;

	for (i = 0; i < ARRAY_SIZE_LENS(left); i++) {
		b = mkbuf(4, 0, false, 1);
		if (!b)
			return;
		wlog_init(&l, 4096);
		rlog_init(&r, 4096);
		mock_now = 1 << 20;
		fill_bytes(b, &l, DATA_BYTES(0) - left[i]);
		mock_now += 1ULL << 33;
		/* 12 bytes + an 8-byte extend: fits only when 20 are left. */
		CHECK(wr_log(b, &l, 8) == 0, "write after gap");
		mock_now += 3;
		wr_log(b, &l, 8);
		st = get_stats(b, 0);
		read_pages(b, 0, 0, &l, &r, false, true);
		check_read(&l, &r, 0, "extend at page start");
		/* The event after the gap, then one more (3 ticks later). */
		CHECK(r.pages == 2, "left %u: %u pages", left[i], r.pages);
		if (left[i] >= 20) {
			/* Both fit: extend + event end the first page. */
			CHECK(st.ts_extend == 1, "left %u: ts_extend %" PRIu64,
			      left[i], st.ts_extend);
			CHECK(dp.n == 1 && dp.time_stamp == l.w[l.n - 1].ts,
			      "left %u: second page %u entries", left[i], dp.n);
			ktap_print("left %u: extend + event fill the old page exactly; ts_extend %" PRIu64,
				   left[i], st.ts_extend);
			goto next;
		}
		/* dp holds the new page: the page stamp carries the time. */
		CHECK(dp.time_stamp == l.w[l.n - 2].ts,
		      "left %u: new page time_stamp %" PRIu64 " expected %"
		      PRIu64, left[i], dp.time_stamp, l.w[l.n - 2].ts);
		for (k = 0, nx = 0; k < dp.n; k++)
			nx += dp.e[k].type == RBN_TYPE_TIME_EXTEND;
		/* decode_page() checked that a leading extend is zero. */
		CHECK(nx == 0 || (nx == 1 && dp.e[0].type == RBN_TYPE_TIME_EXTEND),
		      "left %u: %u extends on the new page", left[i], nx);
		CHECK(st.ts_extend == nx, "left %u: ts_extend %" PRIu64
		      ", %u on the page", left[i], st.ts_extend, nx);
		ktap_print("left %u: new page starts with type %u (value %" PRIu64 "), time_stamp = event ts, %u extends",
			   left[i], dp.e[0].type, dp.e[0].stamp, nx);
next:
		wlog_free(&l);
		rlog_free(&r);
		rbn_free(b);
	}
}

/* ------------------------------------------------------------------ */
/* Nested writers injected by the test hook                            */
/* ------------------------------------------------------------------ */

struct nest {
	int label;		/* where to inject */
	int skip;		/* hook hits of @label to let pass first */
	int count;		/* nested events to write */
	int done;
	int busy;
	int ctx;		/* context level of the nested writer */
	unsigned int len;
	u64 ts;			/* clock for the nested event */
	u64 after;		/* clock when the nested writer returns */
	u32 seq;
	int ret;		/* of the nested rbn_write */
	unsigned int flags;	/* of the nested event */
	u64 ev_ts;		/* rbn_event_ts of the nested event */
	bool reserve;		/* use reserve/commit instead of write */
};

static void nest_hook(struct rbn_buffer *b, int cpu, int label, void *arg)
{
	struct nest *n = arg;
	int saved_ctx;

	(void)cpu;
	if (label != n->label || n->busy || n->done >= n->count)
		return;
	if (n->skip) {
		n->skip--;
		return;
	}
	n->busy = 1;
	saved_ctx = rbn_user_context;
	rbn_user_context = n->ctx;
	mock_now = n->ts;
	if (n->reserve) {
		struct rbn_event *ev = rbn_reserve(b, n->len);

		n->ret = ev ? 0 : -EBUSY;
		if (ev) {
			n->flags = rbn_event_flags(b, ev);
			n->ev_ts = rbn_event_ts(b, ev);
			make_payload(rbn_event_data(ev), n->len, n->seq);
			rbn_commit(b, ev);
		}
	} else {
		/* Not wbuf: the interrupted writer may not have copied yet. */
		static unsigned char nbuf[1 << 17];

		make_payload(nbuf, n->len, n->seq);
		n->ret = rbn_write(b, n->len, nbuf);
	}
	rbn_user_context = saved_ctx;
	mock_now = n->after;
	n->done++;
	n->busy = 0;
}

/* ------------------------------------------------------------------ */
/* 5. Absolute stamps                                                  */
/* ------------------------------------------------------------------ */

/*
 * prev event at @base, outer event started at @base + @d_outer, a nested
 * event at @base + @d_nest injected at label B, outer resumes at
 * @base + @d_after. Check the page and the consumer.
 */
static void abs_case(u64 base, u64 d_outer, u64 d_nest, u64 d_after)
{
	struct rbn_buffer *b = mkbuf(4, 0, false, 1);
	struct nest n = {
		.label = RBN_LABEL_B, .count = 1, .ctx = 1, .len = 24,
		.seq = 1, .reserve = true,
	};
	unsigned int flags = 0, i;
	struct rbn_cpu_stats st;
	struct rbn_event *ev;
	u64 outer_ts = 0, ts;
	unsigned long lost;
	void *page;
	int ret;

	if (!b)
		return;
	mock_now = base;
	CHECK(wr(b, 16, 0) == 0, "first event");
	n.ts = base + d_nest;
	n.after = base + d_after;
	mock_now = base + d_outer;
	rbn_test_set_hook(nest_hook, &n);
	ev = rbn_reserve(b, 32);
	rbn_test_set_hook(NULL, NULL);
	if (CHECK(ev, "outer reserve")) {
		outer_ts = rbn_event_ts(b, ev);
		flags = rbn_event_flags(b, ev);
		make_payload(rbn_event_data(ev), 32, 2);
		rbn_commit(b, ev);
	}
	CHECK(n.done == 1 && n.ret == 0, "nested write done %d ret %d",
	      n.done, n.ret);
	CHECK(n.flags & RBN_EV_ABSOLUTE, "nested flags 0x%x", n.flags);
	CHECK(n.ev_ts == base + d_nest, "nested rbn_event_ts %" PRIu64,
	      n.ev_ts);
	CHECK(flags & RBN_EV_SLOW, "outer flags 0x%x", flags);
	CHECK(!(flags & RBN_EV_ZERO_DELTA), "outer flags 0x%x", flags);
	CHECK(outer_ts == base + d_after, "outer rbn_event_ts %" PRIu64
	      ", expected %" PRIu64, outer_ts, base + d_after);
	ktap_print("base %#" PRIx64 ": nested flags 0x%x, outer flags 0x%x, outer ts +%" PRIu64,
		   base, n.flags, flags, outer_ts - base);

	st = get_stats(b, 0);
	CHECK(st.ts_abs == 1, "ts_abs %" PRIu64, st.ts_abs);
	CHECK(st.ts_slow == 1, "ts_slow %" PRIu64, st.ts_slow);
	CHECK(st.max_depth == 2, "max_depth %" PRIu64, st.max_depth);
	CHECK(st.written == 3, "written %" PRIu64, st.written);

	/* Peek the three events: first, nested, outer. */
	for (i = 0; i < 3; i++) {
		static const u32 seqs[] = { 0, 1, 2 };
		u64 exp = i == 0 ? base : i == 1 ? base + d_nest :
				   base + d_after;

		ev = rbn_peek(b, 0, &ts, &lost);
		if (!CHECK(ev, "peek %u", i))
			break;
		ev = rbn_consume(b, 0, &ts, &lost);
		CHECK(rd32(rbn_event_data(ev)) == seqs[i],
		      "event %u has seq %u", i, rd32(rbn_event_data(ev)));
		CHECK(ts == exp, "consume %u ts %#" PRIx64 " expected %#" PRIx64,
		      i, ts, exp);
	}
	CHECK(!rbn_consume(b, 0, &ts, &lost), "only 3 events");

	/* And by page, written again the same way. */
	rbn_reset(b);
	n.done = 0;
	mock_now = base;
	wr(b, 16, 0);
	mock_now = base + d_outer;
	rbn_test_set_hook(nest_hook, &n);
	ret = wr(b, 32, 2);
	rbn_test_set_hook(NULL, NULL);
	CHECK(ret == 0 && n.done == 1, "second round");
	page = rbn_alloc_read_page(b, 0);
	ret = rbn_read_page(b, 0, &page, rbn_subbuf_size(b), false);
	if (CHECK(ret > 0, "read_page %d", ret)) {
		u64 stored = (base + d_nest) & RBN_ABS_TS_MASK;
		u64 exp[3] = { base, base + d_nest, base + d_after };
		unsigned int i, k = 0, nabs = 0, iabs = 0;
		char types[64];
		int pos = 0;

		decode_page(page, DATA_BYTES(0), &dp, true);
		for (i = 0; i < dp.n; i++) {
			struct dent *e = &dp.e[i];

			pos += snprintf(types + pos, sizeof(types) - pos, "%s%u",
					i ? "," : "", e->type);
			if (pos >= (int)sizeof(types))
				pos = sizeof(types) - 1;
			if (e->type == RBN_TYPE_TIME_STAMP) {
				nabs++;
				iabs = i;
				continue;
			}
			if (e->type > RBN_TYPE_DATA_MAX)
				continue;
			if (CHECK(k < 3, "more than 3 events"))
				CHECK(e->ts == exp[k] &&
				      rd32(e->data) == (u32)k,
				      "event %u: seq %u ts %#" PRIx64
				      " expected %#" PRIx64, k, rd32(e->data),
				      e->ts, exp[k]);
			k++;
		}
		CHECK(k == 3, "%u events", k);
		/* data, absolute stamp, nested data (delta 0), outer data */
		CHECK(nabs == 1 && iabs == 1, "%u absolute stamps, at %u",
		      nabs, iabs);
		if (nabs == 1 && iabs == 1 && dp.n > 2) {
			CHECK(dp.e[1].stamp == stored,
			      "absolute value %#" PRIx64 ", expected %#" PRIx64,
			      dp.e[1].stamp, stored);
			CHECK(rbn_fix_abs_ts(dp.e[1].stamp, dp.e[0].ts) ==
			      base + d_nest,
			      "rbn_fix_abs_ts %#" PRIx64,
			      rbn_fix_abs_ts(dp.e[1].stamp, dp.e[0].ts));
			CHECK(dp.e[2].delta == 0 && dp.e[2].type &&
			      dp.e[2].type <= RBN_TYPE_DATA_MAX,
			      "nested event type %u delta %u", dp.e[2].type,
			      dp.e[2].delta);
		}
		ktap_print("page entries (type_len) %s; absolute value %#" PRIx64,
			   types, iabs ? dp.e[iabs].stamp : 0);
	}
	rbn_free_read_page(b, 0, page);
	rbn_free(b);
}

static void t_abs_nested(void)
{
	abs_case(4000, 1000, 1100, 1150);
	abs_case(4000, 1ULL << 30, (1ULL << 30) + 10, (1ULL << 30) + 20);
}

static void t_abs_59bit(void)
{
	abs_case((1ULL << 59) + 123, 1000, 1100, 1150);
	abs_case((1ULL << 59) - 50, 10, 80, 90);
	abs_case((1ULL << 63) - 500, 100, 200, 300);
	abs_case((1ULL << 63) - 10, 5, 30, 40);
	abs_case(~0ULL - (1ULL << 40), 7, 1ULL << 35, (1ULL << 35) + 1);
	CHECK(rbn_fix_abs_ts(20, (1ULL << 63) - 10) == (1ULL << 63) + 20,
	      "rbn_fix_abs_ts across 2^63");
	CHECK(rbn_fix_abs_ts(5, (1ULL << 59) + 3) == (1ULL << 59) + 5,
	      "rbn_fix_abs_ts same epoch");
}

/*
 * A clock that steps back: each event is read by consuming and from the
 * page, and must be at @exp[i] (the clock-back events at the time before
 * them, never 2^59 ns ahead); @cb[i] says which are flagged clock-back.
 */
static void clock_back_read(struct rbn_buffer *b, const u64 *exp,
			    const bool *cb, const unsigned int *flags,
			    unsigned int n)
{
	struct rbn_cpu_stats st;
	unsigned int i, k = 0, ncb = 0;
	void *page;
	int ret;

	for (i = 0; i < n; i++) {
		ncb += cb[i];
		CHECK(!!(flags[i] & RBN_EV_CLOCK_BACK) == cb[i],
		      "event %u flags 0x%x", i, flags[i]);
	}
	st = get_stats(b, 0);
	CHECK(st.ts_clock_back == ncb, "ts_clock_back %" PRIu64 ", expected %u",
	      st.ts_clock_back, ncb);
	page = rbn_alloc_read_page(b, 0);
	ret = rbn_read_page(b, 0, &page, rbn_subbuf_size(b), false);
	if (CHECK(ret > 0, "read_page %d", ret)) {
		decode_page(page, DATA_BYTES(0), &dp, true);
		for (i = 0; i < dp.n; i++) {
			struct dent *e = &dp.e[i];

			if (e->type > RBN_TYPE_DATA_MAX)
				continue;
			if (CHECK(k < n, "more than %u events", n))
				CHECK(e->ts == exp[k] && rd32(e->data) == k,
				      "page event %u: seq %u ts %" PRIu64
				      " expected %" PRIu64 " (%+" PRId64 ")", k,
				      rd32(e->data), e->ts, exp[k],
				      (int64_t)(e->ts - exp[k]));
			k++;
		}
		CHECK(k == n, "%u events on the page", k);
	}
	rbn_free_read_page(b, 0, page);
	ktap_print("%u events, %u clock-back, ts_clock_back %" PRIu64,
		   k, ncb, st.ts_clock_back);
}

/*
 * Reported case 1: the fast path's delta of a clock 1 ns behind the event
 * before it was stored unsigned, as a time extend of 2^59 - 1 ns.
 */
static void t_clock_back_fast(void)
{
	static const u64 base = 1ULL << 40;
	struct rbn_buffer *b = mkbuf(4, 0, false, 1);
	u64 exp[4] = { base, base, base + 5, base + 5 + (1ULL << 27) };
	bool cb[4] = { false, true, false, false };
	u64 clk[4] = { base, base - 1, base + 5, base + 5 + (1ULL << 27) };
	unsigned int flags[4], i;
	struct rbn_event *ev;
	u64 ts[4];

	if (!b)
		return;
	for (i = 0; i < 4; i++) {
		mock_now = clk[i];
		ev = rbn_reserve(b, 24);
		if (!CHECK(ev, "reserve %u", i))
			break;
		flags[i] = rbn_event_flags(b, ev);
		ts[i] = rbn_event_ts(b, ev);
		make_payload(rbn_event_data(ev), 24, i);
		rbn_commit(b, ev);
		CHECK(ts[i] == clk[i], "rbn_event_ts %u: %" PRIu64, i, ts[i]);
	}
	if (i == 4)
		clock_back_read(b, exp, cb, flags, 4);
	/* The same, consumed: the core's reader rebuilds the same times. */
	rbn_reset(b);
	for (i = 0; i < 4; i++) {
		mock_now = clk[i];
		wr(b, 24, i);
	}
	for (i = 0; i < 4; i++) {
		u64 t = 0;

		ev = rbn_consume(b, 0, &t, NULL);
		if (!CHECK(ev, "consume %u", i))
			break;
		CHECK(t == exp[i], "consume %u: %" PRIu64 " expected %" PRIu64
		      " (%+" PRId64 ")", i, t, exp[i], (int64_t)(t - exp[i]));
	}
	rbn_free(b);
}

/*
 * Reported case 2: an NMI whose clock reads behind the event it
 * interrupted (between that event's reserve and D) is forced absolute;
 * its stamp below the previous time was read back 2^59 ns ahead.
 */
static void t_clock_back_nmi(void)
{
	static const u64 base = 1ULL << 40;
	struct rbn_buffer *b = mkbuf(4, 0, false, 1);
	struct nest n = {
		.label = RBN_LABEL_C, .count = 1, .ctx = 3, .len = 24,
		.seq = 2, .reserve = true,
	};
	/* first event, the interrupted one, the NMI's, a later one */
	u64 exp[4] = { base, base + 1000, base + 1000, base + 1100 };
	bool cb[4] = { false, false, true, false };
	unsigned int flags[4] = { 0 };
	struct rbn_event *ev;

	if (!b)
		return;
	mock_now = base;
	CHECK(wr(b, 24, 0) == 0, "first event");
	n.ts = base + 990;
	n.after = base + 1000;
	mock_now = base + 1000;
	rbn_test_set_hook(nest_hook, &n);
	ev = rbn_reserve(b, 24);
	rbn_test_set_hook(NULL, NULL);
	if (CHECK(ev, "outer reserve")) {
		flags[1] = rbn_event_flags(b, ev);
		make_payload(rbn_event_data(ev), 24, 1);
		rbn_commit(b, ev);
	}
	CHECK(n.done == 1 && n.ret == 0, "NMI write done %d ret %d", n.done,
	      n.ret);
	flags[2] = n.flags;
	CHECK(n.flags & RBN_EV_ABSOLUTE, "NMI flags 0x%x", n.flags);
	CHECK(n.ev_ts == base + 990, "NMI rbn_event_ts %" PRIu64, n.ev_ts);
	mock_now = base + 1100;
	ev = rbn_reserve(b, 24);
	if (CHECK(ev, "later reserve")) {
		flags[3] = rbn_event_flags(b, ev);
		make_payload(rbn_event_data(ev), 24, 3);
		rbn_commit(b, ev);
	}
	clock_back_read(b, exp, cb, flags, 4);
	rbn_free(b);

	/* The carry is for a wrap only: a stamp a little behind stays so. */
	CHECK(rbn_fix_abs_ts((base - 5) & RBN_ABS_TS_MASK, base) == base - 5,
	      "rbn_fix_abs_ts 5 back: %#" PRIx64,
	      rbn_fix_abs_ts((base - 5) & RBN_ABS_TS_MASK, base));
	CHECK(rbn_fix_abs_ts(((1ULL << 59) - 5) & RBN_ABS_TS_MASK,
			     (1ULL << 59) + 3) == (1ULL << 59) - 5,
	      "rbn_fix_abs_ts 8 back across 2^59: %#" PRIx64,
	      rbn_fix_abs_ts(((1ULL << 59) - 5) & RBN_ABS_TS_MASK,
			     (1ULL << 59) + 3));
	CHECK(rbn_fix_abs_ts(3, (1ULL << 59) - 5) == (1ULL << 59) + 3,
	      "rbn_fix_abs_ts wrap: %#" PRIx64,
	      rbn_fix_abs_ts(3, (1ULL << 59) - 5));
}

/* Plain writes with clock values >= 2^59: page stamps and extends. */
static void t_big_clock(void)
{
	static const u64 starts[] = {
		1ULL << 59, (1ULL << 59) + 123, (1ULL << 63) + 77,
		~0ULL - (1ULL << 45),
	};
	struct rbn_buffer *b = mkbuf(4, 0, false, 1);
	struct wlog l;
	struct rlog r, r2;
	unsigned int i;

	if (!b)
		return;
	for (i = 0; i < ARRAY_SIZE_LENS(starts); i++) {
		wlog_init(&l, 4096);
		rlog_init(&r, 4096);
		rlog_init(&r2, 4096);
		mock_now = starts[i];
		wr_log(b, &l, 8);
		mock_now += 5;
		wr_log(b, &l, 8);
		mock_now += 1ULL << 30;
		wr_log(b, &l, 8);
		fill_bytes(b, &l, 3 * DATA_BYTES(0) / 2 & ~3U);
		consume_all(b, 0, &l, &r);
		check_read(&l, &r, 0, "big clock consume");
		rbn_reset(b);
		l.n = 0;
		mock_now = starts[i];
		wr_log(b, &l, 8);
		mock_now += 1ULL << 30;
		wr_log(b, &l, 8);
		fill_bytes(b, &l, 3 * DATA_BYTES(0) / 2 & ~3U);
		read_pages(b, 0, 0, &l, &r2, false, true);
		check_read(&l, &r2, 0, "big clock pages");
		ktap_print("start %#" PRIx64 ": %u consumed, %u read in %u pages, exact",
			   starts[i], r.n, r2.n, r2.pages);
		rbn_reset(b);
		wlog_free(&l);
		rlog_free(&r);
		rlog_free(&r2);
	}
	rbn_free(b);
}

/* ------------------------------------------------------------------ */
/* 6. Large events and size limits                                     */
/* ------------------------------------------------------------------ */

static void large_events(unsigned int order)
{
	struct rbn_buffer *b = mkbuf(4, order, false, 1);
	struct nest n = {
		.label = RBN_LABEL_B, .count = 1, .ctx = 1, .seq = 2,
	};
	unsigned int max, data_bytes = DATA_BYTES(order);
	struct rbn_cpu_stats st;
	struct wlog l;
	struct rlog r;
	int ret;

	if (!b)
		return;
	wlog_init(&l, 16);
	rlog_init(&r, 16);
	max = rbn_max_event_size(b);
	ktap_print("order %u: subbuf %u bytes, rbn_subbuf_size %u, max event %u",
		   order, (unsigned int)SUBBUF_BYTES(order), rbn_subbuf_size(b),
		   max);
	CHECK(rbn_subbuf_size(b) == SUBBUF_BYTES(order), "rbn_subbuf_size %u",
	      rbn_subbuf_size(b));
	/* The largest event must fit with a time stamp in front of it. */
	CHECK(ALIGN(max, 4) + 8 + 8 <= data_bytes,
	      "max %u + header + stamp > %u", max, data_bytes);
	CHECK(ALIGN(max + 1, 4) + 8 + 8 > data_bytes || (max & 3),
	      "max %u is smaller than needed", max);

	mock_now = 100;
	CHECK(wr_log(b, &l, max) == 0, "max event");
	mock_now += 1ULL << 32;		/* needs a time extend */
	CHECK(wr_log(b, &l, max) == 0, "max event after a big gap");
	mock_now += 5;
	/* A max event nested with an absolute stamp. */
	n.len = max;
	n.ts = mock_now + 10;
	n.after = mock_now + 20;
	rbn_test_set_hook(nest_hook, &n);
	mock_now += 1;
	ret = wr(b, 8, 3);
	rbn_test_set_hook(NULL, NULL);
	CHECK(ret == 0 && n.ret == 0 && n.done == 1,
	      "outer %d nested %d done %d", ret, n.ret, n.done);
	l.w[l.n++] = (struct wrec){ 2, max, n.ts };
	l.w[l.n++] = (struct wrec){ 3, 8, n.after };

	CHECK(rbn_reserve(b, max + 1) == NULL, "reserve(max + 1)");
	CHECK(rbn_write(b, max + 1, wbuf) == -EINVAL, "write(max + 1)");
	CHECK(rbn_reserve(b, 0) == NULL, "reserve(0)");
	CHECK(rbn_write(b, 0, wbuf) == -EINVAL, "write(0)");
	CHECK(rbn_reserve(b, ~0U) == NULL, "reserve(~0U)");
	st = get_stats(b, 0);
	ktap_print("4 max events written; max+1, 0, ~0 refused: dropped %" PRIu64,
		   st.dropped);
	CHECK(st.dropped == 5, "dropped %" PRIu64, st.dropped);
	CHECK(st.written == 4, "written %" PRIu64, st.written);
	read_pages(b, 0, order, &l, &r, false, true);
	check_read(&l, &r, 0, "max events");
	CHECK(rbn_user_warnings == 0, "warnings %lu", rbn_user_warnings);
	wlog_free(&l);
	rlog_free(&r);
	rbn_free(b);
}

static void t_large_order0(void)
{
	large_events(0);
}

static void t_large_order2(void)
{
	large_events(2);
}

/* ------------------------------------------------------------------ */
/* 7. Producer/consumer mode                                           */
/* ------------------------------------------------------------------ */

static void t_producer_consumer(void)
{
	struct rbn_buffer *b = mkbuf(4, 0, false, 1);
	unsigned int i, nfail = 0, first_n, bytes;
	struct rbn_cpu_stats st;
	struct wlog l;
	struct rlog r;

	if (!b)
		return;
	wlog_init(&l, 8192);
	rlog_init(&r, 8192);
	mock_now = 10;
	while (l.n < l.max) {
		mock_now += 3;
		if (wr_log(b, &l, 20 + (l.n % 5) * 4))
			break;
	}
	first_n = l.n;
	for (i = 0; i < 10; i++) {
		mock_now += 3;
		nfail += wr_log(b, &l, 8) != 0;
	}
	st = get_stats(b, 0);
	ktap_print("%u subbufs: %u events written before full, 11 refused; dropped %" PRIu64 " entries %" PRIu64,
		   (unsigned int)rbn_nr_subbufs(b), first_n, st.dropped,
		   st.entries);
	CHECK(nfail == 10 && l.n == first_n, "writes after full: %u failed",
	      nfail);
	CHECK(st.dropped == 11, "dropped %" PRIu64, st.dropped);
	CHECK(st.written == l.n, "written %" PRIu64 " vs %u", st.written, l.n);
	CHECK(st.entries == l.n, "entries %" PRIu64, st.entries);
	CHECK(st.overrun == 0, "overrun %" PRIu64, st.overrun);
	for (i = 0, bytes = 0; i < first_n; i++)
		bytes += ev_size(l.w[i].len);
	ktap_print("%u bytes of events in %lu subbufs of %lu data bytes",
		   bytes, rbn_nr_subbufs(b), DATA_BYTES(0));
	CHECK(bytes >= (rbn_nr_subbufs(b) - 1) * (DATA_BYTES(0) - 40),
	      "only %u bytes fit", bytes);
	CHECK(bytes <= rbn_nr_subbufs(b) * DATA_BYTES(0),
	      "%u bytes fit", bytes);
	consume_all(b, 0, &l, &r);
	check_read(&l, &r, 0, "producer/consumer");
	st = get_stats(b, 0);
	CHECK(st.read == r.n && st.written == st.read + st.overrun,
	      "read %" PRIu64 " written %" PRIu64, st.read, st.written);
	CHECK(st.entries == 0, "entries %" PRIu64, st.entries);
	CHECK(r.lost == 0, "lost %lu", r.lost);

	/* Room again: fill once more, read by pages this time. */
	rlog_free(&r);
	rlog_init(&r, 8192);
	first_n = l.n;
	while (l.n < l.max) {
		mock_now += 3;
		if (wr_log(b, &l, 20))
			break;
	}
	ktap_print("after reading: %u more events fit", l.n - first_n);
	CHECK(l.n - first_n >= 2 * DATA_BYTES(0) / 24, "%u", l.n - first_n);
	read_pages(b, 0, 0, &l, &r, false, true);
	check_read(&l, &r, first_n, "producer/consumer pages");
	st = get_stats(b, 0);
	CHECK(st.written == l.n && st.read == l.n && st.dropped == 12,
	      "written %" PRIu64 " read %" PRIu64 " dropped %" PRIu64,
	      st.written, st.read, st.dropped);
	wlog_free(&l);
	rlog_free(&r);
	rbn_free(b);
}

/* ------------------------------------------------------------------ */
/* 8. Overwrite mode                                                   */
/* ------------------------------------------------------------------ */

/*
 * @exact: events that fill a page to the last byte, so that a page handed
 * over has no room for the missed count (RBN_MISSED_EVENTS alone).
 */
static void overwrite_case(bool by_page, unsigned int order, bool exact)
{
	struct rbn_buffer *b = mkbuf(4, order, true, 1);
	unsigned int cap, i, len = 20, first;
	struct rbn_cpu_stats st;
	u64 overrun0;
	struct wlog l;
	struct rlog r;

	if (!b)
		return;
	/* Leave room at the end of each page for the stored missed count. */
	while (exact ? DATA_BYTES(order) % ev_size(len) :
		       DATA_BYTES(order) % ev_size(len) < 8)
		len += 4;
	cap = rbn_nr_subbufs(b) * DATA_BYTES(order) / ev_size(len);
	wlog_init(&l, cap * 13 + 16);
	rlog_init(&r, cap * 13 + 16);
	mock_now = 1000;
	for (i = 0; i < cap * 10; i++) {
		mock_now += 2 + (i % 3);
		CHECK_Q(wr_log(b, &l, len) == 0, "overwrite write %u", i);
	}
	st = get_stats(b, 0);
	ktap_print("%s, order %u: %u events of %u bytes written (10x capacity), overrun %" PRIu64 ", entries %" PRIu64,
		   by_page ? "pages" : "consume", order, l.n, ev_size(len),
		   st.overrun, st.entries);
	CHECK(st.written == l.n, "written %" PRIu64, st.written);
	CHECK(st.dropped == 0, "dropped %" PRIu64, st.dropped);
	CHECK(st.overrun + st.entries == l.n, "overrun %" PRIu64
	      " + entries %" PRIu64 " != %u", st.overrun, st.entries, l.n);
	if (by_page) {
		read_pages(b, 0, order, &l, &r, false, true);
		ktap_print("%u pages, %lu with RBN_MISSED_EVENTS, stored count %lu",
			   r.pages, r.missed_flags, r.missed_stored);
		CHECK(r.missed_flags == 1, "%lu pages flagged", r.missed_flags);
		CHECK(r.missed_stored_pages == !exact,
		      "%lu pages with a stored count", r.missed_stored_pages);
		if (!exact)
			CHECK(r.missed_stored == st.overrun,
			      "stored %lu != overrun %" PRIu64,
			      r.missed_stored, st.overrun);
	} else {
		consume_all(b, 0, &l, &r);
		ktap_print("consumed %u, lost reported %lu (first read %lu)",
			   r.n, r.lost, r.n ? r.r[0].lost : 0);
		CHECK(r.n && r.r[0].lost == st.overrun,
		      "first read lost %lu != overrun %" PRIu64,
		      r.n ? r.r[0].lost : 0, st.overrun);
		CHECK(r.lost == st.overrun, "total lost %lu", r.lost);
	}
	check_read(&l, &r, l.n - r.n, "overwrite");
	CHECK(r.n && r.r[0].seq == st.overrun, "first seq %u, overrun %" PRIu64,
	      r.n ? r.r[0].seq : 0, st.overrun);
	CHECK(st.overrun + r.n == l.n, "overrun %" PRIu64 " + read %u != %u",
	      st.overrun, r.n, l.n);
	st = get_stats(b, 0);
	CHECK(st.read == r.n && st.entries == 0, "read %" PRIu64
	      " entries %" PRIu64, st.read, st.entries);
	CHECK(st.written == st.read + st.overrun, "written %" PRIu64,
	      st.written);

	/*
	 * Everything read; overwrite again. The writer is on the reader
	 * page now: what it wrote there stays, the ring wraps behind it, so
	 * readers see a gap reported as lost in the middle.
	 */
	overrun0 = st.overrun;
	first = l.n;
	rlog_free(&r);
	rlog_init(&r, cap * 13 + 16);
	for (i = 0; i < cap * 3; i++) {
		mock_now += 2;
		CHECK_Q(wr_log(b, &l, len) == 0, "second round write %u", i);
	}
	if (by_page)
		read_pages(b, 0, order, &l, &r, false, true);
	else
		consume_all(b, 0, &l, &r);
	st = get_stats(b, 0);
	CHECK(st.written == st.read + st.overrun && st.written == l.n,
	      "second round: written %" PRIu64 " read %" PRIu64 " overrun %"
	      PRIu64, st.written, st.read, st.overrun);
	check_read_gaps(&l, &r, first, "overwrite again");
	CHECK(r.lost == st.overrun - overrun0 || (exact && by_page),
	      "second round: lost reported %lu, overrun grew by %" PRIu64,
	      r.lost, st.overrun - overrun0);
	ktap_print("second round: %u more written, %u read, lost %lu, overrun +%" PRIu64,
		   cap * 3, r.n, r.lost, st.overrun - overrun0);
	wlog_free(&l);
	rlog_free(&r);
	rbn_free(b);
}

static void t_overwrite_consume(void)
{
	overwrite_case(false, 0, false);
	overwrite_case(false, 1, false);
}

static void t_overwrite_pages(void)
{
	overwrite_case(true, 0, false);
	overwrite_case(true, 1, false);
	ktap_print("pages filled exactly: no room for the count");
	overwrite_case(true, 0, true);
}

/*
 * Nested writers that wrap the whole ring while the outer writer has not
 * committed: they may not lap the commit page; their events are refused
 * and counted as commit_overrun, and nothing already reserved is lost.
 */
struct flood {
	struct wlog *l;
	int busy, done;
	unsigned int tries, ok, refused;
};

static void flood_hook(struct rbn_buffer *b, int cpu, int label, void *arg)
{
	static unsigned char fbuf[64];
	struct flood *f = arg;
	unsigned int i;

	(void)cpu;
	if (label != RBN_LABEL_C || f->busy || f->done)
		return;
	f->busy = 1;
	rbn_user_context = 2;
	for (i = 0; i < f->tries; i++) {
		struct wlog *l = f->l;
		u32 seq = l->n;

		mock_now += 5;
		make_payload(fbuf, 40, seq);
		if (rbn_write(b, 40, fbuf) == 0) {
			l->w[l->n++] = (struct wrec){ seq, 40, mock_now };
			f->ok++;
		} else {
			f->refused++;
		}
	}
	rbn_user_context = 0;
	f->done = 1;
	f->busy = 0;
}

/*
 * @round 0: the commit page is in the ring. @round 1: everything was read
 * before, so the writer and its commit are on the reader page.
 */
static void commit_overrun_round(struct rbn_buffer *b, int round)
{
	struct flood f = { .tries = 600 };
	struct rbn_cpu_stats st0, st;
	struct rbn_event *ev;
	unsigned int outer, i, bad = 0, n_in;
	struct wlog l;
	struct rlog r;
	u64 outer_ts = 0, start;

	if (round) {
		/*
		 * Write until the writer enters a new sub-buffer, then read
		 * everything: the reader takes that sub-buffer, and the
		 * writer and its commit stay on it.
		 */
		wlog_init(&l, 1024);
		rlog_init(&r, 1024);
		st0 = get_stats(b, 0);
		do {
			mock_now += 3;
			CHECK_Q(wr_log(b, &l, 40) == 0, "pre-write");
			st = get_stats(b, 0);
		} while (st.pages_touched == st0.pages_touched && l.n < l.max);
		read_pages(b, 0, 0, &l, &r, false, true);
		check_read(&l, &r, 0, "before the flood");
		wlog_free(&l);
		rlog_free(&r);
	}
	wlog_init(&l, 1024);
	rlog_init(&r, 1024);
	f.l = &l;
	st0 = get_stats(b, 0);
	mock_now += 100;
	fill_bytes(b, &l, 400);
	mock_now += 7;
	start = mock_now;
	outer = l.n++;
	rbn_test_set_hook(flood_hook, &f);
	ev = rbn_reserve(b, 24);
	rbn_test_set_hook(NULL, NULL);
	if (CHECK(ev, "outer reserve")) {
		outer_ts = rbn_event_ts(b, ev);
		make_payload(rbn_event_data(ev), 24, outer);
		rbn_commit(b, ev);
	}
	l.w[outer] = (struct wrec){ outer, 24, outer_ts };
	CHECK(outer_ts == start, "outer ts %" PRIu64 ", clock was %" PRIu64,
	      outer_ts, start);
	st = get_stats(b, 0);
	n_in = st.written - st0.written;
	ktap_print("%s: outer reserved, %u nested writes of 44 bytes: %u in, %u refused; commit_overrun +%" PRIu64 " overrun +%" PRIu64 " dropped %" PRIu64,
		   round ? "commit on the reader page" : "commit in the ring",
		   f.tries, f.ok, f.refused,
		   st.commit_overrun - st0.commit_overrun,
		   st.overrun - st0.overrun, st.dropped);
	CHECK(f.refused > 0 && f.ok > 0, "the ring did not wrap");
	CHECK(st.commit_overrun - st0.commit_overrun == f.refused,
	      "commit_overrun +%" PRIu64 ", %u refused",
	      st.commit_overrun - st0.commit_overrun, f.refused);
	CHECK(st.overrun == st0.overrun && st.dropped == 0,
	      "overrun +%" PRIu64 " dropped %" PRIu64,
	      st.overrun - st0.overrun, st.dropped);
	CHECK(n_in == l.n, "written +%u, %u went in", n_in, l.n);
	/* The outer event sits in front of every nested one. */
	read_pages(b, 0, 0, &l, &r, false, true);
	CHECK(r.n == l.n && r.lost == 0, "read %u of %u, lost %lu", r.n, l.n,
	      r.lost);
	for (i = 0; i < r.n && i < l.n; i++)
		bad += r.r[i].seq != i || r.r[i].ts != l.w[i].ts ||
		       !r.r[i].data_ok;
	CHECK(!bad, "%u events read wrong", bad);
	if (r.n > outer)
		CHECK(r.r[outer].seq == outer && r.r[outer].ts == outer_ts,
		      "outer read as seq %u ts %" PRIu64, r.r[outer].seq,
		      r.r[outer].ts);
	st = get_stats(b, 0);
	CHECK(st.written == st.read + st.overrun + st.entries && !st.entries,
	      "written %" PRIu64 " read %" PRIu64 " entries %" PRIu64,
	      st.written, st.read, st.entries);
	wlog_free(&l);
	rlog_free(&r);
}

static void t_commit_overrun(void)
{
	struct rbn_buffer *b = mkbuf(4, 0, true, 1);

	if (!b)
		return;
	mock_now = 0;
	commit_overrun_round(b, 0);
	commit_overrun_round(b, 1);
	CHECK(rbn_user_warnings == 0, "warnings %lu", rbn_user_warnings);
	rbn_free(b);
}

/* ------------------------------------------------------------------ */
/* 9. Resize                                                           */
/* ------------------------------------------------------------------ */

static void t_resize_grow(void)
{
	struct rbn_buffer *b = mkbuf(4, 0, false, 1);
	unsigned long size0, n0;
	unsigned int first;
	struct wlog l;
	struct rlog r;
	int ret;

	if (!b)
		return;
	wlog_init(&l, 16384);
	rlog_init(&r, 16384);
	size0 = rbn_size(b);
	n0 = rbn_nr_subbufs(b);
	CHECK(n0 == 4, "nr_subbufs %lu", n0);
	mock_now = 10;
	fill_bytes(b, &l, 2 * DATA_BYTES(0) + 400);
	ret = rbn_resize(b, 8 * DATA_BYTES(0));
	ktap_print("grow 4 -> 8 with %u events in: %d, size %lu -> %lu, subbufs %lu -> %lu",
		   l.n, ret, size0, rbn_size(b), n0, rbn_nr_subbufs(b));
	CHECK(ret == 0, "resize %d", ret);
	CHECK(rbn_nr_subbufs(b) == 8, "nr_subbufs %lu", rbn_nr_subbufs(b));
	CHECK(rbn_size(b) == 2 * size0, "size %lu", rbn_size(b));
	/* Keep writing: the new room is usable. */
	first = l.n;
	while (l.n < l.max) {
		mock_now += 3;
		if (wr_log(b, &l, 20))
			break;
	}
	ktap_print("then %u more events fit", l.n - first);
	CHECK((l.n - first) * 24 >= 5 * DATA_BYTES(0), "only %u", l.n - first);
	consume_all(b, 0, &l, &r);
	check_read(&l, &r, 0, "grow");
	CHECK(rbn_user_warnings == 0, "warnings");
	wlog_free(&l);
	rlog_free(&r);
	rbn_free(b);
}

static void t_resize_shrink(void)
{
	struct rbn_buffer *b = mkbuf(8, 0, false, 1);
	struct rbn_event *ev;
	unsigned long lost, s8;
	struct wlog l;
	struct rlog r;
	int ret, k;
	u64 ts;

	if (!b)
		return;
	s8 = rbn_size(b);
	wlog_init(&l, 16384);
	rlog_init(&r, 16384);
	mock_now = 10;
	fill_bytes(b, &l, DATA_BYTES(0) + 200);
	ret = rbn_resize(b, 3 * DATA_BYTES(0));
	ktap_print("shrink 8 -> 3 with %u events (2 pages) in: %d, subbufs %lu",
		   l.n, ret, rbn_nr_subbufs(b));
	CHECK(ret == 0, "resize %d", ret);
	CHECK(rbn_nr_subbufs(b) == 3, "nr_subbufs %lu", rbn_nr_subbufs(b));
	CHECK(rbn_size(b) * 8 == s8 * 3, "size %lu, %lu with 8", rbn_size(b),
	      s8);
	consume_all(b, 0, &l, &r);
	check_read(&l, &r, 0, "shrink");
	/* Writes still work and fill exactly the smaller ring. */
	k = 0;
	while (l.n < l.max) {
		mock_now += 3;
		if (wr_log(b, &l, 20))
			break;
		k++;
	}
	/* The ring, plus the reader page when the writer is on it. */
	ktap_print("after shrink %d events of 24 bytes fit", k);
	CHECK(k * 24 <= 4 * (int)DATA_BYTES(0) &&
	      k * 24 >= 2 * (int)DATA_BYTES(0),
	      "%d events fit in 3 subbufs", k);
	rlog_free(&r);
	rlog_init(&r, 16384);
	consume_all(b, 0, &l, &r);
	check_read(&l, &r, l.n - k, "after shrink");

	/* Shrink from a partly read position (reader page holds data). */
	rbn_resize(b, 8 * DATA_BYTES(0));
	l.n = 0;
	rlog_free(&r);
	rlog_init(&r, 16384);
	fill_bytes(b, &l, 2 * DATA_BYTES(0));
	ev = rbn_consume(b, 0, &ts, &lost);
	CHECK(ev && ts == l.w[0].ts, "consume one");
	ret = rbn_resize(b, 4 * DATA_BYTES(0));
	CHECK(ret == 0 || ret == -EBUSY, "resize %d", ret);
	ktap_print("shrink 8 -> 4 after reading 1 of %u: %d, subbufs %lu", l.n,
		   ret, rbn_nr_subbufs(b));
	consume_all(b, 0, &l, &r);
	check_read(&l, &r, 1, "shrink after a read");
	wlog_free(&l);
	rlog_free(&r);
	rbn_free(b);
}

static void t_resize_busy_invalid(void)
{
	struct rbn_buffer *b = mkbuf(8, 0, false, 1);
	unsigned long n0, s0;
	struct wlog l;
	struct rlog r;
	int ret;

	if (!b)
		return;
	wlog_init(&l, 16384);
	rlog_init(&r, 16384);
	mock_now = 10;
	fill_bytes(b, &l, 6 * DATA_BYTES(0));
	n0 = rbn_nr_subbufs(b);
	s0 = rbn_size(b);
	ret = rbn_resize(b, 2 * DATA_BYTES(0));
	ktap_print("shrink 8 -> 2 with 6 pages unread: %d", ret);
	CHECK(ret == -EBUSY, "resize %d", ret);
	CHECK(rbn_nr_subbufs(b) == n0 && rbn_size(b) == s0,
	      "subbufs %lu size %lu", rbn_nr_subbufs(b), rbn_size(b));
	ret = rbn_resize(b, 0);
	ktap_print("resize to 0: %d", ret);
	CHECK(ret == -EINVAL, "resize(0) %d", ret);
	CHECK(rbn_nr_subbufs(b) == n0, "subbufs %lu", rbn_nr_subbufs(b));
	/* A size that cannot be rounded up to whole sub-buffers. */
	ret = rbn_resize(b, ULONG_MAX);
	ktap_print("resize to ULONG_MAX bytes: %d, subbufs %lu", ret,
		   rbn_nr_subbufs(b));
	CHECK(ret == -EINVAL, "resize(ULONG_MAX) %d", ret);
	CHECK(rbn_nr_subbufs(b) == n0, "subbufs %lu", rbn_nr_subbufs(b));
	ret = rbn_resize(b, 8 * DATA_BYTES(0));
	CHECK(ret == 0, "resize to the same size %d", ret);
	/* Data intact, and writing works. */
	mock_now += 5;
	CHECK(wr_log(b, &l, 40) == 0, "write after failed resizes");
	consume_all(b, 0, &l, &r);
	check_read(&l, &r, 0, "after -EBUSY");
	/* A tiny size still gives the minimum of 2 sub-buffers. */
	ret = rbn_resize(b, 1);
	ktap_print("resize to 1 byte when empty: %d, subbufs %lu", ret,
		   rbn_nr_subbufs(b));
	CHECK(ret == 0 && rbn_nr_subbufs(b) == 2, "%d %lu", ret,
	      rbn_nr_subbufs(b));
	mock_now += 5;
	CHECK(wr_log(b, &l, 40) == 0, "write after shrinking to 2");
	rlog_free(&r);
	rlog_init(&r, 16);
	consume_all(b, 0, &l, &r);
	check_read(&l, &r, l.n - 1, "after shrink to 2");
	wlog_free(&l);
	rlog_free(&r);
	rbn_free(b);
}

/* ------------------------------------------------------------------ */
/* 10. Reset                                                           */
/* ------------------------------------------------------------------ */

static bool stats_zero(const struct rbn_cpu_stats *st)
{
	return !st->entries && !st->written && !st->overrun &&
	       !st->commit_overrun && !st->dropped && !st->read &&
	       !st->bytes && !st->ts_fast && !st->ts_abs && !st->ts_slow &&
	       !st->ts_zero && !st->ts_extend && !st->recursion;
}

static void t_reset(void)
{
	struct rbn_buffer *b = mkbuf(4, 0, false, 2);
	struct rbn_cpu_stats st;
	struct wlog l;
	struct rlog r;
	void *page;
	u64 ts;
	unsigned long lost;

	if (!b)
		return;
	wlog_init(&l, 8192);
	rlog_init(&r, 8192);
	mock_now = 1000;
	fill_bytes(b, &l, 2 * DATA_BYTES(0) + 100);
	mock_now += 1ULL << 30;
	wr_log(b, &l, 8);
	while (!wr_log(b, &l, 60))
		;
	rbn_consume(b, 0, &ts, &lost);
	rbn_reset(b);
	st = get_stats(b, 0);
	ktap_print("reset after %u writes: entries %" PRIu64 " written %" PRIu64
		   " dropped %" PRIu64 " read %" PRIu64 " bytes %" PRIu64,
		   l.n, st.entries, st.written, st.dropped, st.read, st.bytes);
	CHECK(stats_zero(&st), "stats not reset");
	CHECK(rbn_empty_cpu(b, 0), "not empty");
	CHECK(!rbn_consume(b, 0, &ts, &lost), "consume after reset");
	page = rbn_alloc_read_page(b, 0);
	CHECK(rbn_read_page(b, 0, &page, rbn_subbuf_size(b), false) == -EAGAIN,
	      "read_page after reset");
	rbn_free_read_page(b, 0, page);
	/* Writing works, first event starts a page. */
	l.n = 0;
	mock_now = 3;	/* the clock may even go back across a reset */
	CHECK(wr_log(b, &l, 12) == 0, "write after reset");
	mock_now += 4;
	wr_log(b, &l, 12);
	read_pages(b, 0, 0, &l, &r, false, true);
	check_read(&l, &r, 0, "after reset");
	CHECK(r.pages == 1 && dp.time_stamp == 3, "page time_stamp %" PRIu64,
	      dp.time_stamp);
	st = get_stats(b, 0);
	CHECK(st.written == 2 && st.read == 2 && st.entries == 0,
	      "written %" PRIu64 " read %" PRIu64, st.written, st.read);
	wlog_free(&l);
	rlog_free(&r);
	rbn_free(b);
}

static void t_reset_cpu(void)
{
	struct rbn_buffer *b = mkbuf(4, 0, false, 3);
	struct rbn_cpu_stats st0, st1, st2;
	struct wlog l0, l1, l2;
	struct rlog r0, r1, r2;
	int k;

	if (!b)
		return;
	wlog_init(&l0, 4096);
	wlog_init(&l1, 4096);
	wlog_init(&l2, 4096);
	rlog_init(&r0, 4096);
	rlog_init(&r1, 4096);
	rlog_init(&r2, 4096);
	mock_now = 100;
	for (k = 0; k < 50; k++) {
		mock_now += 3;
		rbn_user_cpu = 0;
		wr_log(b, &l0, 16);
		rbn_user_cpu = 1;
		wr_log(b, &l1, 24);
		rbn_user_cpu = 2;
		wr_log(b, &l2, 32);
	}
	rbn_user_cpu = 0;
	rbn_reset_cpu(b, 3);	/* no such CPU: nothing happens */
	rbn_reset_cpu(b, -1);
	rbn_reset_cpu(b, 1);
	st0 = get_stats(b, 0);
	st1 = get_stats(b, 1);
	st2 = get_stats(b, 2);
	ktap_print("reset cpu 1 of 3: entries %" PRIu64 "/%" PRIu64 "/%" PRIu64,
		   st0.entries, st1.entries, st2.entries);
	CHECK(st0.entries == 50 && st0.written == 50, "cpu 0 %" PRIu64,
	      st0.entries);
	CHECK(st2.entries == 50 && st2.written == 50, "cpu 2 %" PRIu64,
	      st2.entries);
	CHECK(stats_zero(&st1), "cpu 1 stats not reset");
	CHECK(rbn_empty_cpu(b, 1) && !rbn_empty_cpu(b, 0) &&
	      !rbn_empty_cpu(b, 2), "empty flags");
	/* CPU 1 works again. */
	l1.n = 0;
	rbn_user_cpu = 1;
	mock_now += 10;
	wr_log(b, &l1, 24);
	rbn_user_cpu = 0;
	consume_all(b, 0, &l0, &r0);
	consume_all(b, 1, &l1, &r1);
	consume_all(b, 2, &l2, &r2);
	check_read(&l0, &r0, 0, "cpu 0");
	check_read(&l1, &r1, 0, "cpu 1");
	check_read(&l2, &r2, 0, "cpu 2");
	wlog_free(&l0);
	wlog_free(&l1);
	wlog_free(&l2);
	rlog_free(&r0);
	rlog_free(&r1);
	rlog_free(&r2);
	rbn_free(b);
}

/* ------------------------------------------------------------------ */
/* 11. Record disable / enable                                         */
/* ------------------------------------------------------------------ */

static void t_record_onoff(void)
{
	struct rbn_buffer *b = mkbuf(4, 0, false, 1);
	struct rbn_cpu_stats st;
	struct wlog l;
	struct rlog r;
	int i, refused = 0;

	if (!b)
		return;
	wlog_init(&l, 64);
	rlog_init(&r, 64);
	CHECK(rbn_record_is_on(b), "on at start");
	mock_now = 10;
	wr_log(b, &l, 8);
	rbn_record_disable(b);
	CHECK(!rbn_record_is_on(b), "off after disable");
	for (i = 0; i < 5; i++) {
		mock_now += 1;
		refused += wr(b, 8, 1000 + i) == -EBUSY;
		refused += rbn_reserve(b, 8) == NULL;
	}
	st = get_stats(b, 0);
	ktap_print("off: %d of 10 writes refused, dropped %" PRIu64 " written %" PRIu64,
		   refused, st.dropped, st.written);
	CHECK(refused == 10, "%d refused", refused);
	CHECK(st.dropped == 0 && st.written == 1 && st.entries == 1,
	      "dropped %" PRIu64 " written %" PRIu64, st.dropped, st.written);
	/* Nested disable: two disables need two enables. */
	rbn_record_disable(b);
	rbn_record_enable(b);
	CHECK(!rbn_record_is_on(b), "one enable of two disables");
	rbn_record_enable(b);
	CHECK(rbn_record_is_on(b), "on again");
	mock_now += 1;
	CHECK(wr_log(b, &l, 8) == 0, "write after enable");
	consume_all(b, 0, &l, &r);
	check_read(&l, &r, 0, "record on/off");
	wlog_free(&l);
	rlog_free(&r);
	rbn_free(b);
}

/* ------------------------------------------------------------------ */
/* 12. Statistics                                                      */
/* ------------------------------------------------------------------ */

static void t_stats(void)
{
	struct rbn_buffer *b = mkbuf(8, 0, false, 1);
	unsigned int i, bytes = 0, nread;
	struct rbn_cpu_stats st;
	struct wlog l;
	struct rlog r;
	unsigned long lost;
	u64 ts;

	if (!b)
		return;
	wlog_init(&l, 4096);
	rlog_init(&r, 4096);
	mock_now = 123456;
	for (i = 0; i < 30; i++) {
		mock_now += 17;
		wr_log(b, &l, 4 + i * 3);
		bytes += ev_size(4 + i * 3);
	}
	mock_now += 1000;
	st = get_stats(b, 0);
	ktap_print("30 events, %u bytes: entries %" PRIu64 " written %" PRIu64
		   " bytes %" PRIu64 " oldest_ts %" PRIu64 " now_ts %" PRIu64
		   " ts_fast %" PRIu64 " max_depth %" PRIu64,
		   bytes, st.entries, st.written, st.bytes, st.oldest_ts,
		   st.now_ts, st.ts_fast, st.max_depth);
	CHECK(st.entries == 30 && st.written == 30 && st.read == 0,
	      "entries %" PRIu64 " written %" PRIu64, st.entries, st.written);
	CHECK(st.bytes == bytes, "bytes %" PRIu64 " != %u", st.bytes, bytes);
	CHECK(st.oldest_ts == l.w[0].ts, "oldest_ts %" PRIu64, st.oldest_ts);
	CHECK(st.now_ts == mock_now, "now_ts %" PRIu64, st.now_ts);
	CHECK(rbn_clock(b) == mock_now, "rbn_clock");
	CHECK(st.ts_fast == 30 && st.ts_abs == 0 && st.ts_slow == 0 &&
	      st.ts_zero == 0 && st.ts_extend == 0,
	      "fast %" PRIu64 " abs %" PRIu64 " slow %" PRIu64, st.ts_fast,
	      st.ts_abs, st.ts_slow);
	CHECK(st.max_depth == 1, "max_depth %" PRIu64, st.max_depth);
	CHECK(st.pages_touched == 0, "pages_touched %" PRIu64,
	      st.pages_touched);
	CHECK(st.overrun == 0 && st.dropped == 0 && st.recursion == 0 &&
	      st.commit_overrun == 0, "overrun/dropped/recursion");

	/* Read 10 by consume. */
	for (nread = 0; nread < 10; nread++)
		CHECK(rbn_consume(b, 0, &ts, &lost), "consume");
	st = get_stats(b, 0);
	CHECK(st.read == 10 && st.entries == 20, "read %" PRIu64
	      " entries %" PRIu64, st.read, st.entries);
	ktap_print("after 10 consumed: read %" PRIu64 " entries %" PRIu64,
		   st.read, st.entries);

	/* Cross pages: 3 more pages, oldest_ts stays the first page's. */
	fill_bytes(b, &l, 3 * DATA_BYTES(0));
	st = get_stats(b, 0);
	CHECK(st.entries == l.n - 10 && st.written == l.n,
	      "entries %" PRIu64 " written %" PRIu64 " (%u)", st.entries,
	      st.written, l.n);
	CHECK(st.oldest_ts == l.w[0].ts, "oldest_ts %" PRIu64, st.oldest_ts);
	CHECK(st.pages_touched == 3, "pages_touched %" PRIu64,
	      st.pages_touched);
	consume_all(b, 0, &l, &r);
	st = get_stats(b, 0);
	ktap_print("all read: written %" PRIu64 " read %" PRIu64 " entries %"
		   PRIu64 " bytes %" PRIu64 " pages_touched %" PRIu64,
		   st.written, st.read, st.entries, st.bytes, st.pages_touched);
	CHECK(st.read == l.n && st.entries == 0 && st.written == l.n,
	      "read %" PRIu64, st.read);
	CHECK(st.bytes == 0, "bytes %" PRIu64 " left after reading all",
	      st.bytes);
	check_read(&l, &r, 10, "stats");
	wlog_free(&l);
	rlog_free(&r);
	rbn_free(b);
}

/* ------------------------------------------------------------------ */
/* 13. Recursion guard                                                 */
/* ------------------------------------------------------------------ */

struct recur {
	int label;
	int depth;		/* current depth of hook writes */
	int max_depth;		/* how deep the hook tries to go */
	int ok[8];		/* writes that went in, per depth */
	int refused[8];
};

static void recur_hook(struct rbn_buffer *b, int cpu, int label, void *arg)
{
	struct recur *rc = arg;
	struct rbn_event *ev;
	int d;

	(void)cpu;
	if (label != rc->label || rc->depth >= rc->max_depth)
		return;
	d = rc->depth++;
	/* Same context level as the interrupted writer. */
	ev = rbn_reserve(b, 8);
	if (ev) {
		rc->ok[d]++;
		make_payload(rbn_event_data(ev), 8, 100 + d);
		rbn_commit(b, ev);
	} else {
		rc->refused[d]++;
	}
	rc->depth--;
}

/*
 * At the label, a softirq writer first (its commit releases its own
 * bit only), then the same-level re-entries of recur_hook().
 */
static void recur_after_nested_hook(struct rbn_buffer *b, int cpu, int label,
				    void *arg)
{
	struct recur *rc = arg;
	int saved = rbn_user_context;

	/* not in the softirq writer; it runs once (rc->ok[6] marks it) */
	if (label != rc->label || saved)
		return;
	if (!rc->ok[6]) {
		rc->ok[6] = 1;
		rbn_user_context = 1;
		rc->ok[7] += wr(b, 8, 50) == 0;
		rbn_user_context = saved;
	}
	recur_hook(b, cpu, label, arg);
}

/*
 * The guard after a nested writer left: the outer context's bit is still
 * set, so the same-level re-entries go as without it: one through the
 * transition bit, the next refused.
 */
static void t_recursion_after_nested(void)
{
	struct rbn_buffer *b = mkbuf(4, 0, false, 1);
	struct recur rc = { .label = RBN_LABEL_B, .max_depth = 4 };

	if (!b)
		return;
	mock_now = 10;
	rbn_test_set_hook(recur_after_nested_hook, &rc);
	CHECK(wr(b, 8, 1) == 0, "outer write");
	rbn_test_set_hook(NULL, NULL);
	ktap_print("softirq writer at label B, then same-level re-entry, depth 1..3: softirq ok %d; ok %d/%d/%d refused %d/%d/%d",
		   rc.ok[7], rc.ok[0], rc.ok[1], rc.ok[2], rc.refused[0],
		   rc.refused[1], rc.refused[2]);
	CHECK(rc.ok[7] == 1, "softirq write: %d", rc.ok[7]);
	CHECK(rc.ok[0] == 1 && rc.refused[0] == 0 &&
	      rc.ok[1] == 0 && rc.refused[1] == 1,
	      "after the softirq writer: re-entries ok %d/%d refused %d/%d",
	      rc.ok[0], rc.ok[1], rc.refused[0], rc.refused[1]);
	rbn_free(b);
}

static void t_recursion(void)
{
	struct rbn_buffer *b = mkbuf(4, 0, false, 1);
	struct recur rc = { .label = RBN_LABEL_B, .max_depth = 4 };
	struct rbn_cpu_stats st;
	struct rbn_event *ev;
	unsigned long lost;
	int i, nread = 0, inner = 0;
	u64 ts;

	if (!b)
		return;
	mock_now = 10;
	wr(b, 8, 0);
	rbn_test_set_hook(recur_hook, &rc);
	mock_now += 5;
	CHECK(wr(b, 8, 1) == 0, "outer write");
	rbn_test_set_hook(NULL, NULL);
	st = get_stats(b, 0);
	for (i = 0; i < 4; i++)
		inner += rc.ok[i];
	ktap_print("same-level re-entry at label B, depth 1..4: ok %d/%d/%d/%d refused %d/%d/%d/%d, stats.recursion %" PRIu64,
		   rc.ok[0], rc.ok[1], rc.ok[2], rc.ok[3], rc.refused[0],
		   rc.refused[1], rc.refused[2], rc.refused[3], st.recursion);
	/*
	 * The core lets the first same-level re-entry through as a context
	 * "transition" (preempt_count() not updated yet, as in mainline);
	 * a second one is recursion.
	 */
	CHECK(rc.ok[0] == 1 && rc.refused[0] == 0,
	      "first same-level re-entry (transition) refused");
	CHECK(rc.ok[1] == 0 && rc.refused[1] == 1,
	      "second same-level re-entry: ok %d refused %d", rc.ok[1],
	      rc.refused[1]);
	CHECK(rc.ok[2] == 0 && rc.refused[2] == 0 && rc.ok[3] == 0,
	      "re-entry beyond the refused one");
	CHECK(st.recursion == (u64)(rc.refused[0] + rc.refused[1] +
				    rc.refused[2] + rc.refused[3]),
	      "recursion %" PRIu64, st.recursion);
	CHECK(st.recursion == 1, "recursion %" PRIu64, st.recursion);
	CHECK(st.max_depth == 2, "max_depth %" PRIu64, st.max_depth);
	CHECK(st.written == (u64)(2 + inner), "written %" PRIu64, st.written);
	CHECK(st.dropped == 0, "dropped %" PRIu64, st.dropped);
	/* Buffer intact: first, (allowed inner), outer. */
	while ((ev = rbn_consume(b, 0, &ts, &lost))) {
		u32 seq = rd32(rbn_event_data(ev));

		nread++;
		if (nread == 1)
			CHECK(seq == 0 && ts == 10, "first %u", seq);
		else if (nread == 2 + inner)
			CHECK(seq == 1 && ts == 15, "outer %u ts %" PRIu64, seq,
			      ts);
		else
			CHECK(seq == 100 + (u32)nread - 2, "inner %u", seq);
	}
	CHECK(nread == 2 + inner, "%d read", nread);

	/* A raised level is not recursion. */
	mock_now += 5;
	{
		struct nest n = {
			.label = RBN_LABEL_C, .count = 1, .ctx = 2, .len = 8,
			.seq = 7, .ts = mock_now + 1, .after = mock_now + 2,
		};

		rbn_test_set_hook(nest_hook, &n);
		CHECK(wr(b, 8, 6) == 0, "outer");
		rbn_test_set_hook(NULL, NULL);
		CHECK(n.ret == 0, "nested at a higher level refused");
	}
	st = get_stats(b, 0);
	CHECK(st.recursion == (u64)(rc.refused[0] + rc.refused[1] +
				    rc.refused[2] + rc.refused[3]),
	      "recursion %" PRIu64, st.recursion);
	CHECK(rbn_user_warnings == 0, "warnings %lu", rbn_user_warnings);
	rbn_free(b);
}

/* ------------------------------------------------------------------ */
/* 14. Zeroing of pages handed to readers                              */
/* ------------------------------------------------------------------ */

static void t_read_page_zero_swap(void)
{
	struct rbn_buffer *b = mkbuf(4, 0, true, 1);
	unsigned int where, k;
	struct wlog l;
	struct rlog r;
	void *page;
	int ret;

	if (!b)
		return;
	wlog_init(&l, 8192);
	rlog_init(&r, 8192);
	/* Overwrite the whole ring with 0xee several times, no reset. */
	mock_now = 1;
	for (k = 0; k < rbn_nr_subbufs(b) * 3 * 40; k++) {
		struct rbn_event *ev = rbn_reserve(b, 96);

		mock_now += 1;
		if (!ev)
			break;
		memset(rbn_event_data(ev), 0xee, 96);
		rbn_commit(b, ev);
	}
	/* Forget it (pages keep their old bytes), write short pages. */
	rbn_reset(b);
	fill_bytes(b, &l, 1000);
	fill_bytes(b, &l, DATA_BYTES(0) - 1000 - 44);
	for (k = 0; k < 3; k++) {
		/* 44 bytes left: this one does not fit */
		mock_now += 1;
		wr_log(b, &l, 60);
		fill_bytes(b, &l, 200 + k * 8);
		if (k < 2)
			fill_bytes(b, &l, DATA_BYTES(0) - 64 - 200 - k * 8 - 44);
	}
	page = rbn_alloc_read_page(b, 0);
	for (k = 0; ; k++) {
		memset(page, 0xee, SUBBUF_BYTES(0));
		ret = rbn_read_page(b, 0, &page, rbn_subbuf_size(b), true);
		if (ret == -EAGAIN)
			break;
		if (!CHECK(ret > 0, "read_page %d", ret))
			break;
		decode_page(page, DATA_BYTES(0), &dp, true);
		CHECK(tail_zero(page, DATA_BYTES(0), &where),
		      "full page %u: byte %u past commit %u not zero", k,
		      where, dp.commit);
		for (unsigned int i = 0; i < dp.n; i++)
			if (dp.e[i].type <= RBN_TYPE_DATA_MAX)
				rlog_add(&r, &l, dp.e[i].data, dp.e[i].plen,
					 dp.e[i].ts, 0);
	}
	ktap_print("after wrapping garbage: %u full pages read (zero copy), %u events",
		   k, r.n);
	CHECK(k == 3, "%u full pages", k);
	/* The rest: the page still being written (copy). */
	read_pages(b, 0, 0, &l, &r, false, true);
	check_read(&l, &r, 0, "swap pages");
	rbn_free_read_page(b, 0, page);
	wlog_free(&l);
	rlog_free(&r);
	rbn_free(b);
}

static void t_read_page_zero_copy(void)
{
	struct rbn_buffer *b = mkbuf(4, 0, false, 1);
	unsigned int where, i;
	struct wlog l;
	struct rlog r;
	void *page;
	int ret, k;

	if (!b)
		return;
	wlog_init(&l, 8192);
	rlog_init(&r, 8192);
	dirty_buffer(b, 0);
	mock_now = 50;
	page = rbn_alloc_read_page(b, 0);

	/* A page still being written. */
	fill_bytes(b, &l, 600);
	memset(page, 0xee, SUBBUF_BYTES(0));
	ret = rbn_read_page(b, 0, &page, rbn_subbuf_size(b), false);
	CHECK(ret == 600, "partial page: read_page %d", ret);
	CHECK(tail_zero(page, DATA_BYTES(0), &where),
	      "partial page: byte %u past commit not zero", where);
	decode_page(page, DATA_BYTES(0), &dp, true);
	for (i = 0; i < dp.n; i++)
		rlog_add(&r, &l, dp.e[i].data, dp.e[i].plen, dp.e[i].ts, 0);
	ktap_print("page being written: commit %u, %u events, tail zero",
		   dp.commit, dp.n);
	/* Same page, written further, read again: only the new events. */
	fill_bytes(b, &l, 400);
	memset(page, 0xee, SUBBUF_BYTES(0));
	ret = rbn_read_page(b, 0, &page, rbn_subbuf_size(b), false);
	CHECK(ret == 400, "rest of the page: read_page %d", ret);
	CHECK(tail_zero(page, DATA_BYTES(0), &where),
	      "rest: byte %u past commit not zero", where);
	decode_page(page, DATA_BYTES(0), &dp, false);
	CHECK(dp.n && dp.e[0].ts == l.w[r.n].ts,
	      "continued page: time_stamp %" PRIu64 ", first ts %" PRIu64
	      " expected %" PRIu64, dp.time_stamp, dp.n ? dp.e[0].ts : 0,
	      l.w[r.n].ts);
	ktap_print("same page read again after 400 more bytes: commit %u, time_stamp %" PRIu64 ", first delta %u",
		   dp.commit, dp.time_stamp, dp.n ? dp.e[0].delta : 0);
	for (i = 0; i < dp.n; i++)
		rlog_add(&r, &l, dp.e[i].data, dp.e[i].plen, dp.e[i].ts, 0);

	/* A full page partly consumed. */
	fill_bytes(b, &l, DATA_BYTES(0) - 1000);
	fill_bytes(b, &l, 300);		/* on the next page */
	for (k = 0; k < 2; k++) {
		unsigned long lost;
		u64 ts;
		struct rbn_event *ev = rbn_consume(b, 0, &ts, &lost);

		if (CHECK(ev, "consume"))
			rlog_add(&r, &l, rbn_event_data(ev),
				 rbn_event_data_length(ev), ts, lost);
	}
	read_pages(b, 0, 0, &l, &r, false, true);
	check_read(&l, &r, 0, "copy pages");
	rbn_free_read_page(b, 0, page);
	wlog_free(&l);
	rlog_free(&r);
	rbn_free(b);
}

/*
 * A reader page shorter than a sub-buffer: only whole events are copied,
 * a time extend never without its event, the rest comes with later calls.
 */
static void t_read_page_short_len(void)
{
	struct rbn_buffer *b = mkbuf(4, 0, false, 1);
	unsigned int where, i, calls = 0;
	struct wlog l;
	struct rlog r;
	void *page;
	int ret;

	if (!b)
		return;
	wlog_init(&l, 64);
	rlog_init(&r, 64);
	mock_now = 10;
	for (i = 0; i < 6; i++) {
		mock_now += i == 3 ? 1ULL << 31 : 2;
		wr_log(b, &l, 8);	/* 12 bytes, 20 with an extend */
	}
	page = rbn_alloc_read_page(b, 0);
	/* Room for 8 bytes: the first event (12) does not fit; nothing lost. */
	ret = rbn_read_page(b, 0, &page, RBN_PAGE_HDR_SIZE + 8, false);
	ktap_print("read_page with room for 8 bytes, first event 12: %d", ret);
	CHECK(ret == -EAGAIN || ret == -EINVAL, "%d", ret);
	CHECK(rbn_read_page(b, 0, &page, RBN_PAGE_HDR_SIZE + 4, false) ==
	      -EINVAL, "room for 4 bytes");
	for (;;) {
		memset(page, 0xee, SUBBUF_BYTES(0));
		ret = rbn_read_page(b, 0, &page, RBN_PAGE_HDR_SIZE + 24, false);
		if (ret < 0)
			break;
		calls++;
		decode_page(page, DATA_BYTES(0), &dp, false);
		CHECK(ret <= 24 && ret > 0, "read_page with 24 bytes: %d", ret);
		CHECK(tail_zero(page, DATA_BYTES(0), &where),
		      "byte %u past commit %u not zero", where, dp.commit);
		CHECK(dp.n && dp.e[dp.n - 1].type <= RBN_TYPE_DATA_MAX,
		      "copy ends with type %u", dp.n ? dp.e[dp.n - 1].type : 99);
		for (i = 0; i < dp.n; i++)
			if (dp.e[i].type <= RBN_TYPE_DATA_MAX)
				rlog_add(&r, &l, dp.e[i].data, dp.e[i].plen,
					 dp.e[i].ts, 0);
		if (calls > 20)
			break;
	}
	CHECK(ret == -EAGAIN, "last read_page %d", ret);
	ktap_print("6 events (one after an extend) read 24 bytes at a time: %u calls, %u events",
		   calls, r.n);
	check_read(&l, &r, 0, "short pages");
	CHECK(calls == 4, "%u calls", calls);
	rbn_free_read_page(b, 0, page);
	wlog_free(&l);
	rlog_free(&r);
	rbn_free(b);
}

/* Wrap over old data, read every page: tails zero, data exact. */
static void t_read_page_zero_wrap(void)
{
	struct rbn_buffer *b = mkbuf(4, 1, true, 1);
	unsigned int k;
	struct wlog l;
	struct rlog r;

	if (!b)
		return;
	wlog_init(&l, 65536);
	rlog_init(&r, 65536);
	mock_now = 1;
	/* Big garbage events. */
	for (k = 0; k < 60; k++) {
		struct rbn_event *ev = rbn_reserve(b, 1500);

		mock_now += 1;
		if (!ev)
			break;
		memset(rbn_event_data(ev), 0xee, 1500);
		rbn_commit(b, ev);
	}
	/* Small events wrap over it: pages with small discards. */
	for (k = 0; k < 3000; k++) {
		mock_now += 1;
		wr_log(b, &l, 4 + (k * 29) % 200);
	}
	read_pages(b, 0, 1, &l, &r, false, true);
	ktap_print("order 1 overwrite: %u written, %u read in %u pages",
		   l.n, r.n, r.pages);
	check_read(&l, &r, l.n - r.n, "wrapped");
	wlog_free(&l);
	rlog_free(&r);
	rbn_free(b);
}

/* ------------------------------------------------------------------ */
/* 15. CPUs and configurations                                         */
/* ------------------------------------------------------------------ */

static void t_multi_cpu(void)
{
	struct rbn_buffer *b = mkbuf(4, 0, false, 4);
	struct rbn_cpu_stats st;
	struct wlog l[4];
	struct rlog r[4];
	int cpu, k;

	if (!b)
		return;
	CHECK(rbn_nr_cpus(b) == 4, "nr_cpus %d", rbn_nr_cpus(b));
	for (cpu = 0; cpu < 4; cpu++) {
		wlog_init(&l[cpu], 4096);
		rlog_init(&r[cpu], 4096);
	}
	mock_now = 1000;
	for (k = 0; k < 400; k++) {
		cpu = (k * 7) % 4;
		if (cpu == 3 && k % 2)
			continue;
		rbn_user_cpu = cpu;
		mock_now += 1 + cpu;
		wr_log(b, &l[cpu], 8 + cpu * 20);
	}
	rbn_user_cpu = 0;
	for (cpu = 0; cpu < 4; cpu++) {
		st = get_stats(b, cpu);
		CHECK(st.written == l[cpu].n, "cpu %d written %" PRIu64, cpu,
		      st.written);
		if (cpu & 1)
			read_pages(b, cpu, 0, &l[cpu], &r[cpu], false, true);
		else
			consume_all(b, cpu, &l[cpu], &r[cpu]);
		check_read(&l[cpu], &r[cpu], 0, "per cpu");
		/* Payload sizes identify the CPU. */
		CHECK(!r[cpu].n || r[cpu].r[0].plen == ALIGN(8U + cpu * 20, 4),
		      "cpu %d has events of %u bytes", cpu, r[cpu].r[0].plen);
		ktap_print("cpu %d: %u written, %u read", cpu, l[cpu].n,
			   r[cpu].n);
	}
	for (cpu = 0; cpu < 4; cpu++) {
		wlog_free(&l[cpu]);
		rlog_free(&r[cpu]);
	}
	/* Out-of-range CPUs. */
	CHECK(rbn_cpu_stats(b, 4, &st) == -EINVAL, "stats of cpu 4");
	{
		void *page = rbn_alloc_read_page(b, 0);
		unsigned long lost;
		u64 ts;
		int ret;

		CHECK(rbn_consume(b, 4, &ts, &lost) == NULL, "consume cpu 4");
		CHECK(rbn_consume(b, -1, &ts, &lost) == NULL, "consume cpu -1");
		CHECK(rbn_peek(b, 4, &ts, &lost) == NULL, "peek cpu 4");
		CHECK(rbn_empty_cpu(b, 4), "cpu 4 not empty");
		CHECK(rbn_read_page(b, 4, &page, rbn_subbuf_size(b), false) ==
		      -EINVAL, "read_page cpu 4");
		/* A writer on a CPU the buffer has no buffer for writes nothing. */
		rbn_user_cpu = 4;
		CHECK(rbn_reserve(b, 8) == NULL, "reserve on cpu 4");
		CHECK(rbn_write(b, 8, "12345678") == -EBUSY, "write on cpu 4");
		rbn_user_cpu = 0;
		wr(b, 8, 0);
		ret = rbn_read_page(b, 0, &page, 8, false);
		CHECK(ret == -EINVAL, "read_page with len 8: %d", ret);
		rbn_free_read_page(b, 0, page);
	}
	rbn_user_cpu = 5;
	CHECK(wr(b, 8, 0) == -EBUSY, "write on a CPU without a buffer");
	rbn_user_cpu = 0;
	rbn_free(b);

	/* nr_cpus 0: every CPU of the port. */
	b = mkbuf(2, 0, false, 0);
	if (b) {
		CHECK(rbn_nr_cpus(b) == rbn_user_nr_cpus, "nr_cpus %d",
		      rbn_nr_cpus(b));
		ktap_print("nr_cpus 0 -> %d buffers", rbn_nr_cpus(b));
		rbn_free(b);
	}
}

static void t_bad_config(void)
{
	struct rbn_config good = {
		.size = 4 * DATA_BYTES(0), .order = 0, .clock = mock_clock,
		.nr_cpus = 1,
	};
	struct rbn_config cfg;
	struct rbn_buffer *b;

#define BAD(field, value, desc)						\
	do {								\
		cfg = good;						\
		cfg.field = value;					\
		b = rbn_alloc(&cfg);					\
		ktap_print("%s: %ld", desc,				\
			   IS_ERR(b) ? PTR_ERR(b) : 0L);		\
		CHECK(IS_ERR(b) && PTR_ERR(b) == -EINVAL, "%s", desc);	\
		if (!IS_ERR_OR_NULL(b))					\
			rbn_free(b);					\
	} while (0)

	BAD(order, RBN_MAX_ORDER + 1, "order RBN_MAX_ORDER + 1");
	BAD(order, 31, "order 31");
	BAD(size, 0, "size 0");
	BAD(clock, NULL, "NULL clock");
	BAD(nr_cpus, -1, "nr_cpus -1");
	BAD(nr_cpus, RBN_NR_CPUS_MAX + 1, "nr_cpus > max");
	BAD(nr_cpus, rbn_user_nr_cpus + 1, "nr_cpus > possible CPUs");
	BAD(size, ULONG_MAX, "size ULONG_MAX");
#undef BAD
	b = rbn_alloc(NULL);
	CHECK(IS_ERR(b) && PTR_ERR(b) == -EINVAL, "NULL config");
	rbn_free(NULL);		/* both are no-ops */
	rbn_free(ERR_PTR(-EINVAL));
	cfg = good;
	cfg.order = RBN_MAX_ORDER;
	b = rbn_alloc(&cfg);
	CHECK(!IS_ERR_OR_NULL(b), "order RBN_MAX_ORDER");
	if (!IS_ERR_OR_NULL(b)) {
		ktap_print("order %d: subbuf %u, %lu subbufs for %lu bytes",
			   RBN_MAX_ORDER, rbn_subbuf_size(b),
			   rbn_nr_subbufs(b), cfg.size);
		CHECK(rbn_nr_subbufs(b) == 2, "min 2 subbufs: %lu",
		      rbn_nr_subbufs(b));
		rbn_free(b);
	}
	cfg = good;
	cfg.size = 3 * DATA_BYTES(0) + 1;
	b = rbn_alloc(&cfg);
	if (CHECK(!IS_ERR_OR_NULL(b), "size rounding")) {
		CHECK(rbn_nr_subbufs(b) == 4 &&
		      rbn_size(b) == 4 * DATA_BYTES(0),
		      "3 sub-buffers + 1 byte -> %lu subbufs, size %lu",
		      rbn_nr_subbufs(b), rbn_size(b));
		rbn_free(b);
	}
}

/* ------------------------------------------------------------------ */
/* 16. Non-consuming iterator and fill levels                          */
/* ------------------------------------------------------------------ */

/* One event as a reader saw it. */
struct iev {
	u64 ts;
	u32 seq;
	unsigned int len;
};

/* Everything a fresh iterator shows; -1 when it cannot start. */
static int iter_collect(struct rbn_buffer *b, int cpu, struct iev *out,
			unsigned int max)
{
	struct rbn_iter *it = rbn_iter_start(b, cpu);
	struct rbn_event *ev;
	unsigned int n = 0;
	u64 ts;

	if (!CHECK(it, "rbn_iter_start(cpu %d)", cpu))
		return -1;
	while (n < max && (ev = rbn_iter_peek(it, &ts))) {
		out[n].ts = ts;
		out[n].seq = rd32(rbn_event_data(ev));
		out[n].len = rbn_event_data_length(ev);
		rbn_iter_advance(it);
		n++;
	}
	CHECK(n < max, "iterator did not end after %u events", n);
	rbn_iter_finish(it);
	return n;
}

static unsigned int consume_collect(struct rbn_buffer *b, int cpu,
				    struct iev *out, unsigned int max)
{
	struct rbn_event *ev;
	unsigned int n = 0;
	u64 ts;

	while (n < max && (ev = rbn_consume(b, cpu, &ts, NULL))) {
		out[n].ts = ts;
		out[n].seq = rd32(rbn_event_data(ev));
		out[n].len = rbn_event_data_length(ev);
		n++;
	}
	return n;
}

static unsigned int iev_diff(const struct iev *a, const struct iev *c,
			     unsigned int n, const char *what)
{
	unsigned int i, bad = 0;

	for (i = 0; i < n; i++) {
		if (a[i].ts == c[i].ts && a[i].seq == c[i].seq &&
		    a[i].len == c[i].len)
			continue;
		if (!bad++)
			CHECK(0, "%s: event %u: iterator seq %u ts %" PRIu64
			      " len %u, consumer seq %u ts %" PRIu64 " len %u",
			      what, i, a[i].seq, a[i].ts, a[i].len, c[i].seq,
			      c[i].ts, c[i].len);
	}
	return bad;
}

#define ITER_NEST_SEQ	100000U

/*
 * Write @nr events of assorted sizes with small gaps, gaps that need a
 * time extend, now and then an event nested at label B (an absolute
 * stamp), and now and then a discarded event with one nested behind it
 * (it stays on the page as padding, its delta time for every reader).
 * Returns the number of events in the buffer.
 */
static unsigned int iter_fill(struct rbn_buffer *b, struct wlog *l,
			      unsigned int nr, unsigned int *nr_nested)
{
	struct nest n = {
		.label = RBN_LABEL_B, .count = 1, .ctx = 1, .len = 24,
		.reserve = true,
	};
	struct rbn_event *ev;
	unsigned int i, len;
	u64 gap;

	*nr_nested = 0;
	for (i = 0; i < nr; i++) {
		len = 4 + (i * 37) % 300;
		if (i % 41 == 40)
			gap = (1ULL << RBN_TS_SHIFT) + i;	/* extend */
		else if (i == nr / 2)
			gap = 1ULL << 40;			/* big extend */
		else
			gap = 3 + i % 7;
		mock_now += gap;
		if (i % 23 == 22) {
			/* discarded, a nested event right behind it */
			n.label = RBN_LABEL_RESERVED;
			n.done = 0;
			n.seq = ITER_NEST_SEQ + i;
			n.ts = mock_now + 5;
			n.after = mock_now + 6;
			rbn_test_set_hook(nest_hook, &n);
			ev = rbn_reserve(b, len);
			rbn_test_set_hook(NULL, NULL);
			if (CHECK_Q(ev, "reserve %u to discard", i)) {
				make_payload(rbn_event_data(ev), len, i);
				rbn_discard(b, ev);
			}
			n.label = RBN_LABEL_B;
			mock_now += 6;
			CHECK_Q(n.done == 1 && n.ret == 0 &&
				!(n.flags & RBN_EV_ABSOLUTE),
				"write %u nested behind a discarded event: done %d ret %d flags 0x%x",
				i, n.done, n.ret, n.flags);
			*nr_nested += n.done == 1 && n.ret == 0;
			continue;
		}
		if (i % 29 != 28) {
			CHECK_Q(wr_log(b, l, len) == 0, "write %u", i);
			continue;
		}
		/* Nested at B: the nested event gets an absolute stamp. */
		n.done = 0;
		n.seq = ITER_NEST_SEQ + i;
		n.ts = mock_now + 50;
		n.after = mock_now + 60;
		rbn_test_set_hook(nest_hook, &n);
		CHECK_Q(wr_log(b, l, len) == 0, "outer write %u", i);
		rbn_test_set_hook(NULL, NULL);
		mock_now += 60;
		/* absolute, unless the outer one opened a sub-buffer */
		CHECK_Q(n.done == 1 && n.ret == 0 &&
			(n.flags & (RBN_EV_ABSOLUTE | RBN_EV_PAGE_START)),
			"nested write %u: done %d ret %d flags 0x%x", i,
			n.done, n.ret, n.flags);
		*nr_nested += n.done == 1 && n.ret == 0;
	}
	return l->n + *nr_nested;
}

static void iter_case(unsigned int order, bool overwrite)
{
	unsigned int max = 4096, nested, total, k, i, nr_top = 0;
	struct rbn_buffer *b = mkbuf(overwrite ? 8 : 24, order, overwrite, 2);
	struct iev *it = calloc(max, sizeof(*it));
	struct iev *co = calloc(max, sizeof(*co));
	struct rbn_cpu_stats st;
	struct rbn_iter *iter;
	struct wlog l;
	int n, n2;
	u64 ts;

	if (!b || !it || !co)
		goto out;
	wlog_init(&l, max);
	mock_now = 5000;

	/* Empty: nothing, on either CPU. */
	n = iter_collect(b, 0, it, max);
	CHECK(n == 0, "empty buffer: %d events", n);
	CHECK(!rbn_iter_start(b, 2) && !rbn_iter_start(b, -1), "bad CPU");

	total = iter_fill(b, &l, overwrite ? 1500 : 240, &nested);
	st = get_stats(b, 0);
	if (overwrite)
		total = st.entries;
	CHECK(st.entries == total, "entries %" PRIu64 ", expected %u",
	      st.entries, total);
	CHECK(st.ts_extend > 2 && st.ts_abs > 4 && nested > 8 &&
	      st.discarded > 4,
	      "ts_extend %" PRIu64 ", ts_abs %" PRIu64 " (nested %u), discarded %" PRIu64,
	      st.ts_extend, st.ts_abs, nested, st.discarded);

	/* Twice: the iterator consumes nothing. */
	n = iter_collect(b, 0, it, max);
	n2 = iter_collect(b, 0, co, max);
	CHECK(n == (int)total && n2 == n, "iterator: %d then %d events, %u in the buffer",
	      n, n2, total);
	if (n == n2)
		iev_diff(it, co, n, "second iteration");
	CHECK(get_stats(b, 0).entries == total, "entries after iterating");

	/* Events written at top level carry the time they were written at. */
	for (i = 0, k = 0; n > 0 && i < (unsigned int)n; i++) {
		if (it[i].seq >= ITER_NEST_SEQ)
			continue;
		while (k < l.n && l.w[k].seq != it[i].seq)
			k++;
		if (!CHECK_Q(k < l.n, "event seq %u not written", it[i].seq))
			break;
		CHECK_Q(it[i].ts == l.w[k].ts && it[i].len ==
			ALIGN(l.w[k].len, RBN_ALIGNMENT),
			"seq %u: ts %" PRIu64 " len %u, written at %" PRIu64
			" len %u", it[i].seq, it[i].ts, it[i].len, l.w[k].ts,
			l.w[k].len);
		nr_top++;
	}

	/* Recording is off while an iterator exists. */
	iter = rbn_iter_start(b, 1);
	CHECK(iter && !rbn_record_is_on(b), "recording on with an iterator");
	CHECK(wr(b, 16, 1) == -EBUSY, "write accepted with an iterator");
	rbn_iter_finish(iter);
	CHECK(rbn_record_is_on(b), "recording off after the iterator");

	/* The consumer returns what the iterator showed... */
	k = consume_collect(b, 0, co, 37);
	CHECK(k == 37, "consumed %u", k);
	iev_diff(it, co, k, "first events consumed");
	/* ... and after a partial consume the iterator starts where it is. */
	n = iter_collect(b, 0, co, max);
	CHECK(n == (int)total - 37, "%d iterated after consuming 37", n);
	if (n == (int)total - 37)
		iev_diff(it + 37, co, n, "iterated after a partial consume");
	n = iter_collect(b, 0, it, max);
	k = consume_collect(b, 0, co, max);
	CHECK(n == (int)k, "iterated %d, consumed %u", n, k);
	if (n == (int)k)
		iev_diff(it, co, k, "after a partial consume");

	/* A page in progress: the iterator stops at the commit. */
	for (i = 0; i < 5; i++) {
		mock_now += 7;
		wr_log(b, &l, 20);
	}
	n = iter_collect(b, 0, it, max);
	CHECK(n == 5 && it[4].ts == mock_now, "%d events on the page in progress", n);

	/* Reset goes back to the start; a consumer ends the iterator. */
	iter = rbn_iter_start(b, 0);
	if (CHECK(iter, "start")) {
		CHECK(rbn_iter_peek(iter, &ts) && ts == mock_now - 28, "first");
		rbn_iter_advance(iter);
		rbn_iter_advance(iter);
		CHECK(rbn_iter_peek(iter, &ts) && ts == mock_now - 14, "third");
		rbn_iter_reset(iter);
		CHECK(rbn_iter_peek(iter, &ts) && ts == mock_now - 28,
		      "first after reset");
		CHECK(rbn_consume(b, 0, NULL, NULL), "consume");
		CHECK(!rbn_iter_peek(iter, &ts), "iterator still going after a consume");
		rbn_iter_advance(iter);
		rbn_iter_finish(iter);
	}
	ktap_print("order %u %s: %u events (%u nested, %u checked against the writer), ts_extend %" PRIu64 ", ts_abs %" PRIu64 ", discarded %" PRIu64,
		   order, overwrite ? "overwrite" : "producer/consumer", total,
		   nested, nr_top, st.ts_extend, st.ts_abs, st.discarded);
	wlog_free(&l);
out:
	free(it);
	free(co);
	rbn_free(b);
}

static void t_iter(void)
{
	iter_case(0, false);
	iter_case(1, false);
	iter_case(0, true);
}

/* Fill levels and complete sub-buffers, as blocked readers see them. */
static void t_fill_level(void)
{
	struct rbn_buffer *b = mkbuf(10, 0, false, 1);
	bool counted, readable;
	struct rbn_event *outer;
	unsigned int per_page, i;
	void *page;
	int ret;

	if (!b)
		return;
	mock_now = 100;
	CHECK(!rbn_cpu_percent_full(b, 0, 0) && !rbn_cpu_subbuf_ready(b, 0),
	      "empty");
	CHECK(!rbn_cpu_percent_full(b, 1, 0) && !rbn_cpu_subbuf_ready(b, 1),
	      "bad CPU");
	CHECK(wr(b, 60, 0) == 0, "write");
	CHECK(rbn_cpu_percent_full(b, 0, 0), "one event: any data");
	CHECK(rbn_cpu_readable(b, 0, 0), "one event: readable");
	CHECK(!rbn_cpu_percent_full(b, 0, 50), "one event: 50%%");
	CHECK(!rbn_cpu_readable(b, 0, 50), "one event: not readable at 50%%");
	CHECK(!rbn_cpu_readable(b, 1, 0) && !rbn_cpu_readable(b, -1, 0),
	      "bad CPU: not readable");
	CHECK(!rbn_cpu_subbuf_ready(b, 0), "one event: no complete page");

	/* 64-byte events: fill 4 pages and start a fifth. */
	per_page = DATA_BYTES(0) / 64;
	for (i = 1; i < 4 * per_page + 1; i++)
		wr(b, 60, i);
	CHECK(rbn_cpu_subbuf_ready(b, 0), "complete pages");
	CHECK(rbn_cpu_percent_full(b, 0, 50) && !rbn_cpu_percent_full(b, 0, 51),
	      "4 pages + 1 of 10: 50%% yes, 51%% no");
	CHECK(rbn_cpu_percent_full(b, 0, 0), "any data");

	/* Half a page read: still complete, a full read fails, a partial works. */
	for (i = 0; i < per_page / 2; i++)
		rbn_consume(b, 0, NULL, NULL);
	CHECK(rbn_cpu_subbuf_ready(b, 0), "partly read page");
	page = rbn_alloc_read_page(b, 0);
	ret = rbn_read_page(b, 0, &page, rbn_subbuf_size(b), true);
	CHECK(ret == -EAGAIN, "full read of a partly read page: %d", ret);
	ret = rbn_read_page(b, 0, &page, rbn_subbuf_size(b), false);
	/* The rest of the page comes with its end padding. */
	CHECK(ret == (int)(DATA_BYTES(0) - per_page / 2 * 64), "rest: %d", ret);
	/* Three whole pages, then the one being written. */
	for (i = 0; i < 3; i++) {
		CHECK(rbn_cpu_subbuf_ready(b, 0), "page %u ready", i);
		ret = rbn_read_page(b, 0, &page, rbn_subbuf_size(b), true);
		CHECK(ret == (int)(per_page * 64), "full page %u: %d", i, ret);
	}
	CHECK(!rbn_cpu_subbuf_ready(b, 0), "page in progress");
	CHECK(rbn_cpu_percent_full(b, 0, 0), "page in progress: any data");
	ret = rbn_read_page(b, 0, &page, rbn_subbuf_size(b), false);
	CHECK(ret == 64, "last event: %d", ret);
	CHECK(!rbn_cpu_percent_full(b, 0, 0) && !rbn_cpu_subbuf_ready(b, 0) &&
	      !rbn_cpu_readable(b, 0, 0), "all read");
	ktap_print("%u events per page; 50%% reached at 4 pages + 1 of 10",
		   per_page);

	/*
	 * A nested event counts as soon as it commits, but is published
	 * only by the outermost writer's commit: the lockless watermark
	 * sees it, a reader cannot take it yet.
	 */
	outer = rbn_reserve(b, 60);
	if (CHECK(outer, "outer reserve")) {
		memset(rbn_event_data(outer), 0, 60);
		rbn_user_context = 2;
		CHECK(wr(b, 60, 1000) == 0, "nested write");
		rbn_user_context = 0;
		counted = rbn_cpu_percent_full(b, 0, 0);
		readable = rbn_cpu_readable(b, 0, 0);
		CHECK(counted && !readable,
		      "nested event committed, outer not: counted, not readable");
		ret = rbn_read_page(b, 0, &page, rbn_subbuf_size(b), false);
		CHECK(ret == -EAGAIN, "nothing to read yet: %d", ret);
		rbn_commit(b, outer);
		CHECK(rbn_cpu_readable(b, 0, 0), "outer committed: readable");
		ret = rbn_read_page(b, 0, &page, rbn_subbuf_size(b), false);
		CHECK(ret == 2 * 64, "both events read: %d", ret);
		ktap_print("nested event under an uncommitted outer one: counted %d, readable %d until the outer commit, then %d bytes read",
			   counted, readable, ret);
	}
	rbn_free_read_page(b, 0, page);
	rbn_free(b);
}

/* Reset generations, and iterators of two CPUs prepared with one wait. */
static void t_resets_and_prepared_iters(void)
{
	struct rbn_buffer *b = mkbuf(4, 0, false, 2);
	struct rbn_iter *it[2];
	unsigned int n[2] = { 0, 0 };
	int cpu, i;
	u64 ts;

	if (!b)
		return;
	mock_now = 100;
	CHECK(rbn_cpu_resets(b, 0) == 0 && rbn_cpu_resets(b, 1) == 0 &&
	      rbn_cpu_resets(b, 2) == 0 && rbn_cpu_resets(b, -1) == 0,
	      "new buffer, bad CPUs");
	rbn_reset_cpu(b, 1);
	CHECK(rbn_cpu_resets(b, 0) == 0 && rbn_cpu_resets(b, 1) == 1,
	      "reset of cpu 1: %lu/%lu", rbn_cpu_resets(b, 0),
	      rbn_cpu_resets(b, 1));
	rbn_reset(b);
	CHECK(rbn_cpu_resets(b, 0) == 1 && rbn_cpu_resets(b, 1) == 2,
	      "reset of all: %lu/%lu", rbn_cpu_resets(b, 0),
	      rbn_cpu_resets(b, 1));
	ktap_print("resets after rbn_reset_cpu(1) and rbn_reset(): cpu0 %lu, cpu1 %lu",
		   rbn_cpu_resets(b, 0), rbn_cpu_resets(b, 1));

	for (cpu = 0; cpu < 2; cpu++) {
		rbn_user_cpu = cpu;
		for (i = 0; i < 5 + cpu; i++) {
			mock_now++;
			wr(b, 20, i);
		}
	}
	rbn_user_cpu = 0;
	CHECK(!rbn_iter_prepare(b, 2) && !rbn_iter_prepare(b, -1), "bad CPU");
	for (cpu = 0; cpu < 2; cpu++)
		it[cpu] = rbn_iter_prepare(b, cpu);
	if (!CHECK(it[0] && it[1], "prepare")) {
		rbn_iter_finish(it[0]);
		rbn_iter_finish(it[1]);
		rbn_free(b);
		return;
	}
	CHECK(!rbn_record_is_on(b), "recording off once prepared");
	rbn_iter_prepare_sync(b);
	for (cpu = 0; cpu < 2; cpu++) {
		rbn_iter_snapshot(it[cpu]);
		while (rbn_iter_peek(it[cpu], &ts)) {
			n[cpu]++;
			rbn_iter_advance(it[cpu]);
		}
	}
	CHECK(n[0] == 5 && n[1] == 6, "events seen: %u/%u", n[0], n[1]);
	CHECK(wr(b, 20, 99) != 0, "no write while the iterators exist");
	rbn_iter_finish(it[0]);
	CHECK(!rbn_record_is_on(b), "recording still off with one left");
	rbn_iter_finish(it[1]);
	CHECK(rbn_record_is_on(b), "recording on again");
	ktap_print("prepared iterators of 2 CPUs, one wait: %u and %u events; writes refused meanwhile",
		   n[0], n[1]);

	/* A reset by a caller that stopped the writers itself. */
	for (cpu = 0; cpu < 2; cpu++) {
		rbn_user_cpu = cpu;
		mock_now++;
		wr(b, 20, cpu);
	}
	rbn_user_cpu = 0;
	rbn_record_disable(b);
	rbn_reset_stopped(b);
	CHECK(!rbn_record_is_on(b), "recording still off after rbn_reset_stopped()");
	rbn_record_enable(b);
	CHECK(rbn_cpu_resets(b, 0) == 2 && rbn_cpu_resets(b, 1) == 3,
	      "rbn_reset_stopped() of all: %lu/%lu", rbn_cpu_resets(b, 0),
	      rbn_cpu_resets(b, 1));
	CHECK(!rbn_peek(b, 0, &ts, NULL) && !rbn_peek(b, 1, &ts, NULL),
	      "both CPUs empty after rbn_reset_stopped()");
	ktap_print("rbn_reset_stopped() after rbn_record_disable(): resets cpu0 %lu, cpu1 %lu, both empty",
		   rbn_cpu_resets(b, 0), rbn_cpu_resets(b, 1));
	rbn_free(b);
}

/* Where cmpxchg is not NMI safe, writers in NMI context are refused. */
static void t_nmi_unsafe(void)
{
	struct rbn_buffer *b = mkbuf(4, 0, false, 1);
	struct rbn_cpu_stats st;
	int nmi, irq, nmi_safe;

	if (!b)
		return;
	mock_now = 100;
	rbn_user_nmi_unsafe = true;
	rbn_user_context = 3;
	nmi = wr(b, 20, 1);
	rbn_user_context = 2;
	irq = wr(b, 20, 2);
	rbn_user_nmi_unsafe = false;
	rbn_user_context = 3;
	nmi_safe = wr(b, 20, 3);
	rbn_user_context = 0;
	CHECK(nmi != 0, "NMI writer refused: %d", nmi);
	CHECK(irq == 0 && nmi_safe == 0, "irq %d, NMI where safe %d", irq,
	      nmi_safe);
	CHECK(!rbn_cpu_stats(b, 0, &st) && st.written == 2 && st.dropped == 0,
	      "written %" PRIu64 " dropped %" PRIu64, st.written, st.dropped);
	ktap_print("NMI-unsafe cmpxchg: NMI write %d, hardirq write %d; NMI-safe: NMI write %d; written %" PRIu64,
		   nmi, irq, nmi_safe, st.written);
	rbn_free(b);
}

/*
 * The names of the write path's labels, one table shared by the module's
 * inject file and the tests: every label has its own, a value out of
 * range has none, and the table ends at RBN_NR_LABELS.
 */
static void t_label_names(void)
{
	static const int out[] = { INT_MIN, -1, RBN_NR_LABELS,
				   RBN_NR_LABELS + 1, INT_MAX };
	unsigned int named = 0, bad_chars = 0, dups = 0, i;
	int a, b;

	for (a = 0; a < RBN_NR_LABELS; a++) {
		const char *name = rbn_label_name(a);

		if (!CHECK(name && name[0], "label %d has no name", a))
			continue;
		named++;
		/* The enum's name in lower case, without RBN_LABEL_. */
		for (i = 0; name[i]; i++)
			if (!((name[i] >= 'a' && name[i] <= 'z') ||
			      name[i] == '_'))
				break;
		if (!CHECK(!name[i], "label %d: \"%s\"", a, name))
			bad_chars++;
		for (b = 0; b < a; b++) {
			const char *other = rbn_label_name(b);

			if (other && !strcmp(name, other)) {
				CHECK(0, "labels %d and %d are both \"%s\"",
				      b, a, name);
				dups++;
			}
		}
	}
	for (i = 0; i < ARRAY_SIZE_LENS(out); i++)
		CHECK(!rbn_label_name(out[i]), "label %d out of range named \"%s\"",
		      out[i], rbn_label_name(out[i]));
	/* Counted up to the first value without a name: the whole table. */
	for (a = 0; rbn_label_name(a); a++)
		;
	CHECK(a == RBN_NR_LABELS, "%d names before the first NULL, RBN_NR_LABELS %d",
	      a, RBN_NR_LABELS);
	CHECK(RBN_LABEL_SWAP_DONE == RBN_NR_LABELS - 1, "last label %d",
	      RBN_LABEL_SWAP_DONE);
	CHECK(!strcmp(rbn_label_name(RBN_LABEL_CONTEXT), "context") &&
	      !strcmp(rbn_label_name(RBN_LABEL_A_TAIL), "a_tail") &&
	      !strcmp(rbn_label_name(RBN_LABEL_F_WRITE), "f_write") &&
	      !strcmp(rbn_label_name(RBN_LABEL_UNNEST), "unnest") &&
	      !strcmp(rbn_label_name(RBN_LABEL_DISCARD_DONE), "discard_done"),
	      "names of context, a_tail, f_write, unnest, discard_done");
	ktap_print("%u of %d labels named (%s .. %s), %u duplicate names, %u with characters outside [a-z_], %zu values out of range without a name",
		   named, RBN_NR_LABELS, rbn_label_name(0) ?: "?",
		   rbn_label_name(RBN_NR_LABELS - 1) ?: "?", dups, bad_chars,
		   ARRAY_SIZE_LENS(out));
}

/*
 * The names of the reader's swap labels (test_nest prints them): every
 * one named "r_...", none twice, none out of range.
 */
static void t_reader_label_names(void)
{
	static const int out[] = { INT_MIN, -1, RBN_NR_READER_LABELS,
				   RBN_NR_READER_LABELS + 1, INT_MAX };
	unsigned int named = 0, dups = 0, i;
	int a, b;

	for (a = 0; a < RBN_NR_READER_LABELS; a++) {
		const char *name = rbn_reader_label_name(a);

		if (!CHECK(name && !strncmp(name, "r_", 2) && name[2],
			   "reader label %d: \"%s\"", a, name ?: "(null)"))
			continue;
		named++;
		for (b = 0; b < a; b++) {
			const char *other = rbn_reader_label_name(b);

			if (other && !strcmp(name, other)) {
				CHECK(0, "reader labels %d and %d are both \"%s\"",
				      b, a, name);
				dups++;
			}
		}
	}
	for (i = 0; i < ARRAY_SIZE_LENS(out); i++)
		CHECK(!rbn_reader_label_name(out[i]),
		      "reader label %d out of range named \"%s\"", out[i],
		      rbn_reader_label_name(out[i]));
	CHECK(!strcmp(rbn_reader_label_name(RBN_RLABEL_COMMIT_PAGE),
		      "r_commit_page") &&
	      !strcmp(rbn_reader_label_name(RBN_RLABEL_SWAPPED), "r_swapped"),
	      "names of r_commit_page, r_swapped");
	ktap_print("%u of %d reader labels named (%s .. %s), %u duplicate names, %zu values out of range without a name",
		   named, RBN_NR_READER_LABELS,
		   rbn_reader_label_name(0) ?: "?",
		   rbn_reader_label_name(RBN_NR_READER_LABELS - 1) ?: "?",
		   dups, ARRAY_SIZE_LENS(out));
}

static void t_no_warnings(void)
{
	ktap_print("rbn_user_warnings %lu", rbn_user_warnings);
	CHECK(rbn_user_warnings == 0, "%lu warnings", rbn_user_warnings);
}

/* ------------------------------------------------------------------ */

struct tcase {
	const char *name;
	void (*fn)(void);
};

/*
 * A page taken whole whose events end exactly 8 bytes before its end has
 * room for the count of missed events, just: the count must be stored.
 * Events of 2036 bytes, two to a page (4072 of 4080): the third does not
 * fit, the 8 bytes left become a discarded event, and the reader's copy
 * leaves it out. Overwrite mode, 3 sub-buffers, 5 pages' worth written.
 */
static void t_missed_count_exact_fit(void)
{
	struct rbn_buffer *b = mkbuf(3, 0, true, 1);
	unsigned int len = 2036 - RBN_EVENT_HDR_SIZE - 4;
	unsigned char data[4096] = { 0 };
	struct rbn_cpu_stats st;
	unsigned long missed = 0, commit;
	void *page;
	int i, ret;

	if (!b)
		return;
	CHECK(ev_size(len) == 2036, "event size %u", ev_size(len));
	for (i = 0; i < 10; i++)
		CHECK(rbn_write(b, len, data) == 0, "write %d", i);
	st = get_stats(b, 0);
	CHECK(st.overrun > 0, "nothing overwritten: overrun %llu",
	      (unsigned long long)st.overrun);
	page = rbn_alloc_read_page(b, 0);
	if (!CHECK(page != NULL, "read page"))
		goto out;
	ret = rbn_read_page(b, 0, &page, SUBBUF_BYTES(0), true);
	commit = local_read(&((struct rbn_page *)page)->commit);
	CHECK(ret == 2 * 2036, "read_page %d, want %d", ret, 2 * 2036);
	if (ret > 0 && (commit & RBN_MISSED_STORED))
		memcpy(&missed, ((struct rbn_page *)page)->data + ret,
		       sizeof(missed));
	CHECK((commit & RBN_MISSED_EVENTS) && (commit & RBN_MISSED_STORED) &&
	      missed == st.overrun,
	      "commit %#lx, stored %lu, overrun %llu", commit, missed,
	      (unsigned long long)st.overrun);
	rbn_free_read_page(b, 0, page);
out:
	rbn_free(b);
}


/*
 * Absolute time-stamp mode: every event behind its own absolute stamp
 * (the first of the page too), at its writer's time for both readers,
 * with gaps that would need a time extend in delta mode; the mode changes
 * only when nothing is left unread.
 */
static void t_abs_mode(void)
{
	struct rbn_config cfg = {
		.size = 8 * DATA_BYTES(0), .clock = mock_clock, .nr_cpus = 1,
		.abs_ts = true,
	};
	struct rbn_buffer *b = rbn_alloc(&cfg);
	unsigned int i, k = 0, stamps = 0;
	struct rbn_cpu_stats st;
	struct rbn_event *ev;
	u64 when[40], ts;
	void *page = NULL;
	int ret;

	if (!CHECK(!IS_ERR_OR_NULL(b), "rbn_alloc in absolute mode"))
		return;
	CHECK(rbn_time_stamp_abs(b), "absolute mode from the config");
	mock_now = 1000;
	for (i = 0; i < 40; i++) {
		mock_now += i % 5 == 4 ? (1ULL << 28) : 3;
		when[i] = mock_now;
		CHECK_Q(wr(b, 8 + i, i) == 0, "write %u", i);
	}
	st = get_stats(b, 0);
	CHECK(st.ts_abs == 40 && !st.ts_extend && !st.ts_zero,
	      "ts_abs %" PRIu64 ", ts_extend %" PRIu64 ", ts_zero %" PRIu64,
	      st.ts_abs, st.ts_extend, st.ts_zero);
	CHECK(rbn_set_time_stamp_abs(b, false) == -EBUSY &&
	      rbn_time_stamp_abs(b), "switch with data: -EBUSY, mode kept");
	page = rbn_alloc_read_page(b, 0);
	ret = page ? rbn_read_page(b, 0, &page, rbn_subbuf_size(b), false) : -1;
	if (CHECK(ret > 0, "read_page %d", ret)) {
		decode_page(page, DATA_BYTES(0), &dp, true);
		for (i = 0; i < dp.n; i++) {
			struct dent *e = &dp.e[i];

			if (e->type > RBN_TYPE_DATA_MAX) {
				stamps += e->type == RBN_TYPE_TIME_STAMP;
				continue;
			}
			if (!CHECK(k < 40, "more than 40 events"))
				break;
			CHECK_Q(i && dp.e[i - 1].type == RBN_TYPE_TIME_STAMP &&
				e->ts == when[k] && !e->delta,
				"event %u at %" PRIu64 ", written at %" PRIu64 ", entry before type %u",
				k, e->ts, when[k], i ? dp.e[i - 1].type : 99);
			k++;
		}
		CHECK(k == 40 && stamps == 40, "%u events, %u absolute stamps on the page",
		      k, stamps);
	}
	/* Everything read: the mode may change; deltas again. */
	CHECK(rbn_set_time_stamp_abs(b, false) == 0 && !rbn_time_stamp_abs(b),
	      "switch to delta mode on an empty buffer");
	for (i = 0; i < 10; i++) {
		mock_now += 5;
		when[i] = mock_now;
		CHECK_Q(wr(b, 12, i) == 0, "delta write %u", i);
	}
	CHECK(get_stats(b, 0).ts_abs == 40, "no absolute stamp in delta mode");
	for (i = 0; i < 10; i++) {
		ev = rbn_consume(b, 0, &ts, NULL);
		CHECK_Q(ev && ts == when[i], "delta event %u at %" PRIu64 ", written at %" PRIu64,
			i, ev ? ts : 0, when[i]);
	}
	/* And back, consumed this time. */
	CHECK(rbn_set_time_stamp_abs(b, true) == 0, "back to absolute mode");
	for (i = 0; i < 10; i++) {
		mock_now += i == 5 ? (1ULL << 40) : 7;
		when[i] = mock_now;
		CHECK_Q(wr(b, 100, i) == 0, "absolute write %u", i);
	}
	for (i = 0; i < 10; i++) {
		ev = rbn_consume(b, 0, &ts, NULL);
		CHECK_Q(ev && ts == when[i], "absolute event %u consumed at %" PRIu64 ", written at %" PRIu64,
			i, ev ? ts : 0, when[i]);
	}
	st = get_stats(b, 0);
	ktap_print("absolute mode: 40 events read from a page, each behind its stamp; -EBUSY with data; 10 delta and 10 absolute events consumed exactly; ts_abs %" PRIu64,
		   st.ts_abs);
	if (page)
		rbn_free_read_page(b, 0, page);
	rbn_free(b);
}


/*
 * rbn_discard() without nested writers: on an empty buffer and after an
 * event, the bytes are given back (nothing on the page, the fill level
 * back to what it was), the event is counted as discarded only, and the
 * next event is written with an absolute stamp at its own time.
 */
static void t_discard(void)
{
	struct rbn_buffer *b = mkbuf(4, 0, false, 1);
	struct rbn_cpu_stats st;
	struct rbn_event *ev;
	u64 ts, t1, t2;
	int ret;

	if (!b)
		return;
	mock_now = 5000;
	ev = rbn_reserve(b, 40);
	if (CHECK(ev, "reserve on an empty buffer")) {
		make_payload(rbn_event_data(ev), 40, 1);
		rbn_discard(b, ev);
	}
	st = get_stats(b, 0);
	CHECK(st.discarded == 1 && !st.written && !st.entries && !st.bytes &&
	      !rbn_consume(b, 0, NULL, NULL),
	      "empty buffer: discarded %" PRIu64 ", written %" PRIu64 ", bytes %" PRIu64,
	      st.discarded, st.written, st.bytes);

	mock_now = 6000;
	t1 = mock_now;
	CHECK(wr(b, 24, 2) == 0, "write");
	mock_now = 7000;
	ev = rbn_reserve(b, 200);
	if (CHECK(ev, "reserve after an event")) {
		make_payload(rbn_event_data(ev), 200, 3);
		rbn_discard(b, ev);
	}
	st = get_stats(b, 0);
	CHECK(st.discarded == 2 && st.written == 1 && st.bytes == 28,
	      "after an event: discarded %" PRIu64 ", written %" PRIu64 ", bytes %" PRIu64 " (want 28)",
	      st.discarded, st.written, st.bytes);
	mock_now = 7500;
	t2 = mock_now;
	CHECK(wr(b, 24, 4) == 0, "write after the discard");
	st = get_stats(b, 0);
	CHECK(st.ts_abs == 1 && st.bytes == 28 + 8 + 28,
	      "next event absolute: ts_abs %" PRIu64 ", bytes %" PRIu64,
	      st.ts_abs, st.bytes);
	ev = rbn_consume(b, 0, &ts, NULL);
	CHECK(ev && ts == t1 && rd32(rbn_event_data(ev)) == 2,
	      "first event at %" PRIu64 " (want %" PRIu64 ")", ev ? ts : 0, t1);
	ev = rbn_consume(b, 0, &ts, NULL);
	ret = ev ? (int)rd32(rbn_event_data(ev)) : -1;
	CHECK(ev && ts == t2 && ret == 4,
	      "event after the discard: seq %d at %" PRIu64 " (want %" PRIu64 ")",
	      ret, ev ? ts : 0, t2);
	CHECK(!rbn_consume(b, 0, NULL, NULL), "nothing else to read");
	ktap_print("discard on an empty buffer and after an event: given back, counted, the next event absolute at %" PRIu64,
		   t2);
	rbn_free(b);
}

/* ------------------------------------------------------------------ */
/* The run-time validator                                             */
/* ------------------------------------------------------------------ */

/* An event reserved (and filled) at context level @ctx, not committed. */
static struct rbn_event *vres(struct rbn_buffer *b, int ctx,
			      unsigned int len, u32 seq)
{
	struct rbn_event *ev;

	rbn_user_context = ctx;
	ev = rbn_reserve(b, len);
	if (ev)
		make_payload(rbn_event_data(ev), len, seq);
	return ev;
}

static void vcommit(struct rbn_buffer *b, int ctx, struct rbn_event *ev)
{
	rbn_user_context = ctx;
	if (ev)
		rbn_commit(b, ev);
	rbn_user_context = 0;
}

/* The validator's counts of CPU 0 since @st0. */
struct vcounts {
	u64 checked, fail, skipped;
};

static struct vcounts vdiff(struct rbn_buffer *b, const struct rbn_cpu_stats *st0)
{
	struct rbn_cpu_stats st = get_stats(b, 0);

	return (struct vcounts){
		st.validate_checked - st0->validate_checked,
		st.validate_fail - st0->validate_fail,
		st.validate_skipped - st0->validate_skipped,
	};
}

/* Two writers injected at labels of the outer one: the sandwich. */
struct vsand {
	int label[2];
	u64 ts[2];
	int done;
};

static void vsand_hook(struct rbn_buffer *b, int cpu, int label, void *arg)
{
	struct vsand *v = arg;
	u64 saved = mock_now;
	int ctx = rbn_user_context;

	(void)cpu;
	if (v->done >= 2 || label != v->label[v->done])
		return;
	mock_now = v->ts[v->done++];
	rbn_user_context = 1;
	wr(b, 40, 100 + v->done);
	rbn_user_context = ctx;
	mock_now = saved;
}

/*
 * What the validator checks, each on a buffer of its own with the event
 * broken before its commit as a broken write path would leave it: the
 * time differs (and the first failure of a buffer dumps its sub-buffer,
 * the next ones only say so), a zero delta later than its writer's time,
 * an entry before the event that runs it off its place, past the write
 * index or up to the write index, an event that is not data, a discarded
 * one that is not padding, an absolute stamp that goes back. And what it
 * does not: a buffer that does not validate, notes beyond its log, a
 * switch off in the middle of a commit, a stale note after a switch.
 */
static void t_validate(void)
{
	struct rbn_buffer *b, *quiet;
	struct rbn_event *o, *n1, *n2;
	struct rbn_cpu_stats st0;
	struct vsand vs = { .label = { RBN_LABEL_B, RBN_LABEL_SLOW_SET } };
	struct vcounts v;
	unsigned long r0, r1, r2;
	unsigned int i;

	/* clean: an outer event with two nested ones, then 20 more */
	b = mkbuf(4, 0, false, 1);
	quiet = mkbuf(4, 0, false, 1);
	if (!b || !quiet)
		goto out;
	CHECK(!rbn_validating(b) && rbn_set_validate(NULL, true) == -EINVAL,
	      "off by default, NULL refused");
	CHECK(rbn_set_validate(b, true) == 0 && rbn_set_validate(b, true) == 0 &&
	      rbn_validating(b) && rbn_user_validate_key == 1,
	      "switched on (twice): the key taken %d times", rbn_user_validate_key);
	st0 = get_stats(b, 0);
	mock_now = 1000;
	o = vres(b, 0, 24, 1);
	mock_now = 1100;
	n1 = vres(b, 1, 40, 2);
	vcommit(b, 1, n1);
	n1 = vres(b, 1, 16, 3);
	vcommit(b, 1, n1);
	mock_now = 1200;
	vcommit(b, 0, o);
	for (i = 0; i < 20; i++) {
		mock_now += 10;
		wr(b, 8 + 4 * i, 10 + i);
		mock_now += 10;
		wr(quiet, 8, i);
	}
	v = vdiff(b, &st0);
	CHECK(v.checked == 23 && !v.fail && !v.skipped && !rbn_user_reports,
	      "clean: checked %" PRIu64 " failed %" PRIu64 " skipped %" PRIu64 ", reports %lu",
	      v.checked, v.fail, v.skipped, rbn_user_reports);
	CHECK(!get_stats(quiet, 0).validate_checked,
	      "a buffer that does not validate: %" PRIu64 " checked",
	      get_stats(quiet, 0).validate_checked);

	/* the time differs: counted, reported, and dumped the first time */
	rbn_user_mismatches[0] = 0;
	o = vres(b, 0, 24, 40);
	if (o)
		o->time_delta ^= 1;
	vcommit(b, 0, o);
	v = vdiff(b, &st0);
	r1 = rbn_user_reports;
	CHECK(v.fail == 1 && r1 >= 4, "time differs: failed %" PRIu64 ", %lu report lines (want 1, a line and a dump)",
	      v.fail, r1);
	CHECK(strstr(rbn_user_mismatches, "time differs from its writer's"),
	      "the line says why");
	rbn_reset(b);
	o = vres(b, 0, 24, 41);
	if (o)
		o->time_delta ^= 2;
	vcommit(b, 0, o);
	r2 = rbn_user_reports;
	CHECK(get_stats(b, 0).validate_fail == 1 && r2 == r1 + 1,
	      "second failure: %" PRIu64 " failed, %lu more report lines (want 1 and 1: no dump again)",
	      get_stats(b, 0).validate_fail, r2 - r1);
	/* switched off and on: the next failure dumps again */
	rbn_set_validate(b, false);
	rbn_set_validate(b, true);
	rbn_reset(b);
	o = vres(b, 0, 24, 42);
	if (o)
		o->time_delta ^= 1;
	vcommit(b, 0, o);
	CHECK(rbn_user_reports >= r2 + 4,
	      "failure after a switch: %lu more report lines (want a line and a dump)",
	      rbn_user_reports - r2);
	rbn_free(b);

	/*
	 * An entry before the event made longer: over the next event, past
	 * the write index, up to the write index.
	 */
	for (i = 0; i < 4; i++) {
		static const char * const what[] = {
			"an entry over the next one", "an entry past the write index",
			"an entry up to the write index",
			"an entry whose length word wraps to 0"
		};
		static const char * const why[] = {
			"not where it was reserved", "an entry runs past the write index",
			"not found below the write index",
			"an entry runs past the write index"
		};
		/* n2 fails; n1, n2 and n3; n2 and n3; n1, n2 and n3 */
		static const unsigned int fails[] = { 1, 3, 2, 3 };
		struct rbn_event *n3;

		b = mkbuf(4, 0, false, 1);
		if (!b || rbn_set_validate(b, true))
			goto out;
		mock_now = 5000;
		wr(b, 16, 1);
		st0 = get_stats(b, 0);
		rbn_user_mismatches[0] = 0;
		o = vres(b, 0, 24, 2);
		n1 = vres(b, 1, 200, 3);	/* type_len 0: array[0] is its length */
		vcommit(b, 1, n1);
		n2 = vres(b, 1, 16, 4);
		vcommit(b, 1, n2);
		n3 = vres(b, 1, 16, 5);
		vcommit(b, 1, n3);
		if (n1 && n2 && n3 && i < 3)
			n1->array[0] += i == 0 ? rbn_event_length(n2) :
				i == 1 ? 4096 :
				rbn_event_length(n2) + rbn_event_length(n3);
		else if (n1)
			n1->array[0] = 0xfffffffc;	/* + 4: 0 in a u32 */
		vcommit(b, 0, o);
		v = vdiff(b, &st0);
		/* The outer event lies before n1 and decodes. */
		CHECK(v.fail == fails[i] && v.checked == 4 - fails[i],
		      "%s: failed %" PRIu64 " (want %u), checked %" PRIu64,
		      what[i], v.fail, fails[i], v.checked);
		CHECK(strstr(rbn_user_mismatches, why[i]), "%s: the lines say '%s'",
		      what[i], why[i]);
		rbn_free(b);
	}

	/* not a data event, and a discarded event that is not padding */
	b = mkbuf(4, 0, false, 1);
	if (!b || rbn_set_validate(b, true))
		goto out;
	mock_now = 7000;
	st0 = get_stats(b, 0);
	rbn_user_mismatches[0] = 0;
	o = vres(b, 0, 24, 1);
	if (o) {
		o->array[0] = rbn_event_length(o) - 4;
		o->type_len = RBN_TYPE_PADDING;
	}
	vcommit(b, 0, o);
	v = vdiff(b, &st0);
	CHECK(v.fail == 1 && strstr(rbn_user_mismatches, "not a data event"),
	      "data turned padding: failed %" PRIu64, v.fail);
	rbn_user_mismatches[0] = 0;
	rbn_reset(b);
	st0 = get_stats(b, 0);
	o = vres(b, 0, 24, 2);
	n1 = vres(b, 1, 24, 3);
	n2 = vres(b, 2, 24, 4);
	vcommit(b, 2, n2);
	rbn_user_context = 1;
	if (n1)
		rbn_discard(b, n1);	/* n2 behind it: left in place */
	if (n1)
		n1->type_len = 6;	/* 24 bytes of data again */
	vcommit(b, 0, o);
	v = vdiff(b, &st0);
	CHECK(v.fail == 1 && v.checked == 2 &&
	      strstr(rbn_user_mismatches, "discarded but not padding"),
	      "discarded in place, turned data: failed %" PRIu64 ", checked %" PRIu64,
	      v.fail, v.checked);
	rbn_free(b);

	/* the sandwich: a zero delta later than the writer's time */
	for (i = 0; i < 2; i++) {
		b = mkbuf(4, 0, false, 1);
		if (!b || rbn_set_validate(b, true))
			goto out;
		mock_now = 9000;
		wr(b, 16, 1);
		st0 = get_stats(b, 0);
		vs.done = 0;
		rbn_user_mismatches[0] = 0;
		vs.ts[0] = 9200;
		vs.ts[1] = 9300;
		mock_now = 9100;
		rbn_test_set_hook(vsand_hook, &vs);
		o = vres(b, 0, 24, 2);
		rbn_test_set_hook(NULL, NULL);
		CHECK(o && (rbn_event_flags(b, o) & RBN_EV_ZERO_DELTA),
		      "sandwiched: flags 0x%x", o ? rbn_event_flags(b, o) : 0);
		if (o && i)
			o->time_delta = 150;	/* 9350: later than 9100 */
		vcommit(b, 0, o);
		v = vdiff(b, &st0);
		/*
		 * With a delta, the event after it (the second interrupt's,
		 * whose delta counts from the sandwich's time) is later
		 * than its writer's time too.
		 */
		CHECK(v.fail == 2 * i && v.checked == 3 - 2 * i,
		      "sandwich%s: failed %" PRIu64 ", checked %" PRIu64,
		      i ? " with a delta" : "", v.fail, v.checked);
		CHECK(!i || (strstr(rbn_user_mismatches, "zero delta later than its writer's time") &&
			     strstr(rbn_user_mismatches, "time differs from its writer's")),
		      "sandwich with a delta: the lines say why");
		rbn_free(b);
	}

	/* absolute mode: a stamp that goes back */
	b = mkbuf(4, 0, false, 1);
	if (b)
		rbn_free(b);
	{
		struct rbn_config cfg = {
			.size = 4 * 4080, .clock = mock_clock, .nr_cpus = 1,
			.abs_ts = true, .validate = true,
		};

		b = rbn_alloc(&cfg);
	}
	if (IS_ERR_OR_NULL(b)) {
		CHECK(0, "absolute-mode buffer");
		goto out_quiet;
	}
	CHECK(rbn_validating(b), "config flag: validating from the start");
	mock_now = 20000;
	wr(b, 16, 1);
	st0 = get_stats(b, 0);
	mock_now = 20100;
	rbn_user_mismatches[0] = 0;
	o = vres(b, 0, 24, 2);
	/* the absolute stamp in front of it, 100 ns before the last event */
	if (o)
		((struct rbn_event *)((char *)o - 8))->time_delta -= 200;
	vcommit(b, 0, o);
	v = vdiff(b, &st0);
	CHECK(v.fail == 1 && strstr(rbn_user_mismatches, "time went backwards"),
	      "absolute stamp gone back: failed %" PRIu64, v.fail);
	rbn_free(b);

	/* notes beyond the log, a switch in the middle of a commit */
	b = mkbuf(8, 0, false, 1);
	if (!b || rbn_set_validate(b, true))
		goto out_quiet;
	mock_now = 30000;
	st0 = get_stats(b, 0);
	o = vres(b, 0, 24, 1);
	for (i = 0; i < 40; i++) {
		n1 = vres(b, 1, 16, 10 + i);
		vcommit(b, 1, n1);
	}
	vcommit(b, 0, o);
	v = vdiff(b, &st0);
	CHECK(v.checked == 32 && v.skipped == 9 && !v.fail,
	      "41 events in one commit: checked %" PRIu64 " (want 32), skipped %" PRIu64 " (want 9)",
	      v.checked, v.skipped);
	/*
	 * Switched off in the middle of a commit, while another buffer
	 * keeps the static key on: the notes taken before are dropped.
	 */
	rbn_set_validate(quiet, true);
	st0 = get_stats(b, 0);
	o = vres(b, 0, 24, 60);
	n1 = vres(b, 1, 16, 61);
	vcommit(b, 1, n1);
	rbn_set_validate(b, false);
	vcommit(b, 0, o);
	wr(b, 16, 62);
	rbn_set_validate(quiet, false);
	v = vdiff(b, &st0);
	CHECK(!v.checked && !v.fail, "switched off in a commit: checked %" PRIu64,
	      v.checked);
	rbn_free(b);

	/*
	 * A writer nested in the publishing itself: the commit publishes
	 * its event before it is checked, and it is counted skipped, not
	 * decoded (a reader may have its sub-buffer by then).
	 */
	b = mkbuf(4, 0, false, 1);
	if (!b || rbn_set_validate(b, true))
		goto out_quiet;
	{
		struct nest nw = {
			.label = RBN_LABEL_COMMIT_WRITE, .count = 1, .ctx = 1,
			.len = 16, .seq = 2, .ts = 50100, .after = 50200,
		};

		mock_now = 50000;
		st0 = get_stats(b, 0);
		o = vres(b, 0, 24, 1);
		rbn_test_set_hook(nest_hook, &nw);
		vcommit(b, 0, o);
		rbn_test_set_hook(NULL, NULL);
		wr(b, 16, 3);
		v = vdiff(b, &st0);
		CHECK(nw.done == 1 && !nw.ret && v.checked == 2 && v.skipped == 1 &&
		      !v.fail,
		      "a writer nested in the publishing (%d): checked %" PRIu64 " skipped %" PRIu64 " failed %" PRIu64 " (want 2 1 0)",
		      nw.done, v.checked, v.skipped, v.fail);
	}
	rbn_free(b);

	/*
	 * A note left by a switch off: its event is published unchecked,
	 * and once the ring went round, its sub-buffer is the commit page
	 * again with other events. Switched on again, it is not read (a
	 * decode there would find nothing where it points).
	 */
	b = mkbuf(4, 0, true, 1);
	if (!b || rbn_set_validate(b, true))
		goto out_quiet;
	mock_now = 40000;
	wr(b, 16, 1);
	o = vres(b, 0, 24, 2);
	n1 = vres(b, 1, 16, 3);
	vcommit(b, 1, n1);
	rbn_set_validate(b, false);
	vcommit(b, 0, o);
	st0 = get_stats(b, 0);
	for (i = 0; i < 10000 &&
	     get_stats(b, 0).pages_touched < st0.pages_touched + 4; i++)
		wr(b, 16, 10 + i);
	rbn_set_validate(b, true);
	st0 = get_stats(b, 0);
	wr(b, 16, 20000);
	v = vdiff(b, &st0);
	CHECK(v.checked == 1 && !v.fail && v.skipped == 1,
	      "a stale note after the ring went round (%u events): checked %" PRIu64 " failed %" PRIu64 " skipped %" PRIu64 " (want 1 0 1)",
	      i, v.checked, v.fail, v.skipped);
	rbn_free(b);
	b = NULL;
	r0 = rbn_user_reports;
	ktap_print("validator: clean events checked, every kind of break counted (%lu report lines), buffers without it untouched, notes past the log skipped, switches honoured",
		   r0);
out_quiet:
	rbn_free(quiet);
	rbn_user_context = 0;
	rbn_test_set_hook(NULL, NULL);
	CHECK(!rbn_user_validate_key, "every buffer freed: the key still taken %d times",
	      rbn_user_validate_key);
	return;
out:
	rbn_free(b);
	goto out_quiet;
}

/* A swap (or a write) from the test hook, once, at a label. */
struct swap_hook {
	int label;
	struct rbn_buffer *a, *b;	/* swap a and b; b NULL: write to a */
	int ret;
	int done;
	unsigned int flags;		/* of the nested write */
	bool all;			/* rbn_swap(), not rbn_swap_cpu() */
	int swap_labels;		/* RBN_LABEL_SWAP seen: swaps tried */
};

static void swap_hook_fn(struct rbn_buffer *buf, int cpu, int label, void *arg)
{
	struct swap_hook *h = arg;
	int saved = rbn_user_context;

	(void)buf;
	(void)cpu;
	if (label == RBN_LABEL_SWAP)
		h->swap_labels++;
	if (label != h->label || h->done)
		return;
	h->done = 1;
	rbn_user_context = saved + 1;	/* an interrupt */
	if (h->b && h->all) {
		h->ret = rbn_swap(h->a, h->b);
	} else if (h->b) {
		h->ret = rbn_swap_cpu(h->a, h->b, 0);
	} else {
		struct rbn_event *ev = rbn_reserve(h->a, 16);

		h->ret = ev ? 0 : -EBUSY;
		if (ev) {
			make_payload(rbn_event_data(ev), 16, 900);
			rbn_commit(h->a, ev);
		}
	}
	rbn_user_context = saved;
}

/* The sequence numbers a buffer's CPU 0 gives, consumed, in @seq. */
static unsigned int swap_drain(struct rbn_buffer *b, u32 *seq, unsigned int max)
{
	struct rbn_event *ev;
	unsigned int n = 0;

	while (n < max && (ev = rbn_consume(b, 0, NULL, NULL)))
		seq[n++] = rd32(rbn_event_data(ev));
	return n;
}

/*
 * rbn_swap_cpu(): refuses what it must, moves a CPU's ring with its
 * counters, refuses (-EBUSY) while a writer of the CPU is between its
 * lock and its commit, and a writer interrupted before its lock writes
 * into the buffer that is its own after the swap; a writer nested in the
 * swap finds recording off.
 */
static void t_swap(void)
{
	struct rbn_buffer *a = mkbuf(4, 0, false, 2), *b = mkbuf(4, 0, false, 2);
	struct rbn_buffer *c1 = mkbuf(4, 1, false, 2), *c2 = mkbuf(8, 0, false, 2);
	struct rbn_buffer *c3 = mkbuf(4, 0, true, 2);
	struct swap_hook h = { 0 };
	u32 seq[16];
	unsigned int n;

	if (!a || !b || !c1 || !c2 || !c3)
		goto out;
	mock_now = 100;
	CHECK(rbn_swap_cpu(a, a, 0) == -EINVAL && rbn_swap_cpu(a, b, 2) == -EINVAL &&
	      rbn_swap_cpu(a, b, -1) == -EINVAL && rbn_swap_cpu(a, c1, 0) == -EINVAL &&
	      rbn_swap_cpu(a, c2, 0) == -EINVAL && rbn_swap_cpu(a, c3, 0) == -EINVAL,
	      "bad swaps refused with EINVAL");
	rbn_user_cpu = 1;
	CHECK(rbn_swap_cpu(a, b, 0) == -EINVAL, "swap of CPU 0 from CPU 1 refused");
	rbn_user_cpu = 0;

	/* a: 1 2 3, b: 10 11; swapped, and back */
	wr(a, 8, 1);
	wr(a, 8, 2);
	wr(a, 8, 3);
	wr(b, 8, 10);
	wr(b, 8, 11);
	CHECK(rbn_swap_cpu(a, b, 0) == 0, "swap");
	CHECK(get_stats(a, 0).written == 2 && get_stats(b, 0).written == 3,
	      "written follows the ring: a %" PRIu64 ", b %" PRIu64,
	      get_stats(a, 0).written, get_stats(b, 0).written);
	wr(a, 8, 12);
	n = swap_drain(a, seq, 16);
	CHECK(n == 3 && seq[0] == 10 && seq[1] == 11 && seq[2] == 12,
	      "a after the swap: %u events (%u %u %u)", n, seq[0], seq[1], seq[2]);
	n = swap_drain(b, seq, 16);
	CHECK(n == 3 && seq[0] == 1 && seq[2] == 3, "b after the swap: %u events", n);

	/* a writer between its lock and its commit: EBUSY, nothing moved */
	wr(b, 8, 20);
	h = (struct swap_hook){ .label = RBN_LABEL_RESERVED, .a = a, .b = b };
	rbn_test_set_hook(swap_hook_fn, &h);
	CHECK(wr(a, 8, 21) == 0, "write with a swap at reserved");
	rbn_test_set_hook(NULL, NULL);
	CHECK(h.done && h.ret == -EBUSY, "swap inside a write: %d (want -EBUSY)",
	      h.ret);
	n = swap_drain(a, seq, 16);
	CHECK(n == 1 && seq[0] == 21, "a kept its event: %u", n);
	n = swap_drain(b, seq, 16);
	CHECK(n == 1 && seq[0] == 20, "b kept its event: %u", n);

	/* the same for a writer of the other buffer */
	h = (struct swap_hook){ .label = RBN_LABEL_RESERVED, .a = a, .b = b };
	rbn_test_set_hook(swap_hook_fn, &h);
	CHECK(wr(b, 8, 22) == 0, "write to b with a swap at reserved");
	rbn_test_set_hook(NULL, NULL);
	CHECK(h.done && h.ret == -EBUSY, "swap inside a write to b: %d (want -EBUSY)",
	      h.ret);
	n = swap_drain(b, seq, 16);
	CHECK(n == 1 && seq[0] == 22 && rbn_empty_cpu(a, 0),
	      "b kept its event, a empty: %u", n);

	/* a swap before the writer's lock: it writes into its new ring */
	wr(a, 8, 30);
	wr(b, 8, 40);
	h = (struct swap_hook){ .label = RBN_LABEL_CONTEXT, .a = a, .b = b };
	rbn_test_set_hook(swap_hook_fn, &h);
	CHECK(wr(a, 8, 31) == 0, "write with a swap before its lock");
	rbn_test_set_hook(NULL, NULL);
	CHECK(h.done && h.ret == 0, "swap before a writer's lock: %d", h.ret);
	n = swap_drain(a, seq, 16);
	CHECK(n == 2 && seq[0] == 40 && seq[1] == 31,
	      "a: the other ring, then the write: %u (%u %u)", n, seq[0], seq[1]);
	n = swap_drain(b, seq, 16);
	CHECK(n == 1 && seq[0] == 30, "b: a's old ring: %u", n);

	/*
	 * A writer nested in the swap: before the stores, its event is in
	 * the ring that goes to b; after them, in the one that comes to a.
	 */
	h = (struct swap_hook){ .label = RBN_LABEL_SWAP, .a = a };
	rbn_test_set_hook(swap_hook_fn, &h);
	CHECK(rbn_swap_cpu(a, b, 0) == 0, "swap with a writer nested in it");
	rbn_test_set_hook(NULL, NULL);
	CHECK(h.done && !h.ret && rbn_empty_cpu(a, 0) && !rbn_empty_cpu(b, 0),
	      "writer at the start of the swap: %s, its event in %s",
	      h.ret ? "refused" : "wrote", rbn_empty_cpu(b, 0) ? "a" : "b");
	swap_drain(b, seq, 16);
	h = (struct swap_hook){ .label = RBN_LABEL_SWAP_DONE, .a = a };
	rbn_test_set_hook(swap_hook_fn, &h);
	CHECK(rbn_swap_cpu(a, b, 0) == 0, "swap with a writer nested at its end");
	rbn_test_set_hook(NULL, NULL);
	CHECK(h.done && !h.ret && !rbn_empty_cpu(a, 0) && rbn_empty_cpu(b, 0),
	      "writer at the end of the swap: %s, its event in %s",
	      h.ret ? "refused" : "wrote", rbn_empty_cpu(a, 0) ? "b" : "a");
	swap_drain(a, seq, 16);
	CHECK(wr(a, 8, 50) == 0 && wr(b, 8, 60) == 0, "writes after the swaps");
	ktap_print("swap: bad pairs refused, rings and counters moved, -EBUSY inside a write, a writer before its lock moved along, writers inside the swap on either side of it");
out:
	rbn_free(a);
	rbn_free(b);
	rbn_free(c1);
	rbn_free(c2);
	rbn_free(c3);
}

/* Events of CPU @cpu, consumed: their sequence numbers in @seq. */
static unsigned int swap_drain_cpu(struct rbn_buffer *b, int cpu, u32 *seq,
				   unsigned int max)
{
	struct rbn_event *ev;
	unsigned int n = 0;

	while (n < max && (ev = rbn_consume(b, cpu, NULL, NULL)))
		seq[n++] = rd32(rbn_event_data(ev));
	return n;
}

/*
 * rbn_swap(): every CPU's ring moves; a mismatch on any CPU swaps
 * nothing; a CPU that stays busy (a writer of CPU 1 between its lock and
 * its commit calls it) gives -EBUSY with the CPUs before it swapped and
 * it not.
 */
static void t_swap_all(void)
{
	struct rbn_buffer *a = mkbuf(4, 0, false, 2), *b = mkbuf(4, 0, false, 2);
	struct rbn_buffer *c1 = mkbuf(4, 0, false, 3);
	struct rbn_buffer *c2 = mkbuf(8, 0, false, 2);
	struct swap_hook h = { 0 };
	unsigned int n0, n1;
	u32 s0[8], s1[8];

	if (!a || !b || !c1 || !c2)
		goto out;
	mock_now = 100;
	CHECK(rbn_swap(a, a) == -EINVAL && rbn_swap(a, NULL) == -EINVAL &&
	      rbn_swap(a, c1) == -EINVAL, "bad pairs refused with EINVAL");
	wr(a, 8, 5);
	h = (struct swap_hook){ .label = -1 };
	rbn_test_set_hook(swap_hook_fn, &h);
	CHECK(rbn_swap(a, c2) == -EINVAL && !h.swap_labels &&
	      !rbn_empty_cpu(a, 0) && rbn_empty_cpu(c2, 0),
	      "other geometry: EINVAL, %d CPUs tried, nothing moved", h.swap_labels);
	rbn_test_set_hook(NULL, NULL);
	swap_drain_cpu(a, 0, s0, 8);
	rbn_user_cpu = 0;
	wr(a, 8, 1);
	wr(b, 8, 2);
	rbn_user_cpu = 1;
	wr(a, 8, 3);
	wr(b, 8, 4);
	CHECK(rbn_swap(a, b) == 0, "swap of every CPU from CPU 1");
	CHECK(rbn_user_cpu == 1, "still on CPU 1 after it");
	rbn_user_cpu = 0;
	n0 = swap_drain_cpu(a, 0, s0, 8);
	n1 = swap_drain_cpu(a, 1, s1, 8);
	CHECK(n0 == 1 && s0[0] == 2 && n1 == 1 && s1[0] == 4,
	      "a has b's rings: cpu0 %u (%u), cpu1 %u (%u)", n0, s0[0], n1, s1[0]);
	n0 = swap_drain_cpu(b, 0, s0, 8);
	n1 = swap_drain_cpu(b, 1, s1, 8);
	CHECK(n0 == 1 && s0[0] == 1 && n1 == 1 && s1[0] == 3,
	      "b has a's rings: cpu0 %u (%u), cpu1 %u (%u)", n0, s0[0], n1, s1[0]);

	/* CPU 1 busy for every try: CPU 0 swapped, CPU 1 not */
	rbn_user_cpu = 0;
	wr(a, 8, 10);
	rbn_user_cpu = 1;
	wr(b, 8, 11);
	h = (struct swap_hook){ .label = RBN_LABEL_RESERVED, .a = a, .b = b,
				.all = true };
	rbn_test_set_hook(swap_hook_fn, &h);
	CHECK(wr(a, 8, 12) == 0, "write on CPU 1 with a swap of all at reserved");
	rbn_test_set_hook(NULL, NULL);
	CHECK(h.done && h.ret == -EBUSY, "swap with CPU 1 busy: %d (want -EBUSY)",
	      h.ret);
	CHECK(h.swap_labels == 1 + 100,
	      "swaps tried: %d (want CPU 0 once, CPU 1 100 times)", h.swap_labels);
	n0 = swap_drain_cpu(b, 0, s0, 8);
	n1 = swap_drain_cpu(a, 1, s1, 8);
	CHECK(n0 == 1 && s0[0] == 10 && rbn_empty_cpu(a, 0),
	      "CPU 0 swapped: b has %u (%u), a none", n0, s0[0]);
	CHECK(n1 == 1 && s1[0] == 12 && swap_drain_cpu(b, 1, s1, 8) == 1 &&
	      s1[0] == 11, "CPU 1 not swapped: the write in a, b's own in b");
	rbn_user_cpu = 0;
	ktap_print("swap of all CPUs: rings moved on both, EINVAL swaps nothing, a busy CPU gives -EBUSY after %d tries with the CPUs before it swapped",
		   100);
out:
	rbn_free(a);
	rbn_free(b);
	rbn_free(c1);
	rbn_free(c2);
}

static const struct tcase cases[] = {
	{ "header_layout", t_header_layout },
	{ "missed_count_exact_fit", t_missed_count_exact_fit },
	{ "recursion_after_nested", t_recursion_after_nested },
	{ "encoding_small", t_encoding_small },
	{ "encoding_large", t_encoding_large },
	{ "encoding_all_lengths", t_encoding_all_lengths },
	{ "page_first_event", t_page_first_event },
	{ "page_cross_small_left", t_page_cross_small_left },
	{ "page_cross_discard", t_page_cross_discard },
	{ "page_cross_consume", t_page_cross_consume },
	{ "time_extend", t_time_extend },
	{ "time_extend_page_start", t_time_extend_page_start },
	{ "abs_nested", t_abs_nested },
	{ "abs_59bit", t_abs_59bit },
	{ "abs_mode", t_abs_mode },
	{ "discard", t_discard },
	{ "validate", t_validate },
	{ "swap", t_swap },
	{ "swap_all", t_swap_all },
	{ "big_clock", t_big_clock },
	{ "clock_back_fast", t_clock_back_fast },
	{ "clock_back_nmi", t_clock_back_nmi },
	{ "large_order0", t_large_order0 },
	{ "large_order2", t_large_order2 },
	{ "producer_consumer", t_producer_consumer },
	{ "overwrite_consume", t_overwrite_consume },
	{ "overwrite_pages", t_overwrite_pages },
	{ "commit_overrun", t_commit_overrun },
	{ "resize_grow", t_resize_grow },
	{ "resize_shrink", t_resize_shrink },
	{ "resize_busy_invalid", t_resize_busy_invalid },
	{ "reset", t_reset },
	{ "reset_cpu", t_reset_cpu },
	{ "record_onoff", t_record_onoff },
	{ "stats", t_stats },
	{ "recursion", t_recursion },
	{ "read_page_zero_swap", t_read_page_zero_swap },
	{ "read_page_zero_copy", t_read_page_zero_copy },
	{ "read_page_zero_wrap", t_read_page_zero_wrap },
	{ "read_page_short_len", t_read_page_short_len },
	{ "multi_cpu", t_multi_cpu },
	{ "bad_config", t_bad_config },
	{ "iter", t_iter },
	{ "fill_level", t_fill_level },
	{ "resets_and_prepared_iters", t_resets_and_prepared_iters },
	{ "nmi_unsafe_cmpxchg", t_nmi_unsafe },
	{ "label_names", t_label_names },
	{ "reader_label_names", t_reader_label_names },
	{ "no_warnings", t_no_warnings },
};

int main(void)
{
	unsigned int i, n = sizeof(cases) / sizeof(cases[0]);

	ktap_start(n);
	for (i = 0; i < n; i++) {
		t_fail = 0;
		rbn_user_cpu = 0;
		rbn_user_context = 0;
		rbn_test_set_hook(NULL, NULL);
		cases[i].fn();
		ktap_result(t_fail == 0, cases[i].name);
	}
	return ktap_finish();
}
