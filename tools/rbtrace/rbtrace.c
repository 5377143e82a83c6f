// SPDX-License-Identifier: GPL-2.0
/*
 * rbtrace - record, check and report rbnest recordings.
 *
 * The pages are described by the recording's own format files, parsed by
 * libtraceevent; events are walked with libtraceevent's kbuffer and their
 * fields read with tep_read_number_field(). Before kbuffer sees a page,
 * rbtrace walks its entries once itself, only to check that every header
 * and every length stays inside the page, because kbuffer trusts them.
 *
 * kbuffer's known differences from the page format are designed around:
 *  - none left: kbuffer adds the delta of a padding (a discarded event)
 *    to its clock, and so do rbnest's writers and readers;
 *  - an absolute stamp gets its upper 5 bits from the previous time
 *    without the carry into bit 59: rbtrace rebuilds the full time from
 *    the 59 bits kbuffer got right, as the writer does;
 *  - the missed-events count is read from the page header, because
 *    kbuffer does not see it behind a leading time extend.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event-parse.h>
#include <kbuffer.h>
#include <trace-seq.h>

#include "rbn_events.h"
#include "rbtrace.h"
#include "fmtcheck.h"
#include "args.h"
#include "manifest.h"
#include "plot.h"

/*
 * "rbtrace export" is export.c's rbtrace_export_stats(); weak, so that
 * rbtrace also builds without it (the command then says so).
 */
#if __has_include("export.h")
#include "export.h"
#pragma weak rbtrace_export_stats
#define HAVE_EXPORT	1
#else
#define HAVE_EXPORT	0
#endif

/* The page format (ftrace's, x86_64), as rb_core.h defines it. */
#define PG_HDR_SIZE		16U
#define PG_MISSED_EVENTS	(1ULL << 31)
#define PG_MISSED_STORED	(1ULL << 30)
#define PG_COMMIT_MASK		((1ULL << 30) - 1)
#define TYPE_DATA_MAX		28
#define TYPE_PADDING		29
#define TYPE_TIME_EXTEND	30
#define TYPE_TIME_STAMP		31
#define TS59			(1ULL << 59)
#define TS59_MASK		(TS59 - 1)
/*
 * The arguments of RBN_HEADER_PAGE_FMT for this page format and @size
 * data bytes: offset, size and signedness of the time stamp, the commit,
 * its first byte and the data (char is signed on x86_64).
 */
#define PG_HEADER_PAGE_ARGS(size) \
	0U, 8U, 0U, 8U, 8U, 1U, 8U, 1U, 1U, PG_HDR_SIZE, (size), 1U
/* rbn_event_flags(): shown at the previous event's time (rb_core.h). */
#define EV_ZERO_DELTA		0x08
/* rbn_event_flags(): its clock read below a time taken before on the CPU. */
#define EV_CLOCK_BACK		0x40

#define MAX_CPUS		1024
#define MAX_DEPTH		8
#define NR_CTX			4

static const char *const ctx_names[NR_CTX] = {
	"task", "softirq", "hardirq", "nmi",
};

/* An event's "missed" when the page lost events without room to count them */
#define RBT_MISSED_UNKNOWN	(~0ULL)

/* One data event, as rebuilt from the recording. */
struct rbt_event {
	unsigned long long ts;		/* rebuilt time */
	unsigned long long seq;
	unsigned long long fts;		/* the writer's "ts" field */
	/*
	 * On the first event of a page that says events were lost before
	 * it: their count, or RBT_MISSED_UNKNOWN when the page had no room
	 * for it. 0 on every other event.
	 */
	unsigned long long missed;
	int pid;
	unsigned int page;
	unsigned int off;		/* offset of the header in data[] */
	unsigned char ctx;
	unsigned char depth;
	unsigned char flags;
	unsigned char cflags;
	unsigned char pcount;
	unsigned short size;
	unsigned int cpu_field;
	/* the event in its page: valid until the next event is read */
	void *data;
};

/*
 * Sequence numbers a streaming check keeps open: a nested writer takes
 * its number before the writer it interrupted, and the two events may lie
 * a page apart, so numbers arrive out of order by a few. A number still
 * missing SEQ_WIN numbers later is missing for good. The pages of the
 * last SEQ_WIN numbers keep what the gap accounting needs of them.
 */
#ifndef RBTRACE_FUZZ
#define SEQ_WIN		65536ULL
#else
/* small inputs: a small window, set up fast, and its edges reached */
#define SEQ_WIN		256ULL
#endif

struct seq_win {
	bool started;
	bool settled;			/* a number below base is final */
	bool first_missed;		/* page 0 says events were lost */
	unsigned long long pages;	/* pages whose counts are known */
	unsigned long long base;	/* every seq below: seen or missing */
	unsigned long long hi;		/* highest seq seen, plus one */
	unsigned long long run;		/* missing ones just below base */
	unsigned long long sum, extra;	/* gaps charged, gaps reported */
	unsigned char seen[SEQ_WIN / 8];
	unsigned int page_of[SEQ_WIN];	/* page of each seq seen */
	unsigned int off_of[SEQ_WIN];	/* and its offset there */
	unsigned long long cum[SEQ_WIN]; /* stored counts up to each page */
	unsigned char unknown[SEQ_WIN];	/* the page lost an uncounted number */
};

/* Events by context and nesting depth. */
struct ctx_depth {
	unsigned long n[NR_CTX][MAX_DEPTH + 1];
	int max_d;
};

/* Pages read from a cpuN.raw file at once. */
#ifndef RBTRACE_FUZZ
#define RBT_CHUNK	16
#else
#define RBT_CHUNK	1
#endif

/*
 * A CPU of a recording, read one page at a time: the page whose events
 * are handed out (decoded into ev[]) and the page after it, whose bounds
 * are walked ahead so that its missed-events count is known while the
 * events before it are checked.
 */
struct rbt_cpu {
	char path[PATH_MAX];
	bool present;
	bool done;			/* every event handed out */
	int fd;				/* cpuN.raw, or -1 */
	const unsigned char *mem;	/* or its pages in memory */
	unsigned int nr_pages;		/* pages in the file */
	unsigned int nr_walked;		/* pages walked so far */
	unsigned int nr_decoded;	/* pages decoded so far */
	unsigned char *buf;		/* RBT_CHUNK + 1 pages */
	unsigned int buf_first, buf_nr;	/* the pages in buf */
	struct walk *w;			/* [2]: a page and the one after it */
	/* the events of the page decoded last */
	struct rbt_event *ev;
	unsigned long nr_ev, cap_ev, pos;
	/* the events handed out */
	struct seq_win *seq;		/* when checking */
	struct rbt_event last;
	unsigned long long events;
	unsigned long long first_ts, last_ts;
	/* page accounting */
	unsigned long missed_pages;
	unsigned long missed_unknown;
	unsigned long long missed_sum;
	/* counts */
	unsigned long nr_abs, nr_extend, nr_zero, nr_pad;
	unsigned long nr_clock_back;
	unsigned long long gap_sum, gap_max, gap_unverified;
};

struct rbt_rec {
	const char *dir;
	struct tep_handle *tep;
	struct tep_event *event;
	struct tep_format_field *f_seq, *f_ts, *f_cpu, *f_ctx, *f_depth,
		*f_flags, *f_cflags, *f_pid, *f_pcount;
	struct kbuffer *kb;
	unsigned int data_size;		/* bytes of data[] in a sub-buffer */
	unsigned int subbuf;		/* bytes of a sub-buffer */
	unsigned int min_size;		/* an event holds all fields read */
	int nr_cpus;
	struct rbt_cpu *cpu;
	unsigned long violations;
	bool quiet;
	bool json;			/* check --json: notes on stderr */
	bool check;			/* check every event handed out */
	bool has_cmdlines;		/* REC/saved_cmdlines was read */
	/* the merge: CPUs by the time of their next event */
	int *heap;
	int nr_heap;
	int last_cpu;			/* of the event handed out last */
	int last_cpu_out;		/* the same, for the switch count */
	unsigned long long events;	/* handed out */
	unsigned long long switches;	/* from one CPU to another */
	unsigned long long prev_ts;
	struct ctx_depth cd;
};

static const char *prog = "rbtrace";

#ifdef RBTRACE_FUZZ
/*
 * Built into a fuzz target (tools/rbtrace/fuzz): bad input returns to the
 * target through this jump buffer instead of exiting.
 */
static jmp_buf *rbt_fuzz_catch;
#endif

/* ------------------------------------------------------------------ */
/* Messages                                                           */
/* ------------------------------------------------------------------ */

static void __attribute__((format(printf, 1, 2), noreturn))
die_input(const char *fmt, ...)
{
	va_list ap;

#ifdef RBTRACE_FUZZ
	if (rbt_fuzz_catch)
		longjmp(*rbt_fuzz_catch, 1);
#endif
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(RBT_EXIT_INPUT);
}

#define MAX_SHOWN	20

static void __attribute__((format(printf, 2, 3)))
violation(struct rbt_rec *r, const char *fmt, ...)
{
	va_list ap;

	if (r->violations++ >= MAX_SHOWN)
		return;
	fprintf(stderr, "VIOLATION: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die_input("out of memory");
	return p;
}

/* ------------------------------------------------------------------ */
/* Loading the format files                                           */
/* ------------------------------------------------------------------ */

static char *read_file(const char *path, size_t *size, bool must)
{
	char *buf = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0) {
		if (!must)
			return NULL;
		die_input("%s: %s", path, strerror(errno));
	}
	for (;;) {
		if (len + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 8192;
			buf = xrealloc(buf, cap);
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0)
			die_input("%s: read at offset %zu: %s", path, len,
				  strerror(errno));
		if (!n)
			break;
		len += n;
	}
	close(fd);
	buf[len] = '\0';
	*size = len;
	return buf;
}

/*
 * The size of field "data" in header_page (@text, @size bytes): the
 * sub-buffer's data bytes, after a check of the whole text (fmtcheck.h).
 */
static unsigned int header_data_size(const char *path, const char *text,
				     size_t size)
{
	static struct rbt_fmt hf;

	if (!rbt_header_page_check(&hf, text, size))
		die_input("%s: line %u: %s", path, hf.line, hf.err);
	return hf.data_size;
}

static struct tep_format_field *need_field(struct rbt_rec *r, const char *name,
					   const char *path)
{
	struct tep_format_field *f = tep_find_any_field(r->event, name);

	if (!f)
		die_input("%s: event has no field \"%s\"", path, name);
	if (f->size < 1 || f->size > 8 || f->offset < 0 ||
	    f->offset + f->size > 4096)
		die_input("%s: field \"%s\" has offset %d size %d", path, name,
			  f->offset, f->size);
	if ((unsigned int)(f->offset + f->size) > r->min_size)
		r->min_size = f->offset + f->size;
	return f;
}

/* The fields rbtrace reads, with their sizes in struct rbn_sample. */
extern const struct rbn_sample rbt_layout;	/* in sizeof() only */

static const struct {
	const char *name;
	unsigned int size;
} rbt_sample_fields[] = {
	{ "common_type", sizeof(rbt_layout.common_type) },
	{ "common_flags", sizeof(rbt_layout.common_flags) },
	{ "common_preempt_count", sizeof(rbt_layout.common_preempt_count) },
	{ "common_pid", sizeof(rbt_layout.common_pid) },
	{ "seq", sizeof(rbt_layout.seq) },
	{ "ts", sizeof(rbt_layout.ts) },
	{ "cpu", sizeof(rbt_layout.cpu) },
	{ "context", sizeof(rbt_layout.context) },
	{ "depth", sizeof(rbt_layout.depth) },
	{ "flags", sizeof(rbt_layout.flags) },
};

/*
 * The format text of rbnest:sample, before libtraceevent sees it: the
 * shape tracefs prints (fmtcheck.h), every field plain and inside the
 * sub-buffer's data, and the fields rbtrace reads there with the sizes
 * rbn_events.h gives them. Every event must then hold all the fields
 * (r->min_size), so that neither rbtrace nor libtraceevent's printing
 * reads past one.
 */
static void check_format_text(struct rbt_rec *r, const char *path,
			      const char *fmt, size_t fmt_size)
{
	static struct rbt_fmt f;
	const struct rbt_fmt_field *fl;
	unsigned int i;

	if (!rbt_format_check(&f, fmt, fmt_size, r->data_size))
		die_input("%s: line %u: %s", path, f.line, f.err);
	for (i = 0; i < f.nr_fields; i++) {
		fl = &f.field[i];
		if (fl->arraylen || fl->dynamic)
			die_input("%s: line %u: field %s: rbnest:sample has plain fields only",
				  path, fl->line, fl->name);
	}
	for (i = 0; i < ARRAY_SIZE(rbt_sample_fields); i++) {
		const char *name = rbt_sample_fields[i].name;

		fl = rbt_fmt_find(&f, name, strlen(name));
		if (!fl)
			die_input("%s: event has no field \"%s\"", path, name);
		if (fl->size != rbt_sample_fields[i].size)
			die_input("%s: line %u: field %s has size %u, not %u",
				  path, fl->line, name, fl->size,
				  rbt_sample_fields[i].size);
	}
	r->min_size = f.end;
}

/*
 * Parse header_page (@hp, @hp_size bytes, NUL-terminated) and the format
 * of rbnest:sample (@fmt, @fmt_size bytes); @hp_path and @fmt_path name
 * them in messages. Both texts are checked first: libtraceevent crashes
 * on some broken ones (see fmtcheck.h).
 */
static void load_formats_text(struct rbt_rec *r, const char *hp_path,
			      const char *hp, size_t hp_size,
			      const char *fmt_path, const char *fmt,
			      size_t fmt_size)
{
	const char *path = fmt_path;
	struct tep_event *ev = NULL;
	enum tep_errno err;

	r->data_size = header_data_size(hp_path, hp, hp_size);
	r->subbuf = r->data_size + PG_HDR_SIZE;
	check_format_text(r, path, fmt, fmt_size);

	r->tep = tep_alloc();
	if (!r->tep)
		die_input("tep_alloc failed");
	tep_set_long_size(r->tep, 8);
	tep_set_file_bigendian(r->tep, TEP_LITTLE_ENDIAN);

	if (tep_parse_header_page(r->tep, (char *)hp, hp_size, 8))
		die_input("%s: does not parse", hp_path);
	err = tep_parse_format(r->tep, &ev, fmt, fmt_size, "rbnest");
	if (err || !ev || (ev->flags & TEP_EVENT_FL_FAILED)) {
		char msg[128] = "";

		/*
		 * libtraceevent says "failed to allocate memory" of a text
		 * whose name it cannot read, too: a memory failure would not
		 * have come this far.
		 */
		if (err == TEP_ERRNO__MEM_ALLOC_FAILED)
			snprintf(msg, sizeof(msg), "libtraceevent cannot read it");
		else if (err)
			tep_strerror(r->tep, err, msg, sizeof(msg));
		die_input("%s: does not parse%s%s", path, *msg ? ": " : "", msg);
	}
	r->event = ev;
	/* tep_data_type() reads it from every event, unchecked */
	need_field(r, "common_type", path);
	r->f_seq = need_field(r, "seq", path);
	r->f_ts = need_field(r, "ts", path);
	r->f_cpu = need_field(r, "cpu", path);
	r->f_ctx = need_field(r, "context", path);
	r->f_depth = need_field(r, "depth", path);
	r->f_flags = need_field(r, "flags", path);
	r->f_cflags = need_field(r, "common_flags", path);
	r->f_pcount = need_field(r, "common_preempt_count", path);
	r->f_pid = need_field(r, "common_pid", path);

	r->kb = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	if (!r->kb)
		die_input("kbuffer_alloc failed");
}

static void load_formats(struct rbt_rec *r)
{
	char hp_path[PATH_MAX], fmt_path[PATH_MAX];
	size_t hp_size, fmt_size;
	char *hp, *fmt;

	snprintf(hp_path, sizeof(hp_path), "%s/header_page", r->dir);
	hp = read_file(hp_path, &hp_size, true);
	snprintf(fmt_path, sizeof(fmt_path), "%s/events/rbnest/sample/format",
		 r->dir);
	fmt = read_file(fmt_path, &fmt_size, true);
	load_formats_text(r, hp_path, hp, hp_size, fmt_path, fmt, fmt_size);
	free(hp);
	free(fmt);
}

/* ------------------------------------------------------------------ */
/* Pages                                                              */
/* ------------------------------------------------------------------ */

static unsigned int rd32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (unsigned int)p[3] << 24;
}

static unsigned long long rd64(const unsigned char *p)
{
	return rd32(p) | (unsigned long long)rd32(p + 4) << 32;
}

/* What the bounds walk found out about one data event. */
struct walk_ev {
	unsigned int off;
	unsigned int doff;	/* offset of its payload */
	bool abs;
};

struct walk {
	unsigned long long stamp;
	unsigned int commit;
	bool missed;
	bool stored;
	unsigned long long missed_count;
	unsigned int nr;
	struct walk_ev *ev;
	unsigned int cap;
};

/*
 * Check every entry of a page against the page bounds before kbuffer
 * reads it. Bad input exits. A padding (a discarded event, or the fill at
 * the end) has its length word and may follow a time extend or absolute
 * stamp (the discarded event's); its delta is time, as kbuffer counts it.
 * An absolute stamp marks the next data event for the 59-bit carry fix.
 */
static void walk_page(struct rbt_rec *r, struct rbt_cpu *c, unsigned int pno,
		      const unsigned char *pg, struct walk *w)
{
	unsigned long long cw = rd64(pg + 8);
	unsigned long long pos = (unsigned long long)pno * r->subbuf;
	const unsigned char *d = pg + PG_HDR_SIZE;
	unsigned int off = 0, len;
	bool abs = false;

	w->stamp = rd64(pg);
	w->missed = cw & PG_MISSED_EVENTS;
	w->stored = cw & PG_MISSED_STORED;
	w->nr = 0;
	if (cw >> 32 || (cw & PG_COMMIT_MASK) > r->data_size)
		die_input("%s: page %u (offset %llu): commit %#llx larger than the page data size %u",
			  c->path, pno, pos + 8, cw, r->data_size);
	w->commit = cw & PG_COMMIT_MASK;
	if (w->stored) {
		if (w->commit + 8 > r->data_size)
			die_input("%s: page %u (offset %llu): no room for the stored missed count after commit %u",
				  c->path, pno, pos + 8, w->commit);
		w->missed_count = rd64(d + w->commit);
	}

	while (off < w->commit) {
		unsigned int hdr, type;

		if (w->commit - off < 4)
			die_input("%s: page %u offset %u (file offset %llu): event header runs past commit %u",
				  c->path, pno, off, pos + PG_HDR_SIZE + off,
				  w->commit);
		hdr = rd32(d + off);
		type = hdr & 31;
		if (type > TYPE_DATA_MAX || type == 0) {
			if (type == TYPE_PADDING && w->commit - off < 8)
				break;	/* a bare end marker */
			if (w->commit - off < 8)
				die_input("%s: page %u offset %u (file offset %llu): type_len %u entry runs past commit %u",
					  c->path, pno, off,
					  pos + PG_HDR_SIZE + off, type,
					  w->commit);
		}
		switch (type) {
		case TYPE_TIME_EXTEND:
			c->nr_extend++;
			off += 8;
			continue;
		case TYPE_TIME_STAMP:
			c->nr_abs++;
			abs = true;
			off += 8;
			continue;
		case TYPE_PADDING:
			len = rd32(d + off + 4);
			if (len < 4 || len & 3 || len > w->commit - off - 4)
				die_input("%s: page %u offset %u (file offset %llu): padding length %u runs past commit %u",
					  c->path, pno, off,
					  pos + PG_HDR_SIZE + off, len,
					  w->commit);
			c->nr_pad++;
			off += len + 4;
			continue;
		case 0:
			len = rd32(d + off + 4);
			if (len < 4 || len & 3 || len > w->commit - off - 4)
				die_input("%s: page %u offset %u (file offset %llu): event length %u runs past commit %u",
					  c->path, pno, off,
					  pos + PG_HDR_SIZE + off, len,
					  w->commit);
			len += 4;
			break;
		default:
			len = type * 4 + 4;
			if (len > w->commit - off)
				die_input("%s: page %u offset %u (file offset %llu): type_len %u event runs past commit %u",
					  c->path, pno, off,
					  pos + PG_HDR_SIZE + off, type,
					  w->commit);
			break;
		}
		if (w->nr == w->cap) {
			w->cap = w->cap ? 2 * w->cap : 256;
			w->ev = xrealloc(w->ev, w->cap * sizeof(*w->ev));
		}
		w->ev[w->nr].off = off;
		w->ev[w->nr].doff = off + (type ? 4 : 8);
		w->ev[w->nr].abs = abs;
		w->nr++;
		abs = false;
		off += len;
	}
}

static unsigned long long field(struct tep_format_field *f, void *data)
{
	unsigned long long v = 0;

	tep_read_number_field(f, data, &v);
	return v;
}

static struct rbt_event *new_event(struct rbt_cpu *c)
{
	if (c->nr_ev == c->cap_ev) {
		c->cap_ev = c->cap_ev ? 2 * c->cap_ev : 256;
		c->ev = xrealloc(c->ev, c->cap_ev * sizeof(*c->ev));
	}
	memset(&c->ev[c->nr_ev], 0, sizeof(c->ev[0]));
	return &c->ev[c->nr_ev++];
}

/*
 * Decode one page with kbuffer, after walk_page() checked its bounds, into
 * r->cpu[cpu].ev (which then holds this page's events only). The events
 * point into @pg.
 */
static void decode_page(struct rbt_rec *r, int cpu, unsigned int pno,
			unsigned char *pg, struct walk *w)
{
	struct rbt_cpu *c = &r->cpu[cpu];
	unsigned long long kts, prev = w->stamp, corr = 0;
	unsigned int i = 0;
	void *data;

	c->nr_ev = 0;
	c->pos = 0;
	if (kbuffer_load_subbuffer(r->kb, pg))
		die_input("%s: page %u: kbuffer cannot load it", c->path, pno);
	for (data = kbuffer_read_event(r->kb, &kts); data;
	     data = kbuffer_next_event(r->kb, &kts), i++) {
		unsigned int off = (unsigned char *)data - pg - PG_HDR_SIZE;
		unsigned int size = kbuffer_event_size(r->kb);
		struct tep_record rec = { 0 };
		struct rbt_event *e;
		int id;
		unsigned long long ts;

		if (i >= w->nr || off != w->ev[i].doff)
			die_input("%s: page %u offset %u: kbuffer and the bounds walk disagree (event %u)",
				  c->path, pno, off, i);
		if (size < r->min_size ||
		    (char *)data < (char *)pg ||
		    (char *)data + size > (char *)pg + r->subbuf)
			die_input("%s: page %u offset %u: event of %u bytes is too short for rbnest:sample",
				  c->path, pno, off, size);
		ts = kts + corr;
		if (w->ev[i].abs) {
			/*
			 * The writer's 59-bit carry (rbn_fix_abs_ts()): only
			 * a stamp more than 2^58 below the time before it
			 * wrapped; one a little below it is a step back.
			 */
			ts = (prev & ~TS59_MASK) | (kts & TS59_MASK);
			if (ts < prev && prev - ts > TS59 / 2)
				ts += TS59;
			else if (ts > prev && ts - prev > TS59 / 2 &&
				 (prev & ~TS59_MASK))
				ts -= TS59;
			corr = ts - kts;
		}
		rec.data = data;
		rec.size = size;
		id = tep_data_type(r->tep, &rec);
		if (id != r->event->id)
			die_input("%s: page %u offset %u: unknown event id %d",
				  c->path, pno, w->ev[i].off, id);
		e = new_event(c);
		e->ts = ts;
		e->page = pno;
		e->off = w->ev[i].off;
		e->size = size;
		e->seq = field(r->f_seq, data);
		e->fts = field(r->f_ts, data);
		e->cpu_field = field(r->f_cpu, data);
		e->ctx = field(r->f_ctx, data);
		e->depth = field(r->f_depth, data);
		e->flags = field(r->f_flags, data);
		e->cflags = field(r->f_cflags, data);
		e->pcount = field(r->f_pcount, data);
		e->pid = (int)field(r->f_pid, data);
		e->data = data;
		if (!i && w->missed)
			e->missed = w->stored ? w->missed_count :
				    RBT_MISSED_UNKNOWN;
		prev = ts;
	}
	if (i != w->nr)
		die_input("%s: page %u: kbuffer read %u events, the page has %u",
			  c->path, pno, i, w->nr);
}

/* ------------------------------------------------------------------ */
/* Sequence numbers, checked in a window                              */
/* ------------------------------------------------------------------ */

/*
 * A nested writer may take its number before the writer it interrupted,
 * so numbers are compared as a set: no duplicate, and every number missing
 * between two must be covered by missed-events counts (and so must a
 * missing start when the first page says events were lost). A gap is
 * charged to the number after it, once SEQ_WIN numbers later nothing can
 * fill it any more: the gaps so far must not exceed the stored counts up
 * to the page after that number's page. The count of the last page's gaps
 * would be on a page not recorded: they are counted as unverifiable.
 */
static bool seq_seen(struct seq_win *s, unsigned long long seq)
{
	return s->seen[(seq % SEQ_WIN) / 8] & (1U << (seq % 8));
}

static void seq_mark(struct seq_win *s, unsigned long long seq, bool on)
{
	if (on)
		s->seen[(seq % SEQ_WIN) / 8] |= 1U << (seq % 8);
	else
		s->seen[(seq % SEQ_WIN) / 8] &= ~(1U << (seq % 8));
}

/* Page @pno's missed-events count is known (its bounds were walked). */
static void seq_page(struct rbt_cpu *c, unsigned int pno, const struct walk *w)
{
	struct seq_win *s = c->seq;

	if (!s)
		return;
	if (!pno)
		s->first_missed = w->missed;
	s->unknown[pno % SEQ_WIN] = w->missed && !w->stored;
	s->cum[pno % SEQ_WIN] = c->missed_sum;
	s->pages = (unsigned long long)pno + 1;
}

/*
 * @gap numbers missing right before @seq, seen on page @pno at @off:
 * charged against the stored counts up to the page after it.
 */
static void seq_charge(struct rbt_rec *r, int cpu, unsigned long long gap,
		       unsigned long long seq, unsigned int pno,
		       unsigned int off)
{
	struct rbt_cpu *c = &r->cpu[cpu];
	struct seq_win *s = c->seq;
	unsigned long long last, cum;

	c->gap_sum += gap;
	if (gap > c->gap_max)
		c->gap_max = gap;
	last = pno + 1 < s->pages ? pno + 1 : pno;
	if (s->pages - pno > SEQ_WIN) {
		/* the page's counts have left the ring */
		c->gap_unverified += gap;
		return;
	}
	/*
	 * A page that says events were lost, without room for the count,
	 * covers whatever is charged to it and to the page before it.
	 */
	if (s->unknown[pno % SEQ_WIN] || s->unknown[last % SEQ_WIN])
		return;
	cum = s->cum[last % SEQ_WIN];
	s->sum += gap;
	if (s->sum <= cum + s->extra)
		return;
	if (pno + 1 >= s->pages) {
		/* their count would be on a page not read (yet) */
		if (r->check && !r->quiet)
			fprintf(stderr, "note: %s: cpu %d page %u offset %u: %llu events missing before seq %llu on the last page, not verifiable\n",
				c->path, cpu, pno, off, gap, seq);
		c->gap_unverified += gap;
	} else {
		violation(r, "%s: cpu %d page %u offset %u: %llu events missing before seq %llu, not accounted for by missed-events counts (%llu missing, %llu counted)",
			  c->path, cpu, pno, off, gap, seq, s->sum, cum);
	}
	/* report each unaccounted gap once */
	s->extra = s->sum - cum;
}

/* Move the window's base up by one number, seen or missing. */
static void seq_advance(struct rbt_rec *r, int cpu)
{
	struct seq_win *s = r->cpu[cpu].seq;
	unsigned long long seq = s->base;

	if (seq_seen(s, seq)) {
		if (s->run)
			seq_charge(r, cpu, s->run, seq,
				   s->page_of[seq % SEQ_WIN],
				   s->off_of[seq % SEQ_WIN]);
		s->run = 0;
		seq_mark(s, seq, false);
	} else {
		s->run++;
	}
	s->base++;
	s->settled = true;
}

/* A number seen: in the window, not seen before. */
static void seq_event(struct rbt_rec *r, int cpu, const struct rbt_event *e)
{
	struct rbt_cpu *c = &r->cpu[cpu];
	struct seq_win *s = c->seq;
	unsigned long long i = e->seq % SEQ_WIN;

	if (!s->started) {
		/* numbers before the first only when page 0 says so */
		s->started = true;
		s->base = s->first_missed ? 0 : e->seq;
		s->hi = s->base;
	}
	if (e->seq < s->base && !s->settled && s->hi - e->seq <= SEQ_WIN) {
		/* a number before the first one seen, none final yet */
		s->base = e->seq;
	} else if (e->seq < s->base) {
		violation(r, "%s: cpu %d page %u offset %u: seq %llu read twice, or %llu numbers out of order",
			  c->path, cpu, e->page, e->off, e->seq, SEQ_WIN);
		return;
	}
	if (e->seq >= s->base + SEQ_WIN) {
		/* numbers lost at once: the window, then the rest */
		unsigned long long to = e->seq - SEQ_WIN + 1;

		while (s->base < to && s->base < s->hi)
			seq_advance(r, cpu);
		if (s->base < to) {
			s->run += to - s->base;
			s->base = to;
			s->settled = true;
		}
	}
	if (seq_seen(s, e->seq))
		violation(r, "%s: cpu %d page %u offset %u: duplicate seq %llu (also page %u offset %u)",
			  c->path, cpu, e->page, e->off, e->seq,
			  s->page_of[i], s->off_of[i]);
	seq_mark(s, e->seq, true);
	s->page_of[i] = e->page;
	s->off_of[i] = e->off;
	if (e->seq + 1 > s->hi)
		s->hi = e->seq + 1;
	/* numbers SEQ_WIN below the highest are final */
	while (s->hi > SEQ_WIN && s->base < s->hi - SEQ_WIN)
		seq_advance(r, cpu);
}

/* The end of the CPU's numbers: whatever was not seen is missing. */
static void seq_finish(struct rbt_rec *r, int cpu)
{
	struct seq_win *s = r->cpu[cpu].seq;

	while (s && s->base < s->hi)
		seq_advance(r, cpu);
}

/* ------------------------------------------------------------------ */
/* Per-event checks                                                   */
/* ------------------------------------------------------------------ */

/*
 * The time of event @e of CPU @cpu, @p the event before it on the CPU (NULL
 * for the first): never before @p, and the writer's own clock value unless
 * the event says why not (zero delta, clock back).
 */
static void check_event_time(struct rbt_rec *r, int cpu,
			     const struct rbt_event *e,
			     const struct rbt_event *p)
{
	struct rbt_cpu *c = &r->cpu[cpu];

	if (p && e->ts < p->ts)
		violation(r, "%s: cpu %d page %u offset %u: time went backwards: %llu after %llu (page %u offset %u)",
			  c->path, cpu, e->page, e->off, e->ts, p->ts,
			  p->page, p->off);
	if (e->flags & EV_CLOCK_BACK)
		c->nr_clock_back++;
	if (e->flags & EV_ZERO_DELTA) {
		c->nr_zero++;
		if (p && e->ts != p->ts)
			violation(r, "%s: cpu %d page %u offset %u: zero-delta event at %llu, the event before it at %llu",
				  c->path, cpu, e->page, e->off, e->ts,
				  p->ts);
	} else if (e->flags & EV_CLOCK_BACK) {
		/*
		 * Its clock read behind a time the CPU had taken: it
		 * is stored at that time, after its own clock value
		 * and never a 59-bit carry away from it.
		 */
		if (e->ts < e->fts || e->ts - e->fts > TS59 / 2)
			violation(r, "%s: cpu %d page %u offset %u: clock-back event at %llu, its writer's clock %llu (seq %llu)",
				  c->path, cpu, e->page, e->off, e->ts,
				  e->fts, e->seq);
	} else if (e->ts != e->fts) {
		violation(r, "%s: cpu %d page %u offset %u: rebuilt time %llu, the writer's %llu (seq %llu)",
			  c->path, cpu, e->page, e->off, e->ts, e->fts,
			  e->seq);
	}
	if (e->cpu_field != (unsigned int)cpu)
		violation(r, "%s: cpu %d page %u offset %u: event says cpu %u",
			  c->path, cpu, e->page, e->off, e->cpu_field);
}

static void count_ctx_depth(struct rbt_rec *r, int cpu,
			    const struct rbt_event *e, struct ctx_depth *cd)
{
	if (e->ctx >= NR_CTX || e->depth < 1 || e->depth > MAX_DEPTH) {
		violation(r, "%s: cpu %d page %u offset %u: context %u depth %u out of range",
			  r->cpu[cpu].path, cpu, e->page, e->off, e->ctx,
			  e->depth);
		return;
	}
	cd->n[e->ctx][e->depth]++;
	if (e->depth > cd->max_d)
		cd->max_d = e->depth;
}

/* The checks of one event, in the CPU's order, against the one before. */
static void check_event(struct rbt_rec *r, int cpu, const struct rbt_event *e)
{
	struct rbt_cpu *c = &r->cpu[cpu];

	check_event_time(r, cpu, e, c->events ? &c->last : NULL);
	count_ctx_depth(r, cpu, e, &r->cd);
	if (c->seq)
		seq_event(r, cpu, e);
}

/* ------------------------------------------------------------------ */
/* Reading a recording                                                */
/* ------------------------------------------------------------------ */

/*
 * The iterator: a recording read one event at a time, in memory bounded
 * by a few sub-buffers per CPU whatever its length.
 *
 *	struct rbt_rec r = { 0 };
 *	const struct rbt_event *e;
 *	int cpu;
 *
 *	rbt_open(&r, "REC", NULL);	(or a CPU list: "1", "0,2-3")
 *	while ((e = rbt_next_event(&r, &cpu)))
 *		use(cpu, e);
 *	rbt_close(&r);
 *
 * rbt_next_event() hands out the events of the selected CPUs merged by
 * time (ties: the lower CPU first), each CPU's in its recorded order;
 * @e and @e->data (the event's bytes, for tep_print_event()) stay valid
 * until the next call. Bad input (format files, page bounds, events
 * kbuffer and the bounds walk do not agree on) exits with status 2 after
 * a message naming the file, page and offset. With r.check set before
 * rbt_open(), every event handed out is checked as "rbtrace check" does;
 * the verdicts are in r.violations and the rbt_cpu counters once
 * rbt_next_event() returned NULL.
 */

/* Read @n pages of @c from page @pno into @to. */
static void read_pages(struct rbt_rec *r, struct rbt_cpu *c, unsigned int pno,
		       unsigned int n, unsigned char *to)
{
	unsigned long long pos = (unsigned long long)pno * r->subbuf;
	size_t want = (size_t)n * r->subbuf, got = 0;
	ssize_t k;

	if (c->mem) {
		memcpy(to, c->mem + pos, want);
		return;
	}
	while (got < want) {
		k = pread(c->fd, to + got, want - got, pos + got);
		if (k < 0)
			die_input("%s: read at offset %llu: %s", c->path,
				  pos + got, strerror(errno));
		if (!k)
			die_input("%s: read at offset %llu: the file shrank",
				  c->path, pos + got);
		got += k;
	}
}

/*
 * Page @pno of @c, read RBT_CHUNK pages at a time. Pages are asked for in
 * order, each page once more right after the one after it: the last page
 * of a chunk stays in the buffer (moved to its front) while the next
 * chunk is read behind it.
 */
static unsigned char *cpu_page(struct rbt_rec *r, struct rbt_cpu *c,
			       unsigned int pno)
{
	unsigned int keep = 0, n;

	if (pno >= c->buf_first && pno - c->buf_first < c->buf_nr)
		return c->buf + (size_t)(pno - c->buf_first) * r->subbuf;
	if (c->buf_nr && pno == c->buf_first + c->buf_nr) {
		memmove(c->buf, c->buf + (size_t)(c->buf_nr - 1) * r->subbuf,
			r->subbuf);
		keep = 1;
	}
	n = c->nr_pages - pno < RBT_CHUNK ? c->nr_pages - pno : RBT_CHUNK;
	read_pages(r, c, pno, n, c->buf + (size_t)keep * r->subbuf);
	c->buf_first = pno - keep;
	c->buf_nr = keep + n;
	return c->buf + (size_t)keep * r->subbuf;
}

/* Walk the bounds of page @pno of CPU @cpu, and account for it. */
static void cpu_walk(struct rbt_rec *r, int cpu, unsigned int pno)
{
	struct rbt_cpu *c = &r->cpu[cpu];
	struct walk *w = &c->w[pno & 1];

	walk_page(r, c, pno, cpu_page(r, c, pno), w);
	if (w->missed) {
		c->missed_pages++;
		if (w->stored)
			c->missed_sum += w->missed_count;
		else
			c->missed_unknown++;
	}
	seq_page(c, pno, w);
	c->nr_walked = pno + 1;
}

/* Decode the next page of @cpu into its ev[]; false after the last. */
static bool cpu_next_page(struct rbt_rec *r, int cpu)
{
	struct rbt_cpu *c = &r->cpu[cpu];
	unsigned int pno = c->nr_decoded;

	if (pno >= c->nr_pages)
		return false;
	if (c->nr_walked == pno)
		cpu_walk(r, cpu, pno);
	/* the count of the page after it may cover this page's gaps */
	if (pno + 1 < c->nr_pages)
		cpu_walk(r, cpu, pno + 1);
	decode_page(r, cpu, pno, cpu_page(r, c, pno), &c->w[pno & 1]);
	c->nr_decoded = pno + 1;
	return true;
}

/* The next event of @cpu, left where it is; NULL after the last. */
static struct rbt_event *cpu_peek(struct rbt_rec *r, int cpu)
{
	struct rbt_cpu *c = &r->cpu[cpu];

	while (c->pos >= c->nr_ev)
		if (c->done || !cpu_next_page(r, cpu)) {
			if (!c->done && r->check)
				seq_finish(r, cpu);
			c->done = true;
			return NULL;
		}
	return &c->ev[c->pos];
}

static bool heap_less(struct rbt_rec *r, int a, int b)
{
	const struct rbt_cpu *x = &r->cpu[a], *y = &r->cpu[b];
	unsigned long long tx = x->ev[x->pos].ts, ty = y->ev[y->pos].ts;

	return tx < ty || (tx == ty && a < b);
}

static void heap_push(struct rbt_rec *r, int cpu)
{
	int i = r->nr_heap++, p;

	r->heap[i] = cpu;
	for (; i && heap_less(r, r->heap[i], r->heap[p = (i - 1) / 2]); i = p) {
		r->heap[i] = r->heap[p];
		r->heap[p] = cpu;
	}
}

static int heap_pop(struct rbt_rec *r)
{
	int top = r->heap[0], i = 0, k, t;

	r->heap[0] = r->heap[--r->nr_heap];
	for (;;) {
		k = 2 * i + 1;
		if (k >= r->nr_heap)
			break;
		if (k + 1 < r->nr_heap &&
		    heap_less(r, r->heap[k + 1], r->heap[k]))
			k++;
		if (!heap_less(r, r->heap[k], r->heap[i]))
			break;
		t = r->heap[i];
		r->heap[i] = r->heap[k];
		r->heap[k] = t;
		i = k;
	}
	return top;
}

/*
 * The next event of the selected CPUs in time order, its CPU in @cpu;
 * NULL after the last. See the iterator above.
 */
static const struct rbt_event *rbt_next_event(struct rbt_rec *r, int *cpu)
{
	struct rbt_cpu *c;
	struct rbt_event *e;
	int k;

	if (r->last_cpu >= 0) {
		/* its event is used up: on to the CPU's next one */
		if (cpu_peek(r, r->last_cpu))
			heap_push(r, r->last_cpu);
		r->last_cpu = -1;
	}
	if (!r->nr_heap)
		return NULL;
	k = heap_pop(r);
	c = &r->cpu[k];
	e = &c->ev[c->pos++];
	if (r->check) {
		check_event(r, k, e);
		if (r->events && e->ts < r->prev_ts)
			violation(r, "merged order: event at %llu after %llu",
				  e->ts, r->prev_ts);
	}
	if (r->events && k != r->last_cpu_out)
		r->switches++;
	r->last_cpu_out = k;
	if (!c->events)
		c->first_ts = e->ts;
	c->last_ts = e->ts;
	c->last = *e;
	c->events++;
	r->prev_ts = e->ts;
	r->events++;
	r->last_cpu = k;
	*cpu = k;
	return e;
}

/*
 * Parse a CPU list ("1", "0,2-3") into @sel (MAX_CPUS flags); NULL, or
 * what is wrong with it.
 */
static const char *parse_cpus(const char *list, bool *sel)
{
	char *copy = strdup(list), *item, *next, *dash;
	unsigned long long a, b;
	const char *why = NULL;

	if (!copy)
		die_input("out of memory");
	for (item = copy; item && !why; item = next) {
		next = strchr(item, ',');
		if (next)
			*next++ = '\0';
		dash = strchr(item, '-');
		if (dash)
			*dash++ = '\0';
		if (rbt_parse_uint(item, MAX_CPUS - 1, &a, &why) ||
		    (dash && rbt_parse_uint(dash, MAX_CPUS - 1, &b, &why)))
			break;
		if (!dash)
			b = a;
		if (a > b) {
			why = "a range that goes down";
			break;
		}
		while (a <= b)
			sel[a++] = true;
	}
	free(copy);
	return why;
}

/* Set up CPU @cpu's page cursor: its pages in @mem, or else its file. */
static void cpu_open(struct rbt_rec *r, int cpu, const unsigned char *mem,
		     unsigned int nr_pages)
{
	struct rbt_cpu *c = &r->cpu[cpu];
	struct stat st;

	c->fd = -1;
	c->mem = mem;
	c->nr_pages = nr_pages;
	if (!mem) {
		c->fd = open(c->path, O_RDONLY);
		if (c->fd < 0 || fstat(c->fd, &st))
			die_input("%s: %s", c->path, strerror(errno));
		if (st.st_size % r->subbuf)
			die_input("%s: truncated: page %llu at offset %llu has %llu of %u bytes",
				  c->path,
				  (unsigned long long)st.st_size / r->subbuf,
				  (unsigned long long)st.st_size -
				  st.st_size % r->subbuf,
				  (unsigned long long)st.st_size % r->subbuf,
				  r->subbuf);
		if ((unsigned long long)st.st_size / r->subbuf >= UINT_MAX)
			die_input("%s: more than %u pages", c->path, UINT_MAX);
		c->nr_pages = st.st_size / r->subbuf;
		posix_fadvise(c->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	}
	c->buf = xrealloc(NULL, (size_t)(RBT_CHUNK + 1) * r->subbuf);
	c->w = xrealloc(NULL, 2 * sizeof(*c->w));
	memset(c->w, 0, 2 * sizeof(*c->w));
	if (r->check) {
		/* zero pages, touched as the numbers go round */
		c->seq = calloc(1, sizeof(*c->seq));
		if (!c->seq)
			die_input("out of memory");
	}
}

/*
 * After every CPU's cursor is set up (cpu_open()): the CPUs @sel flags
 * (MAX_CPUS of them; NULL: all) into the merge, each with its first event.
 */
static void rbt_start(struct rbt_rec *r, const bool *sel)
{
	int cpu;

	r->heap = xrealloc(NULL, r->nr_cpus * sizeof(*r->heap));
	r->nr_heap = 0;
	r->last_cpu = -1;
	for (cpu = 0; cpu < r->nr_cpus; cpu++) {
		if (sel && !sel[cpu])
			r->cpu[cpu].done = true;
		else if (cpu_peek(r, cpu))
			heap_push(r, cpu);
	}
}

static void load_cmdlines(struct rbt_rec *r);

/*
 * Open recording @dir for rbt_next_event(): its format files, its
 * saved_cmdlines if it has one, and every cpuN.raw (cpu0.raw to the
 * highest one, none missing). @cpus selects CPUs ("1", "0,2-3"; NULL:
 * all); a bad list or a CPU the recording does not have exits with 2.
 */
static void rbt_open(struct rbt_rec *r, const char *dir, const char *cpus)
{
	const char *why;
	bool *sel = NULL;
	int cpu, last = -1;

	char path[PATH_MAX];
	struct stat st;

	r->dir = dir;
	load_formats(r);
	load_cmdlines(r);
	for (cpu = 0; cpu < MAX_CPUS; cpu++) {
		snprintf(path, sizeof(path), "%s/cpu%d.raw", r->dir, cpu);
		if (!stat(path, &st))
			last = cpu;
	}
	if (last < 0)
		die_input("%s: no cpuN.raw file", r->dir);
	r->nr_cpus = last + 1;
	r->cpu = xrealloc(NULL, r->nr_cpus * sizeof(*r->cpu));
	memset(r->cpu, 0, r->nr_cpus * sizeof(*r->cpu));
	for (cpu = 0; cpu < r->nr_cpus; cpu++) {
		struct rbt_cpu *c = &r->cpu[cpu];

		c->fd = -1;
		snprintf(c->path, sizeof(c->path), "%s/cpu%d.raw", r->dir, cpu);
		c->present = !stat(c->path, &st);
	}
	if (cpus) {
		sel = xrealloc(NULL, MAX_CPUS * sizeof(*sel));
		memset(sel, 0, MAX_CPUS * sizeof(*sel));
		why = parse_cpus(cpus, sel);
		if (why)
			die_input("bad CPU list '%s': %s", cpus, why);
		for (cpu = r->nr_cpus; cpu < MAX_CPUS; cpu++)
			if (sel[cpu])
				die_input("%s: no CPU %d", r->dir, cpu);
	}
	for (cpu = 0; cpu < r->nr_cpus; cpu++) {
		if (!r->cpu[cpu].present)
			die_input("%s: missing (cpu%d.raw exists)",
				  r->cpu[cpu].path, r->nr_cpus - 1);
		cpu_open(r, cpu, NULL, 0);
	}
	rbt_start(r, sel);
	free(sel);
}

/*
 * The page cursors and the merge, for the CPUs to be read again from
 * their start (cpu_open(), rbt_start()); the formats stay.
 */
static void rbt_close_cpus(struct rbt_rec *r)
{
	int cpu;

	for (cpu = 0; r->cpu && cpu < r->nr_cpus; cpu++) {
		struct rbt_cpu *c = &r->cpu[cpu];
		bool present = c->present;

		if (c->fd >= 0)
			close(c->fd);
		free(c->ev);
		free(c->buf);
		if (c->w) {
			free(c->w[0].ev);
			free(c->w[1].ev);
		}
		free(c->w);
		free(c->seq);
		/* everything but the path */
		memset((char *)c + offsetof(struct rbt_cpu, present), 0,
		       sizeof(*c) - offsetof(struct rbt_cpu, present));
		c->present = present;
		c->fd = -1;
	}
	free(r->heap);
	r->heap = NULL;
	r->nr_heap = 0;
	r->events = 0;
	r->switches = 0;
	memset(&r->cd, 0, sizeof(r->cd));
}

/* Everything rbt_open() (or a fuzz target) set up. */
static void rbt_close(struct rbt_rec *r)
{
	rbt_close_cpus(r);
	free(r->cpu);
	r->cpu = NULL;
	if (r->kb)
		kbuffer_free(r->kb);
	r->kb = NULL;
	if (r->tep)
		tep_free(r->tep);
	r->tep = NULL;
}

/* ------------------------------------------------------------------ */
/* check                                                              */
/* ------------------------------------------------------------------ */

static void usage_check(FILE *f)
{
	fprintf(f,
		"usage: %s check [-q] [-v] [--json] REC\n"
		"  Verify an rbnest recording: every page parses, per CPU the\n"
		"  rebuilt time stamps never decrease and equal the writers'\n"
		"  (zero-delta events: the previous event's; clock-back events,\n"
		"  whose clock read behind a time taken before: at or after it),\n"
		"  sequence numbers have no duplicate and no gap the missed-events\n"
		"  counts do not account for (a number may arrive %llu late).\n"
		"  The recording is read one page at a time, in bounded memory.\n"
		"  Prints a summary table on stdout, the violations on stderr,\n"
		"  then the verdict line \"REC: OK\" or \"REC: FAILED: N violations\".\n"
		"  -q, --quiet    only the event count and the verdict\n"
		"  -v, --verbose  explain the columns of the summary\n"
		"  -j, --json     the summary as one JSON object on stdout\n"
		"  -h, --help     this text\n"
		"Exit status: 0 all checks passed, 1 violation, 2 bad input.\n",
		prog, SEQ_WIN);
}

static const char check_legend[] =
	"columns, per CPU:\n"
	"  pages     sub-buffers in cpuN.raw\n"
	"  events    data events read\n"
	"  zero      events shown at the time of the one before (zero delta)\n"
	"  abs       absolute time stamps (type_len 31)\n"
	"  extend    time extends (type_len 30)\n"
	"  padding   paddings: discarded events and the fill at a page's end\n"
	"  missed    events the pages' missed-events counts say were lost;\n"
	"            \"+?\": a page said some were lost without their count\n"
	"  seq-gaps  sequence numbers missing between those read\n"
	"  max-gap   the longest run of them\n"
	"  clk-back  events whose clock read behind a time taken before\n"
	"  first     time of the first event (s)\n"
	"  last      time of the last event (s)\n"
	"  span      last - first (s)\n"
	"then events by context (rows) and nesting depth (columns).\n";

static void print_ctx_depth(const struct ctx_depth *cd)
{
	int i, d, max_d = cd->max_d > 1 ? cd->max_d : 1;

	printf("%-8s", "depth");
	for (d = 1; d <= max_d; d++)
		printf(" %9d", d);
	printf("\n");
	for (i = 0; i < NR_CTX; i++) {
		printf("%-8s", ctx_names[i]);
		for (d = 1; d <= max_d; d++)
			printf(" %9lu", cd->n[i][d]);
		printf("\n");
	}
}

static void manifest_violation(void *arg, const char *msg)
{
	violation(arg, "%s", msg);
}

/* On stdout with the summary, on stderr beside --json's object. */
static void manifest_note(void *arg, const char *msg)
{
	const struct rbt_rec *r = arg;

	if (!r->quiet)
		fprintf(r->json ? stderr : stdout, "%s\n", msg);
}

/*
 * What was read of each CPU against the module's counters in the
 * manifest (manifest.c, rbt_manifest_check()).
 */
static void check_manifest(struct rbt_rec *r)
{
	const struct rbt_manifest_out out = {
		manifest_violation, manifest_note, r,
	};
	struct rbt_cpu_counts *n = xrealloc(NULL, r->nr_cpus * sizeof(*n));
	int cpu;

	for (cpu = 0; cpu < r->nr_cpus; cpu++) {
		const struct rbt_cpu *c = &r->cpu[cpu];

		n[cpu] = (struct rbt_cpu_counts) {
			.present = c->present,
			.events = c->events,
			.pages = c->nr_pages,
			.bytes = (unsigned long long)c->nr_pages * r->subbuf,
			.missed_pages = c->missed_pages,
			.missed_sum = c->missed_sum,
			.missed_unknown = c->missed_unknown,
		};
	}
	rbt_manifest_check(n, r->nr_cpus, &out);
	free(n);
}

static void fmt_time(char *buf, size_t size, unsigned long long ns)
{
	snprintf(buf, size, "%llu.%09llu", ns / 1000000000ULL,
		 ns % 1000000000ULL);
}

/* A JSON string: the characters JSON needs escaped, escaped. */
static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = *s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			/* bytes, not UTF-8: valid JSON whatever the name */
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static void print_check_json(struct rbt_rec *r)
{
	unsigned long long ev = 0, pages = 0, missed = 0, gaps = 0, unv = 0;
	unsigned long long cb = 0;
	int cpu, i, d;

	printf("{\"recording\": ");
	json_str(r->dir);
	printf(", \"cpus\": [");
	for (cpu = 0; cpu < r->nr_cpus; cpu++) {
		struct rbt_cpu *c = &r->cpu[cpu];

		printf("%s\n  {\"cpu\": %d, \"pages\": %u, \"events\": %llu, ",
		       cpu ? "," : "", cpu, c->nr_pages, c->events);
		printf("\"zero\": %lu, \"abs\": %lu, \"extend\": %lu, \"padding\": %lu, ",
		       c->nr_zero, c->nr_abs, c->nr_extend, c->nr_pad);
		printf("\"missed\": %llu, \"missed_pages\": %lu, \"missed_unknown_pages\": %lu, ",
		       c->missed_sum, c->missed_pages, c->missed_unknown);
		printf("\"seq_gaps\": %llu, \"max_gap\": %llu, \"unverifiable\": %llu, \"clock_back\": %lu, ",
		       c->gap_sum, c->gap_max, c->gap_unverified,
		       c->nr_clock_back);
		if (c->events)
			printf("\"first_ns\": %llu, \"last_ns\": %llu, \"span_ns\": %llu}",
			       c->first_ts, c->last_ts,
			       c->last_ts - c->first_ts);
		else
			printf("\"first_ns\": null, \"last_ns\": null, \"span_ns\": null}");
		ev += c->events;
		pages += c->nr_pages;
		missed += c->missed_sum;
		gaps += c->gap_sum;
		unv += c->gap_unverified;
		cb += c->nr_clock_back;
	}
	printf("],\n \"contexts\": {");
	for (i = 0; i < NR_CTX; i++) {
		printf("%s\"%s\": [", i ? ", " : "", ctx_names[i]);
		for (d = 1; d <= MAX_DEPTH; d++)
			printf("%s%lu", d > 1 ? ", " : "", r->cd.n[i][d]);
		printf("]");
	}
	printf("},\n \"totals\": {\"pages\": %llu, \"events\": %llu, \"missed\": %llu, ",
	       pages, ev, missed);
	printf("\"seq_gaps\": %llu, \"unverifiable\": %llu, \"clock_back\": %llu, \"cpu_switches\": %llu},\n",
	       gaps, unv, cb, r->switches);
	printf(" \"violations\": %lu, \"verdict\": \"%s\"}\n", r->violations,
	       r->violations ? "FAILED" : "OK");
}

/*
 * The checks of "rbtrace check" on a recording set up for them (r->check,
 * rbt_open() or a fuzz target's pages): every event read, in time order
 * across the CPUs, and the summary. Returns the exit status.
 */
static int check_rec(struct rbt_rec *r, bool verbose, bool json)
{
	unsigned long long unv = 0, cb = 0;
	int cpu;

	while (rbt_next_event(r, &cpu))
		;
	check_manifest(r);
	if (json) {
		print_check_json(r);
		if (r->violations > MAX_SHOWN)
			fprintf(stderr, "... %lu more\n",
				r->violations - MAX_SHOWN);
		return r->violations ? RBT_EXIT_VIOLATION : RBT_EXIT_OK;
	}
	if (!r->quiet) {
		if (verbose)
			fputs(check_legend, stdout);
		printf("%-4s %7s %9s %6s %6s %7s %8s %9s %8s %7s %8s %20s %20s %14s\n",
		       "cpu", "pages", "events", "zero", "abs", "extend",
		       "padding", "missed", "seq-gaps", "max-gap", "clk-back",
		       "first", "last", "span");
		for (cpu = 0; cpu < r->nr_cpus; cpu++) {
			struct rbt_cpu *c = &r->cpu[cpu];
			char missed[32], t0[32] = "-", t1[32] = "-";
			char span[32] = "-";

			snprintf(missed, sizeof(missed), "%llu%s",
				 c->missed_sum, c->missed_unknown ? "+?" : "");
			if (c->events) {
				fmt_time(t0, sizeof(t0), c->first_ts);
				fmt_time(t1, sizeof(t1), c->last_ts);
				fmt_time(span, sizeof(span),
					 c->last_ts - c->first_ts);
			}
			printf("%-4d %7u %9llu %6lu %6lu %7lu %8lu %9s %8llu %7llu %8lu %20s %20s %14s\n",
			       cpu, c->nr_pages, c->events, c->nr_zero,
			       c->nr_abs, c->nr_extend, c->nr_pad, missed,
			       c->gap_sum, c->gap_max, c->nr_clock_back, t0,
			       t1, span);
		}
		print_ctx_depth(&r->cd);
		if (!verbose)
			printf("(\"%s check -v\" explains the columns)\n",
			       prog);
		printf("cpu switches: %llu (in time order)\n", r->switches);
	}
	printf("events: %llu\n", r->events);
	for (cpu = 0; cpu < r->nr_cpus; cpu++) {
		unv += r->cpu[cpu].gap_unverified;
		cb += r->cpu[cpu].nr_clock_back;
	}
	if (!r->quiet)
		printf("clock-back: %llu\n", cb);
	if (unv)
		printf("missing events on a last page, not verifiable: %llu\n",
		       unv);
	if (r->violations) {
		if (r->violations > MAX_SHOWN)
			fprintf(stderr, "... %lu more\n",
				r->violations - MAX_SHOWN);
		printf("%s: FAILED: %lu violations\n", r->dir, r->violations);
		return RBT_EXIT_VIOLATION;
	}
	printf("%s: OK\n", r->dir);
	return RBT_EXIT_OK;
}

static int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	struct rbt_rec r = { 0 };
	bool verbose = false, json = false;
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "hqvj", opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			usage_check(stdout);
			return RBT_EXIT_OK;
		case 'q':
			r.quiet = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'j':
			json = true;
			break;
		default:
			usage_check(stderr);
			return RBT_EXIT_INPUT;
		}
	}
	if (optind != argc - 1) {
		usage_check(stderr);
		return RBT_EXIT_INPUT;
	}
	r.dir = argv[optind];
	ret = rbt_rec_verify("check", r.dir);
	if (ret) {
		if (ret == RBT_EXIT_VIOLATION)
			printf("%s: FAILED: not the recording its manifest describes, or no event (see above)\n",
			       r.dir);
		return ret;
	}
	r.check = true;
	r.json = json;
	rbt_open(&r, r.dir, NULL);
	ret = check_rec(&r, verbose, json);
	rbt_close(&r);
	return ret;
}

/* ------------------------------------------------------------------ */
/* report                                                             */
/* ------------------------------------------------------------------ */

/* the largest saved_cmdlines read */
#define MAX_CMDLINES_SIZE	(1U << 20)

/*
 * REC/saved_cmdlines, if the recording has it: "PID COMM" lines as tracefs
 * prints them, the task names "report" prints beside the pids.
 */
static void load_cmdlines(struct rbt_rec *r)
{
	char path[PATH_MAX], *text, *line, *next, *end;
	unsigned int nr = 0;
	size_t size;
	long pid;

	snprintf(path, sizeof(path), "%s/saved_cmdlines", r->dir);
	text = read_file(path, &size, false);
	if (!text)
		return;
	if (size > MAX_CMDLINES_SIZE)
		die_input("%s: %zu bytes, more than %u", path, size,
			  MAX_CMDLINES_SIZE);
	if (strlen(text) != size)
		die_input("%s: a NUL byte at offset %zu", path, strlen(text));
	for (line = text; *line; line = next) {
		nr++;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		if (!*line)
			continue;
		errno = 0;
		pid = strtol(line, &end, 10);
		if (errno || end == line || *line == '-' || *line == '+' ||
		    pid > INT_MAX || *end != ' ' || !end[1] ||
		    strlen(end + 1) > 255)
			die_input("%s: line %u: not \"PID COMM\"", path, nr);
		for (char *p = end + 1; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				die_input("%s: line %u: a control character in the name",
					  path, nr);
		if (tep_override_comm(r->tep, end + 1, pid))
			die_input("%s: line %u: cannot register it", path, nr);
	}
	free(text);
	r->has_cmdlines = true;
}

static void usage_report(FILE *f)
{
	fprintf(f,
		"usage: %s report [-i] REC [--cpu LIST] [-l] [-t] [-R] [-I] [-S] [--ts-diff]\n"
		"  Print the events of an rbnest recording merged across CPUs in\n"
		"  time order, one line each, as \"trace-cmd report\" prints them:\n"
		"    COMM-PID [CPU] SEC.USEC: sample: FIELDS\n"
		"  reading one page at a time: the first line comes at once and\n"
		"  memory stays bounded whatever the recording's length. COMM is\n"
		"  the task's name in REC/saved_cmdlines (\"<...>\" for a pid it\n"
		"  does not have, \"<idle>\" for pid 0); without that file every\n"
		"  task is \"rbnest\", as \"%s export\" names them. A page that says\n"
		"  events were lost before it is announced by a line\n"
		"  \"CPU:N [COUNT EVENTS DROPPED]\" (\"CPU:N [EVENTS DROPPED]\" when\n"
		"  the page had no room for the count).\n"
		"  -i REC            the recording (or as the last argument)\n"
		"  --cpu LIST        only these CPUs: \"1\", \"0,2-3\" (also -c)\n"
		"  -l                latency format: \"COMM-PID CPU FLAGS SEC.USEC:\",\n"
		"                    FLAGS as trace-cmd prints them:\n"
		"                      1  d irqs off, X irqs-off not supported,\n"
		"                         . irqs on\n"
		"                      2  N need resched, . not\n"
		"                      3  H hardirq and softirq, h hardirq,\n"
		"                         s softirq, . neither (an NMI has no\n"
		"                         letter of its own)\n"
		"                      4  preempt count, low 4 bits in hex, . 0\n"
		"                      5  preempt count, high 4 bits, . 0\n"
		"  -t                full time stamps: SEC.NSEC\n"
		"  -R                raw format: the fields, not the print fmt\n"
		"  -I                leave out events with the hardirq flag\n"
		"  -S                leave out events with the softirq flag\n"
		"  --ts-diff         the time since the line before: (+USEC),\n"
		"                    (+NSEC) with -t\n"
		"  -h, --help        this text\n"
		"It takes the recordings check takes, and refuses the others:\n"
		"exit status 1 for one that is not what its manifest says or\n"
		"has no event, 2 for bad input.\n",
		prog, prog);
}

/* What "report" prints, and how. */
struct report_opts {
	bool ts_diff, lat, full, raw, no_hard, no_soft;
	unsigned long long last;	/* time of the line before */
	struct trace_seq s;
};

/* Print event @e of @cpu as trace-cmd report prints it. */
static void report_event(struct rbt_rec *r, struct report_opts *o,
			 const struct rbt_event *e, int cpu)
{
	static const char spaces[] = "                    ";
	struct trace_seq *s = &o->s;
	struct tep_record rec = {
		.ts = e->ts,
		.size = e->size,
		.record_size = e->size,
		.data = e->data,
		.cpu = cpu,
	};
	unsigned long long ts;
	int len;

	if ((o->no_hard && (e->cflags & RBN_FLAG_HARDIRQ)) ||
	    (o->no_soft && (e->cflags & RBN_FLAG_SOFTIRQ)))
		return;
	/* as "rbtrace export" names the tasks */
	if (!r->has_cmdlines && e->pid > 0 &&
	    !tep_is_pid_registered(r->tep, e->pid))
		tep_register_comm(r->tep, "rbnest", e->pid);
	trace_seq_reset(s);
	if (e->missed == RBT_MISSED_UNKNOWN)
		trace_seq_printf(s, "CPU:%d [EVENTS DROPPED]\n", cpu);
	else if (e->missed)
		trace_seq_printf(s, "CPU:%d [%llu EVENTS DROPPED]\n", cpu,
				 e->missed);
	tep_print_event(r->tep, s, &rec,
			o->lat ? "%8.8s-%-5d %3d" : "%16s-%-5d [%03d]",
			TEP_PRINT_COMM, TEP_PRINT_PID, TEP_PRINT_CPU);
	if (o->lat)
		tep_print_event(r->tep, s, &rec, "%s", TEP_PRINT_LATENCY);
	tep_print_event(r->tep, s, &rec, o->full ? " %9.1d:" : " %6.1000d:",
			TEP_PRINT_TIME);
	if (o->ts_diff) {
		char buf[32] = "";

		ts = o->full ? e->ts : (e->ts + 500) / 1000;
		if (o->last)
			snprintf(buf, sizeof(buf), "(+%lld)",
				 (long long)(ts - o->last));
		o->last = ts;
		trace_seq_printf(s, " %-8s", buf);
	}
	len = strlen(r->event->name);
	trace_seq_printf(s, " %s: %.*s", r->event->name,
			 len < 20 ? 20 - len : 0, spaces);
	tep_print_event(r->tep, s, &rec, "%s",
			o->raw ? TEP_PRINT_INFO_RAW : TEP_PRINT_INFO);
	trace_seq_terminate(s);
	if (s->len && s->buffer[s->len - 1] == '\n')
		s->buffer[--s->len] = '\0';
	puts(s->buffer);
}

static int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "ts-diff", no_argument, NULL, 'D' },
		{ "cpu", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = NULL, *cpus = NULL;
	struct report_opts o = { 0 };
	const struct rbt_event *e;
	struct rbt_rec r = { 0 };
	int opt, cpu, ret;

	while ((opt = getopt_long(argc, argv, "hi:c:ltRIS", opts,
				  NULL)) != -1) {
		switch (opt) {
		case 'h':
			usage_report(stdout);
			return RBT_EXIT_OK;
		case 'i':
			dir = optarg;
			break;
		case 'D':
			o.ts_diff = true;
			break;
		case 'l':
			o.lat = true;
			break;
		case 't':
			o.full = true;
			break;
		case 'R':
			o.raw = true;
			break;
		case 'I':
			o.no_hard = true;
			break;
		case 'S':
			o.no_soft = true;
			break;
		case 'c':
			cpus = optarg;
			break;
		default:
			usage_report(stderr);
			return RBT_EXIT_INPUT;
		}
	}
	if (!dir && optind == argc - 1)
		dir = argv[optind++];
	if (!dir || optind != argc) {
		usage_report(stderr);
		return RBT_EXIT_INPUT;
	}
	ret = rbt_rec_verify("report", dir);
	if (ret)
		return ret;
	rbt_open(&r, dir, cpus);
	if (o.full)
		tep_set_flag(r.tep, TEP_NSEC_OUTPUT);
	printf("cpus=%d\n", r.nr_cpus);
	trace_seq_init(&o.s);
	while ((e = rbt_next_event(&r, &cpu)))
		report_event(&r, &o, e, cpu);
	trace_seq_destroy(&o.s);
	rbt_close(&r);
	/* a write error on stdout: main()'s check at the end */
	return RBT_EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* record                                                             */
/* ------------------------------------------------------------------ */

#define REC_DEFAULT_DIR	"/sys/kernel/debug/rbnest"
#define REC_DEFAULT_OUT	"rbtrace.rec"

static volatile sig_atomic_t rec_stop;

static void rec_sigint(int sig)
{
	(void)sig;
	rec_stop = 1;
}

static void usage_record(FILE *f)
{
	fprintf(f,
		"usage: %s record [-d DIR] [-o OUT] [-t SECONDS] [-s SIZE] [-c CPU] [-r] [--force]\n"
		"  Record the pages of the rbnest module: for every CPU, splice\n"
		"  whole pages from DIR/per_cpu/cpuN/trace_pipe_raw into\n"
		"  OUT/cpuN.raw, and copy the format files into OUT, until the\n"
		"  time or size limit, the end of the data, or SIGINT. OUT/manifest\n"
		"  says what was recorded (CPUs, bytes, the module's parameters,\n"
		"  settings and per-CPU stats at the start and at the end), and\n"
		"  DIR/saved_cmdlines is copied when there is one.\n"
		"  -d DIR      the module's directory (" REC_DEFAULT_DIR ")\n"
		"  -o OUT      the recording directory (" REC_DEFAULT_OUT "); one\n"
		"              that holds a recording is refused\n"
		"  -t SECONDS  stop after this time (decimal, above 0)\n"
		"  -s SIZE     stop after this many bytes (suffix K, M, G)\n"
		"  -c CPU      record this CPU only (OUT/cpuCPU.raw)\n"
		"  -r, --read  read() whole pages instead of splicing them\n"
		"  --force     replace the recording in OUT (only a directory\n"
		"              that holds nothing but a recording's files)\n"
		"  -h, --help  this text\n"
		"A progress line (pages, bytes, events lost) is shown on stderr\n"
		"when it is a terminal.\n",
		prog);
}

struct rec_cpu {
	int in, out;
	int pipe[2];
	bool done;
	bool no_splice;
	unsigned long long bytes;
	unsigned long long lost;
	unsigned long lost_pages;
};

static void copy_file(const char *from, const char *to, bool must)
{
	size_t size;
	char *buf = read_file(from, &size, must);
	FILE *f;

	if (!buf)
		return;
	f = fopen(to, "w");
	if (!f || fwrite(buf, 1, size, f) != size || fclose(f))
		die_input("%s: %s", to, strerror(errno));
	free(buf);
}

static void make_dir(const char *path)
{
	if (mkdir(path, 0755) && errno != EEXIST)
		die_input("%s: %s", path, strerror(errno));
}

/* header_page, header_event, trace_clock, events/SYSTEM/EVENT/format */
static void copy_formats(const char *dir, const char *out)
{
	char from[PATH_MAX], to[PATH_MAX];
	struct dirent *sys, *ev;
	DIR *ds, *de;

	snprintf(from, sizeof(from), "%s/header_page", dir);
	snprintf(to, sizeof(to), "%s/header_page", out);
	copy_file(from, to, true);
	snprintf(from, sizeof(from), "%s/header_event", dir);
	snprintf(to, sizeof(to), "%s/header_event", out);
	copy_file(from, to, true);
	snprintf(from, sizeof(from), "%s/trace_clock", dir);
	snprintf(to, sizeof(to), "%s/trace_clock", out);
	copy_file(from, to, false);

	snprintf(from, sizeof(from), "%s/events", dir);
	ds = opendir(from);
	if (!ds)
		die_input("%s: %s", from, strerror(errno));
	snprintf(to, sizeof(to), "%s/events", out);
	make_dir(to);
	while ((sys = readdir(ds))) {
		if (sys->d_name[0] == '.')
			continue;
		snprintf(from, sizeof(from), "%s/events/%s", dir, sys->d_name);
		de = opendir(from);
		if (!de)
			continue;
		snprintf(to, sizeof(to), "%s/events/%s", out, sys->d_name);
		make_dir(to);
		while ((ev = readdir(de))) {
			struct stat st;

			if (ev->d_name[0] == '.')
				continue;
			snprintf(from, sizeof(from), "%s/events/%s/%s/format",
				 dir, sys->d_name, ev->d_name);
			if (stat(from, &st))
				continue;
			snprintf(to, sizeof(to), "%s/events/%s/%s", out,
				 sys->d_name, ev->d_name);
			make_dir(to);
			snprintf(to, sizeof(to), "%s/events/%s/%s/format", out,
				 sys->d_name, ev->d_name);
			copy_file(from, to, true);
		}
		closedir(de);
	}
	closedir(ds);
}

/* Count the lost events of the pages just written, from their headers. */
static void rec_count_lost(struct rec_cpu *c, unsigned long long from,
			   unsigned int subbuf)
{
	unsigned char hdr[PG_HDR_SIZE], cnt[8];
	unsigned long long off, cw;

	for (off = from; off + subbuf <= c->bytes; off += subbuf) {
		if (pread(c->out, hdr, sizeof(hdr), off) != sizeof(hdr))
			return;
		cw = rd64(hdr + 8);
		if (!(cw & PG_MISSED_EVENTS))
			continue;
		c->lost_pages++;
		if (!(cw & PG_MISSED_STORED) ||
		    (cw & PG_COMMIT_MASK) + 8 > subbuf - PG_HDR_SIZE ||
		    pread(c->out, cnt, 8, off + PG_HDR_SIZE +
			  (cw & PG_COMMIT_MASK)) != 8)
			continue;
		c->lost += rd64(cnt);
	}
}

/* Move what the CPU has into its file; returns the bytes moved, 0 at EOF. */
static ssize_t rec_move(struct rec_cpu *c, int cpu, unsigned int subbuf,
			bool drain)
{
	unsigned char *buf;
	ssize_t n, m;

	if (!c->no_splice && !drain) {
		n = splice(c->in, NULL, c->pipe[1], NULL, subbuf,
			   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n < 0 && errno == EINVAL) {
			c->no_splice = true;
		} else {
			if (n <= 0)
				return n;
			for (m = n; m > 0;) {
				ssize_t k = splice(c->pipe[0], NULL, c->out,
						   NULL, m, SPLICE_F_MOVE);

				if (k <= 0)
					die_input("cpu%d.raw: write: %s", cpu,
						  k ? strerror(errno) :
						  "no progress");
				m -= k;
			}
			return n;
		}
	}
	/* read(): trace_pipe_raw hands out partly written pages this way */
	buf = xrealloc(NULL, subbuf);
	n = read(c->in, buf, subbuf);
	if (n > 0 && write(c->out, buf, n) != n)
		die_input("cpu%d.raw: write: %s", cpu, strerror(errno));
	free(buf);
	return n;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "read", no_argument, NULL, 'r' },
		{ "force", no_argument, NULL, 'F' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = REC_DEFAULT_DIR, *out = REC_DEFAULT_OUT;
	unsigned long long max_bytes = 0, total, lost, num;
	unsigned long long *m_bytes, *m_lost;
	bool use_read = false, force = false;
	const char *why, *stopped = "end-of-data";
	int *m_cpus, m_nr = 0;
	long only_cpu = -1;
	double seconds = 0, start, last_show = 0;
	struct rec_cpu *cpus;
	struct pollfd *pfd;
	char path[PATH_MAX];
	bool tty = isatty(STDERR_FILENO), drain = false;
	struct sigaction sa;
	unsigned int subbuf;
	int opt, nr = 0, cpu, active;
	size_t size;
	char *text;

	while ((opt = getopt_long(argc, argv, "hd:o:t:s:c:r", opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			usage_record(stdout);
			return RBT_EXIT_OK;
		case 'r':
			use_read = true;
			break;
		case 'F':
			force = true;
			break;
		case 'c':
			if (rbt_parse_uint(optarg, MAX_CPUS - 1, &num, &why)) {
				fprintf(stderr, "%s record: bad CPU '%s': %s\n",
					prog, optarg, why);
				return RBT_EXIT_INPUT;
			}
			only_cpu = num;
			break;
		case 'd':
			dir = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case 't':
			if (rbt_parse_seconds(optarg, &seconds, &why)) {
				fprintf(stderr, "%s record: bad time '%s': %s\n",
					prog, optarg, why);
				return RBT_EXIT_INPUT;
			}
			break;
		case 's':
			if (rbt_parse_size(optarg, &max_bytes, &why)) {
				fprintf(stderr, "%s record: bad size '%s': %s\n",
					prog, optarg, why);
				return RBT_EXIT_INPUT;
			}
			break;
		default:
			usage_record(stderr);
			return RBT_EXIT_INPUT;
		}
	}
	if (optind != argc) {
		usage_record(stderr);
		return RBT_EXIT_INPUT;
	}
	if (!strcmp(out, "-")) {
		fprintf(stderr, "%s record: -o -: a recording is a directory of files, not a stream: give a directory\n",
			prog);
		return RBT_EXIT_INPUT;
	}
	if (rbt_module_dir_check("record", dir))
		return RBT_EXIT_INPUT;

	snprintf(path, sizeof(path), "%s/header_page", dir);
	text = read_file(path, &size, true);
	subbuf = header_data_size(path, text, size) + PG_HDR_SIZE;
	free(text);
	for (nr = 0; nr < MAX_CPUS; nr++) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/trace_pipe_raw",
			 dir, nr);
		if (stat(path, &st))
			break;
	}
	if (!nr)
		die_input("%s/per_cpu/cpu0/trace_pipe_raw: %s", dir,
			  strerror(errno));
	if (only_cpu >= nr)
		die_input("%s/per_cpu/cpu%ld/trace_pipe_raw: %s", dir,
			  only_cpu, strerror(ENOENT));

	if (rbt_rec_prepare_dir(out, force))
		return RBT_EXIT_INPUT;
	copy_formats(dir, out);
	cpus = xrealloc(NULL, nr * sizeof(*cpus));
	pfd = xrealloc(NULL, nr * sizeof(*pfd));
	memset(cpus, 0, nr * sizeof(*cpus));
	for (cpu = 0; cpu < nr; cpu++) {
		struct rec_cpu *c = &cpus[cpu];

		c->no_splice = use_read;
		if (only_cpu >= 0 && cpu != only_cpu) {
			c->in = c->out = c->pipe[0] = c->pipe[1] = -1;
			c->done = true;
			continue;
		}
		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/trace_pipe_raw",
			 dir, cpu);
		c->in = open(path, O_RDONLY | O_NONBLOCK);
		if (c->in < 0)
			die_input("%s: %s", path, strerror(errno));
		snprintf(path, sizeof(path), "%s/cpu%d.raw", out, cpu);
		c->out = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (c->out < 0)
			die_input("%s: %s", path, strerror(errno));
		if (pipe(c->pipe))
			die_input("pipe: %s", strerror(errno));
	}

	m_cpus = xrealloc(NULL, nr * sizeof(*m_cpus));
	m_bytes = xrealloc(NULL, nr * sizeof(*m_bytes));
	m_lost = xrealloc(NULL, nr * sizeof(*m_lost));
	for (cpu = 0; cpu < nr; cpu++)
		if (only_cpu < 0 || cpu == only_cpu)
			m_cpus[m_nr++] = cpu;
	/* the stats before the first page is read */
	if (rbt_manifest_begin(out, dir, m_cpus, m_nr, subbuf))
		return RBT_EXIT_INPUT;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = rec_sigint;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	start = now_s();
	for (;;) {
		bool moved = false;

		total = 0;
		lost = 0;
		active = 0;
		/*
		 * A non-blocking read() hands out whatever a CPU has, a few
		 * events at a time: read only what poll() says is ready (the
		 * buffer_percent watermark, or the end of the data).
		 */
		if (use_read) {
			for (cpu = 0; cpu < nr; cpu++) {
				pfd[cpu].fd = cpus[cpu].done ? -1 : cpus[cpu].in;
				pfd[cpu].events = POLLIN;
				pfd[cpu].revents = 0;
			}
			poll(pfd, nr, 100);
		}
		for (cpu = 0; cpu < nr; cpu++) {
			struct rec_cpu *c = &cpus[cpu];
			unsigned long long from = c->bytes;
			ssize_t n;

			if (use_read && !pfd[cpu].revents)
				goto next;
			if (!c->done && !rec_stop) {
				n = rec_move(c, cpu, subbuf, false);
				if (n > 0) {
					c->bytes += n;
					moved = true;
					rec_count_lost(c, from - from % subbuf,
						       subbuf);
				} else if (!n) {
					c->done = true;
				} else if (errno != EAGAIN && errno != EINTR) {
					die_input("%s/per_cpu/cpu%d/trace_pipe_raw: %s",
						  dir, cpu, strerror(errno));
				}
			}
next:
			total += c->bytes;
			lost += c->lost;
			active += !c->done;
		}
		if (tty && (now_s() - last_show > 0.25 || !active)) {
			last_show = now_s();
			fprintf(stderr, "\r%s: %llu pages, %llu bytes, %llu events lost ",
				out, total / subbuf, total, lost);
		}
		if (!active)
			break;
		if (max_bytes && total >= max_bytes) {
			stopped = "size";
			break;
		}
		if (rec_stop || (seconds && now_s() - start >= seconds)) {
			stopped = rec_stop ? "signal" : "time";
			drain = true;
			break;
		}
		if (!moved && !use_read) {
			for (cpu = 0; cpu < nr; cpu++) {
				pfd[cpu].fd = cpus[cpu].done ? -1 : cpus[cpu].in;
				pfd[cpu].events = POLLIN;
			}
			poll(pfd, nr, 100);
		}
	}

	/* stopped by time or signal: what is left, partly written pages too */
	total = 0;
	lost = 0;
	for (cpu = 0; cpu < nr; cpu++) {
		struct rec_cpu *c = &cpus[cpu];

		while (drain && !c->done) {
			unsigned long long from = c->bytes;
			ssize_t n = rec_move(c, cpu, subbuf, true);

			if (n <= 0)
				break;
			c->bytes += n;
			rec_count_lost(c, from - from % subbuf, subbuf);
		}
		total += c->bytes;
		lost += c->lost;
		if (c->in < 0)
			continue;
		close(c->in);
		close(c->pipe[0]);
		close(c->pipe[1]);
		if (close(c->out))
			die_input("%s/cpu%d.raw: %s", out, cpu, strerror(errno));
	}
	if (tty)
		fprintf(stderr, "\n");
	/* the stats once no reader of ours is left */
	for (cpu = 0; cpu < m_nr; cpu++) {
		m_bytes[cpu] = cpus[m_cpus[cpu]].bytes;
		m_lost[cpu] = cpus[m_cpus[cpu]].lost;
	}
	if (rbt_manifest_end(out, dir, m_cpus, m_nr, m_bytes, m_lost, subbuf,
			     stopped))
		return RBT_EXIT_INPUT;
	free(m_cpus);
	free(m_bytes);
	free(m_lost);
	if (only_cpu >= 0)
		printf("%s: cpu %ld, %llu pages, %llu bytes, %llu events lost\n",
		       out, only_cpu, total / subbuf, total, lost);
	else
		printf("%s: %d CPUs, %llu pages, %llu bytes, %llu events lost\n",
		       out, nr, total / subbuf, total, lost);
	free(cpus);
	free(pfd);
	return RBT_EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* stream                                                             */
/* ------------------------------------------------------------------ */

struct stream_cpu {
	int in;
	int pipe[2];
	bool done;
	unsigned long long pages;
	unsigned long long events;
	unsigned long long paths[8];	/* events by RBN_EV_* bit */
};

/*
 * Check one sub-buffer image of CPU @cpu, then forget its events: the
 * checks of "check" (check_event()), the window of sequence numbers
 * taking each page's count as it comes.
 */
static void stream_page(struct rbt_rec *r, int cpu, struct stream_cpu *s,
			unsigned char *pg, struct walk *w)
{
	struct rbt_cpu *c = &r->cpu[cpu];
	unsigned int pno = s->pages > UINT_MAX ? UINT_MAX : s->pages;
	unsigned long i;
	int b;

	walk_page(r, c, pno, pg, w);
	if (w->missed) {
		c->missed_pages++;
		if (w->stored)
			c->missed_sum += w->missed_count;
		else
			c->missed_unknown++;
	}
	seq_page(c, pno, w);
	decode_page(r, cpu, pno, pg, w);
	s->pages++;
	c->nr_pages = pno + 1;
	for (i = 0; i < c->nr_ev; i++) {
		struct rbt_event *e = &c->ev[i];

		check_event(r, cpu, e);
		for (b = 0; b < 8; b++)
			if (e->flags & (1U << b))
				s->paths[b]++;
		if (!c->events)
			c->first_ts = e->ts;
		c->last_ts = e->ts;
		c->last = *e;
		c->events++;
		s->events++;
	}
}

/*
 * One sub-buffer of @cpu into @pg: spliced (the page leaves the ring) and
 * read back from the pipe, or read() when @drain (partly written pages
 * too). Returns its size, 0 at the end of the data, -1 with errno.
 */
static ssize_t stream_read(struct stream_cpu *s, unsigned char *pg,
			   unsigned int subbuf, bool drain)
{
	ssize_t n, got;

	if (drain)
		return read(s->in, pg, subbuf);
	n = splice(s->in, NULL, s->pipe[1], NULL, subbuf,
		   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
	if (n <= 0)
		return n;
	for (got = 0; got < n;) {
		ssize_t k = read(s->pipe[0], pg + got, n - got);

		if (k <= 0)
			die_input("pipe: %s", k ? strerror(errno) : "no data");
		got += k;
	}
	return n;
}

static void usage_stream(FILE *f)
{
	fprintf(f,
		"usage: %s stream [-d DIR] [-i SECONDS] [-q]\n"
		"  Check the pages of the rbnest module as they come, without\n"
		"  keeping them: splice every CPU's DIR/per_cpu/cpuN/trace_pipe_raw\n"
		"  and check each page as \"check\" does (bounds, every event's\n"
		"  time against the one before it and its writer's clock,\n"
		"  sequence numbers read once, every missing one covered by\n"
		"  missed-events counts; a number may arrive %llu late), until\n"
		"  every CPU's data ends (tracing_on=0) or SIGINT. Then the\n"
		"  summary of \"check\", and the events by time-stamp path.\n"
		"  -d DIR       the module's directory (" REC_DEFAULT_DIR ")\n"
		"  -i SECONDS   print a progress line this often (default 10)\n"
		"  -q, --quiet  no progress lines\n"
		"  -h, --help   this text\n"
		"Exit status: 0 all checks passed, 1 violation, 2 bad input.\n",
		prog, SEQ_WIN);
}

static int cmd_stream(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "quiet", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const path_names[8] = {
		"fast", "abs", "slow", "zero", "extend", "start",
		"clock_back", "0x80",
	};
	unsigned long long total, pages;
	double interval = 10, start, last_show;
	struct rbt_rec r = { 0 };
	struct stream_cpu *sc;
	struct sigaction sa;
	struct walk w = { 0 };
	struct pollfd *pfd;
	unsigned char *pg;
	char path[PATH_MAX];
	const char *why;
	bool drain = false, progress = true;
	int opt, cpu, active, nr, b;

	r.dir = REC_DEFAULT_DIR;
	while ((opt = getopt_long(argc, argv, "hqd:i:", opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			usage_stream(stdout);
			return RBT_EXIT_OK;
		case 'q':
			progress = false;
			break;
		case 'd':
			r.dir = optarg;
			break;
		case 'i':
			if (rbt_parse_seconds(optarg, &interval, &why)) {
				fprintf(stderr, "%s stream: bad interval '%s': %s\n",
					prog, optarg, why);
				return RBT_EXIT_INPUT;
			}
			break;
		default:
			usage_stream(stderr);
			return RBT_EXIT_INPUT;
		}
	}
	if (optind != argc) {
		usage_stream(stderr);
		return RBT_EXIT_INPUT;
	}

	/* the module's directory has the format files of a recording */
	if (rbt_module_dir_check("stream", r.dir))
		return RBT_EXIT_INPUT;
	load_formats(&r);
	for (nr = 0; nr < MAX_CPUS; nr++) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/trace_pipe_raw",
			 r.dir, nr);
		if (stat(path, &st))
			break;
	}
	if (!nr)
		die_input("%s/per_cpu/cpu0/trace_pipe_raw: %s", r.dir,
			  strerror(errno));
	r.nr_cpus = nr;
	r.cpu = xrealloc(NULL, nr * sizeof(*r.cpu));
	memset(r.cpu, 0, nr * sizeof(*r.cpu));
	sc = xrealloc(NULL, nr * sizeof(*sc));
	memset(sc, 0, nr * sizeof(*sc));
	pfd = xrealloc(NULL, nr * sizeof(*pfd));
	pg = xrealloc(NULL, r.subbuf);
	for (cpu = 0; cpu < nr; cpu++) {
		struct stream_cpu *s = &sc[cpu];

		snprintf(r.cpu[cpu].path, sizeof(r.cpu[cpu].path),
			 "%s/per_cpu/cpu%d/trace_pipe_raw", r.dir, cpu);
		r.cpu[cpu].present = true;
		r.cpu[cpu].fd = -1;
		r.cpu[cpu].seq = calloc(1, sizeof(*r.cpu[cpu].seq));
		if (!r.cpu[cpu].seq)
			die_input("out of memory");
		s->in = open(r.cpu[cpu].path, O_RDONLY | O_NONBLOCK);
		if (s->in < 0)
			die_input("%s: %s", r.cpu[cpu].path, strerror(errno));
		if (pipe(s->pipe))
			die_input("pipe: %s", strerror(errno));
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = rec_sigint;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);

	start = now_s();
	last_show = start;
	for (;;) {
		bool moved = false;

		active = 0;
		for (cpu = 0; cpu < nr && !rec_stop; cpu++) {
			struct stream_cpu *s = &sc[cpu];
			ssize_t n;

			if (s->done)
				continue;
			n = stream_read(s, pg, r.subbuf, drain);
			if (n == (ssize_t)r.subbuf) {
				stream_page(&r, cpu, s, pg, &w);
				moved = true;
			} else if (n > 0) {
				die_input("%s: %zd bytes, not a sub-buffer",
					  r.cpu[cpu].path, n);
			} else if (!n) {
				s->done = true;
			} else if (errno != EAGAIN && errno != EINTR) {
				die_input("%s: %s", r.cpu[cpu].path,
					  strerror(errno));
			} else if (drain) {
				s->done = true;
			}
			active += !s->done;
		}
		if (progress && now_s() - last_show >= interval) {
			last_show = now_s();
			total = 0;
			for (cpu = 0; cpu < nr; cpu++)
				total += sc[cpu].events;
			printf("progress: %.0f s, %llu events checked, %lu violations\n",
			       last_show - start, total, r.violations);
		}
		if (rec_stop && !drain) {
			/* what is left, partly written pages too */
			drain = true;
			rec_stop = 0;
			continue;
		}
		if (!active || rec_stop)
			break;
		if (!moved && !drain) {
			for (cpu = 0; cpu < nr; cpu++) {
				pfd[cpu].fd = sc[cpu].done ? -1 : sc[cpu].in;
				pfd[cpu].events = POLLIN;
			}
			poll(pfd, nr, 100);
		}
	}

	/* the numbers still open: whatever was not seen is missing */
	total = 0;
	pages = 0;
	for (cpu = 0; cpu < nr; cpu++) {
		seq_finish(&r, cpu);
		pages += sc[cpu].pages;
	}
	printf("%-4s %9s %11s %8s %8s %8s %8s %11s %9s %7s\n", "cpu",
	       "pages", "events", "zero", "abs", "extend", "padding",
	       "missed", "seq-gaps", "max-gap");
	for (cpu = 0; cpu < nr; cpu++) {
		struct rbt_cpu *c = &r.cpu[cpu];
		unsigned long long ev = sc[cpu].events;
		char missed[32];

		snprintf(missed, sizeof(missed), "%llu%s", c->missed_sum,
			 c->missed_unknown ? "+?" : "");
		printf("%-4d %9llu %11llu %8lu %8lu %8lu %8lu %11s %9llu %7llu\n",
		       cpu, sc[cpu].pages, ev, c->nr_zero, c->nr_abs,
		       c->nr_extend, c->nr_pad, missed, c->gap_sum,
		       c->gap_max);
		total += ev;
	}
	print_ctx_depth(&r.cd);
	printf("%-10s", "paths");
	for (b = 0; b < 7; b++)
		printf(" %10s", path_names[b]);
	printf("\n");
	for (cpu = 0; cpu < nr; cpu++) {
		printf("cpu%-7d", cpu);
		for (b = 0; b < 7; b++)
			printf(" %10llu", sc[cpu].paths[b]);
		printf("\n");
	}
	printf("pages: %llu\n", pages);
	printf("events: %llu\n", total);
	for (cpu = 0; cpu < nr; cpu++)
		if (r.cpu[cpu].gap_unverified)
			printf("cpu %d: %llu missing events on the last page not verifiable\n",
			       cpu, r.cpu[cpu].gap_unverified);
	for (cpu = 0; cpu < nr; cpu++) {
		close(sc[cpu].in);
		close(sc[cpu].pipe[0]);
		close(sc[cpu].pipe[1]);
	}
	free(w.ev);
	free(pg);
	free(pfd);
	free(sc);
	if (r.violations) {
		if (r.violations > MAX_SHOWN)
			fprintf(stderr, "... %lu more\n",
				r.violations - MAX_SHOWN);
		printf("%s: FAILED: %lu violations\n", r.dir, r.violations);
	} else {
		printf("%s: OK\n", r.dir);
	}
	rbt_close(&r);
	return r.violations ? RBT_EXIT_VIOLATION : RBT_EXIT_OK;
}

/* ------------------------------------------------------------------ */
/* export                                                             */
/* ------------------------------------------------------------------ */

static void usage_export(FILE *f)
{
	fprintf(f,
		"usage: %s export REC -o FILE\n"
		"  Write an rbnest recording as a trace-cmd data file that\n"
		"  \"trace-cmd report\" reads. It takes the recordings check\n"
		"  takes, and refuses the others: exit status 1 for one that is\n"
		"  not what its manifest says or has no event, 2 for bad input.\n"
		"  -o, --output FILE  the trace-cmd data file to write; - for\n"
		"                     standard output (the summary goes to stderr)\n"
		"  -h, --help         this text\n",
		prog);
}

static int cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	struct rbt_rec r = { 0 };
	const char *out = NULL;
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			usage_export(stdout);
			return RBT_EXIT_OK;
		case 'o':
			out = optarg;
			break;
		default:
			usage_export(stderr);
			return RBT_EXIT_INPUT;
		}
	}
	if (optind != argc - 1 || !out) {
		usage_export(stderr);
		return RBT_EXIT_INPUT;
	}
	/* the recordings check and report take, and no other */
	r.dir = argv[optind];
	ret = rbt_rec_verify("export", r.dir);
	if (ret)
		return ret;
	load_formats(&r);
	rbt_close(&r);
#if HAVE_EXPORT
	if (rbtrace_export_stats) {
		struct rbtrace_export_stats st;

		if (rbtrace_export_stats(argv[optind], out, &st))
			return RBT_EXIT_INPUT;
		fprintf(strcmp(out, "-") ? stdout : stderr,
			"%s: %u CPUs, %llu pages, %llu records\n",
			strcmp(out, "-") ? out : "standard output",
			st.nr_cpus, st.pages, st.records);
		return RBT_EXIT_OK;
	}
#endif
	fprintf(stderr, "%s export: not built in\n", prog);
	return RBT_EXIT_INPUT;
}

/* ------------------------------------------------------------------ */
/* plot (plot.c)                                                      */
/* ------------------------------------------------------------------ */

#ifndef RBTRACE_FUZZ
static int cmd_plot(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "output", required_argument, NULL, 'o' },
		{ "from", required_argument, NULL, 'f' },
		{ "to", required_argument, NULL, 't' },
		{ "cpu", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	struct rbt_plot_opts po = { .cpu = -1 };
	struct tep_format_field *f_src;
	struct rbt_rec r = { 0 };
	const char *out = NULL;
	struct rbt_plot *p;
	int opt, pass, cpu, ret = RBT_EXIT_INPUT;
	unsigned long long num;
	const char *why;

	while ((opt = getopt_long(argc, argv, "ho:f:t:c:", opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			rbt_plot_usage(stdout, prog);
			return RBT_EXIT_OK;
		case 'o':
			out = optarg;
			break;
		case 'f':
		case 't':
			if (rbt_plot_parse_time(optarg, opt == 'f' ? &po.from :
						&po.to)) {
				fprintf(stderr, "%s plot: bad time '%s'\n", prog,
					optarg);
				return RBT_EXIT_INPUT;
			}
			*(opt == 'f' ? &po.has_from : &po.has_to) = true;
			break;
		case 'c':
			if (rbt_parse_uint(optarg, MAX_CPUS - 1, &num, &why)) {
				fprintf(stderr, "%s plot: bad CPU '%s': %s\n",
					prog, optarg, why);
				return RBT_EXIT_INPUT;
			}
			po.cpu = num;
			break;
		default:
			rbt_plot_usage(stderr, prog);
			return RBT_EXIT_INPUT;
		}
	}
	if (optind != argc - 1 || !out) {
		rbt_plot_usage(stderr, prog);
		return RBT_EXIT_INPUT;
	}
	/* two passes over the same events: see plot.h */
	p = NULL;
	for (pass = 0; pass < 2; pass++) {
		const struct rbt_event *e;

		rbt_open(&r, argv[optind], NULL);
		if (po.cpu >= r.nr_cpus)
			die_input("%s: no CPU %d", r.dir, po.cpu);
		if (!p) {
			po.name = r.dir;
			po.nr_cpus = r.nr_cpus;
			p = rbt_plot_new(&po);
			if (!p)
				die_input("out of memory");
		}
		f_src = tep_find_any_field(r.event, "source");
		while ((e = rbt_next_event(&r, &cpu))) {
			struct rbt_plot_ev pe = {
				.ts = e->ts, .seq = e->seq, .cpu = cpu,
				.pid = e->pid, .ctx = e->ctx,
				.depth = e->depth, .flags = e->flags,
				.source = f_src ? field(f_src, e->data) : 0,
			};

			if (rbt_plot_add(p, &pe))
				goto fail;
		}
		rbt_close(&r);
		if (rbt_plot_end_pass(p))
			goto fail;
	}
	if (rbt_plot_write_file(p, out))
		goto fail;
	ret = RBT_EXIT_OK;
	goto out;
fail:
	fprintf(stderr, "%s plot: %s\n", prog, rbt_plot_error(p));
out:
	rbt_plot_free(p);
	rbt_close(&r);
	return ret;
}
#endif /* RBTRACE_FUZZ */

/* ------------------------------------------------------------------ */
/* main                                                               */
/* ------------------------------------------------------------------ */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s COMMAND [OPTIONS] ...\n"
		"  record   record the pages of the rbnest module\n"
		"  check    verify the invariants of a recording\n"
		"  stream   check the module's pages as they come\n"
		"  report   print the events of a recording\n"
		"  export   write a trace-cmd data file\n"
		"  plot     draw the writers' nesting as an SVG picture\n"
		"'%s COMMAND --help' describes a command; '%s --version'\n"
		"prints the version.\n",
		prog, prog, prog);
}

#ifndef RBTRACE_FUZZ
static int run_command(int argc, char **argv);

/*
 * Every command's output is checked at exit: a full disk or a closed
 * pipe under standard output is an error (exit status 2), not a short
 * report.
 */
int main(int argc, char **argv)
{
	int ret = run_command(argc, argv);

	if (rbt_close_stdout(prog))
		return RBT_EXIT_INPUT;
	return ret;
}

static int run_command(int argc, char **argv)
{
	const char *cmd;

	if (argc < 2) {
		usage(stderr);
		return RBT_EXIT_INPUT;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") ||
	    !strcmp(cmd, "help")) {
		usage(stdout);
		return RBT_EXIT_OK;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		printf("rbtrace %s\n", RBTRACE_VERSION);
		return RBT_EXIT_OK;
	}
	/* the sub-command sees its own name as argv[0] */
	argc--;
	argv++;
	if (!strcmp(cmd, "check"))
		return cmd_check(argc, argv);
	if (!strcmp(cmd, "stream"))
		return cmd_stream(argc, argv);
	if (!strcmp(cmd, "report"))
		return cmd_report(argc, argv);
	if (!strcmp(cmd, "record"))
		return cmd_record(argc, argv);
	if (!strcmp(cmd, "export"))
		return cmd_export(argc, argv);
	if (!strcmp(cmd, "plot"))
		return cmd_plot(argc, argv);
	fprintf(stderr, "%s: unknown command '%s'\n", prog, cmd);
	usage(stderr);
	return RBT_EXIT_INPUT;
}
#endif /* RBTRACE_FUZZ */
