// SPDX-License-Identifier: GPL-2.0
/*
 * rbgen - write rbnest recordings from the userspace build of the core,
 * for the tests of tools/rbtrace.
 *
 * Usage: rbgen MODE DIR [OUTER]
 *
 *   nest       2 CPUs, producer/consumer mode, nested writers (softirq,
 *              hardirq, NMI) injected from the test hook at every label
 *              of the write path, clock jumps of 2^27 ns and more
 *   clockback  the same with a clock that steps back now and then (1 us,
 *              2^27 ns): events stored at the time before them, flagged
 *   nest59     the same with a clock that crosses 2^59 (absolute stamps
 *              need their carry)
 *   overwrite  2 CPUs, overwrite mode on a small ring read now and then:
 *              pages with missed-events counts
 *   discard    nest, and one write in five (outer or nested) discards its
 *              event instead of committing it: it takes no sequence
 *              number, and rbtrace check must find nothing missing
 *   absolute   discard, in absolute time-stamp mode
 *   signals    2 CPUs, task-context writes interrupted by three POSIX
 *              timers (SIGRTMIN+0..2 as softirq, hardirq, NMI) whose
 *              handlers nest and write, for half a second
 *
 * OUTER, for the modes with a fixed number of task-context writes (all
 * but signals), is that number instead of the mode's own (nest: 6000,
 * about 2.2 MB of pages; the size grows with it): a large recording for
 * the benchmark and the memory bound of rbtrace.
 *
 * DIR gets the format files and cpuN.raw, the pages rbn_read_page()
 * returned, one after the other, and a manifest as "rbtrace record"
 * writes one (tools/rbtrace/manifest.c): the CPU files' sizes, the
 * missed-events counts of their pages, and each CPU's rbn_cpu_stats()
 * before the first write and after the last read. What was written is
 * printed on stdout ("written: N" per CPU, "lost: N" in overwrite mode,
 * "discarded: N").
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "rb_core.h"
#include "rbn_events.h"

#define GEN_CPUS	2
#define GEN_MAX_DEPTH	4

struct gen {
	struct rbn_buffer *b;
	const char *dir;
	FILE *raw[GEN_CPUS];
	void *page[GEN_CPUS];
	unsigned long long seq[GEN_CPUS];
	unsigned long written[GEN_CPUS];
	unsigned long discarded[GEN_CPUS];
	unsigned int discard_rate;
	unsigned long pages[GEN_CPUS];
	unsigned long long missed[GEN_CPUS];	/* stored counts of the pages */
	unsigned long refused;
	unsigned long nested;
	unsigned long at_label[RBN_NR_LABELS];
	int depth;
	unsigned int rate;
	unsigned int rng;
};

static struct gen gen;

static u64 clk_now, clk_reads;
static unsigned int clk_jump_every, clk_back_every;
static u64 clk_jump;

/* Signal handlers read the clock too: every update is one atomic add. */
static u64 gen_clock(void)
{
	u64 reads = __atomic_add_fetch(&clk_reads, 1, __ATOMIC_RELAXED);
	u64 step = 97;

	if (clk_jump_every && !(reads % clk_jump_every))
		step += clk_jump + (reads % 3) * (1ULL << 32);
	if (clk_back_every && !(reads % clk_back_every))
		return __atomic_sub_fetch(&clk_now, reads % 2 ? 1000 :
					  (1ULL << 27), __ATOMIC_RELAXED);
	return __atomic_add_fetch(&clk_now, step, __ATOMIC_RELAXED);
}

static unsigned int gen_rand(void)
{
	gen.rng = gen.rng * 1103515245 + 12345;
	return gen.rng >> 8;
}

static const unsigned char ctx_flags[] = {
	[RBN_CTX_TASK] = 0,
	[RBN_CTX_SOFTIRQ] = RBN_FLAG_SOFTIRQ,
	[RBN_CTX_HARDIRQ] = RBN_FLAG_HARDIRQ | RBN_FLAG_IRQS_OFF,
	[RBN_CTX_NMI] = RBN_FLAG_NMI | RBN_FLAG_IRQS_OFF,
};

static void gen_write(void)
{
	int cpu = rbn_user_cpu, ctx = rbn_user_context;
	struct rbn_sample *s;
	struct rbn_event *ev;

	gen.depth++;
	ev = rbn_reserve(gen.b, sizeof(*s));
	if (ev && gen.discard_rate && !(gen_rand() % gen.discard_rate)) {
		/* filled, then discarded: no sequence number taken */
		s = rbn_event_data(ev);
		memset(s, 0xa5, sizeof(*s));
		rbn_discard(gen.b, ev);
		__atomic_add_fetch(&gen.discarded[cpu], 1, __ATOMIC_RELAXED);
	} else if (ev) {
		s = rbn_event_data(ev);
		memset(s, 0, sizeof(*s));
		s->common_type = RBN_EVENT_SAMPLE_ID;
		s->common_flags = ctx_flags[ctx];
		s->common_preempt_count = ctx ? 1 << (ctx - 1) : 0;
		s->common_pid = ctx ? 0 : 100 + cpu;
		/* the sequence number is taken after the reserve */
		s->seq = __atomic_fetch_add(&gen.seq[cpu], 1,
					    __ATOMIC_RELAXED);
		s->ts = rbn_event_ts(gen.b, ev);
		s->cpu = cpu;
		s->context = ctx;
		s->depth = gen.depth;
		s->source = RBN_SRC_TEST;
		s->flags = rbn_event_flags(gen.b, ev);
		s->arg = clk_reads;
		rbn_commit(gen.b, ev);
		__atomic_add_fetch(&gen.written[cpu], 1, __ATOMIC_RELAXED);
	} else {
		__atomic_add_fetch(&gen.refused, 1, __ATOMIC_RELAXED);
	}
	gen.depth--;
}

/* An interrupt one context level up, at a label of the write path. */
static void gen_hook(struct rbn_buffer *buffer, int cpu, int label, void *arg)
{
	int saved = rbn_user_context;

	(void)buffer;
	(void)cpu;
	(void)arg;
	if (!gen.depth || saved >= RBN_CTX_NMI || gen.depth >= GEN_MAX_DEPTH)
		return;
	if (gen_rand() % gen.rate)
		return;
	gen.nested++;
	gen.at_label[label]++;
	rbn_user_context = saved + 1;
	gen_write();
	rbn_user_context = saved;
}

/* SIGRTMIN + level - 1: an interrupt of that context level writes. */
static void gen_signal(int sig)
{
	int saved = rbn_user_context, level = sig - SIGRTMIN + 1;

	if (level <= saved)
		return;
	rbn_user_context = level;
	gen_write();
	if (level == RBN_CTX_SOFTIRQ && !(gen_rand() & 3))
		gen_write();
	rbn_user_context = saved;
}

static timer_t gen_timers[3];

/* Three timers whose handlers nest: each blocks itself and lower levels. */
static void start_signals(void)
{
	int level;

	for (level = 1; level <= 3; level++) {
		struct sigaction sa = { .sa_handler = gen_signal,
					.sa_flags = SA_RESTART };
		struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL };
		struct itimerspec its = { 0 };
		int l;

		sigemptyset(&sa.sa_mask);
		for (l = 1; l <= level; l++)
			sigaddset(&sa.sa_mask, SIGRTMIN + l - 1);
		sev.sigev_signo = SIGRTMIN + level - 1;
		its.it_interval.tv_nsec = 23000 + 7000 * level;
		its.it_value.tv_nsec = its.it_interval.tv_nsec;
		if (sigaction(sev.sigev_signo, &sa, NULL) ||
		    timer_create(CLOCK_MONOTONIC, &sev, &gen_timers[level - 1]) ||
		    timer_settime(gen_timers[level - 1], 0, &its, NULL)) {
			perror("rbgen: timers");
			exit(1);
		}
	}
}

static void stop_signals(void)
{
	int i;

	for (i = 0; i < 3; i++)
		timer_delete(gen_timers[i]);
}

static double now_sec(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* The missed-events count the page just read stores, as record counts. */
static void gen_count_missed(int cpu)
{
	struct rbn_page *pg = gen.page[cpu];
	unsigned long long cw = (unsigned long long)local_read(&pg->commit);
	unsigned long long commit = cw & ~(unsigned long long)RBN_MISSED_FLAGS;
	unsigned long long n;

	if ((cw & RBN_MISSED_FLAGS) != RBN_MISSED_FLAGS)
		return;
	memcpy(&n, pg->data + commit, sizeof(n));
	gen.missed[cpu] += n;
}

/* "rbtrace record"'s manifest (tools/rbtrace/manifest.c), in two parts. */
static void gen_stats(FILE *f, const char *when, int cpu)
{
	struct rbn_cpu_stats st;

	rbn_cpu_stats(gen.b, cpu, &st);
	fprintf(f, "%s.stats.cpu%d: entries=%llu written=%llu overrun=%llu commit_overrun=%llu dropped=%llu read=%llu discarded=%llu\n",
		when, cpu, (unsigned long long)st.entries,
		(unsigned long long)st.written, (unsigned long long)st.overrun,
		(unsigned long long)st.commit_overrun,
		(unsigned long long)st.dropped, (unsigned long long)st.read,
		(unsigned long long)st.discarded);
}

static void gen_manifest(const char *mode, bool end)
{
	unsigned int size = rbn_subbuf_size(gen.b);
	char path[4096];
	FILE *f;
	int cpu;

	snprintf(path, sizeof(path), "%s/manifest", gen.dir);
	f = fopen(path, end ? "a" : "w");
	if (!f) {
		fprintf(stderr, "rbgen: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	if (!end) {
		fprintf(f, "rbtrace-manifest: 1\nrbtrace: rbgen\n");
		fprintf(f, "module: rbgen %s\nkernel: userspace core\n", mode);
		fprintf(f, "tracing_on: 1\nsources: test\n");
		fprintf(f, "subbuf_size: %u\ncpus:", size);
		for (cpu = 0; cpu < GEN_CPUS; cpu++)
			fprintf(f, " %d", cpu);
		fprintf(f, "\nstart: 0.000000000\n");
		for (cpu = 0; cpu < GEN_CPUS; cpu++)
			gen_stats(f, "start", cpu);
	} else {
		fprintf(f, "stopped: end-of-data\n");
		for (cpu = 0; cpu < GEN_CPUS; cpu++)
			fprintf(f, "cpu%d.pages: %lu\ncpu%d.bytes: %llu\ncpu%d.lost: %llu\n",
				cpu, gen.pages[cpu], cpu,
				(unsigned long long)gen.pages[cpu] * size, cpu,
				gen.missed[cpu]);
		for (cpu = 0; cpu < GEN_CPUS; cpu++)
			gen_stats(f, "end", cpu);
		fprintf(f, "end: 0.000000000\n");
	}
	if (fclose(f)) {
		fprintf(stderr, "rbgen: %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

static void drain(void)
{
	unsigned int size = rbn_subbuf_size(gen.b);
	int cpu, ret;

	for (cpu = 0; cpu < GEN_CPUS; cpu++) {
		for (;;) {
			ret = rbn_read_page(gen.b, cpu, &gen.page[cpu], size,
					    false);
			if (ret == -EAGAIN)
				break;
			if (ret < 0) {
				fprintf(stderr, "rbgen: rbn_read_page: %d\n",
					ret);
				exit(1);
			}
			if (fwrite(gen.page[cpu], size, 1, gen.raw[cpu]) != 1) {
				perror("rbgen: write");
				exit(1);
			}
			gen.pages[cpu]++;
			gen_count_missed(cpu);
		}
	}
}

static void write_text(const char *name, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", gen.dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f)) {
		fprintf(stderr, "rbgen: %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

static void make_dir(const char *sub)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s%s%s", gen.dir, *sub ? "/" : "", sub);
	if (mkdir(path, 0755) && errno != EEXIST) {
		fprintf(stderr, "rbgen: %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	struct rbn_config cfg = {
		.order = 0,
		.clock = gen_clock,
		.nr_cpus = GEN_CPUS,
	};
	unsigned int outer, drain_every;
	struct rbn_cpu_stats st;
	char text[512], path[4096];
	unsigned int i;
	int cpu;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: rbgen nest|nest59|clockback|discard|absolute|overwrite|signals DIR [OUTER]\n");
		return 2;
	}
	gen.dir = argv[2];
	gen.rng = 1;
	clk_now = 1000000000ULL;
	if (!strcmp(argv[1], "nest") || !strcmp(argv[1], "nest59") ||
	    !strcmp(argv[1], "clockback") || !strcmp(argv[1], "discard") ||
	    !strcmp(argv[1], "absolute")) {
		cfg.size = 64 * PAGE_SIZE;
		outer = 6000;
		drain_every = 300;
		gen.rate = 20;
		clk_jump_every = 11;
		clk_jump = (1ULL << 27) + 4321;
		if (!strcmp(argv[1], "nest59"))
			clk_now = (1ULL << 59) - (1ULL << 40);
		if (!strcmp(argv[1], "clockback"))
			clk_back_every = 37;
		if (!strcmp(argv[1], "discard") ||
		    !strcmp(argv[1], "absolute"))
			gen.discard_rate = 5;
		cfg.abs_ts = !strcmp(argv[1], "absolute");
	} else if (!strcmp(argv[1], "overwrite")) {
		cfg.size = 4 * PAGE_SIZE;
		cfg.overwrite = true;
		outer = 8000;
		drain_every = 1500;
		gen.rate = 10;
		clk_jump_every = 101;
		clk_jump = 1ULL << 27;
	} else if (!strcmp(argv[1], "signals")) {
		cfg.size = 256 * PAGE_SIZE;
		outer = 0;
		drain_every = 2000;
		gen.rate = 0;
		clk_jump_every = 997;
		clk_jump = 1ULL << 27;
	} else {
		fprintf(stderr, "rbgen: unknown mode '%s'\n", argv[1]);
		return 2;
	}

	if (argc == 4) {
		char *end;

		if (!outer) {
			fprintf(stderr, "rbgen: %s takes no OUTER\n", argv[1]);
			return 2;
		}
		outer = strtoul(argv[3], &end, 10);
		if (*end || !outer || end == argv[3]) {
			fprintf(stderr, "rbgen: bad OUTER '%s'\n", argv[3]);
			return 2;
		}
	}
	gen.b = rbn_alloc(&cfg);
	if (!gen.b) {
		fprintf(stderr, "rbgen: rbn_alloc failed\n");
		return 1;
	}
	make_dir("");
	make_dir("events");
	make_dir("events/rbnest");
	make_dir("events/rbnest/sample");
	snprintf(text, sizeof(text), RBN_HEADER_PAGE_FMT,
		 (unsigned int)offsetof(struct rbn_page, time_stamp),
		 (unsigned int)sizeof(((struct rbn_page *)0)->time_stamp), 0U,
		 (unsigned int)offsetof(struct rbn_page, commit),
		 (unsigned int)sizeof(((struct rbn_page *)0)->commit), 1U,
		 (unsigned int)offsetof(struct rbn_page, commit), 1U, 1U,
		 (unsigned int)offsetof(struct rbn_page, data),
		 rbn_subbuf_size(gen.b) - (unsigned int)RBN_PAGE_HDR_SIZE,
		 (unsigned int)((char)-1 < 0));
	write_text("header_page", text);
	write_text("header_event", RBN_HEADER_EVENT);
	write_text("events/rbnest/sample/format", RBN_SAMPLE_FORMAT);
	write_text("trace_clock", "[local] global\n");
	for (cpu = 0; cpu < GEN_CPUS; cpu++) {
		snprintf(path, sizeof(path), "%s/cpu%d.raw", gen.dir, cpu);
		gen.raw[cpu] = fopen(path, "w");
		gen.page[cpu] = rbn_alloc_read_page(gen.b, cpu);
		if (!gen.raw[cpu] || !gen.page[cpu]) {
			fprintf(stderr, "rbgen: %s: cannot open\n", path);
			return 1;
		}
	}

	gen_manifest(argv[1], false);
	if (!outer) {
		/* signals: no hook, the nesting is asynchronous */
		double end = now_sec() + 0.5;
		volatile unsigned int spin;

		start_signals();
		for (i = 0; now_sec() < end; i++) {
			rbn_user_cpu = (gen_rand() >> 4) % GEN_CPUS;
			rbn_user_context = RBN_CTX_TASK;
			gen_write();
			for (spin = 0; spin < 2000; spin++)
				;
			if (!((i + 1) % drain_every))
				drain();
		}
		stop_signals();
	}
	rbn_test_set_hook(outer ? gen_hook : NULL, NULL);
	for (i = 0; i < outer; i++) {
		rbn_user_cpu = (gen_rand() >> 4) % GEN_CPUS;
		rbn_user_context = RBN_CTX_TASK;
		gen_write();
		if (!((i + 1) % drain_every)) {
			rbn_test_set_hook(NULL, NULL);
			drain();
			rbn_test_set_hook(gen_hook, NULL);
		}
	}
	rbn_test_set_hook(NULL, NULL);
	drain();
	gen_manifest(argv[1], true);

	for (cpu = 0; cpu < GEN_CPUS; cpu++) {
		rbn_cpu_stats(gen.b, cpu, &st);
		if (st.discarded != gen.discarded[cpu]) {
			fprintf(stderr, "rbgen: cpu%d: %lu discarded, stats.discarded %llu\n",
				cpu, gen.discarded[cpu],
				(unsigned long long)st.discarded);
			return 1;
		}
		printf("cpu%d: written: %lu discarded: %lu pages: %lu lost: %llu zero: %llu abs: %llu extend: %llu depth: %llu\n",
		       cpu, gen.written[cpu], gen.discarded[cpu], gen.pages[cpu],
		       (unsigned long long)st.overrun,
		       (unsigned long long)st.ts_zero,
		       (unsigned long long)st.ts_abs,
		       (unsigned long long)st.ts_extend,
		       (unsigned long long)st.max_depth);
		if (fclose(gen.raw[cpu])) {
			perror("rbgen: close");
			return 1;
		}
		rbn_free_read_page(gen.b, cpu, gen.page[cpu]);
	}
	printf("nested: %lu refused: %lu labels:", gen.nested, gen.refused);
	for (i = 0; i < RBN_NR_LABELS; i++)
		if (gen.at_label[i])
			printf(" %u", i);
	printf("\nwarnings: %lu\n", rbn_user_warnings);
	rbn_free(gen.b);
	return rbn_user_warnings ? 1 : 0;
}
