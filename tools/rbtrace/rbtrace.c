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

/* One data event, as rebuilt from the recording. */
struct rbt_event {
	unsigned long long ts;		/* rebuilt time */
	unsigned long long seq;
	unsigned long long fts;		/* the writer's "ts" field */
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
	void *data;			/* payload copy (for printing) */
};

struct rbt_cpu {
	char path[PATH_MAX];
	bool present;
	unsigned int nr_pages;
	struct rbt_event *ev;
	unsigned long nr_ev, cap_ev;
	/* page accounting */
	unsigned long missed_pages;
	unsigned long missed_unknown;
	unsigned long long missed_sum;
	unsigned long *page_first;	/* first event index of each page */
	unsigned long long *page_missed; /* stored count, ~0 unknown, 0 none */
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
	printf("VIOLATION: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
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
		c->cap_ev = c->cap_ev ? 2 * c->cap_ev : 1024;
		c->ev = xrealloc(c->ev, c->cap_ev * sizeof(*c->ev));
	}
	memset(&c->ev[c->nr_ev], 0, sizeof(c->ev[0]));
	return &c->ev[c->nr_ev++];
}

/* Decode one page with kbuffer, after walk_page() checked its bounds. */
static void decode_page(struct rbt_rec *r, int cpu, unsigned int pno,
			unsigned char *pg, struct walk *w, bool keep_data)
{
	struct rbt_cpu *c = &r->cpu[cpu];
	unsigned long long kts, prev = w->stamp, corr = 0;
	unsigned int i = 0;
	void *data;

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
		if (keep_data) {
			e->data = xrealloc(NULL, size);
			memcpy(e->data, data, size);
		}
		prev = ts;
	}
	if (i != w->nr)
		die_input("%s: page %u: kbuffer read %u events, the page has %u",
			  c->path, pno, i, w->nr);
}

/* Check, decode and account page @pno of CPU @cpu (r->subbuf bytes). */
static void load_page(struct rbt_rec *r, int cpu, unsigned int pno,
		      unsigned char *pg, struct walk *w, bool keep_data)
{
	struct rbt_cpu *c = &r->cpu[cpu];

	c->page_first = xrealloc(c->page_first, (pno + 1) * sizeof(long));
	c->page_missed = xrealloc(c->page_missed,
				  (pno + 1) * sizeof(long long));
	c->page_first[pno] = c->nr_ev;
	walk_page(r, c, pno, pg, w);
	c->page_missed[pno] = 0;
	if (w->missed) {
		c->missed_pages++;
		if (w->stored) {
			c->page_missed[pno] = w->missed_count;
			c->missed_sum += w->missed_count;
		} else {
			c->page_missed[pno] = ~0ULL;
			c->missed_unknown++;
		}
	}
	decode_page(r, cpu, pno, pg, w, keep_data);
	c->nr_pages = pno + 1;
}

/* Read every page of every cpuN.raw file. */
static void load_cpus(struct rbt_rec *r, bool keep_data)
{
	unsigned char *pg = xrealloc(NULL, r->subbuf);
	struct walk w = { 0 };
	int cpu, last = -1;

	r->cpu = xrealloc(NULL, MAX_CPUS * sizeof(*r->cpu));
	memset(r->cpu, 0, MAX_CPUS * sizeof(*r->cpu));
	for (cpu = 0; cpu < MAX_CPUS; cpu++) {
		struct rbt_cpu *c = &r->cpu[cpu];
		struct stat st;

		snprintf(c->path, sizeof(c->path), "%s/cpu%d.raw", r->dir, cpu);
		if (stat(c->path, &st))
			continue;
		c->present = true;
		last = cpu;
	}
	if (last < 0)
		die_input("%s: no cpuN.raw file", r->dir);
	r->nr_cpus = last + 1;

	for (cpu = 0; cpu < r->nr_cpus; cpu++) {
		struct rbt_cpu *c = &r->cpu[cpu];
		unsigned int pno;
		ssize_t n;
		int fd;

		if (!c->present)
			die_input("%s: missing (cpu%d.raw exists)", c->path,
				  r->nr_cpus - 1);
		fd = open(c->path, O_RDONLY);
		if (fd < 0)
			die_input("%s: %s", c->path, strerror(errno));
		for (pno = 0;; pno++) {
			size_t got = 0;

			while (got < r->subbuf) {
				n = read(fd, pg + got, r->subbuf - got);
				if (n < 0)
					die_input("%s: read at offset %llu: %s",
						  c->path,
						  (unsigned long long)pno *
						  r->subbuf + got,
						  strerror(errno));
				if (!n)
					break;
				got += n;
			}
			if (!got)
				break;
			if (got < r->subbuf)
				die_input("%s: truncated: page %u at offset %llu has %zu of %u bytes",
					  c->path, pno,
					  (unsigned long long)pno * r->subbuf,
					  got, r->subbuf);
			load_page(r, cpu, pno, pg, &w, keep_data);
		}
		close(fd);
	}
	free(w.ev);
	free(pg);
}

static void rec_free(struct rbt_rec *r)
{
	unsigned long k;
	int cpu;

	for (cpu = 0; r->cpu && cpu < r->nr_cpus; cpu++) {
		struct rbt_cpu *c = &r->cpu[cpu];

		for (k = 0; k < c->nr_ev; k++)
			free(c->ev[k].data);
		free(c->ev);
		free(c->page_first);
		free(c->page_missed);
	}
	free(r->cpu);
	if (r->kb)
		kbuffer_free(r->kb);
	if (r->tep)
		tep_free(r->tep);
}

/* ------------------------------------------------------------------ */
/* check                                                              */
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

static void check_times(struct rbt_rec *r, int cpu)
{
	struct rbt_cpu *c = &r->cpu[cpu];
	unsigned long i;

	for (i = 0; i < c->nr_ev; i++)
		check_event_time(r, cpu, &c->ev[i], i ? &c->ev[i - 1] : NULL);
}

static const struct rbt_event *sort_base;

static int cmp_seq(const void *a, const void *b)
{
	const struct rbt_event *x = &sort_base[*(const unsigned long *)a];
	const struct rbt_event *y = &sort_base[*(const unsigned long *)b];

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return *(const unsigned long *)a < *(const unsigned long *)b ? -1 : 1;
}

/*
 * Sequence numbers: a nested writer may take its number before the writer
 * it interrupted, so they are compared as a set: sorted, no duplicate, and
 * every number missing between two must be covered by missed-events counts
 * (and so must a missing start when the first page says events were lost).
 * A gap is charged to the event after it in seq order; walking the events
 * in stream order, the gaps so far must not exceed the stored counts up to
 * the next page.
 */
static void check_seq(struct rbt_rec *r, int cpu)
{
	struct rbt_cpu *c = &r->cpu[cpu];
	unsigned long *idx, i, n = c->nr_ev;
	unsigned long long *gap, *cum, sum = 0, extra = 0;
	unsigned int pno;

	if (!n)
		return;
	idx = xrealloc(NULL, n * sizeof(*idx));
	gap = xrealloc(NULL, n * sizeof(*gap));
	for (i = 0; i < n; i++) {
		idx[i] = i;
		gap[i] = 0;
	}
	sort_base = c->ev;
	qsort(idx, n, sizeof(*idx), cmp_seq);

	if (c->nr_pages && c->page_missed[0])
		gap[idx[0]] = c->ev[idx[0]].seq;
	for (i = 1; i < n; i++) {
		const struct rbt_event *a = &c->ev[idx[i - 1]];
		const struct rbt_event *b = &c->ev[idx[i]];

		if (a->seq == b->seq)
			violation(r, "%s: cpu %d page %u offset %u: duplicate seq %llu (also page %u offset %u)",
				  c->path, cpu, b->page, b->off, b->seq,
				  a->page, a->off);
		else
			gap[idx[i]] = b->seq - a->seq - 1;
	}

	/* stored counts up to each page */
	cum = xrealloc(NULL, c->nr_pages * sizeof(*cum));
	for (pno = 0; pno < c->nr_pages; pno++) {
		unsigned long long m = c->page_missed[pno];

		cum[pno] = (pno ? cum[pno - 1] : 0) + (m == ~0ULL ? 0 : m);
	}

	for (i = 0; i < n; i++) {
		const struct rbt_event *e = &c->ev[i];
		unsigned int last = e->page + 1 < c->nr_pages ? e->page + 1 :
				    e->page;

		if (!gap[i])
			continue;
		c->gap_sum += gap[i];
		if (gap[i] > c->gap_max)
			c->gap_max = gap[i];
		/*
		 * Events written out of seq order by nested writers may lie
		 * on the next page: its count may cover them. A page that
		 * says events were lost, without room for the count, covers
		 * whatever is charged to it and to the page before it.
		 */
		if (c->page_missed[e->page] == ~0ULL ||
		    c->page_missed[last] == ~0ULL)
			continue;
		sum += gap[i];
		if (sum > cum[last] + extra && e->page + 1 == c->nr_pages) {
			/* their count would be on a page not recorded */
			printf("note: %s: cpu %d page %u offset %u: %llu events missing before seq %llu on the last page, not verifiable\n",
			       c->path, cpu, e->page, e->off, gap[i], e->seq);
			c->gap_unverified += gap[i];
			extra = sum - cum[last];
		} else if (sum > cum[last] + extra) {
			violation(r, "%s: cpu %d page %u offset %u: %llu events missing before seq %llu, not accounted for by missed-events counts (%llu missing, %llu counted)",
				  c->path, cpu, e->page, e->off, gap[i], e->seq,
				  sum, cum[last]);
			/* report each unaccounted gap once */
			extra = sum - cum[last];
		}
	}
	free(cum);
	free(idx);
	free(gap);
}

/* Merge the CPUs by time; returns the merged order (cpu << 48 | index). */
static unsigned long long *merge(struct rbt_rec *r, int only_cpu,
				 unsigned long *nr)
{
	unsigned long *pos = xrealloc(NULL, r->nr_cpus * sizeof(*pos));
	unsigned long long *out;
	unsigned long total = 0, k = 0;
	int cpu;

	for (cpu = 0; cpu < r->nr_cpus; cpu++) {
		pos[cpu] = 0;
		if (only_cpu < 0 || only_cpu == cpu)
			total += r->cpu[cpu].nr_ev;
	}
	out = xrealloc(NULL, total * sizeof(*out));
	while (k < total) {
		int best = -1;

		for (cpu = 0; cpu < r->nr_cpus; cpu++) {
			struct rbt_cpu *c = &r->cpu[cpu];

			if ((only_cpu >= 0 && only_cpu != cpu) ||
			    pos[cpu] >= c->nr_ev)
				continue;
			if (best < 0 || c->ev[pos[cpu]].ts <
			    r->cpu[best].ev[pos[best]].ts)
				best = cpu;
		}
		out[k++] = (unsigned long long)best << 48 | pos[best]++;
	}
	free(pos);
	*nr = total;
	return out;
}

static void usage_check(FILE *f)
{
	fprintf(f,
		"usage: %s check [-q] REC\n"
		"  Verify an rbnest recording: every page parses, per CPU the\n"
		"  rebuilt time stamps never decrease and equal the writers'\n"
		"  (zero-delta events: the previous event's; clock-back events,\n"
		"  whose clock read behind a time taken before: at or after it),\n"
		"  sequence numbers have no duplicate and no gap the missed-events\n"
		"  counts do not account for; the recording is what its manifest\n"
		"  says (every CPU file there with its size, no other, an end)\n"
		"  and holds an event, and per CPU the events read are those the\n"
		"  module handed to the reader. Prints a summary table.\n"
		"  -q, --quiet   only the verdict and violations\n"
		"  -h, --help    this text\n"
		"Exit status: 0 all checks passed, 1 violation (a recording\n"
		"not what its manifest says, or without an event, too), 2 bad\n"
		"input. Without a manifest the files are checked against each\n"
		"other only (a warning on stderr).\n",
		prog);
}

/* Events by context and nesting depth. */
struct ctx_depth {
	unsigned long n[NR_CTX][MAX_DEPTH + 1];
	int max_d;
};

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

static void manifest_note(void *arg, const char *msg)
{
	if (!((struct rbt_rec *)arg)->quiet)
		printf("%s\n", msg);
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
			.events = c->nr_ev,
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

/* The checks of "rbtrace check" on a loaded recording; its exit status. */
static int check_rec(struct rbt_rec *r)
{
	struct ctx_depth cd;
	unsigned long total = 0, nr_merged, switches = 0;
	unsigned long long *order;
	int cpu;

	check_manifest(r);
	memset(&cd, 0, sizeof(cd));
	for (cpu = 0; cpu < r->nr_cpus; cpu++) {
		struct rbt_cpu *c = &r->cpu[cpu];

		check_times(r, cpu);
		check_seq(r, cpu);
		for (unsigned long k = 0; k < c->nr_ev; k++)
			count_ctx_depth(r, cpu, &c->ev[k], &cd);
		total += c->nr_ev;
	}
	order = merge(r, -1, &nr_merged);
	for (unsigned long k = 1; k < nr_merged; k++) {
		const struct rbt_event *a, *b;

		a = &r->cpu[order[k - 1] >> 48].ev[order[k - 1] & 0xffffffffffffULL];
		b = &r->cpu[order[k] >> 48].ev[order[k] & 0xffffffffffffULL];
		if (b->ts < a->ts)
			violation(r, "merged order: event at %llu after %llu",
				  b->ts, a->ts);
		if (order[k] >> 48 != order[k - 1] >> 48)
			switches++;
	}
	free(order);

	if (!r->quiet) {
		printf("%-4s %7s %9s %6s %6s %7s %8s %9s %8s %7s\n", "cpu",
		       "pages", "events", "zero", "abs", "extend", "padding",
		       "missed", "seq-gaps", "max-gap");
		for (cpu = 0; cpu < r->nr_cpus; cpu++) {
			struct rbt_cpu *c = &r->cpu[cpu];
			char missed[32];

			snprintf(missed, sizeof(missed), "%llu%s", c->missed_sum,
				 c->missed_unknown ? "+?" : "");
			printf("%-4d %7u %9lu %6lu %6lu %7lu %8lu %9s %8llu %7llu\n",
			       cpu, c->nr_pages, c->nr_ev, c->nr_zero, c->nr_abs,
			       c->nr_extend, c->nr_pad, missed, c->gap_sum,
			       c->gap_max);
		}
		print_ctx_depth(&cd);
		printf("merged: %lu events, %lu CPU switches\n", nr_merged,
		       switches);
	}
	printf("events: %lu\n", total);
	if (!r->quiet) {
		unsigned long cb = 0;

		for (cpu = 0; cpu < r->nr_cpus; cpu++)
			cb += r->cpu[cpu].nr_clock_back;
		printf("clock-back: %lu", cb);
		for (cpu = 0; cpu < r->nr_cpus; cpu++)
			printf("%scpu%d %lu", cpu ? ", " : " (", cpu,
			       r->cpu[cpu].nr_clock_back);
		printf("%s\n", r->nr_cpus ? ")" : "");
	}
	for (cpu = 0; cpu < r->nr_cpus; cpu++)
		if (r->cpu[cpu].gap_unverified)
			printf("cpu %d: %llu missing events on the last page not verifiable\n",
			       cpu, r->cpu[cpu].gap_unverified);
	if (r->violations) {
		if (r->violations > MAX_SHOWN)
			printf("... %lu more\n", r->violations - MAX_SHOWN);
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
		{ NULL, 0, NULL, 0 },
	};
	struct rbt_rec r = { 0 };
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "hq", opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			usage_check(stdout);
			return RBT_EXIT_OK;
		case 'q':
			r.quiet = true;
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
	load_formats(&r);
	load_cpus(&r, false);
	ret = check_rec(&r);
	rec_free(&r);
	return ret;
}

/* ------------------------------------------------------------------ */
/* report                                                             */
/* ------------------------------------------------------------------ */

/* Latency flags as trace-cmd -l shows them: irqs-off, resched, irq, count. */
static void lat_flags(const struct rbt_event *e, char *buf)
{
	bool nmi = e->cflags & RBN_FLAG_NMI;
	bool hard = e->cflags & RBN_FLAG_HARDIRQ;
	bool soft = e->cflags & RBN_FLAG_SOFTIRQ;

	buf[0] = e->cflags & RBN_FLAG_IRQS_OFF ? 'd' : '.';
	buf[1] = '.';
	if (nmi && hard)
		buf[2] = 'Z';
	else if (nmi)
		buf[2] = 'z';
	else if (hard && soft)
		buf[2] = 'H';
	else if (hard)
		buf[2] = 'h';
	else if (soft)
		buf[2] = 's';
	else
		buf[2] = '.';
	buf[3] = '.';
	buf[4] = '\0';
	if (e->pcount)
		snprintf(buf + 3, 2, "%x", e->pcount & 0xf);
}

static void usage_report(FILE *f)
{
	fprintf(f,
		"usage: %s report [--ts-diff] [--cpu N] [-l] REC\n"
		"  Print the events of an rbnest recording merged across CPUs\n"
		"  in time order, one line each, as trace-cmd report does:\n"
		"    PID [CPU] [FLAGS] SEC.NSEC: [(+DELTA)] sample: FIELDS\n"
		"  -t, --ts-diff  show the time since the previous line, in ns\n"
		"  -c, --cpu N    only the events of CPU N\n"
		"  -l             latency flags: irqs-off (d), hardirq (h),\n"
		"                 softirq (s), NMI (z), preempt count\n"
		"  -h, --help     this text\n"
		"It takes the recordings check takes, and refuses the others:\n"
		"exit status 1 for one that is not what its manifest says or\n"
		"has no event, 2 for bad input.\n",
		prog);
}

static int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "ts-diff", no_argument, NULL, 't' },
		{ "cpu", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	struct rbt_rec r = { 0 };
	unsigned long long *order, prev = 0;
	unsigned long nr, k;
	bool ts_diff = false, lat = false;
	int opt, only_cpu = -1, ret;
	unsigned long long num;
	struct trace_seq s;
	const char *why;

	while ((opt = getopt_long(argc, argv, "htc:l", opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			usage_report(stdout);
			return RBT_EXIT_OK;
		case 't':
			ts_diff = true;
			break;
		case 'l':
			lat = true;
			break;
		case 'c':
			if (rbt_parse_uint(optarg, MAX_CPUS - 1, &num, &why)) {
				fprintf(stderr, "%s report: bad CPU '%s': %s\n",
					prog, optarg, why);
				return RBT_EXIT_INPUT;
			}
			only_cpu = num;
			break;
		default:
			usage_report(stderr);
			return RBT_EXIT_INPUT;
		}
	}
	if (optind != argc - 1) {
		usage_report(stderr);
		return RBT_EXIT_INPUT;
	}
	r.dir = argv[optind];
	ret = rbt_rec_verify("report", r.dir);
	if (ret)
		return ret;
	load_formats(&r);
	load_cpus(&r, true);
	if (only_cpu >= r.nr_cpus)
		die_input("%s: no CPU %d", r.dir, only_cpu);

	order = merge(&r, only_cpu, &nr);
	trace_seq_init(&s);
	for (k = 0; k < nr; k++) {
		int cpu = order[k] >> 48;
		struct rbt_event *e = &r.cpu[cpu].ev[order[k] & 0xffffffffffffULL];
		struct tep_record rec = {
			.ts = e->ts,
			.size = e->size,
			.record_size = e->size,
			.data = e->data,
			.cpu = cpu,
		};
		char flags[8];

		trace_seq_reset(&s);
		tep_print_event(r.tep, &s, &rec, "%s", TEP_PRINT_INFO);
		trace_seq_terminate(&s);
		printf("%8d [%03d] ", e->pid, cpu);
		if (lat) {
			lat_flags(e, flags);
			printf("%s ", flags);
		}
		printf("%llu.%09llu: ", e->ts / 1000000000ULL,
		       e->ts % 1000000000ULL);
		if (ts_diff)
			printf("(+%llu) ", k ? e->ts - prev : 0ULL);
		printf("%s: %s\n", r.event->name, s.buffer);
		prev = e->ts;
	}
	trace_seq_destroy(&s);
	free(order);
	rec_free(&r);
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

/*
 * Sequence numbers a stream check keeps open: a nested writer takes its
 * number before the writer it interrupted, and the two events may lie a
 * page apart, so numbers arrive out of order by a few. A number still
 * missing SEQ_WIN numbers later is missing for good. The pages of the
 * last SEQ_WIN numbers keep what check_seq() needs of them.
 */
#define SEQ_WIN		65536ULL

struct stream_cpu {
	int in;
	int pipe[2];
	bool done;
	bool started;
	unsigned long long pages;
	unsigned long long events;
	unsigned long long base;	/* every seq below: seen or missing */
	unsigned long long hi;		/* highest seq seen, plus one */
	unsigned long long run;		/* missing ones just below base */
	unsigned long long sum, extra;	/* as in check_seq() */
	unsigned char seen[SEQ_WIN / 8];
	unsigned int page_of[SEQ_WIN];	/* page of each seq seen */
	unsigned long long cum[SEQ_WIN]; /* stored counts up to each page */
	unsigned char unknown[SEQ_WIN];	/* the page lost an uncounted number */
	struct rbt_event last;
	bool have_last;
	unsigned long long paths[8];	/* events by RBN_EV_* bit */
};

static bool seq_seen(struct stream_cpu *s, unsigned long long seq)
{
	return s->seen[(seq % SEQ_WIN) / 8] & (1U << (seq % 8));
}

static void seq_mark(struct stream_cpu *s, unsigned long long seq, bool on)
{
	if (on)
		s->seen[(seq % SEQ_WIN) / 8] |= 1U << (seq % 8);
	else
		s->seen[(seq % SEQ_WIN) / 8] &= ~(1U << (seq % 8));
}

/*
 * @gap numbers missing right before a number seen on page @pno: charged
 * to that page as check_seq() charges them, against the stored counts up
 * to the page after it.
 */
static void seq_charge(struct rbt_rec *r, int cpu, struct stream_cpu *s,
		       unsigned long long gap, unsigned long long seq,
		       unsigned int pno)
{
	struct rbt_cpu *c = &r->cpu[cpu];
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
	if (s->unknown[pno % SEQ_WIN] || s->unknown[last % SEQ_WIN])
		return;
	cum = s->cum[last % SEQ_WIN];
	s->sum += gap;
	if (s->sum <= cum + s->extra)
		return;
	if (pno + 1 >= s->pages) {
		/* their count would be on a page not read yet */
		c->gap_unverified += gap;
	} else {
		violation(r, "%s: cpu %d page %u: %llu events missing before seq %llu, not accounted for by missed-events counts (%llu missing, %llu counted)",
			  c->path, cpu, pno, gap, seq, s->sum, cum);
	}
	/* report each unaccounted gap once */
	s->extra = s->sum - cum;
}

/* Move the window's base up by one number, seen or missing. */
static void seq_advance(struct rbt_rec *r, int cpu, struct stream_cpu *s)
{
	unsigned long long seq = s->base;

	if (seq_seen(s, seq)) {
		if (s->run)
			seq_charge(r, cpu, s, s->run, seq,
				   s->page_of[seq % SEQ_WIN]);
		s->run = 0;
		seq_mark(s, seq, false);
	} else {
		s->run++;
	}
	s->base++;
}

/* A number seen: in the window, not seen before. */
static void seq_event(struct rbt_rec *r, int cpu, struct stream_cpu *s,
		      const struct rbt_event *e)
{
	struct rbt_cpu *c = &r->cpu[cpu];

	if (e->seq < s->base) {
		violation(r, "%s: cpu %d page %u offset %u: seq %llu read twice, or %llu numbers out of order",
			  c->path, cpu, e->page, e->off, e->seq, SEQ_WIN);
		return;
	}
	if (e->seq >= s->base + SEQ_WIN) {
		/* numbers lost at once: the window, then the rest */
		unsigned long long to = e->seq - SEQ_WIN + 1;

		while (s->base < to && s->base < s->hi)
			seq_advance(r, cpu, s);
		if (s->base < to) {
			s->run += to - s->base;
			s->base = to;
		}
	}
	if (seq_seen(s, e->seq))
		violation(r, "%s: cpu %d page %u offset %u: duplicate seq %llu",
			  c->path, cpu, e->page, e->off, e->seq);
	seq_mark(s, e->seq, true);
	s->page_of[e->seq % SEQ_WIN] = e->page;
	if (e->seq + 1 > s->hi)
		s->hi = e->seq + 1;
}

/* Check the events of one page, just decoded into r->cpu[cpu].ev. */
static void stream_events(struct rbt_rec *r, int cpu, struct stream_cpu *s,
			  struct ctx_depth *cd)
{
	struct rbt_cpu *c = &r->cpu[cpu];
	unsigned long i;
	int b;

	for (i = 0; i < c->nr_ev; i++) {
		struct rbt_event *e = &c->ev[i];

		check_event_time(r, cpu, e, s->have_last ? &s->last : NULL);
		count_ctx_depth(r, cpu, e, cd);
		for (b = 0; b < 8; b++)
			if (e->flags & (1U << b))
				s->paths[b]++;
		seq_event(r, cpu, s, e);
		s->last = *e;
		s->have_last = true;
		s->events++;
	}
	/* numbers SEQ_WIN below the highest are final */
	while (s->hi > SEQ_WIN && s->base < s->hi - SEQ_WIN)
		seq_advance(r, cpu, s);
}

/* Check one sub-buffer image of CPU @cpu, then forget its events. */
static void stream_page(struct rbt_rec *r, int cpu, struct stream_cpu *s,
			unsigned char *pg, struct walk *w,
			struct ctx_depth *cd)
{
	struct rbt_cpu *c = &r->cpu[cpu];
	unsigned int pno = s->pages > UINT_MAX ? UINT_MAX : s->pages;

	c->nr_ev = 0;
	walk_page(r, c, pno, pg, w);
	s->unknown[pno % SEQ_WIN] = w->missed && !w->stored;
	if (w->missed) {
		c->missed_pages++;
		if (w->stored)
			c->missed_sum += w->missed_count;
		else
			c->missed_unknown++;
	}
	s->cum[pno % SEQ_WIN] = c->missed_sum;
	decode_page(r, cpu, pno, pg, w, false);
	s->pages++;
	if (!s->started && c->nr_ev) {
		unsigned long i;

		/*
		 * Numbers before the first page's count only when it says
		 * events were lost before it (as check_seq()).
		 */
		s->started = true;
		s->base = w->missed ? 0 : c->ev[0].seq;
		for (i = 1; i < c->nr_ev && !w->missed; i++)
			if (c->ev[i].seq < s->base)
				s->base = c->ev[i].seq;
		s->hi = s->base;
	}
	stream_events(r, cpu, s, cd);
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
	struct ctx_depth cd;
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
	memset(&cd, 0, sizeof(cd));
	for (cpu = 0; cpu < nr; cpu++) {
		struct stream_cpu *s = &sc[cpu];

		snprintf(r.cpu[cpu].path, sizeof(r.cpu[cpu].path),
			 "%s/per_cpu/cpu%d/trace_pipe_raw", r.dir, cpu);
		r.cpu[cpu].present = true;
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
				stream_page(&r, cpu, s, pg, &w, &cd);
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
		while (sc[cpu].base < sc[cpu].hi)
			seq_advance(&r, cpu, &sc[cpu]);
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
	print_ctx_depth(&cd);
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
			printf("... %lu more\n", r.violations - MAX_SHOWN);
		printf("%s: FAILED: %lu violations\n", r.dir, r.violations);
	} else {
		printf("%s: OK\n", r.dir);
	}
	rec_free(&r);
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
	rec_free(&r);
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
	unsigned long k;
	char *end;

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
			errno = 0;
			po.cpu = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || po.cpu < 0 ||
			    po.cpu >= MAX_CPUS) {
				fprintf(stderr, "%s plot: bad CPU '%s'\n", prog,
					optarg);
				return RBT_EXIT_INPUT;
			}
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
	r.dir = argv[optind];
	load_formats(&r);
	load_cpus(&r, true);
	if (po.cpu >= r.nr_cpus)
		die_input("%s: no CPU %d", r.dir, po.cpu);
	f_src = tep_find_any_field(r.event, "source");
	po.name = r.dir;
	po.nr_cpus = r.nr_cpus;
	p = rbt_plot_new(&po);
	if (!p)
		die_input("out of memory");
	/* two passes over the same events: see plot.h */
	for (pass = 0; pass < 2; pass++) {
		for (cpu = 0; cpu < r.nr_cpus; cpu++) {
			for (k = 0; k < r.cpu[cpu].nr_ev; k++) {
				const struct rbt_event *e = &r.cpu[cpu].ev[k];
				struct rbt_plot_ev pe = {
					.ts = e->ts, .seq = e->seq, .cpu = cpu,
					.pid = e->pid, .ctx = e->ctx,
					.depth = e->depth, .flags = e->flags,
					.source = f_src ? field(f_src, e->data) : 0,
				};

				if (rbt_plot_add(p, &pe))
					goto fail;
			}
		}
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
	rec_free(&r);
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
