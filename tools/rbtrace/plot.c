// SPDX-License-Identifier: GPL-2.0
/*
 * plot.c - "rbtrace plot": the nesting of rbnest writers as an SVG picture
 *
 * See plot.h for the two passes, the window and what the nesting drawn
 * means. The SVG is plain text; every element a test may count carries
 * its numbers in data-* attributes: the lanes (class "lane", data-cpu,
 * data-ctx), the marks (class "mark", one per event of the window), the
 * connectors ("conn"), the spans ("span"), the legend ("legend",
 * data-key) and the bars of the histograms ("bar", data-hist, data-key
 * or data-ctx and data-depth, data-count). The root element has the
 * window (data-from-ns, data-to-ns: the events' times, inclusive;
 * data-start-ns: the recording's first event) and the counts.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plot.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

#define NR_CTX		4
#define MAX_DEPTH	RBT_PLOT_MAX_DEPTH

/* RBN_EV_* of rb_core.h */
#define EV_FAST		0x01
#define EV_ABSOLUTE	0x02
#define EV_SLOW		0x04
#define EV_ZERO_DELTA	0x08
#define EV_EXTEND	0x10
#define EV_PAGE_START	0x20
#define EV_CLOCK_BACK	0x40

static const char *const ctx_names[NR_CTX] = {
	"task", "softirq", "hardirq", "NMI",
};

static const char *const src_names[] = {
	"test", "task", "hrtimer", "softirq", "irq_work", "nmi",
	"tracepoint", "kprobe", "inject",
};

/* The time-stamp paths of the histogram, by flag. */
static const struct {
	unsigned int flag;
	const char *key;
	const char *label;
	const char *colour;
} paths[] = {
	{ EV_FAST, "fast", "fast path", "#0072b2" },
	{ EV_SLOW, "slow", "slow path", "#cc79a7" },
	{ EV_ABSOLUTE, "absolute", "absolute stamp", "#d55e00" },
	{ EV_ZERO_DELTA, "zero-delta", "zero delta", "#e69f00" },
	{ EV_EXTEND, "extend", "time extend", "#009e73" },
	{ EV_PAGE_START, "page-start", "sub-buffer start", "#56b4e9" },
	{ EV_CLOCK_BACK, "clock-back", "clock back", "#000000" },
};

#define NR_PATHS	ARRAY_SIZE(paths)

/* One event kept by pass 2. */
struct pev {
	unsigned long long ts;
	unsigned long long seq;
	unsigned long long span_from;	/* earliest event nested in it */
	int pid;
	int closer;		/* next event of its depth or less, or -1 */
	int encl;		/* the writer it interrupted, or -1 */
	unsigned char ctx;
	unsigned char depth;
	unsigned char flags;
	unsigned char source;
	bool in;		/* inside the window: a mark */
	bool encl_next;		/* that writer reserved after it */
	bool nested_in;		/* writers nested in it: a span */
};

struct pcpu {
	bool seen;
	unsigned long long nr;
	unsigned long long last_ts;
	/* pass 1: the run of nested events going on */
	bool have_d1;
	bool in_run;
	unsigned long long d1_ts;
	unsigned long long run_start;
	unsigned int run_max;
	/* pass 2 */
	int phase;		/* 0 before the window, 1 in it, 2 after */
	unsigned int after_min;	/* smallest depth kept after the window */
	struct pev stack[MAX_DEPTH + 1];
	bool stack_ok[MAX_DEPTH + 1];
	struct pev *ev;
	unsigned long nr_ev, cap_ev;
};

struct rbt_plot {
	struct rbt_plot_opts o;
	char *name;
	int pass;		/* 1, 2, then 3: ready to write */
	char err[PATH_MAX + 320];
	struct pcpu *cpu;
	int nr_cpu;		/* highest CPU seen, plus one */
	unsigned long long total;
	unsigned long long first_ts, last_ts;
	unsigned long long paths[NR_PATHS];
	unsigned long long cd[NR_CTX][MAX_DEPTH + 1];
	unsigned long long cd_other;
	unsigned int max_depth;
	/* the default window's nesting */
	bool have_best;
	int best_cpu;
	unsigned int best_depth;
	unsigned long long best_from, best_to;
	/* the window, times of the events */
	unsigned long long from, to;
	unsigned long long nr_in;
	unsigned long long undrawn;
};

/* An error about the recording: "REC: what". */
static int __attribute__((format(printf, 2, 3)))
fail(struct rbt_plot *p, const char *fmt, ...)
{
	int n = snprintf(p->err, sizeof(p->err), "%s: ", p->name);
	va_list ap;

	if (n < 0 || n >= (int)sizeof(p->err))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(p->err + n, sizeof(p->err) - n, fmt, ap);
	va_end(ap);
	return -1;
}

const char *rbt_plot_error(const struct rbt_plot *p)
{
	return p->err;
}

int rbt_plot_parse_time(const char *s, unsigned long long *ns)
{
	unsigned long long ip = 0, frac = 0, unit, scale = 100000000ULL;
	bool dot = false;
	int nd = 0;

	for (; isdigit((unsigned char)*s); s++, nd++) {
		if (ip > (ULLONG_MAX - 9) / 10)
			return -1;
		ip = ip * 10 + (*s - '0');
	}
	if (*s == '.') {
		dot = true;
		for (s++; isdigit((unsigned char)*s); s++, nd++) {
			frac += (*s - '0') * scale;
			scale /= 10;
		}
	}
	if (!nd)
		return -1;
	if (!*s)
		unit = dot ? 1000000000ULL : 1;
	else if (!strcmp(s, "s"))
		unit = 1000000000ULL;
	else if (!strcmp(s, "ms"))
		unit = 1000000ULL;
	else if (!strcmp(s, "us"))
		unit = 1000ULL;
	else if (!strcmp(s, "ns"))
		unit = 1;
	else
		return -1;
	if (ip > ULLONG_MAX / unit)
		return -1;
	/* frac is in units of 1e-9 of the unit */
	if (ip * unit > ULLONG_MAX - frac * unit / 1000000000ULL)
		return -1;
	*ns = ip * unit + frac * unit / 1000000000ULL;
	return 0;
}

struct rbt_plot *rbt_plot_new(const struct rbt_plot_opts *opts)
{
	struct rbt_plot *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->o = *opts;
	p->name = strdup(opts->name ? opts->name : "");
	if (!p->name) {
		free(p);
		return NULL;
	}
	p->o.name = p->name;
	p->pass = 1;
	return p;
}

void rbt_plot_free(struct rbt_plot *p)
{
	int cpu;

	if (!p)
		return;
	for (cpu = 0; cpu < p->nr_cpu; cpu++)
		free(p->cpu[cpu].ev);
	free(p->cpu);
	free(p->name);
	free(p);
}

/* ------------------------------------------------------------------ */
/* Pass 1: counts, and the default window                             */
/* ------------------------------------------------------------------ */

static void consider(struct rbt_plot *p, int cpu, unsigned int depth,
		     unsigned long long a, unsigned long long b)
{
	unsigned long long from = a < b ? a : b, to = a < b ? b : a;

	if (p->have_best && (depth < p->best_depth ||
			     (depth == p->best_depth &&
			      to - from >= p->best_to - p->best_from)))
		return;
	p->have_best = true;
	p->best_cpu = cpu;
	p->best_depth = depth;
	p->best_from = from;
	p->best_to = to;
}

/* The end of a run of nested events on @cpu, at time @ts. */
static void end_run(struct rbt_plot *p, int cpu, unsigned long long ts)
{
	struct pcpu *c = &p->cpu[cpu];

	if (!c->in_run)
		return;
	consider(p, cpu, c->run_max, c->run_start, ts);
	c->in_run = false;
}

static int add_pass1(struct rbt_plot *p, const struct rbt_plot_ev *e)
{
	struct pcpu *c;
	unsigned int i;

	if (e->cpu >= p->nr_cpu) {
		struct pcpu *n = realloc(p->cpu, (e->cpu + 1) * sizeof(*n));

		if (!n)
			return fail(p, "out of memory");
		memset(n + p->nr_cpu, 0, (e->cpu + 1 - p->nr_cpu) * sizeof(*n));
		p->cpu = n;
		p->nr_cpu = e->cpu + 1;
	}
	c = &p->cpu[e->cpu];
	if (!p->total || e->ts < p->first_ts)
		p->first_ts = e->ts;
	if (!p->total || e->ts > p->last_ts)
		p->last_ts = e->ts;
	p->total++;
	for (i = 0; i < NR_PATHS; i++)
		if (e->flags & paths[i].flag)
			p->paths[i]++;
	if (e->ctx < NR_CTX && e->depth >= 1 && e->depth <= MAX_DEPTH) {
		p->cd[e->ctx][e->depth]++;
		if (e->depth > p->max_depth)
			p->max_depth = e->depth;
	} else {
		p->cd_other++;
	}
	c->seen = true;
	c->nr++;
	c->last_ts = e->ts;
	if (p->o.cpu >= 0 && e->cpu != p->o.cpu)
		return 0;
	if (e->depth <= 1) {
		end_run(p, e->cpu, e->ts);
		c->have_d1 = true;
		c->d1_ts = e->ts;
		/* a recording without nesting: its first event */
		consider(p, e->cpu, 1, e->ts, e->ts);
	} else {
		if (!c->in_run) {
			c->in_run = true;
			c->run_start = c->have_d1 ? c->d1_ts : e->ts;
			c->run_max = 0;
		}
		if (e->depth > c->run_max)
			c->run_max = e->depth > 255 ? 255 : e->depth;
	}
	return 0;
}

static void fmt_sec(char *buf, size_t size, unsigned long long ns)
{
	snprintf(buf, size, "%llu.%09llu", ns / 1000000000ULL,
		 ns % 1000000000ULL);
}

static int end_pass1(struct rbt_plot *p)
{
	unsigned long long from, to;
	int cpu;

	if (!p->total)
		return fail(p, "no events in the recording");
	for (cpu = 0; cpu < p->nr_cpu; cpu++)
		end_run(p, cpu, p->cpu[cpu].last_ts);
	if (p->o.cpu >= 0 &&
	    (p->o.cpu >= p->nr_cpu || !p->cpu[p->o.cpu].seen))
		return fail(p, "no events of CPU %d in the recording",
			    p->o.cpu);
	if (p->o.has_from || p->o.has_to) {
		from = p->o.from;
		to = p->o.to;
		if (!p->o.has_to)
			to = from > ULLONG_MAX - RBT_PLOT_SPAN_NS ?
			     ULLONG_MAX : from + RBT_PLOT_SPAN_NS;
		if (!p->o.has_from)
			from = to > RBT_PLOT_SPAN_NS ? to - RBT_PLOT_SPAN_NS : 0;
		if (from >= to)
			return fail(p, "bad window: --from %llu ns is not before --to %llu ns",
				    from, to);
		p->from = from > ULLONG_MAX - p->first_ts ? ULLONG_MAX :
			  p->first_ts + from;
		p->to = to > ULLONG_MAX - p->first_ts ? ULLONG_MAX :
			p->first_ts + to;
	} else {
		p->from = p->best_from - p->first_ts > RBT_PLOT_MARGIN_NS ?
			  p->best_from - RBT_PLOT_MARGIN_NS : p->first_ts;
		p->to = p->best_to > ULLONG_MAX - RBT_PLOT_MARGIN_NS ?
			ULLONG_MAX : p->best_to + RBT_PLOT_MARGIN_NS;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Pass 2: the events of the window                                   */
/* ------------------------------------------------------------------ */

static int keep(struct rbt_plot *p, struct pcpu *c, const struct pev *v)
{
	if (c->nr_ev == c->cap_ev) {
		unsigned long cap = c->cap_ev ? 2 * c->cap_ev : 64;
		struct pev *n = realloc(c->ev, cap * sizeof(*n));

		if (!n)
			return fail(p, "out of memory");
		c->ev = n;
		c->cap_ev = cap;
	}
	c->ev[c->nr_ev++] = *v;
	return 0;
}

static int add_pass2(struct rbt_plot *p, const struct rbt_plot_ev *e)
{
	struct pcpu *c;
	struct pev v = {
		.ts = e->ts,
		.seq = e->seq,
		.pid = e->pid,
		.ctx = e->ctx > 255 ? 255 : e->ctx,
		.depth = e->depth > 255 ? 255 : e->depth,
		.flags = e->flags,
		.source = e->source > 255 ? 255 : e->source,
		.closer = -1,
		.encl = -1,
		.span_from = e->ts,
	};
	unsigned int d = v.depth, k;

	if (e->cpu >= p->nr_cpu || !p->cpu[e->cpu].seen)
		return fail(p, "pass 2: an event of CPU %d that pass 1 did not see",
			    e->cpu);
	if (p->o.cpu >= 0 && e->cpu != p->o.cpu)
		return 0;
	c = &p->cpu[e->cpu];
	if (e->ts >= p->from && e->ts <= p->to) {
		if (!c->phase) {
			/* the writers still open: their spans reach in */
			for (k = 1; k <= MAX_DEPTH; k++)
				if (c->stack_ok[k] && keep(p, c, &c->stack[k]))
					return -1;
			c->phase = 1;
		}
		if (++p->nr_in > RBT_PLOT_MAX_EVENTS)
			return fail(p, "more than %d events in the window: choose a narrower one (--from, --to)",
				    RBT_PLOT_MAX_EVENTS);
		v.in = true;
		if (v.ctx >= NR_CTX)
			p->undrawn++;
		return keep(p, c, &v);
	}
	if (e->ts < p->from) {
		if (c->phase)
			return 0;	/* time went back: not drawn */
		if (d < 1 || d > MAX_DEPTH) {
			memset(c->stack_ok, 0, sizeof(c->stack_ok));
			return 0;
		}
		c->stack[d] = v;
		c->stack_ok[d] = true;
		for (k = d + 1; k <= MAX_DEPTH; k++)
			c->stack_ok[k] = false;
		return 0;
	}
	/* after the window: the events that close its writers */
	if (c->phase == 1) {
		c->phase = 2;
		c->after_min = MAX_DEPTH + 1;
	}
	if (c->phase != 2)
		return 0;
	if (d < 1)
		d = 1;
	if (d >= c->after_min)
		return 0;
	c->after_min = d;
	return keep(p, c, &v);
}

/* Spans and connectors of one CPU's kept events (see plot.h). */
static void nest(struct pcpu *c)
{
	int last[MAX_DEPTH + 1], nxt[MAX_DEPTH + 1];
	long i, n = c->nr_ev;
	unsigned int d, k;

	for (k = 0; k <= MAX_DEPTH; k++)
		last[k] = nxt[k] = -1;
	for (i = 0; i < n; i++) {
		struct pev *v = &c->ev[i];

		d = v->depth;
		if (d >= 2 && d <= MAX_DEPTH && last[d - 1] >= 0)
			v->encl = last[d - 1];
		if (d < 1) {
			for (k = 1; k <= MAX_DEPTH; k++)
				last[k] = -1;
		} else if (d <= MAX_DEPTH) {
			last[d] = i;
			for (k = d + 1; k <= MAX_DEPTH; k++)
				last[k] = -1;
		}
	}
	for (i = n - 1; i >= 0; i--) {
		struct pev *v = &c->ev[i];
		int first = -1, below = -1;

		d = v->depth;
		for (k = 1; k <= MAX_DEPTH && k <= d; k++) {
			if (nxt[k] >= 0 && (first < 0 || nxt[k] < first))
				first = nxt[k];
			if (k + 1 == d)
				below = first;
		}
		v->closer = first;
		/*
		 * The writer after it took the slow path: writers reserved
		 * in front of it while it ran, and the last of depth d
		 * before it is certainly one of them.
		 */
		if (d >= 2 && d <= MAX_DEPTH && below >= 0 &&
		    c->ev[below].depth == d - 1) {
			bool sure = (c->ev[below].flags & EV_SLOW) &&
				    (nxt[d] < 0 || nxt[d] > below);

			if (sure || v->encl < 0) {
				v->encl = below;
				v->encl_next = true;
			}
		}
		if (d >= 1 && d <= MAX_DEPTH)
			nxt[d] = i;
	}
	/* from the window's events down to the writers they interrupted */
	for (i = n - 1; i >= 0; i--) {
		struct pev *v = &c->ev[i], *w;

		if (v->encl < 0 || !(v->in || v->nested_in))
			continue;
		w = &c->ev[v->encl];
		w->nested_in = true;
		if (v->ts < w->span_from)
			w->span_from = v->ts;
	}
}

static int end_pass2(struct rbt_plot *p)
{
	char a[32], b[32];
	int cpu;

	if (!p->nr_in) {
		fmt_sec(a, sizeof(a), p->from - p->first_ts);
		fmt_sec(b, sizeof(b), p->to - p->first_ts);
		if (p->o.cpu >= 0)
			return fail(p, "no events of CPU %d in the window %s s to %s s after the first event (the recording lasts %llu ns)",
				    p->o.cpu, a, b, p->last_ts - p->first_ts);
		return fail(p, "no events in the window %s s to %s s after the first event (the recording lasts %llu ns)",
			    a, b, p->last_ts - p->first_ts);
	}
	for (cpu = 0; cpu < p->nr_cpu; cpu++)
		nest(&p->cpu[cpu]);
	return 0;
}

int rbt_plot_add(struct rbt_plot *p, const struct rbt_plot_ev *ev)
{
	if (ev->cpu < 0 || ev->cpu >= RBT_PLOT_MAX_CPUS)
		return fail(p, "an event of CPU %d", ev->cpu);
	if (p->pass == 1)
		return add_pass1(p, ev);
	if (p->pass == 2)
		return add_pass2(p, ev);
	return fail(p, "an event after the second pass");
}

int rbt_plot_end_pass(struct rbt_plot *p)
{
	int ret;

	if (p->pass == 1)
		ret = end_pass1(p);
	else if (p->pass == 2)
		ret = end_pass2(p);
	else
		return fail(p, "no third pass");
	if (!ret)
		p->pass++;
	return ret;
}

/* ------------------------------------------------------------------ */
/* SVG                                                                */
/* ------------------------------------------------------------------ */

#define FONT		"DejaVu Sans, Verdana, sans-serif"
#define PLOT_X0		130.0
#define PLOT_X1		1030.0
#define TOP		110.0
#define LANE_H		34.0
#define CPU_GAP		18.0
#define SIDE_X		1080.0
#define SIDE_W		300.0		/* longest bar */
#define WIDTH		1560
#define MARK_R		5.0

static const char *const ctx_fill[NR_CTX] = {
	"#f4f4f4", "#eef3f8", "#f8f1ea", "#f3eef6",
};

/* Text of the recording's name, XML-escaped, printable ASCII only. */
static void put_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = *s;

		if (ch == '&')
			fputs("&amp;", f);
		else if (ch == '<')
			fputs("&lt;", f);
		else if (ch == '>')
			fputs("&gt;", f);
		else if (ch == '"')
			fputs("&quot;", f);
		else if (ch < 0x20 || ch >= 0x7f)
			fputc('?', f);
		else
			fputc(ch, f);
	}
}

/* A duration with a unit, 3 significant decimals at most. */
static void fmt_dur(char *buf, size_t size, unsigned long long ns)
{
	if (ns < 1000)
		snprintf(buf, size, "%llu ns", ns);
	else if (ns < 1000000)
		snprintf(buf, size, "%.3f us", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, size, "%.3f ms", ns / 1e6);
	else
		snprintf(buf, size, "%.3f s", ns / 1e9);
}

/* A tick's offset @v, in the unit of the tick step @step, exactly. */
static void fmt_tick(char *buf, size_t size, unsigned long long v,
		     unsigned long long step)
{
	static const char *const units[] = { "ns", "us", "ms", "s" };
	unsigned long long unit = 1, u;
	char frac[16];
	int i = 0, dec = 0;

	while (i < 3 && step >= unit * 1000) {
		unit *= 1000;
		i++;
	}
	for (u = unit; dec < 9 && step % u; u /= 10)
		dec++;
	/* the fraction's digits, 9 of them (unit <= 1e9), cut to dec */
	snprintf(frac, sizeof(frac), "%09llu",
		 (v % unit) * (1000000000ULL / unit));
	frac[dec] = '\0';
	snprintf(buf, size, "+%llu%s%s %s", v / unit, dec ? "." : "", frac,
		 units[i]);
}

static double xpos(const struct rbt_plot *p, unsigned long long ts)
{
	if (ts <= p->from)
		return PLOT_X0;
	if (ts >= p->to)
		return PLOT_X1;
	return PLOT_X0 + (PLOT_X1 - PLOT_X0) * (double)(ts - p->from) /
	       (double)(p->to - p->from);
}

/* Shape of a mark: what its time stamp says most. */
static const char *kind(unsigned int flags)
{
	if (flags & EV_ZERO_DELTA)
		return "zero-delta";
	if (flags & EV_ABSOLUTE)
		return "absolute";
	if (flags & EV_SLOW)
		return "slow";
	return "fast";
}

static void put_shape(FILE *f, const char *k, double x, double y,
		      bool clock_back, const char *attrs)
{
	const char *stroke = clock_back ?
		"stroke=\"#000\" stroke-width=\"2\"" :
		"stroke=\"#333\" stroke-width=\"0.6\"";
	double r = MARK_R;

	if (!strcmp(k, "zero-delta"))
		fprintf(f, "<polygon %s points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"#e69f00\" %s",
			attrs, x, y - r - 1, x - r - 1, y + r, x + r + 1, y + r,
			stroke);
	else if (!strcmp(k, "absolute"))
		fprintf(f, "<polygon %s points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"#d55e00\" %s",
			attrs, x, y - r - 1.5, x + r + 1.5, y, x, y + r + 1.5,
			x - r - 1.5, y, stroke);
	else if (!strcmp(k, "slow"))
		fprintf(f, "<rect %s x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#cc79a7\" %s",
			attrs, x - r, y - r, 2 * r, 2 * r, stroke);
	else
		fprintf(f, "<circle %s cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"#0072b2\" %s",
			attrs, x, y, r, stroke);
}

static double lane_y(const struct rbt_plot *p, int row, unsigned int ctx)
{
	(void)p;
	return TOP + row * (NR_CTX * LANE_H + CPU_GAP) + ctx * LANE_H +
	       LANE_H / 2;
}

static bool shown(const struct rbt_plot *p, int cpu)
{
	return p->o.cpu < 0 || cpu == p->o.cpu;
}

static int nr_rows(const struct rbt_plot *p)
{
	int n = p->nr_cpu > p->o.nr_cpus ? p->nr_cpu : p->o.nr_cpus;

	return p->o.cpu >= 0 ? 1 : n;
}

static void put_mark(FILE *f, const struct rbt_plot *p, int cpu, int row,
		     const struct pev *v, bool labels)
{
	double x = xpos(p, v->ts), y = lane_y(p, row, v->ctx);
	const char *k = kind(v->flags);
	char attrs[256], rel[32], src[24];
	unsigned int i;

	if (v->flags & EV_EXTEND)
		fprintf(f, "<line class=\"ext\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#009e73\" stroke-width=\"2.5\"/>\n",
			x - MARK_R - 7, y, x - MARK_R - 1, y);
	snprintf(attrs, sizeof(attrs),
		 "class=\"mark\" data-kind=\"%s\" data-cpu=\"%d\" data-ctx=\"%u\" data-depth=\"%u\" data-seq=\"%llu\" data-ts=\"%llu\" data-flags=\"%u\"",
		 k, cpu, v->ctx, v->depth, v->seq, v->ts, v->flags);
	put_shape(f, k, x, y, v->flags & EV_CLOCK_BACK, attrs);
	fmt_sec(rel, sizeof(rel), v->ts - p->first_ts);
	if (v->source < ARRAY_SIZE(src_names))
		snprintf(src, sizeof(src), "%s", src_names[v->source]);
	else
		snprintf(src, sizeof(src), "%u", v->source);
	fprintf(f, "><title>cpu %d %s depth %u seq %llu pid %d source %s\ntime %llu.%09llu (+%s s)\nflags %#x:",
		cpu, ctx_names[v->ctx], v->depth, v->seq, v->pid, src,
		v->ts / 1000000000ULL, v->ts % 1000000000ULL, rel, v->flags);
	for (i = 0; i < NR_PATHS; i++)
		if (v->flags & paths[i].flag)
			fprintf(f, " %s", paths[i].label);
	fprintf(f, "</title></%s>\n", !strcmp(k, "fast") ? "circle" :
		!strcmp(k, "slow") ? "rect" : "polygon");
	if (labels)
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"8\" fill=\"#555\">%u</text>\n",
			x + MARK_R, y - MARK_R - 1, v->depth);
}

/* A CPU: sub-buffer starts, writers' spans, connectors, then marks. */
static void put_cpu(FILE *f, const struct rbt_plot *p, int cpu, int row)
{
	const struct pcpu *c = &p->cpu[cpu];
	double top = TOP + row * (NR_CTX * LANE_H + CPU_GAP);
	bool labels = p->nr_in <= 200;
	unsigned long i;

	for (i = 0; i < c->nr_ev; i++) {
		const struct pev *v = &c->ev[i];
		double x;

		if (!v->in || !(v->flags & EV_PAGE_START))
			continue;
		x = xpos(p, v->ts);
		fprintf(f, "<line class=\"pagestart\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#56b4e9\" stroke-width=\"1.5\" stroke-dasharray=\"1,2\"/>\n",
			x, top, x, top + NR_CTX * LANE_H);
	}
	for (i = 0; i < c->nr_ev; i++) {
		const struct pev *v = &c->ev[i];
		unsigned long long end;
		double x0, x1, y;

		if (!v->nested_in || v->ctx >= NR_CTX)
			continue;
		y = lane_y(p, row, v->ctx);
		end = v->closer >= 0 ? c->ev[v->closer].ts : p->to;
		if (v->span_from < v->ts && v->span_from <= p->to &&
		    v->ts >= p->from) {
			/* running before its reserve: slow path */
			x0 = xpos(p, v->span_from);
			x1 = xpos(p, v->ts);
			fprintf(f, "<rect class=\"span-before\" data-cpu=\"%d\" data-seq=\"%llu\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#000\" fill-opacity=\"0.06\" stroke=\"#666\" stroke-dasharray=\"3,2\"/>\n",
				cpu, v->seq, x0, y - LANE_H / 2 + 4, x1 - x0,
				LANE_H - 8);
		}
		if (v->ts > p->to || end < p->from)
			continue;
		x0 = xpos(p, v->ts);
		x1 = xpos(p, end);
		fprintf(f, "<rect class=\"span\" data-cpu=\"%d\" data-seq=\"%llu\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#000\" fill-opacity=\"0.12\" stroke=\"#666\"/>\n",
			cpu, v->seq, x0, y - LANE_H / 2 + 4,
			x1 - x0 > 1 ? x1 - x0 : 1, LANE_H - 8);
	}
	for (i = 0; i < c->nr_ev; i++) {
		const struct pev *v = &c->ev[i], *w;
		double x;

		if (!v->in || v->encl < 0 || v->ctx >= NR_CTX)
			continue;
		w = &c->ev[v->encl];
		if (w->ctx >= NR_CTX)
			continue;
		x = xpos(p, v->ts);
		fprintf(f, "<line class=\"conn\" data-kind=\"%s\" data-cpu=\"%d\" data-seq=\"%llu\" data-to-seq=\"%llu\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\" stroke-width=\"1\"%s/>\n",
			v->encl_next ? "next" : "prev", cpu, v->seq, w->seq,
			x, lane_y(p, row, v->ctx), x, lane_y(p, row, w->ctx),
			v->encl_next ? " stroke-dasharray=\"3,2\"" : "");
	}
	for (i = 0; i < c->nr_ev; i++) {
		const struct pev *v = &c->ev[i];

		if (v->in && v->ctx < NR_CTX)
			put_mark(f, p, cpu, row, v, labels);
	}
}

static void put_axis(FILE *f, const struct rbt_plot *p, double y)
{
	static const unsigned long long mult[] = { 1, 2, 5 };
	unsigned long long width = p->to - p->from, step = 1, base, t;
	char lab[64];
	int i;

	/* 1, 2 or 5 times a power of ten: 10 ticks at most */
	for (base = 1;; base *= 10) {
		for (i = 0; i < 3; i++) {
			step = base * mult[i];
			if (width / step <= 10)
				goto found;
		}
		if (base > ULLONG_MAX / 100)
			break;
	}
found:
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/>\n",
		PLOT_X0, y, PLOT_X1, y);
	for (t = 0; t <= width; t += step) {
		double x = xpos(p, p->from + t);

		fmt_tick(lab, sizeof(lab), t, step);
		fprintf(f, "<line class=\"tick\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\"/>\n",
			x, y, x, y + 5);
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\" stroke-opacity=\"0.08\"/>\n",
			x, TOP, x, y);
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"middle\">%s</text>\n",
			x, y + 17, lab);
		if (t > ULLONG_MAX - step)
			break;
	}
	fmt_sec(lab, sizeof(lab), p->from - p->first_ts);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">time after the window's start, %s s after the recording's first event</text>\n",
		(PLOT_X0 + PLOT_X1) / 2, y + 33, lab);
}

/* One legend entry at (@x, @y): its symbol, then @text. */
static void legend(FILE *f, const char *key, double x, double y,
		   const char *text)
{
	fprintf(f, "<g class=\"legend\" data-key=\"%s\">", key);
	if (!strcmp(key, "fast") || !strcmp(key, "slow") ||
	    !strcmp(key, "absolute") || !strcmp(key, "zero-delta")) {
		put_shape(f, key, x + 8, y - 4, false, "");
		fputs("/>", f);
	} else if (!strcmp(key, "clock-back")) {
		put_shape(f, "fast", x + 8, y - 4, true, "");
		fputs("/>", f);
	} else if (!strcmp(key, "extend")) {
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#009e73\" stroke-width=\"2.5\"/>",
			x, y - 4, x + 6, y - 4);
		put_shape(f, "fast", x + 13, y - 4, false, "");
		fputs("/>", f);
	} else if (!strcmp(key, "page-start")) {
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#56b4e9\" stroke-width=\"1.5\" stroke-dasharray=\"1,2\"/>",
			x + 8, y - 12, x + 8, y + 3);
	} else if (!strcmp(key, "span") || !strcmp(key, "span-before")) {
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"18\" height=\"10\" fill=\"#000\" fill-opacity=\"%s\" stroke=\"#666\"%s/>",
			x, y - 9, !strcmp(key, "span") ? "0.12" : "0.06",
			!strcmp(key, "span") ? "" : " stroke-dasharray=\"3,2\"");
	} else {
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\"%s/>",
			x + 8, y - 12, x + 8, y + 3,
			!strcmp(key, "conn") ? "" : " stroke-dasharray=\"3,2\"");
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%s</text></g>\n",
		x + 24, y, text);
}

static double put_legend(FILE *f, double y)
{
	static const struct {
		const char *key, *text;
	} items[] = {
		{ "fast", "fast path: not interrupted before its reserve" },
		{ "slow", "slow path: interrupted before its reserve" },
		{ "absolute", "absolute stamp: nested in a writer's update (or absolute mode)" },
		{ "zero-delta", "zero delta: shown at the previous event's time" },
		{ "extend", "a time extend in front of the event" },
		{ "clock-back", "clock read behind: stored at the CPU's latest time" },
		{ "page-start", "first event of a sub-buffer" },
		{ "span", "writer's span: its stamp to the next event of its depth or less" },
		{ "span-before", "a writer running before its stamp (nested events first)" },
		{ "conn", "nested in the writer of this lane (which had reserved)" },
		{ "conn-next", "nested in the writer of this lane (which reserved after)" },
	};
	unsigned int i;

	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" font-weight=\"bold\">Legend (marks: one per event, at its rebuilt time; shape by time-stamp path)</text>\n",
		PLOT_X0, y);
	y += 20;
	for (i = 0; i < ARRAY_SIZE(items); i++)
		legend(f, items[i].key, PLOT_X0 + (i % 2) * 450,
		       y + (i / 2) * 18, items[i].text);
	return y + ((ARRAY_SIZE(items) + 1) / 2) * 18;
}

static void bar(FILE *f, double x, double y, double len, const char *colour,
		unsigned long long n, const char *attrs, const char *label)
{
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%s</text>\n",
		x - 6, y + 10, label);
	fprintf(f, "<rect class=\"bar\" %s data-count=\"%llu\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"12\" fill=\"%s\"/>\n",
		attrs, n, x, y, len, colour);
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">%llu</text>\n",
		x + len + 4, y + 10, n);
}

static double put_hists(FILE *f, const struct rbt_plot *p)
{
	static const char *const depth_col[] = {
		"#bbbbbb", "#0072b2", "#e69f00", "#d55e00", "#cc79a7",
		"#009e73", "#56b4e9", "#f0e442", "#000000",
	};
	double x = SIDE_X + 90, y = TOP - 20;
	unsigned long long max = 1;
	char attrs[96], lab[32];
	unsigned int i, d, max_d = p->max_depth ? p->max_depth : 1;

	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" font-weight=\"bold\">Events by time-stamp path (all %llu)</text>\n",
		SIDE_X, y, p->total);
	y += 14;
	for (i = 0; i < NR_PATHS; i++)
		if (p->paths[i] > max)
			max = p->paths[i];
	for (i = 0; i < NR_PATHS; i++) {
		snprintf(attrs, sizeof(attrs),
			 "data-hist=\"paths\" data-key=\"%s\"", paths[i].key);
		bar(f, x, y, SIDE_W * p->paths[i] / max, paths[i].colour,
		    p->paths[i], attrs, paths[i].label);
		y += 17;
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"#555\">an event counts once per flag it has: fast + slow = all</text>\n",
		SIDE_X, y + 6);

	y += 36;
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" font-weight=\"bold\">Events by nesting depth and context (all)</text>\n",
		SIDE_X, y);
	y += 14;
	max = 1;
	for (i = 0; i < NR_CTX; i++)
		for (d = 1; d <= max_d; d++)
			if (p->cd[i][d] > max)
				max = p->cd[i][d];
	for (i = 0; i < NR_CTX; i++) {
		for (d = 1; d <= max_d; d++) {
			snprintf(attrs, sizeof(attrs),
				 "data-hist=\"depth\" data-ctx=\"%u\" data-depth=\"%u\"",
				 i, d);
			snprintf(lab, sizeof(lab), "%s%s%u",
				 d == 1 ? ctx_names[i] : "",
				 d == 1 ? "  depth " : "", d);
			bar(f, x, y, SIDE_W * p->cd[i][d] / max,
			    depth_col[d], p->cd[i][d], attrs, lab);
			y += 15;
		}
		y += 6;
	}
	if (p->cd_other) {
		bar(f, x, y, p->cd_other > max ? SIDE_W :
			SIDE_W * p->cd_other / max, "#999999", p->cd_other,
		    "data-hist=\"depth\" data-key=\"out-of-range\"",
		    "out of range");
		y += 17;
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"#555\">depth: writers in progress on the CPU, the event's own included</text>\n",
		SIDE_X, y + 6);
	return y + 20;
}

int rbt_plot_write(struct rbt_plot *p, FILE *f)
{
	char a[32], b[32], w[32], ca[32], cb[32], len[32];
	int rows = nr_rows(p), cpu, row;
	double y_axis, y_end, y_side, height;

	if (p->pass != 3)
		return fail(p, "the picture is drawn after the two passes");
	y_axis = TOP + rows * (NR_CTX * LANE_H + CPU_GAP);
	y_end = y_axis + 60 + 20 + 6 * 18 + 20;
	/* the side panel: 7 path bars, then a bar per context and depth */
	y_side = TOP + 7 * 17 + 70 +
		 NR_CTX * ((p->max_depth ? p->max_depth : 1) * 15 + 6) + 40;
	height = y_end > y_side ? y_end : y_side;

	fmt_sec(a, sizeof(a), p->from - p->first_ts);
	fmt_sec(b, sizeof(b), p->to - p->first_ts);
	fmt_sec(ca, sizeof(ca), p->from);
	fmt_sec(cb, sizeof(cb), p->to);
	fmt_dur(w, sizeof(w), p->to - p->from);
	fmt_dur(len, sizeof(len), p->last_ts - p->first_ts);

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" font-family=\"%s\" data-from-ns=\"%llu\" data-to-ns=\"%llu\" data-start-ns=\"%llu\" data-events=\"%llu\" data-window-events=\"%llu\" data-max-depth=\"%u\" data-default-window=\"%d\">\n",
		WIDTH, height, WIDTH, height, FONT, p->from, p->to,
		p->first_ts, p->total, p->nr_in, p->max_depth,
		!(p->o.has_from || p->o.has_to));
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%.0f\" fill=\"#fff\"/>\n",
		WIDTH, height);
	fprintf(f, "<text class=\"title\" x=\"20\" y=\"26\" font-size=\"16\" font-weight=\"bold\">rbtrace plot: ");
	put_text(f, p->name);
	fprintf(f, "  (%llu events, %d CPUs, %s)</text>\n", p->total,
		p->nr_cpu > p->o.nr_cpus ? p->nr_cpu : p->o.nr_cpus, len);
	fprintf(f, "<text class=\"window\" x=\"20\" y=\"48\" font-size=\"12\">window: %s s to %s s after the first event (%s; clock %s to %s as rbtrace report prints it): %llu events",
		a, b, w, ca, cb, p->nr_in);
	if (p->o.cpu >= 0)
		fprintf(f, " of CPU %d", p->o.cpu);
	fprintf(f, "</text>\n");
	if (!(p->o.has_from || p->o.has_to))
		fprintf(f, "<text x=\"20\" y=\"66\" font-size=\"12\">default window: the shortest nesting of the deepest depth (%u, CPU %d), %llu ns either side</text>\n",
			p->best_depth, p->best_cpu, RBT_PLOT_MARGIN_NS);
	else
		fprintf(f, "<text x=\"20\" y=\"66\" font-size=\"12\">window from --from/--to</text>\n");
	if (p->undrawn)
		fprintf(f, "<text x=\"20\" y=\"84\" font-size=\"12\" fill=\"#c00\">%llu events of an unknown context not drawn</text>\n",
			p->undrawn);

	for (row = 0, cpu = 0; row < rows; cpu++) {
		double top = TOP + row * (NR_CTX * LANE_H + CPU_GAP);
		unsigned int i;

		if (!shown(p, cpu))
			continue;
		for (i = 0; i < NR_CTX; i++) {
			fprintf(f, "<rect class=\"lane\" data-cpu=\"%d\" data-ctx=\"%u\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" stroke=\"#ddd\"/>\n",
				cpu, i, PLOT_X0, top + i * LANE_H,
				PLOT_X1 - PLOT_X0, LANE_H, ctx_fill[i]);
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">cpu%d %s</text>\n",
				PLOT_X0 - 8, top + i * LANE_H + LANE_H / 2 + 4,
				cpu, ctx_names[i]);
		}
		if (cpu < p->nr_cpu)
			put_cpu(f, p, cpu, row);
		row++;
	}
	put_axis(f, p, y_axis);
	put_legend(f, y_axis + 60);
	put_hists(f, p);
	fprintf(f, "</svg>\n");
	if (ferror(f))
		return fail(p, "write error");
	return 0;
}

int rbt_plot_write_file(struct rbt_plot *p, const char *path)
{
	bool to_stdout = !strcmp(path, "-"), reg;
	FILE *f = to_stdout ? stdout : fopen(path, "w");
	struct stat st;
	int bad;

	if (!f) {
		snprintf(p->err, sizeof(p->err), "%s: %s", path,
			 strerror(errno));
		return -1;
	}
	/* a partial picture is removed, if it is a file */
	reg = !to_stdout && !fstat(fileno(f), &st) && S_ISREG(st.st_mode);
	errno = 0;
	bad = rbt_plot_write(p, f);
	bad |= to_stdout ? fflush(f) : fclose(f);
	if (!bad)
		return 0;
	snprintf(p->err, sizeof(p->err), "%s: %s", path,
		 errno ? strerror(errno) : "write error");
	if (reg)
		unlink(path);
	return -1;
}

void rbt_plot_usage(FILE *f, const char *prog)
{
	fprintf(f,
		"usage: %s plot REC -o FILE.svg [--from T] [--to T] [--cpu N]\n"
		"  Draw the nesting of the writers of a recording over a time\n"
		"  window as an SVG picture: per CPU a lane per context, a mark\n"
		"  per event at its time (shape: fast, slow, absolute, zero-delta\n"
		"  stamp), the span of each interrupted writer and a line from\n"
		"  each nested event to it; beside it the whole recording's\n"
		"  events by time-stamp path and by depth and context.\n"
		"  -o, --output FILE  the SVG file to write (- for stdout)\n"
		"  -f, --from T       window start after the first event: a time\n"
		"                     with a unit (s, ms, us, ns), or seconds if it\n"
		"                     has a fraction (1.5), ns if not (1500)\n"
		"  -t, --to T         window end (included); with one end only,\n"
		"                     the window is %llu ns wide\n"
		"  -c, --cpu N        only CPU N\n"
		"  -h, --help         this text\n"
		"Default window: the deepest nesting, %llu ns either side. A window\n"
		"without events, or with more than %d, is an error (exit 2).\n",
		prog, RBT_PLOT_SPAN_NS, RBT_PLOT_MARGIN_NS,
		RBT_PLOT_MAX_EVENTS);
}
