// SPDX-License-Identifier: GPL-2.0
/*
 * test_evfmt.c - the format of rbnest:sample as libtraceevent reads it.
 *
 * The format text of rbn_events.h must pass the check rbtrace and
 * rbtrace export make before libtraceevent sees a recording's format
 * (tools/rbtrace/fmtcheck.h), parse in libtraceevent without a warning,
 * and print every context, every source, every tracepoint and flag
 * combinations by name, exactly as written here: the expected lines are
 * spelled out in this file, not derived from rbn_events.h, and the flag
 * values come from rb_core.h's RBN_EV_*. The format of recordings made
 * before the names (one 8-byte arg, numbers only) must still pass and
 * print. Broken variants of the names' syntax must be refused by the
 * check, each for its own reason.
 *
 * libtraceevent's warnings go to stderr: it is sent to a file while the
 * formats are parsed and the events printed, and must stay empty.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rb_core.h"
#include "rbn_events.h"
/* libtraceevent defines it its own way */
#undef __maybe_unused
#include <event-parse.h>

#include "tools/rbtrace/fmtcheck.h"
#include "ktap.h"

/* The format of recordings before the tp field and the names. */
#define OLD_SAMPLE_FORMAT						\
	"name: sample\n"						\
	"ID: 1\n"							\
	"format:\n"							\
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"	\
	"\n"								\
	"\tfield:unsigned long long seq;\toffset:8;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned long long ts;\toffset:16;\tsize:8;\tsigned:0;\n" \
	"\tfield:unsigned int cpu;\toffset:24;\tsize:4;\tsigned:0;\n"	\
	"\tfield:unsigned char context;\toffset:28;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char depth;\toffset:29;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char source;\toffset:30;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char flags;\toffset:31;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned long long arg;\toffset:32;\tsize:8;\tsigned:0;\n" \
	"\n"								\
	"print fmt: \"seq=%llu cpu=%u ctx=%u depth=%u src=%u flags=%#x arg=%llu\", " \
	"REC->seq, REC->cpu, REC->context, REC->depth, REC->source, "	\
	"REC->flags, REC->arg\n"

static const char *const ctx_names[] = {
	"task", "softirq", "hardirq", "nmi",
};

static const char *const src_names[] = {
	"test", "task", "hrtimer", "softirq", "irq_work", "nmi",
	"tracepoint", "kprobe", "inject",
};

static const char *const tp_names[] = {
	"none", "irq_handler_entry", "irq_handler_exit", "softirq_entry",
	"softirq_exit", "hrtimer_expire_entry", "local_timer_entry",
	"nmi_handler", "sched_switch",
};

static const struct {
	unsigned int flags;
	const char *text;
} flag_cases[] = {
	{ RBN_EV_FAST, "fast" },
	{ RBN_EV_ABSOLUTE, "abs" },
	{ RBN_EV_SLOW, "slow" },
	{ RBN_EV_ZERO_DELTA, "zero" },
	{ RBN_EV_EXTEND, "extend" },
	{ RBN_EV_PAGE_START, "start" },
	{ RBN_EV_CLOCK_BACK, "clock_back" },
	{ RBN_EV_FAST | RBN_EV_PAGE_START, "fast|start" },
	{ RBN_EV_ABSOLUTE | RBN_EV_SLOW, "abs|slow" },
	{ RBN_EV_FAST | RBN_EV_ABSOLUTE | RBN_EV_EXTEND, "fast|abs|extend" },
	{ RBN_EV_ZERO_DELTA | RBN_EV_CLOCK_BACK, "zero|clock_back" },
	{ 0x7f, "fast|abs|slow|zero|extend|start|clock_back" },
	{ 0x80, "0x80" },
	{ RBN_EV_SLOW | 0x80, "slow|0x80" },
};

#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

static struct tep_handle *tep;
static struct tep_event *event;
static struct trace_seq seq;
static int saved_stderr = -1;
static FILE *errf;

/* libtraceevent's warnings to a file from here on. */
static void stderr_capture(void)
{
	errf = tmpfile();
	if (!errf) {
		perror("tmpfile");
		exit(2);
	}
	fflush(stderr);
	saved_stderr = dup(2);
	dup2(fileno(errf), 2);
}

/* Back to the real stderr; the bytes written to the file meanwhile. */
static long stderr_release(void)
{
	char line[256];
	long n;

	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	n = ftell(errf);
	rewind(errf);
	while (n > 0 && fgets(line, sizeof(line), errf))
		ktap_print("libtraceevent: %s", strtok(line, "\n"));
	fclose(errf);
	return n;
}

static bool parse(const char *fmt)
{
	enum tep_errno err;

	if (tep)
		tep_free(tep);
	tep = tep_alloc();
	if (!tep)
		return false;
	tep_set_long_size(tep, 8);
	tep_set_file_bigendian(tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(tep, TEP_LITTLE_ENDIAN);
	event = NULL;
	err = tep_parse_format(tep, &event, fmt, strlen(fmt), "rbnest");
	return !err && event;
}

/* The info text libtraceevent prints for @size bytes of @data. */
static const char *print(void *data, int size)
{
	struct tep_record rec = {
		.size = size,
		.record_size = size,
		.data = data,
	};

	trace_seq_reset(&seq);
	tep_print_event(tep, &seq, &rec, "%s", TEP_PRINT_INFO);
	trace_seq_terminate(&seq);
	return seq.buffer;
}

static void sample(struct rbn_sample *s, unsigned int ctx, unsigned int src,
		   unsigned int flags, unsigned int tp, unsigned int arg)
{
	memset(s, 0, sizeof(*s));
	s->common_type = RBN_EVENT_SAMPLE_ID;
	s->seq = 42;
	s->cpu = 1;
	s->context = ctx;
	s->depth = 2;
	s->source = src;
	s->flags = flags;
	s->tp = tp;
	s->arg = arg;
}

/* Print @s, compare with the line its names give; count a mismatch. */
static void expect(struct rbn_sample *s, const char *ctx, const char *src,
		   const char *flags, const char *tp, unsigned int *bad,
		   unsigned int *n)
{
	char want[256];
	const char *got;

	snprintf(want, sizeof(want),
		 "seq=42 cpu=1 ctx=%s depth=2 src=%s flags=%s tp=%s arg=%u",
		 ctx, src, flags, tp, s->arg);
	got = print(s, sizeof(*s));
	(*n)++;
	if (strcmp(got, want)) {
		if (++*bad <= 5)
			ktap_print("got  \"%s\"\n# want \"%s\"", got, want);
	}
}

/* The check of fmtcheck.h on @text; @why NULL: must pass. */
static bool check_text(const char *text, const char *why)
{
	static struct rbt_fmt f;
	bool ok = rbt_format_check(&f, text, strlen(text), 4080);

	if (why && ok)
		ktap_print("accepted, should not be: %s", why);
	if (!why && !ok)
		ktap_print("refused: line %u: %s", f.line, f.err);
	if (why && !ok)
		ktap_print("refused (%s): %s", why, f.err);
	return why ? !ok : ok;
}

/* RBN_SAMPLE_FORMAT with its print fmt line's @from replaced by @to. */
static char *variant(const char *from, const char *to)
{
	const char *fmt = RBN_SAMPLE_FORMAT, *at = strstr(fmt, from);
	size_t n = strlen(fmt) - strlen(from) + strlen(to) + 1;
	char *v = malloc(n);

	if (!at || !v) {
		fprintf(stderr, "variant: \"%s\" not in the format\n", from);
		exit(2);
	}
	snprintf(v, n, "%.*s%s%s", (int)(at - fmt), fmt, to,
		 at + strlen(from));
	return v;
}

int main(void)
{
	static const struct {
		const char *from, *to, *why;
	} bad[] = {
		{ "{ 3, \"nmi\" })", "{ 3, \"nmi\" }", "no closing parenthesis" },
		{ "{ 3, \"nmi\" }", "{ 3, \"\" }", "empty name" },
		{ "{ 3, \"nmi\" }", "{ 3, \"n\\\\mi\" }", "backslash in a name" },
		{ "{ 0x40,", "{ 0x,", "hex value without digits" },
		{ "{ 0x40,", "{ 0x12345678901234567,", "17 hex digits" },
		{ "{ 3, \"nmi\" }", "{ 03, \"nmi\" }", "leading zero" },
		{ "{ 3, \"nmi\" }", "{ -3, \"nmi\" }", "negative value" },
		{ "{ 3, \"nmi\" }", "{3, \"nmi\"}", "other spacing" },
		{ "__print_flags(REC->flags, \"|\", ",
		  "__print_flags(REC->flags, ", "__print_flags() without delimiter" },
		{ "__print_flags(REC->flags, \"|\", ",
		  "__print_flags(REC->flags, \"|||||||||\", ", "9-byte delimiter" },
		{ "flags=%s", "flags=%u", "names printed with %u" },
		{ "__print_symbolic(REC->tp, ", "__print_symbolic(REC->nope, ",
		  "not a field" },
		{ "__print_symbolic(REC->tp, ", "__print_symbolic(REC->tp + 1, ",
		  "expression" },
		{ "__print_symbolic(REC->context, ", "__print_hex(REC->context, ",
		  "other helper" },
		{ "__print_symbolic(REC->tp, " RBN_TP_SYMS ")",
		  "__print_symbolic(REC->tp)", "no values" },
	};
	unsigned int i, j, n, nbad;
	struct rbn_sample s;
	char *many, *p;
	bool ok;
	long err;

	ktap_start(9);
	trace_seq_init(&seq);

	/* 1. the check rbtrace makes */
	ok = check_text(RBN_SAMPLE_FORMAT, NULL) &&
	     check_text(OLD_SAMPLE_FORMAT, NULL);
	ktap_result(ok, "fmtcheck accepts the format and the format before names");

	/* 2. libtraceevent parses it, silently */
	stderr_capture();
	ok = parse(RBN_SAMPLE_FORMAT);
	err = stderr_release();
	ktap_print("parse %s, %ld bytes on stderr", ok ? "ok" : "FAILED", err);
	if (!ok) {
		ktap_result(false, "libtraceevent parses the format");
		return ktap_finish();
	}
	ktap_result(!err, "libtraceevent parses the format without a warning");

	stderr_capture();
	/* 3. every context */
	n = nbad = 0;
	for (i = 0; i < ARRAY_LEN(ctx_names); i++) {
		sample(&s, i, RBN_SRC_HRTIMER, RBN_EV_FAST, RBN_TP_NONE, 7);
		expect(&s, ctx_names[i], "hrtimer", "fast", "none", &nbad, &n);
	}
	ktap_print("contexts: %u printed, %u wrong", n, nbad);
	ktap_result(!nbad && n == 4, "every ctx prints its name");

	/* 4. every source */
	n = nbad = 0;
	for (i = 0; i < ARRAY_LEN(src_names); i++) {
		sample(&s, RBN_CTX_HARDIRQ, i, RBN_EV_ABSOLUTE | RBN_EV_SLOW,
		       RBN_TP_NONE, i * 1000);
		expect(&s, "hardirq", src_names[i], "abs|slow", "none",
		       &nbad, &n);
	}
	ktap_print("sources: %u printed, %u wrong", n, nbad);
	ktap_result(!nbad && n == 9, "every src prints its name");

	/* 5. every tracepoint, with its value */
	n = nbad = 0;
	for (i = 0; i < ARRAY_LEN(tp_names); i++) {
		sample(&s, RBN_CTX_SOFTIRQ, RBN_SRC_TRACEPOINT, RBN_EV_FAST, i,
		       0xffffffffU - i);
		expect(&s, "softirq", "tracepoint", "fast", tp_names[i],
		       &nbad, &n);
	}
	ktap_print("tracepoints: %u printed, %u wrong", n, nbad);
	ktap_result(!nbad && n == RBN_NR_TP, "every tp prints its name, arg its 32 bits");

	/* 6. flags */
	n = nbad = 0;
	for (i = 0; i < ARRAY_LEN(flag_cases); i++) {
		sample(&s, RBN_CTX_NMI, RBN_SRC_NMI, flag_cases[i].flags,
		       RBN_TP_NONE, 1);
		expect(&s, "nmi", "nmi", flag_cases[i].text, "none", &nbad,
		       &n);
	}
	ktap_print("flag combinations: %u printed, %u wrong", n, nbad);
	ktap_result(!nbad && n == ARRAY_LEN(flag_cases),
		    "flags print as names joined by |, unnamed bits in hex");
	err = stderr_release();
	ktap_print("%ld bytes on stderr while printing", err);
	ktap_result(!err, "no libtraceevent warning while printing");

	/* 7. the format before names, on an event of that layout */
	stderr_capture();
	ok = parse(OLD_SAMPLE_FORMAT);
	if (ok) {
		unsigned long long arg = 3ULL << 32 | 17;

		sample(&s, RBN_CTX_HARDIRQ, RBN_SRC_TRACEPOINT, 0x3, 0, 0);
		memcpy(&s.arg, &arg, sizeof(arg));
		p = (char *)print(&s, sizeof(s));
		ok = !strcmp(p, "seq=42 cpu=1 ctx=2 depth=2 src=6 flags=0x3 arg=12884901905");
		if (!ok)
			ktap_print("old format printed \"%s\"", p);
	}
	err = stderr_release();
	ktap_result(ok && !err, "the format before names still parses and prints");

	/* 8. broken syntax of the names is refused, each for its reason */
	n = nbad = 0;
	for (i = 0; i < ARRAY_LEN(bad); i++) {
		p = variant(bad[i].from, bad[i].to);
		n++;
		if (!check_text(p, bad[i].why))
			nbad++;
		free(p);
	}
	/* 65 values: one more than fmtcheck takes */
	many = malloc(65 * 16 + 64);
	strcpy(many, "__print_symbolic(REC->tp");
	for (j = 0; j < 65; j++)
		sprintf(many + strlen(many), ", { %u, \"x\" }", j);
	strcat(many, ")");
	p = variant("__print_symbolic(REC->tp, " RBN_TP_SYMS ")", many);
	n++;
	if (!check_text(p, "65 values"))
		nbad++;
	free(p);
	free(many);
	ktap_print("broken variants: %u, %u accepted", n, nbad);
	ktap_result(!nbad, "fmtcheck refuses broken __print_symbolic/__print_flags");

	tep_free(tep);
	trace_seq_destroy(&seq);
	return ktap_finish();
}
