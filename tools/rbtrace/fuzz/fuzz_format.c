// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_format.c - libFuzzer target: header_page and event format text
 * through the format loading of rbtrace, then a page of rbnest:sample
 * events decoded with what was loaded.
 *
 * The input is "HEADER_PAGE\0FORMAT": the text of header_page, a NUL byte
 * and the format of rbnest:sample. Without a NUL byte, all of it is the
 * format, and header_page is rbn_events.h's for 4096-byte sub-buffers.
 * Both texts go to libtraceevent only after the checks of fmtcheck.h,
 * which is what this target tries to get past: libtraceevent 1.7 crashes
 * on some broken print formats and field lines (a NULL token after '[',
 * divisions by zero in "print fmt:").
 *
 * When the formats load, a page of four events (one plain, one after a
 * time extend, one after an absolute stamp, one with a length word) is
 * decoded as "rbtrace check" does; then every field rbtrace or
 * libtraceevent reads of an event must lie inside the event, as
 * libtraceevent does not check it itself.
 *
 * rbtrace.c is built into this file with RBTRACE_FUZZ: its main() is left
 * out and its bad-input exits come back here through rbt_fuzz_catch.
 */
#define RBTRACE_FUZZ
#include "../rbtrace.c"

#define FZ_DATA_SIZE	4080U

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* The events of the page, after its 16-byte header. */
static unsigned char fz_events[256];
static unsigned int fz_events_len;
/* where each of the four events ends */
static unsigned int fz_ends[4];

static void fz_put32(unsigned int v)
{
	memcpy(fz_events + fz_events_len, &v, 4);
	fz_events_len += 4;
}

static void fz_put64(unsigned long long v)
{
	memcpy(fz_events + fz_events_len, &v, 8);
	fz_events_len += 8;
}

/* An rbnest:sample payload (40 bytes), as rbn_events.h lays it out. */
static void fz_put_sample(unsigned long long seq, unsigned long long ts)
{
	fz_put32(1 | 0x00010000);	/* common_type 1, flags 1, count 0 */
	fz_put32(42);			/* common_pid */
	fz_put64(seq);
	fz_put64(ts);
	fz_put32(0);			/* cpu */
	fz_put32(0x00000100);		/* context 0, depth 1, source, flags */
	fz_put64(seq * 3);		/* arg */
}

static void fz_build_events(void)
{
	/* the page time stamp is 1000 */
	fz_put32(10);				/* type_len 10, delta 0 */
	fz_put_sample(0, 1000);
	fz_ends[0] = fz_events_len;
	fz_put32(30);				/* time extend of 5 << 27 */
	fz_put32(5);
	fz_put32(10 | 7 << 5);
	fz_put_sample(1, 1007 + (5ULL << 27));
	fz_ends[1] = fz_events_len;
	fz_put32(31);				/* absolute stamp 1ULL << 32 */
	fz_put32(1 << 5);
	fz_put32(10);
	fz_put_sample(2, 1ULL << 32);
	fz_ends[2] = fz_events_len;
	fz_put32(0 | 3 << 5);			/* type_len 0, length word */
	fz_put32(44);
	fz_put_sample(3, (1ULL << 32) + 3);
	fz_ends[3] = fz_events_len;
}

/*
 * Every field of @ev read as rbtrace reads it (its own and common_type,
 * which tep_data_type() reads) within @size bytes.
 */
static void fz_check_fields(struct rbt_rec *r, const struct rbt_event *e)
{
	struct tep_format_field *f[] = {
		r->f_seq, r->f_ts, r->f_cpu, r->f_ctx, r->f_depth, r->f_flags,
		r->f_cflags, r->f_pcount, r->f_pid,
		tep_find_common_field(r->event, "common_type"),
	};
	unsigned int i;

	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		if (!f[i] || f[i]->offset < 0 || f[i]->size < 0)
			continue;
		if (f[i]->offset + f[i]->size > e->size) {
			fprintf(stderr, "field %s (offset %d size %d) read past an event of %u bytes\n",
				f[i]->name, f[i]->offset, f[i]->size, e->size);
			abort();
		}
	}
}

static struct rbt_rec fz_rec;
static char *fz_hp, *fz_fmt;
static unsigned char *fz_page;

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	const unsigned char *nul = memchr(data, 0, size);
	size_t hp_len, fmt_len;
	const struct rbt_event *e;
	struct report_opts o = { 0 };
	unsigned int len;
	jmp_buf env;
	int i, cpu;

	if (!fz_events_len)
		fz_build_events();
	if (nul) {
		hp_len = nul - data;
		fmt_len = size - hp_len - 1;
		fz_hp = malloc(hp_len + 1);
		fz_fmt = malloc(fmt_len + 1);
		if (!fz_hp || !fz_fmt)
			abort();
		memcpy(fz_hp, data, hp_len);
		memcpy(fz_fmt, nul + 1, fmt_len);
	} else {
		fmt_len = size;
		fz_hp = malloc(512);
		fz_fmt = malloc(fmt_len + 1);
		if (!fz_hp || !fz_fmt)
			abort();
		hp_len = snprintf(fz_hp, 512, RBN_HEADER_PAGE_FMT,
				  PG_HEADER_PAGE_ARGS(FZ_DATA_SIZE));
		memcpy(fz_fmt, data, fmt_len);
	}
	fz_hp[hp_len] = '\0';
	fz_fmt[fmt_len] = '\0';

	memset(&fz_rec, 0, sizeof(fz_rec));
	fz_rec.dir = "fuzz_format";
	fz_rec.quiet = true;
	fz_rec.nr_cpus = 1;
	fz_rec.cpu = calloc(1, sizeof(*fz_rec.cpu));
	if (!fz_rec.cpu)
		abort();
	snprintf(fz_rec.cpu[0].path, sizeof(fz_rec.cpu[0].path), "cpu0.raw");
	fz_rec.cpu[0].present = true;
	fz_rec.cpu[0].fd = -1;
	trace_seq_init(&o.s);

	rbt_fuzz_catch = &env;
	if (!setjmp(env)) {
		load_formats_text(&fz_rec, "header_page", fz_hp, hp_len,
				  "format", fz_fmt, fmt_len);
		/* whole events only, as many as the data size holds */
		for (i = 3, len = 0; i >= 0 && !len; i--)
			if (fz_ends[i] <= fz_rec.data_size)
				len = fz_ends[i];
		fz_page = calloc(1, fz_rec.subbuf);
		if (!fz_page)
			abort();
		fz_page[0] = 1000 & 0xff;
		fz_page[1] = 1000 >> 8;
		memcpy(fz_page + 8, &len, 4);
		memcpy(fz_page + PG_HDR_SIZE, fz_events, len);
		/* the fields of every event, and the event printed */
		cpu_open(&fz_rec, 0, fz_page, 1);
		rbt_start(&fz_rec, NULL);
		while ((e = rbt_next_event(&fz_rec, &cpu))) {
			fz_check_fields(&fz_rec, e);
			report_event(&fz_rec, &o, e, cpu);
		}
		/* then the checks, from the start */
		rbt_close_cpus(&fz_rec);
		fz_rec.check = true;
		cpu_open(&fz_rec, 0, fz_page, 1);
		rbt_start(&fz_rec, NULL);
		check_rec(&fz_rec, true, false);
	}
	rbt_fuzz_catch = NULL;
	trace_seq_destroy(&o.s);

	free(fz_page);
	fz_page = NULL;
	rbt_close(&fz_rec);
	free(fz_hp);
	free(fz_fmt);
	return 0;
}

/* check_rec() prints its verdict: the fuzzer reports on stderr. */
int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return freopen("/dev/null", "w", stdout) ? 0 : -1;
}
