// SPDX-License-Identifier: GPL-2.0
/*
 * test_stress.c - signal-driven nesting stress of the rbnest core.
 *
 * One writer thread per simulated CPU writes events in a loop in task
 * context. Three POSIX timers per thread, aimed at that thread, raise
 * SIGRTMIN, SIGRTMIN + 1 and SIGRTMIN + 2 every few tens of microseconds
 * (jittered). Their handlers play softirq, hardirq and NMI: a handler may be
 * interrupted by the handlers of the higher levels only, so writers nest up
 * to four deep (task -> softirq -> hardirq -> NMI), at any instruction of
 * the write path. A reader thread consumes concurrently, mixing
 * rbn_consume() with rbn_read_page() (pages decoded here), and drains the
 * buffer once the writers stopped.
 *
 * Every event carries its CPU, context level, nesting depth, a per-CPU
 * sequence number, the time stamp and flags the core reported to its writer
 * between reserve and commit, and a checksum. The reader checks, per CPU:
 * rebuilt time stamps never decrease; each one equals its writer's
 * rbn_event_ts(), except events written with a zero delta (RBN_EV_ZERO_DELTA)
 * which show the time of the event before them; payloads are intact;
 * sequence numbers are unique; nothing is lost silently. The core's
 * counters must agree with the flags the writers saw, and the core must
 * not warn.
 *
 * Three runs, each with its own account of refused reserves (NULL from
 * rbn_reserve(), counted at every level). The core must count each one:
 * as dropped (the buffer is full), or as commit_overrun, which the core,
 * like the kernel, counts when nested writers move the tail during a
 * reserve (off the reader page, or around the ring) while the commit stays
 * behind; nested writers must then have written during that reserve.
 *
 *   pc         producer/consumer mode, no drop planned: the writers hold
 *              back while the buffer is half full (their handlers at three
 *              quarters), so nothing may be dropped; written == read.
 *   pc-full    producer/consumer mode with drops planned: the reader lets a
 *              CPU's small buffer fill up until it drops, then reads a
 *              burst. There must be drops; written == read.
 *   overwrite  an 8-page ring overwritten all the time, no drop planned:
 *              nothing dropped, per CPU written == read + stats.overrun,
 *              and stats.overrun == the events lost as the reader saw them
 *              (counts from consume and from the pages; a page flagged
 *              missed without room for its count hides at least one).
 *
 * In each run writers must have been interrupted inside the write path
 * (nested events written between an outer writer's rbn_reserve() and
 * rbn_commit(), slow-path, absolute-stamp and zero-delta events) and
 * nested four deep there (an NMI writer inside hardirq, softirq and task
 * writers that are all between reserve and commit, core max_depth 4). A
 * run goes on past its share of the events until it saw all that or
 * reached its share of the time cap; what it did not see then fails its
 * test case. A timer that cannot be created fails too; only a kernel
 * without POSIX timers (ENOSYS) skips the nesting test cases.
 *
 * Diagnostics: events per CPU and per context level, the nesting depth
 * histogram by context (task = 1 .. NMI over hardirq over softirq over
 * task = 4) and inside the write path (how many writers between
 * rbn_reserve() and rbn_commit() were below the event), how often a handler
 * hit rbn_reserve() or the reserve..commit window, the RBN_EV_* flags per
 * level and the core's ts_* counters.
 *
 * Knobs (environment):
 *   RBN_STRESS_EVENTS   events to commit in the whole run (default 10^7,
 *                       split 3:2:3 between the runs and evenly over the
 *                       CPUs; "1e6" works too)
 *   RBN_STRESS_SECONDS  time cap of the whole run (default 40); time a run
 *                       leaves unused goes to the runs after it
 *   RBN_STRESS_CPUS     simulated CPUs, one writer thread each (default 2)
 *
 * The line "# rate: N events/s" is meant for benchmark scripts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "rb_core.h"
#include "ktap.h"

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id	_sigev_un._tid
#endif

/*
 * ThreadSanitizer does not run a handler where its signal arrives: it
 * notes the signal and runs the handler at its next interceptor (in the
 * write path: the clock reads), with every signal blocked, and when
 * handlers nest it may put back a deeper handler's mask once they are
 * done. Handlers would never nest, and lower levels would stay blocked.
 * There, each handler opens the levels above its own, and the task loop
 * opens all three again after handlers ran.
 */
#if defined(__SANITIZE_THREAD__)
#define DEFERRED_SIGNALS	1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DEFERRED_SIGNALS	1
#endif
#endif
#ifndef DEFERRED_SIGNALS
#define DEFERRED_SIGNALS	0
#endif

#define NR_LEVELS		4	/* task, softirq, hardirq, NMI */
#define MAX_DEPTH		4
#define NR_FLAGS		6	/* RBN_EV_* bits */
#define NR_MSGS			8	/* failure messages kept per CPU */
#define NR_MODES		3
#define COMMIT_LEN_MASK		((1UL << 20) - 1)
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#endif

#define DEFAULT_EVENTS		10000000ULL
#define MAX_EVENTS		1000000000ULL	/* sequence bitmaps stay small */
#define DEFAULT_SECONDS		40.0
#define DEFAULT_CPUS		2

/*
 * A run goes on past its share of the events until it saw what it must
 * see: at most this many events more per CPU, within its share of the time.
 */
#define EXTEND_EVENTS		16777216ULL	/* 2^24 */
/* Sequence numbers are 32 bits; handlers may overshoot a limit a little. */
#define SEQ_LIMIT_MAX		(0xffffffffULL - 1048576)

/* Producer/consumer without drops: writers hold back above these. */
#define HOLD_TASK_PERCENT	50
#define HOLD_IRQ_PERCENT	75

/*
 * What the writers of a CPU saw (struct wstate.seen), for the main thread
 * to tell when a run saw enough.
 */
#define SEEN_NESTED		0x01	/* written inside another's write path */
#define SEEN_DEPTH4		0x02	/* ... with three writers below it */
#define SEEN_SLOW		0x04	/* RBN_EV_SLOW */
#define SEEN_ABS		0x08	/* RBN_EV_ABSOLUTE */
#define SEEN_ZERO		0x10	/* RBN_EV_ZERO_DELTA */
#define SEEN_REFUSED		0x20	/* rbn_reserve() returned NULL */
#define SEEN_NESTING		(SEEN_NESTED | SEEN_DEPTH4 | SEEN_SLOW | \
				 SEEN_ABS | SEEN_ZERO)

/*
 * Payload sizes: the record below (24 bytes, the smallest event here), then
 * filler up to 256 bytes; lengths that are not multiples of 4 are common.
 */
#define LEN_MAX			256U

static const char * const level_name[NR_LEVELS] = {
	"task", "softirq", "hardirq", "nmi"
};

static const char * const flag_name[NR_FLAGS] = {
	"fast", "absolute", "slow", "zero_delta", "extend", "page_start"
};

/* Timer period of each level: min + [0, span) ns, re-drawn at each shot. */
static const long period_min_ns[NR_LEVELS] = { 0, 9000, 12000, 15000 };
static const long period_span_ns[NR_LEVELS] = { 0, 40000, 45000, 50000 };
/* A handler of each level writes 1..N events. */
static const unsigned int handler_events[NR_LEVELS] = { 0, 8, 4, 3 };

/*
 * The head of every payload. Events are only 4-byte aligned in a page, so
 * it is always copied in and out with memcpy().
 */
struct stress_rec {
	u32 seq;		/* per-CPU sequence number */
	u16 len;		/* payload bytes as written */
	u8 cpu;
	u8 level_depth;		/* context level | nesting depth << 4 */
	u64 ts;			/* rbn_event_ts() seen by the writer */
	u32 flags;		/* rbn_event_flags() seen by the writer */
	u32 csum;		/* over the payload, with this field zero */
};

#define LEN_MIN			((unsigned int)sizeof(struct stress_rec))

/*
 * Per writer thread (= per CPU). The thread and its signal handlers share
 * it. Every counter array is indexed by context level and is written only
 * by code running at that level, which cannot interrupt itself, so plain
 * increments are safe against the handlers. The volatile fields are the
 * ones a handler reads or changes under the interrupted code (what
 * volatile is for in C, together with signal handlers); a handler always
 * puts back what it changed before it returns. seq, seen and done are
 * also read by the main thread, with atomics.
 */
struct wstate {
	int cpu;
	pthread_t thread;
	timer_t timer[NR_LEVELS];
	bool timer_ok[NR_LEVELS];
	int timer_err;

	volatile int depth;			/* 1 in the task loop */
	volatile int stop;			/* handlers: no more writes */
	volatile char in_reserve[NR_LEVELS];	/* inside rbn_reserve() */
	volatile char in_write[NR_LEVELS];	/* reserve .. commit */
	volatile unsigned int handlers_ran;

	u64 seq;				/* atomic: shared by all levels */
	u64 target;				/* the planned share of events */
	u64 seq_limit;				/* nobody writes past this */
	unsigned int seen;			/* atomic: SEEN_* */
	int done;				/* atomic: the task loop ended */
	u64 rng[NR_LEVELS];

	u64 written[NR_LEVELS];
	u64 refused[NR_LEVELS];
	u64 refused_nested[NR_LEVELS];		/* ... inside another's write */
	u64 refused_raced[NR_LEVELS];		/* ... while nested ones wrote */
	u64 held[NR_LEVELS];			/* held back: buffer filling */
	u64 ctx_depth[NR_LEVELS][MAX_DEPTH + 1];
	u64 wr_depth[NR_LEVELS][MAX_DEPTH + 1];
	u64 flags[NR_LEVELS][NR_FLAGS];
	u64 signals[NR_LEVELS];
	u64 hit_reserve[NR_LEVELS];
	u64 hit_window[NR_LEVELS];
	u64 t_start, t_end;
} __attribute__((aligned(64)));

/* Per CPU, owned by the reader thread. */
struct rstate {
	void *page;
	u64 rng;

	u64 last_ts;
	bool have_last;
	bool contiguous;	/* nothing lost since the last event read */

	u64 read;
	u64 read_consume;
	u64 read_page;
	u64 pages;
	u64 lost;		/* lost counts from consume and from pages */
	u64 lost_unknown;	/* pages flagged missed without a count */
	u64 zero;		/* events flagged RBN_EV_ZERO_DELTA read */
	u64 zero_exact;		/* ... checked equal to the event before */
	u64 extends;		/* time extends seen in pages */
	u64 abs_stamps;		/* absolute stamps seen in pages */
	u64 paddings;		/* discarded-event paddings seen in pages */

	u64 dropped_seen;	/* pc-full: stats.dropped when last woken */
	unsigned int burst;	/* pc-full: read rounds left before waiting */
	u64 waits;		/* pc-full: times the reader waited for a drop */

	u64 err_intact;		/* payload, length, CPU, sequence, format */
	u64 err_ts;		/* time stamps */
	u64 err_api;		/* unexpected return values */
	int nr_msgs;
	char msgs[NR_MSGS][160];

	u8 *seen;		/* bitmap of sequence numbers */
	u64 seen_cap;
	u64 seq_max;
};

struct mode {
	const char *name;
	const char *count_case;	/* what its counting test case checks */
	bool overwrite;
	bool drops;		/* the reader lets the buffer fill: drops planned */
	bool hold;		/* writers hold back before the buffer fills */
	unsigned long size;	/* bytes per CPU */
	unsigned int share;	/* of the events and of the time, in eighths */
};

static const struct mode modes[NR_MODES] = {
	{
		.name = "pc",
		.count_case = "written == read, nothing dropped",
		.hold = true,
		.size = 4UL << 20,
		.share = 3,
	}, {
		.name = "pc-full",
		.count_case = "written == read, refused == counted, dropped > 0",
		.drops = true,
		.size = 16 * PAGE_SIZE,
		.share = 2,
	}, {
		.name = "overwrite",
		.count_case = "written == read + overrun == read + lost, nothing dropped",
		.overwrite = true,
		.size = 8 * PAGE_SIZE,
		.share = 3,
	},
};

struct mode_result {
	u64 events;
	double seconds;
	bool intact_ok, ts_ok, count_ok, stats_ok, nest_ok, depth4_ok;
	bool timers_ok;		/* every timer created, every level fired */
	bool no_timers;		/* the kernel has no POSIX timers */
	u64 max_ctx_depth, max_wr_depth, core_max_depth;
};

static struct rbn_buffer *stress_buf;
static const struct mode *cur_mode;
static unsigned int subbuf_size;
static int nr_cpus = DEFAULT_CPUS;
static int sig_base;
static int sigaction_err;
static u64 deadline_ns;
static int mode_stop;
static int readers_stop;
static struct wstate *wst;
static struct rstate *rst;
static pthread_barrier_t start_barrier;
static __thread struct wstate *this_w;

/* Async-signal-safe and monotonic: the clock of the buffer. */
static u64 stress_clock(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (u64)t.tv_sec * 1000000000ULL + (u64)t.tv_nsec;
}

static u64 rng_next(u64 *s)
{
	u64 x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

static unsigned int pick_len(u64 *rng)
{
	u64 r = rng_next(rng);

	/* Mostly small events, one in four up to LEN_MAX. */
	if (r & 3)
		return LEN_MIN + (unsigned int)((r >> 8) % 41);
	return LEN_MIN + (unsigned int)((r >> 8) % (LEN_MAX - LEN_MIN + 1));
}

static u32 csum_bytes(const u8 *p, unsigned int len)
{
	u32 h = 0x811c9dc5;
	unsigned int i;

	for (i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x01000193;
	return h;
}

static u8 filler(u32 seq, unsigned int i)
{
	return (u8)(seq * 7 + i * 13 + (seq >> 8));
}

static void see(struct wstate *w, unsigned int bits)
{
	if (bits & ~__atomic_load_n(&w->seen, __ATOMIC_RELAXED))
		__atomic_fetch_or(&w->seen, bits, __ATOMIC_RELAXED);
}

/*
 * Write one event at @level. Called from the task loop and from the
 * handlers; only async-signal-safe things happen here.
 */
static bool write_event(struct wstate *w, int level, unsigned int len)
{
	struct stress_rec rec;
	struct rbn_event *ev;
	unsigned int flags, bits, i;
	int depth = w->depth, wdepth = 1, l;
	u64 seq_before;
	u8 *p;
	u32 seq;

	for (l = 0; l < level; l++)
		if (w->in_write[l])
			wdepth++;

	w->in_write[level] = 1;
	w->in_reserve[level] = 1;
	seq_before = __atomic_load_n(&w->seq, __ATOMIC_RELAXED);
	ev = rbn_reserve(stress_buf, len);
	w->in_reserve[level] = 0;
	if (!ev) {
		w->in_write[level] = 0;
		w->refused[level]++;
		if (wdepth > 1)
			w->refused_nested[level]++;
		if (__atomic_load_n(&w->seq, __ATOMIC_RELAXED) != seq_before)
			w->refused_raced[level]++;
		see(w, SEEN_REFUSED);
		return false;
	}
	seq = (u32)__atomic_fetch_add(&w->seq, 1, __ATOMIC_RELAXED);
	flags = rbn_event_flags(stress_buf, ev);

	rec.seq = seq;
	rec.len = (u16)len;
	rec.cpu = (u8)w->cpu;
	rec.level_depth = (u8)(level | depth << 4);
	rec.ts = rbn_event_ts(stress_buf, ev);
	rec.flags = flags;
	rec.csum = 0;

	p = rbn_event_data(ev);
	memcpy(p, &rec, sizeof(rec));
	for (i = LEN_MIN; i < len; i++)
		p[i] = filler(seq, i);
	rec.csum = csum_bytes(p, len);
	memcpy(p + offsetof(struct stress_rec, csum), &rec.csum,
	       sizeof(rec.csum));

	rbn_commit(stress_buf, ev);
	w->in_write[level] = 0;

	w->written[level]++;
	w->ctx_depth[level][depth <= MAX_DEPTH ? depth : 0]++;
	w->wr_depth[level][wdepth <= MAX_DEPTH ? wdepth : 0]++;
	for (i = 0; i < NR_FLAGS; i++)
		if (flags & (1U << i))
			w->flags[level][i]++;

	bits = 0;
	if (wdepth > 1)
		bits |= SEEN_NESTED;
	if (wdepth == MAX_DEPTH)
		bits |= SEEN_DEPTH4;
	if (flags & RBN_EV_SLOW)
		bits |= SEEN_SLOW;
	if (flags & RBN_EV_ABSOLUTE)
		bits |= SEEN_ABS;
	if (flags & RBN_EV_ZERO_DELTA)
		bits |= SEEN_ZERO;
	see(w, bits);
	return true;
}

static void arm_timer(struct wstate *w, int level)
{
	struct itimerspec its;

	if (!w->timer_ok[level])
		return;
	memset(&its, 0, sizeof(its));
	its.it_value.tv_nsec = period_min_ns[level] +
		(long)(rng_next(&w->rng[level]) % (u64)period_span_ns[level]);
	timer_settime(w->timer[level], 0, &its, NULL);
}

/*
 * SIGRTMIN + level - 1: a writer at @level. The sigaction mask blocks this
 * level and the ones below it, so only higher levels interrupt us.
 */
static void stress_handler(int sig, siginfo_t *si, void *uctx)
{
	struct wstate *w = this_w;
	int level = sig - sig_base + 1;
	int saved_errno = errno;
	int saved_ctx, saved_depth, l;
	sigset_t up, saved_mask;
	unsigned int n, i;

	(void)si;
	(void)uctx;
	if (!w || level < 1 || level >= NR_LEVELS)
		return;

	if (DEFERRED_SIGNALS) {
		sigemptyset(&up);
		for (l = level + 1; l < NR_LEVELS; l++)
			sigaddset(&up, sig_base + l - 1);
		pthread_sigmask(SIG_UNBLOCK, &up, &saved_mask);
	}
	w->handlers_ran++;
	w->signals[level]++;
	for (l = 0; l < level; l++)
		if (w->in_reserve[l])
			break;
	if (l < level) {
		w->hit_reserve[level]++;
	} else {
		for (l = 0; l < level; l++)
			if (w->in_write[l])
				break;
		if (l < level)
			w->hit_window[level]++;
	}

	saved_ctx = rbn_user_context;
	saved_depth = w->depth;
	rbn_user_context = level;
	w->depth = saved_depth + 1;

	n = 1 + (unsigned int)(rng_next(&w->rng[level]) %
			       handler_events[level]);
	for (i = 0; i < n && !w->stop; i++) {
		if (__atomic_load_n(&w->seq, __ATOMIC_RELAXED) >= w->seq_limit)
			break;
		if (cur_mode->hold &&
		    rbn_cpu_percent_full(stress_buf, w->cpu, HOLD_IRQ_PERCENT)) {
			w->held[level]++;
			break;
		}
		write_event(w, level, pick_len(&w->rng[level]));
	}

	w->depth = saved_depth;
	rbn_user_context = saved_ctx;
	if (DEFERRED_SIGNALS)
		pthread_sigmask(SIG_SETMASK, &saved_mask, NULL);
	if (!w->stop)
		arm_timer(w, level);
	errno = saved_errno;
}

static void stress_sigset(sigset_t *set)
{
	int l;

	sigemptyset(set);
	for (l = 1; l < NR_LEVELS; l++)
		sigaddset(set, sig_base + l - 1);
}

static void *writer_thread(void *arg)
{
	struct wstate *w = arg;
	struct sigevent sev;
	unsigned int ran = 0;
	sigset_t set;
	u64 iter = 0;
	int l;

	rbn_user_cpu = w->cpu;
	rbn_user_context = 0;
	w->depth = 1;
	this_w = w;

	for (l = 1; l < NR_LEVELS; l++) {
		memset(&sev, 0, sizeof(sev));
		sev.sigev_notify = SIGEV_THREAD_ID;
		sev.sigev_signo = sig_base + l - 1;
		sev.sigev_notify_thread_id = (pid_t)syscall(SYS_gettid);
		if (timer_create(CLOCK_MONOTONIC, &sev, &w->timer[l])) {
			w->timer_err = errno;
			continue;
		}
		w->timer_ok[l] = true;
	}
	stress_sigset(&set);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);

	pthread_barrier_wait(&start_barrier);
	w->t_start = stress_clock();
	for (l = 1; l < NR_LEVELS; l++)
		arm_timer(w, l);

	while (!__atomic_load_n(&mode_stop, __ATOMIC_ACQUIRE) &&
	       __atomic_load_n(&w->seq, __ATOMIC_RELAXED) < w->seq_limit) {
		if (!(++iter & 1023) && stress_clock() > deadline_ns)
			break;
		if (DEFERRED_SIGNALS && w->handlers_ran != ran) {
			ran = w->handlers_ran;
			pthread_sigmask(SIG_UNBLOCK, &set, NULL);
		}
		if (cur_mode->hold &&
		    rbn_cpu_percent_full(stress_buf, w->cpu, HOLD_TASK_PERCENT)) {
			w->held[0]++;
			sched_yield();
			continue;
		}
		if (!write_event(w, 0, pick_len(&w->rng[0])))
			sched_yield();
	}
	w->t_end = stress_clock();

	w->stop = 1;
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (l = 1; l < NR_LEVELS; l++)
		if (w->timer_ok[l])
			timer_delete(w->timer[l]);
	this_w = NULL;
	__atomic_store_n(&w->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Reader side. */

static void __printf(3, 4)
rfail(struct rstate *r, u64 *counter, const char *fmt, ...)
{
	va_list ap;

	(*counter)++;
	if (r->nr_msgs >= NR_MSGS)
		return;
	va_start(ap, fmt);
	vsnprintf(r->msgs[r->nr_msgs], sizeof(r->msgs[0]), fmt, ap);
	va_end(ap);
	r->nr_msgs++;
}

static void note_lost(struct rstate *r, u64 lost)
{
	if (!lost)
		return;
	r->lost += lost;
	r->contiguous = false;
}

/* Check one data event read from @cpu, shown at @ts. */
static void check_event(struct rstate *r, int cpu, u64 ts, const u8 *p,
			unsigned int dlen)
{
	struct stress_rec rec;
	unsigned int i, level, depth;
	u32 csum;

	r->read++;
	if (dlen < LEN_MIN || dlen > ALIGN(LEN_MAX, RBN_ALIGNMENT)) {
		rfail(r, &r->err_intact, "cpu%d: event of %u bytes", cpu, dlen);
		return;
	}
	memcpy(&rec, p, sizeof(rec));
	if (rec.len < LEN_MIN || ALIGN((unsigned int)rec.len, RBN_ALIGNMENT) != dlen) {
		rfail(r, &r->err_intact,
		      "cpu%d seq %u: payload %u bytes, event holds %u",
		      cpu, rec.seq, rec.len, dlen);
		return;
	}
	for (i = rec.len; i < dlen; i++)
		if (p[i]) {
			rfail(r, &r->err_intact,
			      "cpu%d seq %u: round-up byte %u not zero",
			      cpu, rec.seq, i);
			break;
		}

	memcpy(&csum, p + offsetof(struct stress_rec, csum), sizeof(csum));
	{
		u8 tmp[LEN_MAX];

		memcpy(tmp, p, rec.len);
		memset(tmp + offsetof(struct stress_rec, csum), 0,
		       sizeof(csum));
		if (csum_bytes(tmp, rec.len) != csum) {
			rfail(r, &r->err_intact,
			      "cpu%d seq %u: checksum mismatch (len %u)",
			      cpu, rec.seq, rec.len);
			return;
		}
	}
	level = rec.level_depth & 0xf;
	depth = rec.level_depth >> 4;
	if (rec.cpu != cpu || level >= NR_LEVELS || depth < 1 ||
	    depth > MAX_DEPTH) {
		rfail(r, &r->err_intact,
		      "cpu%d seq %u: bad cpu %u / level %u / depth %u",
		      cpu, rec.seq, rec.cpu, level, depth);
		return;
	}

	if (rec.seq >= r->seen_cap) {
		rfail(r, &r->err_intact, "cpu%d: seq %u out of range",
		      cpu, rec.seq);
	} else if (r->seen[rec.seq >> 3] & (1U << (rec.seq & 7))) {
		rfail(r, &r->err_intact, "cpu%d: seq %u read twice",
		      cpu, rec.seq);
	} else {
		r->seen[rec.seq >> 3] |= (u8)(1U << (rec.seq & 7));
		if (rec.seq > r->seq_max)
			r->seq_max = rec.seq;
	}

	if (r->have_last && ts < r->last_ts)
		rfail(r, &r->err_ts,
		      "cpu%d seq %u: time went back: %" PRIu64 " after %" PRIu64,
		      cpu, rec.seq, ts, r->last_ts);
	if (rec.flags & RBN_EV_ZERO_DELTA) {
		r->zero++;
		if (ts > rec.ts)
			rfail(r, &r->err_ts,
			      "cpu%d seq %u: zero-delta event at %" PRIu64
			      " later than its writer's %" PRIu64,
			      cpu, rec.seq, ts, rec.ts);
		if (r->have_last && r->contiguous) {
			r->zero_exact++;
			if (ts != r->last_ts)
				rfail(r, &r->err_ts,
				      "cpu%d seq %u: zero-delta event at %"
				      PRIu64 ", event before at %" PRIu64,
				      cpu, rec.seq, ts, r->last_ts);
		}
	} else if (ts != rec.ts) {
		rfail(r, &r->err_ts,
		      "cpu%d seq %u: read ts %" PRIu64 " != written %" PRIu64
		      " (flags %#x, level %u, depth %u)",
		      cpu, rec.seq, ts, rec.ts, rec.flags, level, depth);
	}
	r->last_ts = ts;
	r->have_last = true;
	r->contiguous = true;
}

static u64 read_consume(struct rstate *r, int cpu, unsigned int max)
{
	struct rbn_event *ev;
	unsigned long lost;
	unsigned int n;
	u64 ts;

	for (n = 0; n < max; n++) {
		lost = 0;
		ev = rbn_consume(stress_buf, cpu, &ts, &lost);
		if (!ev)
			break;
		note_lost(r, lost);
		if (ev->type_len > RBN_TYPE_DATA_MAX) {
			rfail(r, &r->err_api,
			      "cpu%d: consume returned type_len %u",
			      cpu, ev->type_len);
			continue;
		}
		check_event(r, cpu, ts, rbn_event_data(ev),
			    rbn_event_data_length(ev));
		r->read_consume++;
	}
	return n;
}

static u64 fix_abs(u64 abs, u64 prev)
{
	u64 ts = abs | (prev & RBN_TS_MSB);

	if (ts < prev)
		ts += 1ULL << 59;
	return ts;
}

/* Decode a page from rbn_read_page() that reported @ret bytes. */
static u64 decode_page(struct rstate *r, int cpu, const u8 *page, int ret)
{
	const struct rbn_page *pg = (const void *)page;
	unsigned long commit = (unsigned long)local_read(&pg->commit);
	unsigned int len = commit & COMMIT_LEN_MASK;
	unsigned int room = subbuf_size - RBN_PAGE_HDR_SIZE;
	unsigned int off = 0, end = len, i, type, size, dlen;
	const u8 *data = pg->data;
	u64 ts = pg->time_stamp, n = 0, val;
	u32 hdr, a0;

	r->pages++;
	if (commit & ~(COMMIT_LEN_MASK | RBN_MISSED_FLAGS) || len > room) {
		rfail(r, &r->err_intact, "cpu%d: page commit word %#lx",
		      cpu, commit);
		return 0;
	}
	if ((unsigned int)ret != len)
		rfail(r, &r->err_api, "cpu%d: read_page returned %d, commit %u",
		      cpu, ret, len);
	if (commit & RBN_MISSED_EVENTS) {
		if (commit & RBN_MISSED_STORED) {
			unsigned long missed;

			end = len + sizeof(missed);
			if (end > room) {
				rfail(r, &r->err_intact,
				      "cpu%d: missed count past the page", cpu);
				return 0;
			}
			memcpy(&missed, data + len, sizeof(missed));
			note_lost(r, missed);
			if (!missed)
				rfail(r, &r->err_intact,
				      "cpu%d: page stores 0 missed events",
				      cpu);
		} else {
			r->lost_unknown++;
			r->contiguous = false;
		}
	} else if (commit & RBN_MISSED_STORED) {
		rfail(r, &r->err_intact, "cpu%d: missed stored, not flagged",
		      cpu);
	}
	for (i = end; i < room; i++)
		if (data[i]) {
			rfail(r, &r->err_intact,
			      "cpu%d: page byte %u past commit %u not zero",
			      cpu, i, len);
			break;
		}

	while (off < len) {
		if (len - off < RBN_EVENT_HDR_SIZE)
			goto bad;
		memcpy(&hdr, data + off, sizeof(hdr));
		type = hdr & 0x1f;
		val = hdr >> 5;
		a0 = 0;
		if (len - off >= 8)
			memcpy(&a0, data + off + 4, sizeof(a0));
		switch (type) {
		case RBN_TYPE_PADDING:
			if (len - off < 8)
				return n;	/* a bare end marker */
			size = a0 + RBN_EVENT_HDR_SIZE;
			/* a discarded event's delta is time */
			ts += val;
			r->paddings++;
			break;
		case RBN_TYPE_TIME_EXTEND:
			size = RBN_LEN_TIME_EXTEND;
			ts += (u64)a0 << RBN_TS_SHIFT | val;
			r->extends++;
			break;
		case RBN_TYPE_TIME_STAMP:
			size = RBN_LEN_TIME_STAMP;
			ts = fix_abs((u64)a0 << RBN_TS_SHIFT | val, ts);
			r->abs_stamps++;
			break;
		case 0:
			if (a0 < RBN_ALIGNMENT || a0 % RBN_ALIGNMENT)
				goto bad;
			dlen = a0 - RBN_ALIGNMENT;
			size = RBN_EVENT_HDR_SIZE + a0;
			if (size > len - off)
				goto bad;
			ts += val;
			check_event(r, cpu, ts, data + off + 8, dlen);
			r->read_page++;
			n++;
			break;
		default:
			dlen = type * RBN_ALIGNMENT;
			size = RBN_EVENT_HDR_SIZE + dlen;
			if (size > len - off)
				goto bad;
			ts += val;
			check_event(r, cpu, ts, data + off + 4, dlen);
			r->read_page++;
			n++;
			break;
		}
		if (size > len - off || size < RBN_EVENT_HDR_SIZE)
			goto bad;
		off += size;
	}
	return n;
bad:
	rfail(r, &r->err_intact, "cpu%d: broken event at page offset %u of %u",
	      cpu, off, len);
	return n;
}

static u64 read_pages(struct rstate *r, int cpu, bool full)
{
	int ret;

	ret = rbn_read_page(stress_buf, cpu, &r->page, subbuf_size, full);
	if (ret == -EAGAIN)
		return 0;
	if (ret < 0) {
		rfail(r, &r->err_api, "cpu%d: read_page: %d", cpu, ret);
		return 0;
	}
	return decode_page(r, cpu, r->page, ret) + 1;
}

/* Read a little from @cpu, in a randomly chosen way. */
static u64 read_some(struct rstate *r, int cpu)
{
	u64 x = rng_next(&r->rng);

	switch (x & 7) {
	case 0:
	case 1:
	case 2:
	case 3:
		return read_consume(r, cpu, 1 + (unsigned int)((x >> 8) % 512));
	case 4:
	case 5:
	case 6:
		return read_pages(r, cpu, true);
	default:
		return read_pages(r, cpu, false);
	}
}

/*
 * pc-full: leave a CPU alone until it dropped an event, then read a burst
 * of rounds from it, so that its buffer fills up again and again.
 */
static u64 read_round(struct rstate *r, int cpu)
{
	struct rbn_cpu_stats st;

	if (cur_mode->drops && !r->burst) {
		rbn_cpu_stats(stress_buf, cpu, &st);
		if (st.dropped == r->dropped_seen)
			return 0;
		r->dropped_seen = st.dropped;
		r->burst = 1 + (unsigned int)(rng_next(&r->rng) % 32);
		r->waits++;
	}
	if (r->burst)
		r->burst--;
	return read_some(r, cpu);
}

static void *reader_thread(void *arg)
{
	u64 got;
	bool done;
	int cpu;

	(void)arg;
	for (;;) {
		done = __atomic_load_n(&readers_stop, __ATOMIC_ACQUIRE);
		got = 0;
		for (cpu = 0; cpu < nr_cpus; cpu++)
			got += read_round(&rst[cpu], cpu);
		if (got)
			continue;
		if (done)
			break;
		sched_yield();
	}

	/* Writers are gone: drain every CPU both ways, then it is empty. */
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		struct rstate *r = &rst[cpu];
		u64 ts;
		unsigned long lost;

		while (read_consume(r, cpu, 4096) || read_pages(r, cpu, false))
			;
		if (rbn_consume(stress_buf, cpu, &ts, &lost))
			rfail(r, &r->err_api, "cpu%d: event after drain", cpu);
		if (rbn_read_page(stress_buf, cpu, &r->page, subbuf_size,
				  false) != -EAGAIN)
			rfail(r, &r->err_api, "cpu%d: page after drain", cpu);
		if (!rbn_empty_cpu(stress_buf, cpu))
			rfail(r, &r->err_api, "cpu%d: not empty after drain",
			      cpu);
	}
	return NULL;
}

/* Reporting. */

static u64 popcount_bits(const u8 *map, u64 bytes)
{
	u64 i, n = 0;

	for (i = 0; i < bytes; i++)
		n += (u64)__builtin_popcount(map[i]);
	return n;
}

/*
 * Deepest nesting inside the write path that this writer saw. It counts
 * from just before rbn_reserve() to just after rbn_commit(), a little more
 * than the core's own max_depth does.
 */
static u64 w_max_depth(const struct wstate *w)
{
	u64 d = 0;
	int l, i;

	for (l = 0; l < NR_LEVELS; l++)
		for (i = 1; i <= MAX_DEPTH; i++)
			if (w->wr_depth[l][i] && (u64)i > d)
				d = (u64)i;
	return d;
}

static u64 sum_levels(const u64 *v)
{
	u64 s = 0;
	int l;

	for (l = 0; l < NR_LEVELS; l++)
		s += v[l];
	return s;
}

/* Events of a depth histogram at @depth, over all levels. */
static u64 at_depth(u64 (*h)[MAX_DEPTH + 1], int depth)
{
	u64 s = 0;
	int l;

	for (l = 0; l < NR_LEVELS; l++)
		s += h[l][depth];
	return s;
}

static void print_hist(const char *mode, const char *what,
		       u64 (*h)[MAX_DEPTH + 1], u64 *max_depth)
{
	u64 d[MAX_DEPTH + 1] = { 0 };
	int i;

	for (i = 1; i <= MAX_DEPTH; i++) {
		d[i] = at_depth(h, i);
		if (d[i])
			*max_depth = (u64)i;
	}
	ktap_print("%s: %s depth: 1: %" PRIu64 ", 2: %" PRIu64 ", 3: %"
		   PRIu64 ", 4: %" PRIu64 "%s", mode, what, d[1], d[2], d[3],
		   d[4], d[4] ? "" : " (depth 4 not reached)");
}

/* The names of the SEEN_* bits of @bits, for a message. */
static const char *seen_names(unsigned int bits, char *buf, size_t size)
{
	static const char * const names[] = {
		"nested writes", "depth 4", "slow path", "absolute stamps",
		"zero deltas", "refused reserves"
	};
	size_t off = 0;
	unsigned int i;

	buf[0] = 0;
	for (i = 0; i < ARRAY_SIZE(names); i++)
		if ((bits & (1U << i)) && off < size)
			off += (size_t)snprintf(buf + off, size - off, "%s%s",
						off ? ", " : "", names[i]);
	return buf;
}

/* Totals of one run over the CPUs. */
struct mode_totals {
	struct wstate agg;
	u64 read, lost, lost_unknown, waits;
	u64 dropped, overrun, commit_overrun, recursion;
	u64 slow, abs, zero, extend;
};

/* Account for one CPU after a run: print its counts, check them. */
static void check_cpu(const struct mode *m, int cpu, struct mode_totals *t,
		      struct mode_result *res)
{
	struct wstate *w = &wst[cpu];
	struct rstate *r = &rst[cpu];
	struct wstate *agg = &t->agg;
	struct rbn_cpu_stats st;
	u64 written = sum_levels(w->written);
	u64 refused = sum_levels(w->refused);
	u64 raced = sum_levels(w->refused_raced);
	u64 wflag[NR_FLAGS] = { 0 }, wzero, uniq;
	int l, i;

	memset(&st, 0, sizeof(st));
	rbn_cpu_stats(stress_buf, cpu, &st);
	for (l = 0; l < NR_LEVELS; l++) {
		agg->written[l] += w->written[l];
		agg->refused[l] += w->refused[l];
		agg->refused_nested[l] += w->refused_nested[l];
		agg->refused_raced[l] += w->refused_raced[l];
		agg->held[l] += w->held[l];
		agg->signals[l] += w->signals[l];
		agg->hit_reserve[l] += w->hit_reserve[l];
		agg->hit_window[l] += w->hit_window[l];
		for (i = 0; i <= MAX_DEPTH; i++) {
			agg->ctx_depth[l][i] += w->ctx_depth[l][i];
			agg->wr_depth[l][i] += w->wr_depth[l][i];
		}
		for (i = 0; i < NR_FLAGS; i++) {
			agg->flags[l][i] += w->flags[l][i];
			wflag[i] += w->flags[l][i];
		}
		if (l && !w->timer_ok[l])
			res->timers_ok = false;
	}
	wzero = wflag[3];
	if (w->timer_err) {
		ktap_print("%s: cpu%d: timer_create failed: %s", m->name, cpu,
			   strerror(w->timer_err));
		res->timers_ok = false;
		/* The system call is missing: CONFIG_POSIX_TIMERS=n. */
		if (w->timer_err == ENOSYS)
			res->no_timers = true;
	}
	uniq = popcount_bits(r->seen, r->seen_cap / 8 + 1);

	ktap_print("%s: cpu%d: written %" PRIu64 " (task %" PRIu64
		   ", softirq %" PRIu64 ", hardirq %" PRIu64 ", nmi %"
		   PRIu64 "), refused %" PRIu64 " (task %" PRIu64 ", softirq %"
		   PRIu64 ", hardirq %" PRIu64 ", nmi %" PRIu64 ")", m->name,
		   cpu, written, w->written[0], w->written[1], w->written[2],
		   w->written[3], refused, w->refused[0], w->refused[1],
		   w->refused[2], w->refused[3]);
	ktap_print("%s: cpu%d: read %" PRIu64 " (consume %" PRIu64
		   ", pages %" PRIu64 " in %" PRIu64 " pages), lost %"
		   PRIu64 ", pages with unknown loss %" PRIu64
		   ", zero-delta read %" PRIu64 " (%" PRIu64
		   " checked exact)", m->name, cpu, r->read,
		   r->read_consume, r->read_page, r->pages, r->lost,
		   r->lost_unknown, r->zero, r->zero_exact);
	ktap_print("%s: cpu%d: stats: written %" PRIu64 " read %" PRIu64
		   " entries %" PRIu64 " overrun %" PRIu64
		   " commit_overrun %" PRIu64 " dropped %" PRIu64
		   " recursion %" PRIu64 " pages_touched %" PRIu64,
		   m->name, cpu, st.written, st.read, st.entries,
		   st.overrun, st.commit_overrun, st.dropped,
		   st.recursion, st.pages_touched);
	ktap_print("%s: cpu%d: stats: ts_fast %" PRIu64 " ts_abs %"
		   PRIu64 " ts_slow %" PRIu64 " ts_zero %" PRIu64
		   " ts_extend %" PRIu64 " max_depth %" PRIu64,
		   m->name, cpu, st.ts_fast, st.ts_abs, st.ts_slow,
		   st.ts_zero, st.ts_extend, st.max_depth);
	for (i = 0; i < r->nr_msgs; i++)
		ktap_print("%s: %s", m->name, r->msgs[i]);

	if (r->err_intact || r->err_api)
		res->intact_ok = false;
	if (r->err_ts)
		res->ts_ok = false;
	if (r->err_intact + r->err_ts + r->err_api)
		ktap_print("%s: cpu%d: errors: intact %" PRIu64 ", ts %" PRIu64
			   ", api %" PRIu64, m->name, cpu, r->err_intact,
			   r->err_ts, r->err_api);

	/* Nothing is lost silently. */
	if (st.written != written || w->seq != written) {
		ktap_print("%s: cpu%d: committed %" PRIu64 ", stats.written %"
			   PRIu64 ", seq %" PRIu64, m->name, cpu, written,
			   st.written, w->seq);
		res->count_ok = false;
	}
	if (st.read != r->read || st.entries) {
		ktap_print("%s: cpu%d: read %" PRIu64 ", stats.read %" PRIu64
			   ", stats.entries %" PRIu64, m->name, cpu, r->read,
			   st.read, st.entries);
		res->count_ok = false;
	}
	if (uniq != r->read) {
		ktap_print("%s: cpu%d: %" PRIu64
			   " distinct sequence numbers in %" PRIu64
			   " events read", m->name, cpu, uniq, r->read);
		res->count_ok = false;
	}

	/*
	 * Every refused reserve is counted: dropped (buffer full, planned
	 * in pc-full only) or commit_overrun. The core, like the kernel,
	 * refuses a writer whose tail nested writers moved during its
	 * reserve, off the reader page (or around the whole ring) while
	 * the commit stays behind: then a nested writer wrote during that
	 * reserve. Nothing else refuses here.
	 */
	if (refused != st.dropped + st.commit_overrun || st.recursion) {
		ktap_print("%s: cpu%d: %" PRIu64
			   " reserves refused, stats: dropped %" PRIu64
			   " + commit_overrun %" PRIu64 ", recursion %" PRIu64,
			   m->name, cpu, refused, st.dropped,
			   st.commit_overrun, st.recursion);
		res->count_ok = false;
	}
	if (!m->drops && st.dropped) {
		ktap_print("%s: cpu%d: %" PRIu64
			   " reserves dropped where no drop is planned (%"
			   PRIu64 " refused inside another writer's write path)",
			   m->name, cpu, st.dropped,
			   sum_levels(w->refused_nested));
		res->count_ok = false;
	}
	if (st.commit_overrun > raced) {
		ktap_print("%s: cpu%d: commit_overrun %" PRIu64 ", but %" PRIu64
			   " refused reserves had nested writers writing during them",
			   m->name, cpu, st.commit_overrun, raced);
		res->count_ok = false;
	}

	/* The counters of the core agree with what writers saw. */
	if (st.ts_zero != wzero || st.ts_slow != wflag[2] ||
	    st.ts_abs != wflag[1] || st.ts_extend != wflag[4] ||
	    (written && !st.max_depth) || st.max_depth > MAX_DEPTH) {
		ktap_print("%s: cpu%d: stats ts_abs/ts_slow/ts_zero/ts_extend/max_depth %"
			   PRIu64 "/%" PRIu64 "/%" PRIu64 "/%" PRIu64 "/%"
			   PRIu64 ", writers saw %" PRIu64 "/%" PRIu64 "/%"
			   PRIu64 "/%" PRIu64 "/%" PRIu64,
			   m->name, cpu, st.ts_abs, st.ts_slow, st.ts_zero,
			   st.ts_extend, st.max_depth, wflag[1], wflag[2],
			   wzero, wflag[4], w_max_depth(w));
		res->stats_ok = false;
	}

	if (!m->overwrite) {
		if (r->read != written || r->lost || r->lost_unknown ||
		    st.overrun || (written && r->seq_max + 1 != written)) {
			ktap_print("%s: cpu%d: written %" PRIu64 " != read %"
				   PRIu64 " (lost %" PRIu64 ", overrun %" PRIu64
				   ")", m->name, cpu, written, r->read, r->lost,
				   st.overrun);
			res->count_ok = false;
		}
		if (r->zero != wzero) {
			ktap_print("%s: cpu%d: zero-delta read %" PRIu64
				   ", written %" PRIu64, m->name, cpu, r->zero,
				   wzero);
			res->count_ok = false;
		}
	} else {
		if (written != r->read + st.overrun) {
			ktap_print("%s: cpu%d: written %" PRIu64 " != read %"
				   PRIu64 " + overrun %" PRIu64, m->name, cpu,
				   written, r->read, st.overrun);
			res->count_ok = false;
		}
		/*
		 * The reader saw every loss with its count, except on pages
		 * without room for the count: each of those hides one or
		 * more.
		 */
		if (r->lost_unknown ?
		    r->lost + r->lost_unknown > st.overrun :
		    r->lost != st.overrun) {
			ktap_print("%s: cpu%d: overrun %" PRIu64
				   ", lost as the reader saw it %" PRIu64
				   " (and %" PRIu64 " pages without a count)",
				   m->name, cpu, st.overrun, r->lost,
				   r->lost_unknown);
			res->count_ok = false;
		}
	}

	if (st.max_depth > res->core_max_depth)
		res->core_max_depth = st.max_depth;
	res->events += written;
	t->read += r->read;
	t->lost += r->lost;
	t->lost_unknown += r->lost_unknown;
	t->waits += r->waits;
	t->dropped += st.dropped;
	t->overrun += st.overrun;
	t->commit_overrun += st.commit_overrun;
	t->recursion += st.recursion;
	t->slow += st.ts_slow;
	t->abs += st.ts_abs;
	t->zero += st.ts_zero;
	t->extend += st.ts_extend;
}

/* After a run: what was checked, with counts, and the run's verdicts. */
static void report_mode(const struct mode *m, struct mode_totals *t,
			struct mode_result *res)
{
	struct wstate *agg = &t->agg;
	u64 nested = 0, refused = sum_levels(agg->refused);
	u64 hits = sum_levels(agg->hit_reserve) + sum_levels(agg->hit_window);
	int l, i;

	for (i = 2; i <= MAX_DEPTH; i++)
		nested += at_depth(agg->wr_depth, i);

	ktap_print("%s: totals: written %" PRIu64 ", read %" PRIu64 ", lost %"
		   PRIu64 " (+ %" PRIu64 " pages without a count), dropped %"
		   PRIu64 ", overrun %" PRIu64 ", commit_overrun %" PRIu64
		   ", recursion %" PRIu64, m->name, res->events, t->read,
		   t->lost, t->lost_unknown, t->dropped, t->overrun,
		   t->commit_overrun, t->recursion);
	ktap_print("%s: refused reserves: %" PRIu64 " (task %" PRIu64
		   ", softirq %" PRIu64 ", hardirq %" PRIu64 ", nmi %" PRIu64
		   "; %" PRIu64 " inside another writer's write path, %" PRIu64
		   " while nested writers wrote); dropped %" PRIu64
		   " (%s), commit_overrun %" PRIu64, m->name, refused,
		   agg->refused[0], agg->refused[1], agg->refused[2],
		   agg->refused[3], sum_levels(agg->refused_nested),
		   sum_levels(agg->refused_raced), t->dropped,
		   m->drops ? "planned" : "none planned",
		   t->commit_overrun);
	if (m->hold)
		ktap_print("%s: writers held back with the buffer filling: task %"
			   PRIu64 " times, handlers %" PRIu64 " times",
			   m->name, agg->held[0],
			   sum_levels(agg->held) - agg->held[0]);
	if (m->drops)
		ktap_print("%s: the reader waited for a drop %" PRIu64
			   " times", m->name, t->waits);
	ktap_print("%s: write path: ts_slow %" PRIu64 ", ts_abs %" PRIu64
		   ", ts_zero %" PRIu64 ", ts_extend %" PRIu64, m->name,
		   t->slow, t->abs, t->zero, t->extend);
	ktap_print("%s: written per level: task %" PRIu64 ", softirq %" PRIu64
		   ", hardirq %" PRIu64 ", nmi %" PRIu64, m->name,
		   agg->written[0], agg->written[1], agg->written[2],
		   agg->written[3]);
	print_hist(m->name, "context", agg->ctx_depth, &res->max_ctx_depth);
	print_hist(m->name, "write nesting", agg->wr_depth,
		   &res->max_wr_depth);
	ktap_print("%s: signals: softirq %" PRIu64 ", hardirq %" PRIu64
		   ", nmi %" PRIu64 "; handlers that interrupted rbn_reserve() %"
		   PRIu64 ", between reserve and commit %" PRIu64, m->name,
		   agg->signals[1], agg->signals[2], agg->signals[3],
		   sum_levels(agg->hit_reserve), sum_levels(agg->hit_window));
	for (l = 0; l < NR_LEVELS; l++)
		ktap_print("%s: flags at %s: %s %" PRIu64 ", %s %" PRIu64
			   ", %s %" PRIu64 ", %s %" PRIu64 ", %s %" PRIu64
			   ", %s %" PRIu64, m->name, level_name[l],
			   flag_name[0], agg->flags[l][0],
			   flag_name[1], agg->flags[l][1],
			   flag_name[2], agg->flags[l][2],
			   flag_name[3], agg->flags[l][3],
			   flag_name[4], agg->flags[l][4],
			   flag_name[5], agg->flags[l][5]);

	/* Counts of the run as a whole. */
	if (m->drops && !t->dropped) {
		ktap_print("%s: drops planned, none happened", m->name);
		res->count_ok = false;
	}
	if (m->overwrite && !t->overrun) {
		ktap_print("%s: the ring was never overwritten", m->name);
		res->count_ok = false;
	}

	/* Timers: created for every level, and every level fired. */
	for (l = 1; l < NR_LEVELS; l++)
		if (!agg->signals[l]) {
			ktap_print("%s: no %s signal was handled", m->name,
				   level_name[l]);
			res->timers_ok = false;
		}

	/* Writers interrupted inside the write path, as the core saw it. */
	ktap_print("%s: checked: %" PRIu64
		   " events nested inside a write path (depth 2: %" PRIu64
		   ", 3: %" PRIu64 ", 4: %" PRIu64 "), %" PRIu64
		   " handlers inside a writer, core: slow path %" PRIu64
		   ", absolute %" PRIu64 ", zero delta %" PRIu64
		   ", max_depth %" PRIu64, m->name, nested,
		   at_depth(agg->wr_depth, 2), at_depth(agg->wr_depth, 3),
		   at_depth(agg->wr_depth, 4), hits, t->slow, t->abs, t->zero,
		   res->core_max_depth);
	res->nest_ok = nested && hits && t->slow && t->abs && t->zero;
	if (!res->nest_ok)
		ktap_print("%s: not interrupted in every way: nested events %"
			   PRIu64 ", handlers inside a writer %" PRIu64
			   ", slow path %" PRIu64 ", absolute %" PRIu64
			   ", zero delta %" PRIu64 " (each must be > 0)",
			   m->name, nested, hits, t->slow, t->abs, t->zero);
	res->depth4_ok = at_depth(agg->wr_depth, MAX_DEPTH) &&
			 res->core_max_depth == MAX_DEPTH;
	if (!res->depth4_ok)
		ktap_print("%s: depth 4 not reached inside the write path in %.2f s and %"
			   PRIu64 " events (deepest %" PRIu64
			   ", core max_depth %" PRIu64
			   "); RBN_STRESS_SECONDS gives more time",
			   m->name, res->seconds, res->events,
			   res->max_wr_depth, res->core_max_depth);
	ktap_print("%s: %" PRIu64 " events in %.2f s: %.0f events/s", m->name,
		   res->events, res->seconds,
		   res->seconds > 0 ? (double)res->events / res->seconds : 0.0);
}

/*
 * Run the writers and the reader until every CPU wrote its share of the
 * events and the run saw what it must see (@need, SEEN_*), or until the
 * time cap.
 */
static void run_threads(const struct mode *m, unsigned int need,
			struct mode_result *res)
{
	pthread_t reader;
	u64 t0, t1, t_target = 0;
	unsigned int seen = 0, seen_at_target = 0;
	const char *why = NULL;
	char names[128];
	int cpu, l;

	__atomic_store_n(&mode_stop, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&readers_stop, 0, __ATOMIC_RELEASE);
	pthread_barrier_init(&start_barrier, NULL, (unsigned int)nr_cpus + 1);
	if (pthread_create(&reader, NULL, reader_thread, NULL))
		abort();
	for (cpu = 0; cpu < nr_cpus; cpu++)
		if (pthread_create(&wst[cpu].thread, NULL, writer_thread,
				   &wst[cpu]))
			abort();
	pthread_barrier_wait(&start_barrier);
	t0 = stress_clock();
	/* Without every timer, nesting cannot be waited for. */
	for (cpu = 0; cpu < nr_cpus; cpu++)
		for (l = 1; l < NR_LEVELS; l++)
			if (!wst[cpu].timer_ok[l])
				need &= ~SEEN_NESTING;

	/* Poll the statistics while everything runs. */
	for (;;) {
		struct timespec nap = { 0, 5 * 1000 * 1000 };
		struct rbn_cpu_stats st;
		bool all_done = true, all_target = true;
		u64 core_depth = 0;

		seen = 0;
		for (cpu = 0; cpu < nr_cpus; cpu++) {
			struct wstate *w = &wst[cpu];

			rbn_cpu_stats(stress_buf, cpu, &st);
			if (st.max_depth > core_depth)
				core_depth = st.max_depth;
			if (!__atomic_load_n(&w->done, __ATOMIC_ACQUIRE))
				all_done = false;
			if (__atomic_load_n(&w->seq, __ATOMIC_RELAXED) <
			    w->target)
				all_target = false;
			seen |= __atomic_load_n(&w->seen, __ATOMIC_RELAXED);
		}
		if (core_depth < MAX_DEPTH)
			seen &= ~SEEN_DEPTH4;
		if (stress_clock() > deadline_ns) {
			why = "stopped by the time cap";
			break;
		}
		if (all_done) {
			why = "every writer reached its event limit";
			break;
		}
		if (all_target) {
			if (!t_target) {
				t_target = stress_clock();
				seen_at_target = seen;
			}
			if ((seen & need) == need)
				break;
		}
		nanosleep(&nap, NULL);
	}
	__atomic_store_n(&mode_stop, 1, __ATOMIC_RELEASE);
	for (cpu = 0; cpu < nr_cpus; cpu++)
		pthread_join(wst[cpu].thread, NULL);
	t1 = stress_clock();
	__atomic_store_n(&readers_stop, 1, __ATOMIC_RELEASE);
	pthread_join(reader, NULL);
	pthread_barrier_destroy(&start_barrier);

	res->seconds = (double)(t1 - t0) / 1e9;
	if (t_target && (seen_at_target & need) != need)
		ktap_print("%s: went on for %.2f s past its share of the events, for %s",
			   m->name, (double)(t1 - t_target) / 1e9,
			   seen_names(need & ~seen_at_target, names,
				      sizeof(names)));
	if (why)
		ktap_print("%s: %s after %.2f s%s%s", m->name, why,
			   res->seconds, (seen & need) != need ?
			   "; not seen: " : "",
			   (seen & need) != need ?
			   seen_names(need & ~seen, names, sizeof(names)) : "");
}

static bool run_mode(const struct mode *m, u64 events, double seconds,
		     struct mode_result *res)
{
	struct rbn_config cfg = {
		.size = m->size,
		.overwrite = m->overwrite,
		.clock = stress_clock,
		.nr_cpus = nr_cpus,
	};
	struct mode_totals *t;
	u64 per_cpu = events / (u64)nr_cpus;
	unsigned int need;
	int cpu, l;

	memset(res, 0, sizeof(*res));
	res->intact_ok = true;
	res->ts_ok = true;
	res->count_ok = true;
	res->stats_ok = true;
	res->timers_ok = true;
	stress_buf = rbn_alloc(&cfg);
	if (IS_ERR_OR_NULL(stress_buf)) {
		ktap_print("%s: rbn_alloc: %ld", m->name,
			   stress_buf ? PTR_ERR(stress_buf) : 0L);
		stress_buf = NULL;
		return false;
	}
	subbuf_size = rbn_subbuf_size(stress_buf);
	cur_mode = m;

	wst = aligned_alloc(64, sizeof(*wst) * (size_t)nr_cpus);
	rst = calloc((size_t)nr_cpus, sizeof(*rst));
	t = aligned_alloc(64, sizeof(*t));
	if (!wst || !rst || !t)
		abort();
	memset(wst, 0, sizeof(*wst) * (size_t)nr_cpus);
	memset(t, 0, sizeof(*t));
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		struct wstate *w = &wst[cpu];
		struct rstate *r = &rst[cpu];

		w->cpu = cpu;
		w->target = per_cpu ? per_cpu : 1;
		w->seq_limit = w->target + EXTEND_EVENTS;
		if (w->seq_limit > SEQ_LIMIT_MAX)
			w->seq_limit = SEQ_LIMIT_MAX;
		for (l = 0; l < NR_LEVELS; l++)
			w->rng[l] = 0x9e3779b97f4a7c15ULL * (u64)(cpu * 8 + l + 1);
		r->rng = 0xd1b54a32d192ed03ULL * (u64)(cpu + 1);
		r->seen_cap = w->seq_limit + 65536;
		r->seen = calloc(r->seen_cap / 8 + 1, 1);
		r->page = rbn_alloc_read_page(stress_buf, cpu);
		if (!r->seen || IS_ERR_OR_NULL(r->page))
			abort();
	}

	need = m->drops ? SEEN_REFUSED : 0;
	if (!sigaction_err)
		need |= SEEN_NESTING;
	deadline_ns = stress_clock() + (u64)(seconds * 1e9);
	run_threads(m, need, res);

	for (cpu = 0; cpu < nr_cpus; cpu++) {
		check_cpu(m, cpu, t, res);
		rbn_free_read_page(stress_buf, cpu, rst[cpu].page);
		free(rst[cpu].seen);
	}
	report_mode(m, t, res);

	free(t);
	free(wst);
	free(rst);
	wst = NULL;
	rst = NULL;
	rbn_free(stress_buf);
	stress_buf = NULL;
	return true;
}

static u64 env_u64(const char *name, u64 def)
{
	const char *s = getenv(name);
	char *end;
	unsigned long long v;

	if (!s || !*s)
		return def;
	v = strtoull(s, &end, 0);
	if (*end && *end != 'e' && *end != 'E')
		return def;
	if (*end)	/* 1e7 */
		return (u64)strtod(s, NULL);
	return v;
}

static double env_double(const char *name, double def)
{
	const char *s = getenv(name);

	if (!s || !*s)
		return def;
	return strtod(s, NULL);
}

int main(void)
{
	struct mode_result res[NR_MODES];
	struct sigaction sa;
	sigset_t set;
	u64 events = env_u64("RBN_STRESS_EVENTS", DEFAULT_EVENTS);
	double seconds = env_double("RBN_STRESS_SECONDS", DEFAULT_SECONDS);
	u64 total = 0, max_ctx = 0, max_wr = 0, core_depth = 0, t_start;
	unsigned int shares = 0, shares_left;
	bool timers_ok = true, no_timers = false;
	double secs = 0;
	int l, i;

	nr_cpus = (int)env_u64("RBN_STRESS_CPUS", DEFAULT_CPUS);
	if (nr_cpus < 1 || nr_cpus > RBN_NR_CPUS_MAX)
		nr_cpus = DEFAULT_CPUS;
	if (rbn_user_nr_cpus < nr_cpus)
		rbn_user_nr_cpus = nr_cpus;
	if (seconds <= 0)
		seconds = DEFAULT_SECONDS;
	if (events > MAX_EVENTS)
		events = MAX_EVENTS;
	for (i = 0; i < NR_MODES; i++)
		shares += modes[i].share;
	shares_left = shares;

	ktap_start(NR_MODES * 6 + 2);
	ktap_print("%d CPUs, %" PRIu64 " events at least, at most %.0f s%s",
		   nr_cpus, events, seconds, DEFERRED_SIGNALS ?
		   "; handlers open the levels above their own (TSan)" : "");

	sig_base = SIGRTMIN;
	stress_sigset(&set);
	/* Only the writer threads take the timer signals. */
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	for (l = 1; l < NR_LEVELS; l++) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = stress_handler;
		sa.sa_flags = SA_SIGINFO | SA_RESTART;
		sigemptyset(&sa.sa_mask);
		for (i = 1; i <= l; i++)
			sigaddset(&sa.sa_mask, sig_base + i - 1);
		if (sigaction(sig_base + l - 1, &sa, NULL)) {
			ktap_print("sigaction(SIGRTMIN + %d): %s", l - 1,
				   strerror(errno));
			sigaction_err = errno;
		}
	}

	t_start = stress_clock();
	for (i = 0; i < NR_MODES; i++) {
		const struct mode *m = &modes[i];
		double left = seconds - (double)(stress_clock() - t_start) / 1e9;
		bool ok;
		char name[96];

		/* A run that ended early leaves its time to the next ones. */
		if (left < 0)
			left = 0;
		ok = run_mode(m, events * m->share / shares,
			      left * m->share / shares_left, &res[i]);
		shares_left -= m->share;

		snprintf(name, sizeof(name), "%s: events intact", m->name);
		ktap_result(ok && res[i].intact_ok, name);
		snprintf(name, sizeof(name), "%s: time stamps exact and monotonic",
			 m->name);
		ktap_result(ok && res[i].ts_ok, name);
		snprintf(name, sizeof(name), "%s: %s", m->name, m->count_case);
		ktap_result(ok && res[i].count_ok, name);
		snprintf(name, sizeof(name), "%s: stats agree with the writers",
			 m->name);
		ktap_result(ok && res[i].stats_ok, name);
		snprintf(name, sizeof(name),
			 "%s: writers interrupted inside the write path",
			 m->name);
		if (res[i].no_timers)
			ktap_skip(name, "no POSIX timers in this kernel");
		else
			ktap_result(ok && res[i].nest_ok, name);
		snprintf(name, sizeof(name),
			 "%s: writers nested four deep inside the write path",
			 m->name);
		if (res[i].no_timers)
			ktap_skip(name, "no POSIX timers in this kernel");
		else
			ktap_result(ok && res[i].depth4_ok, name);

		total += res[i].events;
		secs += res[i].seconds;
		if (!ok || !res[i].timers_ok)
			timers_ok = false;
		if (res[i].no_timers)
			no_timers = true;
		if (res[i].max_ctx_depth > max_ctx)
			max_ctx = res[i].max_ctx_depth;
		if (res[i].max_wr_depth > max_wr)
			max_wr = res[i].max_wr_depth;
		if (res[i].core_max_depth > core_depth)
			core_depth = res[i].core_max_depth;
	}

	ktap_print("deepest nesting: context %" PRIu64 ", inside the write path %"
		   PRIu64 ", core max_depth %" PRIu64, max_ctx, max_wr,
		   core_depth);
	if (sigaction_err)
		timers_ok = false;
	if (no_timers)
		ktap_skip("timer signals at every level",
			  "no POSIX timers in this kernel (timer_create: ENOSYS)");
	else
		ktap_result(timers_ok, "timer signals at every level");

	ktap_print("core warnings: %lu", rbn_user_warnings);
	ktap_result(rbn_user_warnings == 0, "no core warnings");
	ktap_print("total: %" PRIu64 " events in %.2f s", total, secs);
	ktap_print("rate: %.0f events/s", secs > 0 ? (double)total / secs : 0.0);
	return ktap_finish();
}
