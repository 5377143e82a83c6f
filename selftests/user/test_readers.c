// SPDX-License-Identifier: GPL-2.0
/*
 * test_readers.c - what the write side may do while readers hold their lock.
 *
 * The rule: the write path, and anything a writer queues to run on top of
 * itself (the module's irq_work that wakes blocked readers), never takes a
 * CPU's reader lock. A reader on another CPU may hold that lock while it
 * spins, waiting for the writer to finish pushing the head page (the
 * UPDATE flag): if the work the writer waits for takes the lock, both CPUs
 * spin for ever with interrupts off.
 *
 * Each case builds that situation with real threads: a writer thread
 * ("CPU 0") stops at a label of the write path, a reader thread ("CPU 1")
 * takes the reader lock of CPU 0 and is seen spinning on the head page,
 * then an "interrupt" on CPU 0 writes a nested event and runs what the
 * irq_work runs: the watermark check. A watchdog fails the case when the
 * writer does not get through within RBN_LOCKUP_SECONDS.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rb_core.h"
#include "ktap.h"

#define RBN_LOCKUP_SECONDS	5
#define NR_SUBBUFS		4
#define EVENT_LEN		60

static u64 mock_now = 1000;

static u64 mock_clock(void)
{
	return __atomic_add_fetch(&mock_now, 1, __ATOMIC_RELAXED);
}

/**
 * struct lockup_case - one writer / reader / irq_work interleaving
 * @buffer:	the buffer (overwrite mode, CPU 0 and 1)
 * @label:	where the writer on CPU 0 is when the reader comes in
 * @percent:	the watermark the irq_work checks
 * @armed:	the hook has not fired yet
 * @reader_go:	the hook tells the reader to start
 * @reader_in:	the reader called its read
 * @spins:	the reader's relax calls seen while the writer waited
 * @nested:	the nested writer's rbn_write() result
 * @full:	what the watermark check said
 * @checked:	the watermark check returned
 * @read_ret:	the reader's rbn_read_page() result
 * @writer_done: the writer thread is through
 * @reader_done: the reader thread is through
 * @hook_hits:	times the hook ran at @label
 */
struct lockup_case {
	struct rbn_buffer *buffer;
	int label;
	unsigned int percent;
	int armed;
	int reader_go;
	int reader_in;
	unsigned long spins;
	int nested;
	int full;
	int checked;
	int read_ret;
	int writer_done;
	int reader_done;
	int hook_hits;
};

static int load(int *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void store(int *p, int v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void lockup_hook(struct rbn_buffer *buffer, int cpu, int label,
			void *arg)
{
	struct lockup_case *c = arg;
	unsigned long base;
	char payload[EVENT_LEN];
	double end;
	int saved;

	if (cpu != 0 || label != c->label || rbn_user_context)
		return;
	c->hook_hits++;
	if (!__atomic_exchange_n(&c->armed, 0, __ATOMIC_ACQ_REL))
		return;

	/* The reader takes CPU 0's reader lock and spins on the head page. */
	base = __atomic_load_n(&rbn_user_relax_count, __ATOMIC_ACQUIRE);
	store(&c->reader_go, 1);
	end = now_s() + 2;
	while (__atomic_load_n(&rbn_user_relax_count, __ATOMIC_ACQUIRE) <
	       base + 100 && now_s() < end)
		sched_yield();
	c->spins = __atomic_load_n(&rbn_user_relax_count, __ATOMIC_ACQUIRE) -
		   base;

	/* An interrupt on CPU 0: a nested event, then the irq_work. */
	saved = rbn_user_context;
	rbn_user_context = 2;
	memset(payload, 0x5a, sizeof(payload));
	c->nested = rbn_write(buffer, sizeof(payload), payload);
	c->full = rbn_cpu_percent_full(buffer, 0, c->percent);
	store(&c->checked, 1);
	rbn_user_context = saved;
}

static void *lockup_writer(void *arg)
{
	struct lockup_case *c = arg;
	char payload[EVENT_LEN];
	int i;

	rbn_user_cpu = 0;
	rbn_user_context = 0;
	memset(payload, 0xa5, sizeof(payload));
	/* Enough to wrap the ring a few times: the head is pushed on each. */
	for (i = 0; i < 8 * NR_SUBBUFS * 4096 / EVENT_LEN; i++)
		rbn_write(c->buffer, sizeof(payload), payload);
	store(&c->writer_done, 1);
	return NULL;
}

static void *lockup_reader(void *arg)
{
	struct lockup_case *c = arg;
	void *page;

	rbn_user_cpu = 1;
	rbn_user_context = 0;
	page = rbn_alloc_read_page(c->buffer, 0);
	while (!load(&c->reader_go))
		sched_yield();
	store(&c->reader_in, 1);
	c->read_ret = page ? rbn_read_page(c->buffer, 0, &page,
					   rbn_subbuf_size(c->buffer), false) :
			     -ENOMEM;
	rbn_free_read_page(c->buffer, 0, page);
	store(&c->reader_done, 1);
	return NULL;
}

/*
 * Returns false when the threads are stuck: the caller must not touch the
 * buffer or the case again, and the program ends after reporting.
 */
static bool lockup_run(const char *name, int label, unsigned int percent)
{
	struct rbn_config cfg = {
		.size = NR_SUBBUFS * (4096 - RBN_PAGE_HDR_SIZE),
		.order = 0,
		.overwrite = true,
		.clock = mock_clock,
		.nr_cpus = 2,
	};
	static struct lockup_case c;
	pthread_t writer, reader;
	double end;
	bool ok;

	memset(&c, 0, sizeof(c));
	c.label = label;
	c.percent = percent;
	c.armed = 1;
	c.buffer = rbn_alloc(&cfg);
	if (IS_ERR_OR_NULL(c.buffer)) {
		ktap_print("%s: rbn_alloc failed", name);
		ktap_result(false, name);
		return true;
	}
	rbn_test_set_hook(lockup_hook, &c);
	if (pthread_create(&reader, NULL, lockup_reader, &c) ||
	    pthread_create(&writer, NULL, lockup_writer, &c)) {
		ktap_print("%s: pthread_create failed", name);
		ktap_result(false, name);
		return false;
	}

	end = now_s() + RBN_LOCKUP_SECONDS;
	while (!(load(&c.writer_done) && load(&c.reader_done)) &&
	       now_s() < end)
		usleep(1000);
	if (!(load(&c.writer_done) && load(&c.reader_done))) {
		ktap_print("%s: lockup: after %d s the writer is %s, the reader %s (reader lock held, %lu relax calls); the watermark check %s",
			   name, RBN_LOCKUP_SECONDS,
			   load(&c.writer_done) ? "done" : "stuck",
			   load(&c.reader_done) ? "done" : "stuck",
			   __atomic_load_n(&rbn_user_relax_count,
					   __ATOMIC_ACQUIRE),
			   load(&c.checked) ? "returned" :
			   "never returned");
		ktap_result(false, name);
		return false;
	}
	pthread_join(writer, NULL);
	pthread_join(reader, NULL);
	rbn_test_set_hook(NULL, NULL);

	ktap_print("%s: hook hit %d times; reader spun %lu times on the head page while the writer waited; nested write %d; watermark %u%%: %s; reader got %d bytes",
		   name, c.hook_hits, c.spins, c.nested, c.percent,
		   c.full ? "reached" : "not reached", c.read_ret);
	ok = c.hook_hits > 0 && !c.armed && load(&c.checked);
	/* Precondition: the reader really was in its spin, lock held. */
	if (c.spins < 100) {
		ktap_print("%s: the reader was not seen spinning (%lu relax calls)",
			   name, c.spins);
		ok = false;
	}
	if (c.nested) {
		ktap_print("%s: the nested write failed: %d", name, c.nested);
		ok = false;
	}
	if (c.read_ret <= 0) {
		ktap_print("%s: the reader got nothing: %d", name, c.read_ret);
		ok = false;
	}
	if (rbn_user_warnings) {
		ktap_print("%s: %lu core warnings", name, rbn_user_warnings);
		ok = false;
	}
	rbn_free(c.buffer);
	ktap_result(ok, name);
	return true;
}

int main(void)
{
	static const struct {
		const char *name;
		int label;
		unsigned int percent;
	} cases[] = {
		{ "page_head_watermark_50", RBN_LABEL_PAGE_HEAD, 50 },
		{ "page_head_watermark_0", RBN_LABEL_PAGE_HEAD, 0 },
		{ "page_new_head_watermark_50", RBN_LABEL_PAGE_NEW_HEAD, 50 },
	};
	unsigned int i, n = sizeof(cases) / sizeof(cases[0]);

	ktap_start(n);
	for (i = 0; i < n; i++) {
		if (!lockup_run(cases[i].name, cases[i].label,
				cases[i].percent)) {
			/* Stuck threads hold the buffer: nothing more can run. */
			while (++i < n)
				ktap_result(false, cases[i].name);
			ktap_finish();
			fflush(stdout);
			_exit(1);
		}
	}
	return ktap_finish();
}
