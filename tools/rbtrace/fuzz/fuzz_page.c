// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_page.c - libFuzzer target: sub-buffer images through the page
 * checks and the kbuffer decoding of rbtrace, then through the checks of
 * "rbtrace check".
 *
 * The formats are rbn_events.h's, for sub-buffers of 4096 bytes. The
 * input is read as whole sub-buffers, one after the other; the bytes
 * after the last whole one, if any, choose the layout: bits 0-1 of the
 * first of them give the number of CPUs minus one (the pages are shared
 * between the CPUs in order), bit 2 prints the events as "rbtrace report
 * -l --ts-diff" does instead of checking them.
 *
 * rbtrace.c is built into this file with RBTRACE_FUZZ: its main() is left
 * out and its bad-input exits come back here through rbt_fuzz_catch.
 */
#define RBTRACE_FUZZ
#include "../rbtrace.c"

#define FZ_DATA_SIZE	4080U
#define FZ_MAX_CPUS	4

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static struct rbt_rec fz_base;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char hp[512];
	int n;

	(void)argc;
	(void)argv;
	n = snprintf(hp, sizeof(hp), RBN_HEADER_PAGE_FMT,
		     PG_HEADER_PAGE_ARGS(FZ_DATA_SIZE));
	fz_base.dir = "fuzz_page";
	fz_base.quiet = true;
	load_formats_text(&fz_base, "header_page", hp, n, "format",
			  RBN_SAMPLE_FORMAT, strlen(RBN_SAMPLE_FORMAT));
	/* check_rec() prints its verdict: the fuzzer reports on stderr */
	if (!freopen("/dev/null", "w", stdout))
		return -1;
	return 0;
}

static struct rbt_rec fz_rec;

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	unsigned int subbuf = fz_base.subbuf;
	size_t nr_pages = size / subbuf, k, first;
	bool keep = false;
	size_t nr_cpus = 1;
	const struct rbt_event *e;
	struct report_opts o = { .lat = true, .ts_diff = true };
	jmp_buf env;
	int cpu;

	if (size % subbuf) {
		nr_cpus = 1 + (data[nr_pages * subbuf] & 3);
		keep = data[nr_pages * subbuf] & 4;
	}
	if (nr_cpus > nr_pages)
		nr_cpus = nr_pages ? nr_pages : 1;

	fz_rec = fz_base;
	fz_rec.check = !keep;
	fz_rec.nr_cpus = nr_cpus;
	fz_rec.cpu = calloc(nr_cpus, sizeof(*fz_rec.cpu));
	if (!fz_rec.cpu)
		abort();
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		snprintf(fz_rec.cpu[cpu].path, sizeof(fz_rec.cpu[cpu].path),
			 "cpu%d.raw", cpu);
		fz_rec.cpu[cpu].present = true;
		fz_rec.cpu[cpu].fd = -1;
	}

	rbt_fuzz_catch = &env;
	trace_seq_init(&o.s);
	if (!setjmp(env)) {
		/* page k is CPU k * nr_cpus / nr_pages's, in order */
		for (cpu = 0, first = 0; cpu < nr_cpus; cpu++) {
			for (k = first; k < nr_pages &&
			     k * nr_cpus / nr_pages == cpu; k++)
				;
			cpu_open(&fz_rec, cpu, data + first * subbuf,
				 k - first);
			first = k;
		}
		rbt_start(&fz_rec, NULL);
		if (keep) {
			/* the payloads printed as "rbtrace report -l" does */
			while ((e = rbt_next_event(&fz_rec, &cpu)))
				report_event(&fz_rec, &o, e, cpu);
		} else {
			check_rec(&fz_rec, true, false);
		}
	}
	rbt_fuzz_catch = NULL;
	trace_seq_destroy(&o.s);

	/* the formats stay for the next input */
	fz_rec.tep = NULL;
	fz_rec.kb = NULL;
	rbt_close(&fz_rec);
	return 0;
}
