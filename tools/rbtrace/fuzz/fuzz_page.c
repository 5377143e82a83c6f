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
 * between the CPUs in order), bit 2 keeps the payloads as "rbtrace report"
 * does.
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
static struct walk fz_walk;
static unsigned char *fz_page;

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	unsigned int subbuf = fz_base.subbuf;
	size_t nr_pages = size / subbuf, k;
	unsigned int pno[FZ_MAX_CPUS] = { 0 };
	bool keep = false;
	size_t nr_cpus = 1;
	jmp_buf env;
	int cpu;

	if (size % subbuf) {
		nr_cpus = 1 + (data[nr_pages * subbuf] & 3);
		keep = data[nr_pages * subbuf] & 4;
	}
	if (nr_cpus > nr_pages)
		nr_cpus = nr_pages ? nr_pages : 1;

	fz_rec = fz_base;
	fz_rec.nr_cpus = nr_cpus;
	fz_rec.cpu = calloc(nr_cpus, sizeof(*fz_rec.cpu));
	fz_page = malloc(subbuf);
	if (!fz_rec.cpu || !fz_page)
		abort();
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		snprintf(fz_rec.cpu[cpu].path, sizeof(fz_rec.cpu[cpu].path),
			 "cpu%d.raw", cpu);
		fz_rec.cpu[cpu].present = true;
	}

	rbt_fuzz_catch = &env;
	if (!setjmp(env)) {
		for (k = 0; k < nr_pages; k++) {
			cpu = k * nr_cpus / nr_pages;
			/* a page of its own, for the sanitizers */
			memcpy(fz_page, data + k * subbuf, subbuf);
			load_page(&fz_rec, cpu, pno[cpu]++, fz_page, &fz_walk,
				  keep);
		}
		check_rec(&fz_rec);
	}
	rbt_fuzz_catch = NULL;

	free(fz_page);
	free(fz_walk.ev);
	memset(&fz_walk, 0, sizeof(fz_walk));
	/* the formats stay for the next input */
	fz_rec.tep = NULL;
	fz_rec.kb = NULL;
	rec_free(&fz_rec);
	return 0;
}
