// SPDX-License-Identifier: GPL-2.0
/*
 * bench_user.c - cost of rbn_write() per event, for callgrind.
 *
 * Usage: bench_user CASE [EVENTS]
 *
 *   fast-LEN	EVENTS writes of LEN payload bytes (LEN = 1..max event size)
 *		on one CPU, never interrupted: the fast path.
 *   hooked-8	the same for 8 bytes with a test hook installed that does
 *		nothing: what the hook dispatch at each label costs.
 *   slow-8	EVENTS 8-byte writes, each interrupted at label B by one
 *		nested 8-byte write from the hook (context raised), and
 *		again at B of its retry when that nested write filled the
 *		page: every outer event takes the slow path, every nested
 *		one gets an absolute stamp.
 *   empty	the loop calling an empty function: loop overhead.
 *
 * The measured work is done inside bench_loop() only, and the nested
 * writes of slow-8 inside bench_nested(), so that callgrind can count
 * each with --toggle-collect (scripts/bench-user.sh). The buffer is in
 * producer/consumer mode and large enough that nothing is dropped; the
 * clock is a counter, so every run executes the same instructions.
 *
 * After the loop the program prints one line of counters
 * ("key=value ..."), including the wall time per event of this run,
 * which means something only when it does not run under valgrind.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rb_core.h"

#define BENCH_DEFAULT_EVENTS	50000UL
#define BENCH_CLOCK_STEP	16

struct bench {
	struct rbn_buffer *buffer;
	unsigned int len;
	bool inject;		/* slow-8: nest one write at label B */
	bool armed;		/* no nested write yet for this outer event */
	bool nesting;		/* inside bench_nested() */
	unsigned long hook_outer;	/* hook calls by the outer writers */
	unsigned long hook_nested;	/* hook calls by the nested writers */
	unsigned long nested;		/* nested writes done */
	unsigned long failed;		/* rbn_write() != 0 */
};

static u64 bench_now;
static u32 bench_payload[1024];

static u64 bench_clock(void)
{
	bench_now += BENCH_CLOCK_STEP;
	return bench_now;
}

/* Writes one nested event; counted by callgrind on its own. */
static __attribute__((noipa)) void bench_nested(struct bench *bn)
{
	bn->nesting = true;
	rbn_user_context++;
	if (rbn_write(bn->buffer, 8, bench_payload))
		bn->failed++;
	rbn_user_context--;
	bn->nesting = false;
	bn->nested++;
}

static void bench_hook(struct rbn_buffer *buffer, int cpu, int label,
		       void *arg)
{
	struct bench *bn = arg;

	(void)buffer;
	(void)cpu;
	if (bn->nesting) {
		bn->hook_nested++;
		return;
	}
	bn->hook_outer++;
	/*
	 * One nested write per attempt of the outer writer: re-armed once
	 * its event is reserved, and when it retries on the next page (a
	 * nested write that filled the page sends it there), so that the
	 * attempt that succeeds is always interrupted.
	 */
	if (label == RBN_LABEL_EVENT || label == RBN_LABEL_PAGE_NEXT) {
		bn->armed = true;
	} else if (label == RBN_LABEL_B && bn->inject && bn->armed) {
		bn->armed = false;
		bench_nested(bn);
	}
}

static __attribute__((noipa)) void bench_nop(struct bench *bn)
{
	(void)bn;
}

/* The measured loop: nothing else may run inside it. */
static __attribute__((noipa)) void bench_loop(struct bench *bn,
					      unsigned long events,
					      bool empty)
{
	unsigned long i;

	for (i = 0; i < events; i++) {
		if (empty)
			bench_nop(bn);
		else if (rbn_write(bn->buffer, bn->len, bench_payload))
			bn->failed++;
	}
}

static void print_usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s fast-LEN|validate-LEN|hooked-8|slow-8|empty [EVENTS]\n",
		prog);
	exit(2);
}

int main(int argc, char **argv)
{
	struct rbn_config cfg = { .order = 0, .overwrite = false,
				  .clock = bench_clock, .nr_cpus = 1 };
	struct bench bn = { .len = 8, .armed = true };
	struct rbn_cpu_stats st;
	unsigned long events = BENCH_DEFAULT_EVENTS;
	struct timespec t0, t1;
	const char *c;
	bool empty = false;
	bool hooked = false;
	double ns;

	if (argc < 2 || argc > 3)
		print_usage(argv[0]);
	c = argv[1];
	if (!strncmp(c, "fast-", 5) || !strncmp(c, "validate-", 9)) {
		/* validate-LEN: the same writes, the run-time validator on */
		cfg.validate = c[0] == 'v';
		bn.len = strtoul(strchr(c, '-') + 1, NULL, 10);
		if (!bn.len || bn.len > sizeof(bench_payload))
			print_usage(argv[0]);
	} else if (!strcmp(c, "hooked-8")) {
		hooked = true;
	} else if (!strcmp(c, "slow-8")) {
		hooked = true;
		bn.inject = true;
	} else if (!strcmp(c, "empty")) {
		empty = true;
	} else {
		print_usage(argv[0]);
	}
	if (argc == 3)
		events = strtoul(argv[2], NULL, 10);
	if (!events)
		print_usage(argv[0]);
	memset(bench_payload, 0x5a, sizeof(bench_payload));

	/* Room for every event twice over (headers, stamps, page ends). */
	cfg.size = events * (ALIGN(bn.len, 4) + 32) * 2 + (256UL << 10);
	rbn_user_cpu = 0;
	rbn_user_context = 0;
	bn.buffer = rbn_alloc(&cfg);
	if (IS_ERR(bn.buffer)) {
		fprintf(stderr, "rbn_alloc: %ld\n", PTR_ERR(bn.buffer));
		return 1;
	}
	if (!empty && bn.len > rbn_max_event_size(bn.buffer)) {
		fprintf(stderr, "payload %u > max event size %u\n", bn.len,
			rbn_max_event_size(bn.buffer));
		return 1;
	}
	if (hooked)
		rbn_test_set_hook(bench_hook, &bn);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	bench_loop(&bn, events, empty);
	clock_gettime(CLOCK_MONOTONIC, &t1);

	rbn_test_set_hook(NULL, NULL);
	ns = (t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec);
	memset(&st, 0, sizeof(st));
	rbn_cpu_stats(bn.buffer, 0, &st);
	if (cfg.validate && (st.validate_fail ||
			     st.validate_checked + st.validate_skipped != st.written)) {
		fprintf(stderr, "validator: checked %llu skipped %llu failed %llu of %llu\n",
			(unsigned long long)st.validate_checked,
			(unsigned long long)st.validate_skipped,
			(unsigned long long)st.validate_fail,
			(unsigned long long)st.written);
		return 1;
	}
	printf("case=%s events=%lu written=%llu dropped=%llu failed=%lu "
	       "fast=%llu slow=%llu abs=%llu zero=%llu extend=%llu "
	       "hook_outer=%lu hook_nested=%lu nested=%lu warnings=%lu "
	       "ns_per_event=%.2f\n",
	       c, events, (unsigned long long)st.written,
	       (unsigned long long)st.dropped, bn.failed,
	       (unsigned long long)st.ts_fast, (unsigned long long)st.ts_slow,
	       (unsigned long long)st.ts_abs, (unsigned long long)st.ts_zero,
	       (unsigned long long)st.ts_extend, bn.hook_outer,
	       bn.hook_nested, bn.nested, rbn_user_warnings, ns / events);
	rbn_free(bn.buffer);
	return bn.failed || st.dropped || rbn_user_warnings ? 1 : 0;
}
