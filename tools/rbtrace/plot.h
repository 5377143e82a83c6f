/* SPDX-License-Identifier: GPL-2.0 */
/*
 * plot.h - "rbtrace plot": a picture (SVG) of the nesting of rbnest writers
 *
 * The picture shows, over a time window, one lane per CPU and context
 * (task, softirq, hardirq, NMI) with a mark for every event at its
 * rebuilt time, shaped and coloured by how its time stamp was written
 * (RBN_EV_* of rb_core.h); the nesting of writers (spans and connectors,
 * below); beside it the events of the whole recording by time-stamp path
 * and by nesting depth and context.
 *
 * Events are given one at a time, in TWO PASSES over the same events in
 * the same order (each CPU's events in their order in its buffer; CPUs
 * may be interleaved):
 *
 *   p = rbt_plot_new(&opts);
 *   for each event: rbt_plot_add(p, &ev);	pass 1
 *   rbt_plot_end_pass(p);			chooses the window
 *   for each event: rbt_plot_add(p, &ev);	pass 2
 *   rbt_plot_end_pass(p);			nesting of the kept events
 *   rbt_plot_write(p, file);		or rbt_plot_write_file()
 *   rbt_plot_free(p);
 *
 * Pass 1 keeps counts only: the recording's first and last time, the
 * events by time-stamp path and by context and depth (the histograms,
 * over the whole recording), and, for the default window, the best
 * nesting seen so far (a few numbers per CPU). Pass 2 keeps the events
 * inside the window, and per CPU at most RBT_PLOT_MAX_DEPTH events just
 * before it (writers still open when it starts) and just after it (the
 * events that close them). Memory is bounded by the window, not by the
 * recording; a window of more than RBT_PLOT_MAX_EVENTS events is refused.
 *
 * The window is [from, to], both ends included, in ns after the first
 * event of the recording. Without --from and --to: around the deepest
 * nesting of the recording (of CPU opts.cpu when given). The nesting is
 * a run of events of depth 2 or more on a CPU between two events of
 * depth 1; of the runs that reach the deepest depth, the one that is
 * shortest in time, from the depth-1 event before it to the one after
 * it, with RBT_PLOT_MARGIN_NS on either side.
 *
 * What the data tells of the nesting, and what is drawn: an event's time
 * is its writer's reserve; per CPU, buffer order is reserve order, and
 * (unless the recording is broken) time order. An event of depth d was
 * written while d-1 writers were in progress on its CPU. Its writer W
 * reserved at its time stamp and was done before the next event of the
 * CPU of depth d or less was reserved: that interval is drawn as W's
 * span (an upper bound of the rest of W's run) when writers nested in
 * it. The writer a nested event E (depth d) interrupted is, with P the
 * last event before E of depth d-1 and N the first one after it, no
 * event of depth d-1 or less between them and E:
 *
 *   - N, if N took the slow path (RBN_EV_SLOW: writers reserved in
 *     front of it between its clock read and its reserve, so it was
 *     running before its time stamp) and E is the last event of depth d
 *     before N: whatever reserved in front of N nested in N, and so did
 *     every later writer of depth d before N (dashed connector; N's
 *     span is drawn dashed from its earliest nested event to its time
 *     stamp);
 *   - else P: it reserved, then was interrupted (solid connector, E
 *     inside P's span);
 *   - else N: the writer of depth d-1 in progress had not reserved yet.
 *
 * When P exists and N did not take the slow path, or E is not the last
 * of its depth before N, the data cannot tell P interrupted after its
 * reserve from N interrupted before; P is drawn. An event of depth d
 * with neither has no connector (events lost, or the window's edge).
 * Spans are drawn for the writers that events of the window interrupted,
 * and for the writers that those interrupted in turn.
 */
#ifndef _RBTRACE_PLOT_H
#define _RBTRACE_PLOT_H

#include <stdbool.h>
#include <stdio.h>

#define RBT_PLOT_MAX_CPUS	1024
#define RBT_PLOT_MAX_DEPTH	8
#define RBT_PLOT_MAX_EVENTS	50000
#define RBT_PLOT_MARGIN_NS	2000ULL
/* The width of a window given by one end only. */
#define RBT_PLOT_SPAN_NS	10000ULL

/**
 * struct rbt_plot_opts - what to draw
 * @name:	the recording, for the title
 * @nr_cpus:	CPUs of the recording (a lane per context each), at least
 *		those of the events; 0: those of the events
 * @cpu:	only this CPU, or -1
 * @has_from:	@from is given
 * @has_to:	@to is given
 * @from:	window start, ns after the recording's first event
 * @to:		window end (included), ns after the first event
 *
 * With one end only, the window is RBT_PLOT_SPAN_NS wide.
 */
struct rbt_plot_opts {
	const char *name;
	int nr_cpus;
	int cpu;
	bool has_from;
	bool has_to;
	unsigned long long from;
	unsigned long long to;
};

/**
 * struct rbt_plot_ev - one event of a recording
 * @ts:		its rebuilt time
 * @seq:	its sequence number
 * @cpu:	the CPU of its buffer
 * @pid:	the writer's pid
 * @ctx:	context: 0 task, 1 softirq, 2 hardirq, 3 NMI
 * @depth:	writers in progress on the CPU when it was written, itself
 *		included (1: not nested)
 * @flags:	RBN_EV_* of rb_core.h
 * @source:	enum rbn_source of rbn_events.h
 */
struct rbt_plot_ev {
	unsigned long long ts;
	unsigned long long seq;
	int cpu;
	int pid;
	unsigned int ctx;
	unsigned int depth;
	unsigned int flags;
	unsigned int source;
};

struct rbt_plot;

/* Returns NULL when out of memory. */
struct rbt_plot *rbt_plot_new(const struct rbt_plot_opts *opts);
/* These return 0, or -1 with rbt_plot_error() saying why. */
int rbt_plot_add(struct rbt_plot *p, const struct rbt_plot_ev *ev);
int rbt_plot_end_pass(struct rbt_plot *p);
int rbt_plot_write(struct rbt_plot *p, FILE *f);
/* rbt_plot_write() to a new file @path ("-": stdout), removed on error. */
int rbt_plot_write_file(struct rbt_plot *p, const char *path);
const char *rbt_plot_error(const struct rbt_plot *p);
void rbt_plot_free(struct rbt_plot *p);

/*
 * A time of --from/--to into *@ns: digits with an optional fraction and
 * unit, s, ms, us or ns; without a unit, seconds if it has a fraction
 * ("1.5"), ns if not ("1500"). Returns 0, or -1 for anything else.
 */
int rbt_plot_parse_time(const char *s, unsigned long long *ns);
/* The help text of "rbtrace plot", @prog the program's name. */
void rbt_plot_usage(FILE *f, const char *prog);

#endif /* _RBTRACE_PLOT_H */
