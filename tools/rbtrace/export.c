// SPDX-License-Identifier: GPL-2.0
/*
 * export.c - write an rbnest recording as a trace-cmd data file
 *
 * The output is a trace-cmd file of version 6 with an options section,
 * laid out as trace-cmd itself writes it for a flyrecord:
 *
 *   magic "\027\010\104tracing", "6\0", endianness (0: little), long size,
 *   page size (u32)
 *   "header_page\0"  u64 size, text      (the recording's header_page)
 *   "header_event\0" u64 size, text      (the recording's header_event)
 *   u32 0                                (no ftrace event formats)
 *   u32 systems, each: name\0, u32 events, each: u64 size, format text
 *   u32 0, u32 0                         (no kallsyms, no printk formats)
 *   u64 size, cmdlines text              ("pid comm\n" lines)
 *   u32 CPUs
 *   "options  \0", options (u16 id, u32 size, data), u16 0
 *   "flyrecord\0", per CPU: u64 offset, u64 size; u64 size, trace_clock text
 *   per-CPU data: the sub-buffer images, each CPU's at a page-aligned offset
 *
 * Numbers are little-endian: rbnest records on little-endian 64-bit
 * machines (x86_64).
 *
 * The pages are copied as recorded, but for two repairs that keep the
 * times and the counts the same and let kbuffer (libtraceevent 1.7, which
 * trace-cmd reads with) see them: an absolute time stamp that needs the
 * carry out of its 59 bits becomes the equivalent time extend, and on a
 * page with missed events, time extends and stamps in front of the first
 * event are folded into the page's time stamp (see exp_walk_entries() and
 * exp_fold_first()).
 *
 * Everything read from the recording is checked before it is used: the
 * text files are size limited and must parse with libtraceevent, the CPU
 * files must hold whole pages, the entries of every page are bounded by
 * its commit, and every page is then walked with kbuffer, its records
 * bounded again and their event ids known.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <event-parse.h>
#include <kbuffer.h>

#include "export.h"
#include "fmtcheck.h"

#define EXP_MAGIC		"\027\010\104tracing"
#define EXP_FILE_VERSION	"6"
#define EXP_LONG_SIZE		8

#define EXP_OPT_DONE		0
#define EXP_OPT_TRACECLOCK	4
#define EXP_OPT_CPUCOUNT	8

#define EXP_PAGE_HDR_SIZE	16U
#define EXP_MIN_PAGE_SIZE	4096U
#define EXP_MAX_PAGE_SIZE	(4096U << 4)
/* The commit word: data bytes in the low bits, the reader's flags above. */
#define EXP_COMMIT_MASK		((1ULL << 27) - 1)
#define EXP_MISSED_EVENTS	(1ULL << 31)
#define EXP_MISSED_STORED	(1ULL << 30)
/* An absolute stamp keeps 59 bits; the top 5 come from the time before. */
#define EXP_TS_MSB		(0x1fULL << 59)

/* the largest header, format, trace_clock or saved_cmdlines file */
#define EXP_MAX_TEXT		(1U << 20)
#define EXP_MAX_CPUS		4096
#define EXP_MAX_SYSTEMS		256
#define EXP_MAX_EVENTS		4096		/* in all systems */
#define EXP_MAX_NAME		255
#define EXP_MAX_CLOCK		64
#define EXP_MAX_PIDS		65536
#define EXP_PID_HASH		(2 * EXP_MAX_PIDS)
/* zeroes after the page copy: kbuffer may read a length word past it */
#define EXP_SLACK		16

#define exp_err(fmt, ...) \
	fprintf(stderr, "rbtrace export: " fmt "\n", ##__VA_ARGS__)

struct exp_text {
	char *data;
	size_t len;
};

struct exp_event {
	struct exp_text format;
};

struct exp_system {
	char *name;
	unsigned int nr_events;
	struct exp_event *events;
};

struct exp_ctx {
	const char *dir;
	struct tep_handle *tep;
	struct exp_text header_page;
	struct exp_text header_event;
	struct exp_text cmdlines;
	char clock_text[EXP_MAX_CLOCK + 8];	/* "[clock]\n" */
	unsigned int page_size;
	unsigned int nr_systems;
	struct exp_system *systems;
	unsigned int nr_events;
	unsigned int nr_cpus;
	unsigned long long *cpu_size;
	int *pids;
	int *pid_hash;
	unsigned int nr_pids;
	bool pids_full;
	unsigned long long pages;
	unsigned long long records;
	unsigned long long abs_fixed;
	unsigned long long pages_folded;
	unsigned char *page;		/* page_size + EXP_SLACK bytes */
};

static char *exp_path(const char *dir, const char *a, const char *b,
		      const char *c)
{
	char *p;

	if (asprintf(&p, "%s/%s%s%s%s%s", dir, a, b ? "/" : "", b ? b : "",
		     c ? "/" : "", c ? c : "") < 0)
		return NULL;
	return p;
}

/*
 * Read a text file of at most EXP_MAX_TEXT bytes, NUL-terminated, with no
 * NUL inside. Return 0, -ENOENT (only reported when !optional) or -errno.
 */
static int exp_read_text(const char *path, struct exp_text *t, bool optional)
{
	size_t cap = 4096, len = 0;
	char *buf, *nbuf, *nul;
	FILE *f;
	int ret = 0;

	f = fopen(path, "r");
	if (!f) {
		ret = -errno;
		if (!(optional && ret == -ENOENT))
			exp_err("%s: %s", path, strerror(errno));
		return ret;
	}
	buf = malloc(cap + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	for (;;) {
		size_t n = fread(buf + len, 1, cap - len, f);

		len += n;
		if (ferror(f)) {
			ret = -EIO;
			exp_err("%s: read error at offset %zu", path, len);
			goto out;
		}
		if (feof(f))
			break;
		if (len == cap) {
			if (cap >= EXP_MAX_TEXT) {
				ret = -EFBIG;
				exp_err("%s: larger than %u bytes", path,
					EXP_MAX_TEXT);
				goto out;
			}
			cap *= 2;
			nbuf = realloc(buf, cap + 1);
			if (!nbuf) {
				ret = -ENOMEM;
				goto out;
			}
			buf = nbuf;
		}
	}
	nul = memchr(buf, '\0', len);
	if (nul) {
		unsigned int line = 1;
		const char *q;

		for (q = buf; q < nul; q++)
			line += *q == '\n';
		ret = -EINVAL;
		exp_err("%s: line %u: byte 0x00 (NUL) at offset %zu", path, line,
			(size_t)(nul - buf));
		goto out;
	}
	buf[len] = '\0';
	t->data = buf;
	t->len = len;
	buf = NULL;
out:
	free(buf);
	fclose(f);
	return ret;
}

/*
 * The size of field "data" in header_page: the page's data bytes. The text
 * is checked before libtraceevent parses it (fmtcheck.h).
 */
static int exp_load_header_page(struct exp_ctx *c)
{
	char *path = exp_path(c->dir, "header_page", NULL, NULL);
	static struct rbt_fmt f;
	unsigned int size;
	int ret;

	if (!path)
		return -ENOMEM;
	ret = exp_read_text(path, &c->header_page, false);
	if (ret)
		goto out;
	ret = -EINVAL;
	if (!rbt_header_page_check(&f, c->header_page.data,
				   c->header_page.len)) {
		exp_err("%s: line %u: %s", path, f.line, f.err);
		goto out;
	}
	size = f.data_size;
	if (size + EXP_PAGE_HDR_SIZE < EXP_MIN_PAGE_SIZE ||
	    size + EXP_PAGE_HDR_SIZE > EXP_MAX_PAGE_SIZE ||
	    ((size + EXP_PAGE_HDR_SIZE) & (size + EXP_PAGE_HDR_SIZE - 1))) {
		exp_err("%s: data size %u is not a sub-buffer of %u..%u bytes (a power of two) minus the %u-byte header",
			path, size, EXP_MIN_PAGE_SIZE, EXP_MAX_PAGE_SIZE,
			EXP_PAGE_HDR_SIZE);
		goto out;
	}
	c->page_size = size + EXP_PAGE_HDR_SIZE;
	if (tep_parse_header_page(c->tep, c->header_page.data,
				  c->header_page.len, EXP_LONG_SIZE)) {
		exp_err("%s: libtraceevent cannot parse it", path);
		goto out;
	}
	ret = 0;
out:
	free(path);
	return ret;
}

static int exp_load_header_event(struct exp_ctx *c)
{
	char *path = exp_path(c->dir, "header_event", NULL, NULL);
	int ret;

	if (!path)
		return -ENOMEM;
	ret = exp_read_text(path, &c->header_event, false);
	if (!ret && !strstr(c->header_event.data, "type_len")) {
		exp_err("%s: no type_len field", path);
		ret = -EINVAL;
	}
	free(path);
	return ret;
}

/* trace_clock: optional, "[local] global ..." as tracefs shows it. */
static int exp_load_clock(struct exp_ctx *c)
{
	char *path = exp_path(c->dir, "trace_clock", NULL, NULL);
	struct exp_text t = { NULL, 0 };
	const char *lb, *rb, *q;
	int ret;

	if (!path)
		return -ENOMEM;
	ret = exp_read_text(path, &t, true);
	if (ret == -ENOENT) {
		strcpy(c->clock_text, "[local]\n");
		ret = 0;
		goto out;
	}
	if (ret)
		goto out;
	ret = -EINVAL;
	lb = strchr(t.data, '[');
	rb = lb ? strchr(lb, ']') : NULL;
	if (!lb || !rb || rb == lb + 1 || rb - lb - 1 > EXP_MAX_CLOCK ||
	    strchr(rb, '[')) {
		exp_err("%s: no single \"[clock]\" selection", path);
		goto out;
	}
	for (q = lb + 1; q < rb; q++) {
		if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
		      (*q >= '0' && *q <= '9') || *q == '-' || *q == '_')) {
			exp_err("%s: bad character in the clock name at offset %zu",
				path, (size_t)(q - t.data));
			goto out;
		}
	}
	snprintf(c->clock_text, sizeof(c->clock_text), "[%.*s]\n",
		 (int)(rb - lb - 1), lb + 1);
	ret = 0;
out:
	free(t.data);
	free(path);
	return ret;
}

static int exp_dir_filter(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

static bool exp_is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/*
 * libtraceevent accepts some broken formats (a field offset that is not a
 * number reads as 0): every field must lie in the first 64 KiB and no two
 * may overlap.
 */
static int exp_check_fields(struct tep_event *event, const char *path)
{
	struct tep_format_field *a, *b, *lists[2];
	unsigned int i, j;

	if (event->format.nr_common + event->format.nr_fields > 1024) {
		exp_err("%s: more than 1024 fields", path);
		return -E2BIG;
	}
	/*
	 * tep_data_type() reads the event id of every record through
	 * common_type without bounds: it must be where ftrace has it, in
	 * the two bytes a record is checked to have.
	 */
	a = tep_find_common_field(event, "common_type");
	if (!a || a->offset != 0 || a->size != 2) {
		exp_err("%s: common_type is not a 2-byte field at offset 0",
			path);
		return -EINVAL;
	}
	lists[0] = event->format.common_fields;
	lists[1] = event->format.fields;
	for (i = 0; i < 2; i++) {
		for (a = lists[i]; a; a = a->next) {
			if (a->offset < 0 || a->size <= 0 ||
			    a->offset + a->size > 65536) {
				exp_err("%s: field %s: bad offset %d or size %d",
					path, a->name, a->offset, a->size);
				return -EINVAL;
			}
			for (j = i; j < 2; j++) {
				for (b = j == i ? a->next : lists[j]; b;
				     b = b->next) {
					if (a->offset < b->offset + b->size &&
					    b->offset < a->offset + a->size) {
						exp_err("%s: fields %s and %s overlap",
							path, a->name, b->name);
						return -EINVAL;
					}
				}
			}
		}
	}
	return 0;
}

/* The check of the format file being loaded (large: not on the stack). */
static struct rbt_fmt exp_fmt;

/* One events/SYSTEM/EVENT/format file: parsed into c->tep, kept as text. */
static int exp_load_event(struct exp_ctx *c, struct exp_system *sys,
			  const char *name)
{
	char *path = exp_path(c->dir, "events", sys->name, name);
	struct exp_event *ev, *nev;
	struct tep_event *event = NULL;
	char *fpath = NULL;
	int ret = 0;

	if (!path)
		return -ENOMEM;
	if (!exp_is_dir(path))
		goto out;
	fpath = exp_path(path, "format", NULL, NULL);
	if (!fpath) {
		ret = -ENOMEM;
		goto out;
	}
	if (c->nr_events >= EXP_MAX_EVENTS) {
		exp_err("%s: more than %u event formats", fpath,
			EXP_MAX_EVENTS);
		ret = -E2BIG;
		goto out;
	}
	nev = realloc(sys->events, (sys->nr_events + 1) * sizeof(*nev));
	if (!nev) {
		ret = -ENOMEM;
		goto out;
	}
	sys->events = nev;
	ev = &sys->events[sys->nr_events];
	ev->format.data = NULL;
	ret = exp_read_text(fpath, &ev->format, false);
	if (ret)
		goto out;
	sys->nr_events++;
	c->nr_events++;
	/* libtraceevent crashes on some broken texts (fmtcheck.h) */
	if (!rbt_format_check(&exp_fmt, ev->format.data, ev->format.len,
			      c->page_size - EXP_PAGE_HDR_SIZE)) {
		exp_err("%s: line %u: %s", fpath, exp_fmt.line, exp_fmt.err);
		ret = -EINVAL;
		goto out;
	}
	/* tep_parse_format() may return 0 for a format it failed on. */
	if (tep_parse_format(c->tep, &event, ev->format.data, ev->format.len,
			     sys->name) || !event ||
	    (event->flags & TEP_EVENT_FL_FAILED)) {
		exp_err("%s: libtraceevent cannot parse the format", fpath);
		ret = -EINVAL;
	} else {
		ret = exp_check_fields(event, fpath);
	}
out:
	free(fpath);
	free(path);
	return ret;
}

static int exp_load_system(struct exp_ctx *c, const char *name)
{
	char *path = exp_path(c->dir, "events", name, NULL);
	struct exp_system *sys, *nsys;
	struct dirent **list = NULL;
	int n = 0, i, ret = 0;

	if (!path)
		return -ENOMEM;
	if (!exp_is_dir(path))
		goto out;
	if (strlen(name) > EXP_MAX_NAME) {
		exp_err("%s: system name longer than %u", path, EXP_MAX_NAME);
		ret = -ENAMETOOLONG;
		goto out;
	}
	if (c->nr_systems >= EXP_MAX_SYSTEMS) {
		exp_err("%s: more than %u event systems", path,
			EXP_MAX_SYSTEMS);
		ret = -E2BIG;
		goto out;
	}
	n = scandir(path, &list, exp_dir_filter, alphasort);
	if (n < 0) {
		ret = -errno;
		exp_err("%s: %s", path, strerror(errno));
		goto out;
	}
	nsys = realloc(c->systems, (c->nr_systems + 1) * sizeof(*nsys));
	if (!nsys) {
		ret = -ENOMEM;
		goto out;
	}
	c->systems = nsys;
	sys = &c->systems[c->nr_systems];
	memset(sys, 0, sizeof(*sys));
	sys->name = strdup(name);
	if (!sys->name) {
		ret = -ENOMEM;
		goto out;
	}
	c->nr_systems++;
	for (i = 0; i < n && !ret; i++) {
		if (strlen(list[i]->d_name) > EXP_MAX_NAME) {
			exp_err("%s/%s: event name longer than %u", path,
				list[i]->d_name, EXP_MAX_NAME);
			ret = -ENAMETOOLONG;
			break;
		}
		ret = exp_load_event(c, sys, list[i]->d_name);
	}
out:
	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
	free(path);
	return ret;
}

static int exp_load_formats(struct exp_ctx *c)
{
	char *path = exp_path(c->dir, "events", NULL, NULL);
	struct dirent **list = NULL;
	int n, i, ret = 0;

	if (!path)
		return -ENOMEM;
	n = scandir(path, &list, exp_dir_filter, alphasort);
	if (n < 0) {
		ret = -errno;
		exp_err("%s: %s", path, strerror(errno));
		n = 0;
		goto out;
	}
	for (i = 0; i < n && !ret; i++)
		ret = exp_load_system(c, list[i]->d_name);
	if (!ret && !c->nr_events) {
		exp_err("%s: no event format files (SYSTEM/EVENT/format)",
			path);
		ret = -ENOENT;
	}
out:
	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
	free(path);
	return ret;
}

/* "cpuN.raw" with N a decimal number without leading zeros: N, else -1. */
static long exp_cpu_file(const char *name)
{
	const char *p = name + 3;
	long cpu = 0;

	if (strncmp(name, "cpu", 3) || *p < '0' || *p > '9' ||
	    (*p == '0' && p[1] != '.'))
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		cpu = cpu * 10 + (*p - '0');
		if (cpu >= EXP_MAX_CPUS)
			return -2;
	}
	return strcmp(p, ".raw") ? -1 : cpu;
}

static int exp_find_cpus(struct exp_ctx *c)
{
	struct dirent **list = NULL;
	unsigned int cpu;
	char *path = NULL;
	long max = -1, n, i;
	int ret = 0;

	n = scandir(c->dir, &list, exp_dir_filter, alphasort);
	if (n < 0) {
		ret = -errno;
		exp_err("%s: %s", c->dir, strerror(errno));
		return ret;
	}
	for (i = 0; i < n; i++) {
		long num = exp_cpu_file(list[i]->d_name);

		if (num == -2) {
			exp_err("%s/%s: CPU number not below %d", c->dir,
				list[i]->d_name, EXP_MAX_CPUS);
			ret = -ERANGE;
			goto out;
		}
		if (num > max)
			max = num;
	}
	if (max < 0) {
		exp_err("%s: no per-CPU data (cpu0.raw ...)", c->dir);
		ret = -ENOENT;
		goto out;
	}
	c->nr_cpus = max + 1;
	c->cpu_size = calloc(c->nr_cpus, sizeof(*c->cpu_size));
	if (!c->cpu_size) {
		ret = -ENOMEM;
		goto out;
	}
	for (cpu = 0; cpu < c->nr_cpus; cpu++) {
		struct stat st;
		char name[32];

		snprintf(name, sizeof(name), "cpu%u.raw", cpu);
		free(path);
		path = exp_path(c->dir, name, NULL, NULL);
		if (!path) {
			ret = -ENOMEM;
			goto out;
		}
		if (stat(path, &st)) {
			ret = -errno;
			exp_err("%s: %s (CPUs 0..%u expected)", path,
				strerror(errno), c->nr_cpus - 1);
			goto out;
		}
		if (!S_ISREG(st.st_mode)) {
			exp_err("%s: not a regular file", path);
			ret = -EINVAL;
			goto out;
		}
		if (st.st_size % c->page_size) {
			exp_err("%s: truncated: %lld bytes, the page at offset %lld is not whole (%u-byte pages)",
				path, (long long)st.st_size,
				(long long)(st.st_size -
					    st.st_size % c->page_size),
				c->page_size);
			ret = -EINVAL;
			goto out;
		}
		c->cpu_size[cpu] = st.st_size;
	}
out:
	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
	free(path);
	return ret;
}

static int exp_pid_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static void exp_add_pid(struct exp_ctx *c, int pid)
{
	unsigned int h;

	if (pid <= 0 || c->pids_full)
		return;
	/* open addressing in a table twice as large as the pid limit */
	h = ((unsigned int)pid * 2654435761U) & (EXP_PID_HASH - 1);
	while (c->pid_hash[h]) {
		if (c->pid_hash[h] == pid)
			return;
		h = (h + 1) & (EXP_PID_HASH - 1);
	}
	if (c->nr_pids >= EXP_MAX_PIDS) {
		c->pids_full = true;
		return;
	}
	c->pid_hash[h] = pid;
	c->pids[c->nr_pids++] = pid;
}

static unsigned int exp_le32(const unsigned char *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (unsigned int)p[3] << 24;
}

static unsigned long long exp_le64(const unsigned char *p)
{
	return exp_le32(p) | (unsigned long long)exp_le32(p + 4) << 32;
}

static enum tep_endian exp_host_endian(void)
{
	unsigned int one = 1;

	return *(unsigned char *)&one ? TEP_LITTLE_ENDIAN : TEP_BIG_ENDIAN;
}

static void exp_put_le32_at(unsigned char *p, unsigned int v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

/*
 * Walk the entry headers of the page in c->page before kbuffer does:
 *
 * - bound every entry by the commit (padding by the page): kbuffer trusts
 *   the lengths, and a padding entry with a negative length makes it loop
 *   forever (libtraceevent 1.7);
 * - follow the time as kbuffer computes it, and turn an absolute time
 *   stamp that needs the carry out of its 59 bits (the clock crossed a
 *   multiple of 2^59 since the last full time) into a time extend of the
 *   same 8 bytes that gives the same time: kbuffer takes the top bits of
 *   an absolute stamp from the time before it but does not carry.
 *
 * Only entry headers (type_len, delta and the length or time word) are
 * read; events are left to kbuffer and libtraceevent.
 */
static int exp_walk_entries(struct exp_ctx *c, unsigned int commit,
			    const char *path, unsigned long long off)
{
	unsigned int data_size = c->page_size - EXP_PAGE_HDR_SIZE;
	unsigned char *data = c->page + EXP_PAGE_HDR_SIZE;
	unsigned long long pos = 0, end, len, ts, delta, word = 0;
	unsigned int hdr, type_len;

	ts = exp_le64(c->page);
	while (pos < commit) {
		if (pos + 4 > commit)
			goto trunc;
		hdr = exp_le32(data + pos);
		type_len = hdr & 0x1f;
		delta = hdr >> 5;
		if (type_len >= 29 || type_len == 0) {
			if (pos + 8 > (type_len == 29 ? data_size : commit))
				goto trunc;
			word = exp_le32(data + pos + 4);
		}
		switch (type_len) {
		case 29:
			/* padding: 4 + array[0] bytes, may end the page */
			len = word;
			end = pos + 4 + len;
			if (len > INT_MAX || end > data_size) {
				exp_err("%s: page at offset %llu: padding at data offset %llu runs past the page (length %llu)",
					path, off, pos, len);
				return -EINVAL;
			}
			ts += delta;	/* as kbuffer does */
			break;
		case 30:	/* time extend */
			ts += (word << 27) + delta;
			end = pos + 8;
			break;
		case 31: {	/* absolute time stamp, 59 bits */
			unsigned long long kts, fixed;

			kts = ((word << 27) | delta) | (ts & EXP_TS_MSB);
			/* a carry only across a wrap (rbn_fix_abs_ts()) */
			fixed = kts < ts && ts - kts > (1ULL << 58) ?
				kts + (1ULL << 59) : kts;
			if (fixed != kts) {
				delta = fixed - ts;	/* below 2^59 */
				exp_put_le32_at(data + pos, 30 |
						(unsigned int)(delta << 5));
				exp_put_le32_at(data + pos + 4, delta >> 27);
				c->abs_fixed++;
			}
			ts = fixed;
			end = pos + 8;
			break;
		}
		case 0:
			/* length in array[0], which counts itself */
			len = word;
			if (len < 4) {
				exp_err("%s: page at offset %llu: event at data offset %llu has length %llu",
					path, off, pos, len);
				return -EINVAL;
			}
			end = pos + 8 + ((len - 4 + 3) & ~3ULL);
			ts += delta;
			break;
		default:	/* 1..28: type_len * 4 bytes of data */
			end = pos + 4 + type_len * 4;
			ts += delta;
			break;
		}
		if (type_len != 29 && end > commit) {
			exp_err("%s: page at offset %llu: entry at data offset %llu (type_len %u) runs past the commit (%u)",
				path, off, pos, type_len, commit);
			return -EINVAL;
		}
		pos = end;
	}
	return 0;
trunc:
	exp_err("%s: page at offset %llu: entry header at data offset %llu cut off by the commit (%u)",
		path, off, pos, commit);
	return -EINVAL;
}

static void exp_put_le64_at(unsigned char *p, unsigned long long v)
{
	exp_put_le32_at(p, v);
	exp_put_le32_at(p + 4, v >> 32);
}

/*
 * kbuffer reports a page's missed events only with the page's first entry
 * (libtraceevent 1.7), and the first entry it returns is the first data
 * event: behind a time extend or stamp, the count is lost. On a page with
 * missed events, fold such leading entries into the page's time stamp:
 * the data moves down 8 bytes each time, with the stored count after it,
 * and the commit shrinks by as much. The times do not change. The page's
 * entries have been bounded by exp_walk_entries(). Return the new commit.
 */
static unsigned int exp_fold_first(struct exp_ctx *c,
				   unsigned long long commit_word,
				   unsigned int commit)
{
	unsigned char *data = c->page + EXP_PAGE_HDR_SIZE;
	unsigned long long ts = exp_le64(c->page), word;
	unsigned int hdr, type_len, move;
	bool folded = false;

	if (!(commit_word & EXP_MISSED_EVENTS))
		return commit;
	while (commit >= 8) {
		hdr = exp_le32(data);
		type_len = hdr & 0x1f;
		if (type_len != 30 && type_len != 31)
			break;
		word = exp_le32(data + 4);
		/* a stamp that needed a carry is an extend by now */
		if (type_len == 30)
			ts += (word << 27) + (hdr >> 5);
		else
			ts = (word << 27) | (hdr >> 5) | (ts & EXP_TS_MSB);
		move = commit - 8;
		if (commit_word & EXP_MISSED_STORED)
			move += EXP_LONG_SIZE;
		memmove(data, data + 8, move);
		memset(data + move, 0, 8);
		commit -= 8;
		folded = true;
	}
	if (folded) {
		exp_put_le64_at(c->page, ts);
		exp_put_le64_at(c->page + 8,
				(commit_word & ~EXP_COMMIT_MASK) | commit);
		c->pages_folded++;
	}
	return commit;
}

/*
 * Check one page image in c->page (page_size bytes, zeroes after it) and
 * note the pids of its records. @path and @off name it in messages.
 */
static int exp_check_page(struct exp_ctx *c, struct kbuffer *kbuf,
			  const char *path, unsigned long long off)
{
	unsigned int data_size = c->page_size - EXP_PAGE_HDR_SIZE;
	unsigned long long commit_word, commit, ts;
	unsigned int nr = 0, max_nr = data_size / 4 + 1;
	unsigned char *prev = NULL;
	void *data;

	commit_word = exp_le64(c->page + 8);
	commit = commit_word & EXP_COMMIT_MASK;
	if (commit_word & ~(EXP_COMMIT_MASK | EXP_MISSED_EVENTS |
			    EXP_MISSED_STORED)) {
		exp_err("%s: page at offset %llu: bad commit word %#llx",
			path, off, commit_word);
		return -EINVAL;
	}
	if (commit > data_size ||
	    ((commit_word & EXP_MISSED_STORED) &&
	     commit + EXP_LONG_SIZE > data_size)) {
		exp_err("%s: page at offset %llu: commit %llu runs past the %u data bytes of the page",
			path, off, commit, data_size);
		return -EINVAL;
	}
	if (exp_walk_entries(c, commit, path, off))
		return -EINVAL;
	commit = exp_fold_first(c, commit_word, commit);
	if (kbuffer_load_subbuffer(kbuf, c->page)) {
		exp_err("%s: page at offset %llu: kbuffer cannot load it",
			path, off);
		return -EINVAL;
	}
	for (data = kbuffer_read_event(kbuf, &ts); data;
	     data = kbuffer_next_event(kbuf, &ts)) {
		unsigned char *p = data;
		long long size = kbuffer_event_size(kbuf);
		unsigned long long roff = p - c->page;
		struct tep_record rec;
		struct tep_event *event;
		struct tep_format_field *f;
		int type;

		if (p < c->page + EXP_PAGE_HDR_SIZE || p <= prev ||
		    ++nr > max_nr || size < 0 ||
		    roff + size > EXP_PAGE_HDR_SIZE + commit) {
			exp_err("%s: page at offset %llu: bad record at page offset %llu (length %lld, page commit %llu)",
				path, off, roff, size, commit);
			return -EINVAL;
		}
		prev = p;
		memset(&rec, 0, sizeof(rec));
		rec.ts = ts;
		rec.data = data;
		rec.size = size;
		rec.offset = off + roff;
		if (size < 2) {
			exp_err("%s: page at offset %llu: record at page offset %llu too short (%lld bytes) for an event id",
				path, off, roff, size);
			return -EINVAL;
		}
		type = tep_data_type(c->tep, &rec);
		event = tep_find_event(c->tep, type);
		if (!event) {
			exp_err("%s: page at offset %llu: record at page offset %llu has unknown event id %d",
				path, off, roff, type);
			return -EINVAL;
		}
		for (f = event->format.common_fields; f; f = f->next)
			if ((unsigned long long)f->offset + f->size >
			    (unsigned long long)size)
				break;
		if (!f)
			for (f = event->format.fields; f; f = f->next)
				if (!(f->flags & TEP_FIELD_IS_DYNAMIC) &&
				    (unsigned long long)f->offset + f->size >
				    (unsigned long long)size)
					break;
		if (f) {
			exp_err("%s: page at offset %llu: record at page offset %llu (%lld bytes) too short for field %s of %s:%s",
				path, off, roff, size, f->name,
				event->system, event->name);
			return -EINVAL;
		}
		exp_add_pid(c, tep_data_pid(c->tep, &rec));
		c->records++;
	}
	return 0;
}

/* Read page @idx of @f into c->page; -errno with a message on failure. */
static int exp_read_page(struct exp_ctx *c, FILE *f, const char *path,
			 unsigned long long idx)
{
	if (fread(c->page, 1, c->page_size, f) != c->page_size) {
		exp_err("%s: short read at offset %llu", path,
			idx * c->page_size);
		return -EIO;
	}
	return 0;
}

static int exp_check_cpus(struct exp_ctx *c)
{
	struct kbuffer *kbuf;
	unsigned int cpu;
	int ret = 0;

	kbuf = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	if (!kbuf)
		return -ENOMEM;
	for (cpu = 0; cpu < c->nr_cpus && !ret; cpu++) {
		unsigned long long i, nr = c->cpu_size[cpu] / c->page_size;
		char name[32];
		char *path;
		FILE *f;

		snprintf(name, sizeof(name), "cpu%u.raw", cpu);
		path = exp_path(c->dir, name, NULL, NULL);
		if (!path) {
			ret = -ENOMEM;
			break;
		}
		f = fopen(path, "r");
		if (!f) {
			ret = -errno;
			exp_err("%s: %s", path, strerror(errno));
			free(path);
			break;
		}
		for (i = 0; i < nr && !ret; i++) {
			ret = exp_read_page(c, f, path, i);
			if (!ret)
				ret = exp_check_page(c, kbuf, path,
						     i * c->page_size);
			c->pages++;
		}
		fclose(f);
		free(path);
	}
	kbuffer_free(kbuf);
	return ret;
}

/*
 * saved_cmdlines as tracefs prints it, which is also the cmdlines section
 * of a trace-cmd file: "PID COMM" lines, PID decimal, COMM printable and
 * at most 255 bytes (rbtrace report reads it the same way).
 */
static int exp_check_cmdlines(const char *path, const struct exp_text *t)
{
	const char *p = t->data, *end = t->data + t->len, *nl, *q;
	unsigned int line = 0;

	for (; p < end; p = nl + 1) {
		nl = memchr(p, '\n', end - p);
		if (!nl)
			nl = end;
		line++;
		if (nl == p)
			continue;
		for (q = p; q < nl && *q >= '0' && *q <= '9'; q++)
			;
		if (q == p || q - p > 10 || q + 1 >= nl || *q != ' ' ||
		    nl - q - 1 > 255 || strtoll(p, NULL, 10) > INT_MAX)
			goto bad;
		for (q++; q < nl; q++)
			if ((unsigned char)*q < 0x20 || *q == 0x7f)
				goto bad;
	}
	return 0;
bad:
	exp_err("%s: line %u: not \"PID COMM\"", path, line);
	return -EINVAL;
}

/* cmdlines: REC/saved_cmdlines if present, else "pid rbnest" per pid. */
static int exp_load_cmdlines(struct exp_ctx *c)
{
	char *path = exp_path(c->dir, "saved_cmdlines", NULL, NULL);
	size_t cap, len = 0;
	unsigned int i;
	int ret;

	if (!path)
		return -ENOMEM;
	ret = exp_read_text(path, &c->cmdlines, true);
	if (!ret)
		ret = exp_check_cmdlines(path, &c->cmdlines);
	free(path);
	if (ret != -ENOENT)
		return ret;
	qsort(c->pids, c->nr_pids, sizeof(*c->pids), exp_pid_cmp);
	cap = (size_t)c->nr_pids * 24 + 1;
	c->cmdlines.data = malloc(cap);
	if (!c->cmdlines.data)
		return -ENOMEM;
	c->cmdlines.data[0] = '\0';
	for (i = 0; i < c->nr_pids; i++)
		len += snprintf(c->cmdlines.data + len, cap - len,
				"%d rbnest\n", c->pids[i]);
	c->cmdlines.len = len;
	return 0;
}

/* ---- output ---------------------------------------------------------- */

struct exp_out {
	FILE *f;
	const char *path;
	unsigned long long pos;
	int err;
};

static void exp_put(struct exp_out *o, const void *p, size_t len)
{
	if (o->err || !len)
		return;
	if (fwrite(p, 1, len, o->f) != len) {
		o->err = errno ? -errno : -EIO;
		exp_err("%s: write error at offset %llu: %s", o->path,
			o->pos, strerror(-o->err));
		return;
	}
	o->pos += len;
}

static void exp_put_le(struct exp_out *o, unsigned long long v,
		       unsigned int bytes)
{
	unsigned char b[8];
	unsigned int i;

	for (i = 0; i < bytes; i++)
		b[i] = v >> (8 * i);
	exp_put(o, b, bytes);
}

static void exp_put_str(struct exp_out *o, const char *s)
{
	exp_put(o, s, strlen(s) + 1);
}

static void exp_put_zeroes(struct exp_out *o, unsigned long long len)
{
	static const unsigned char zero[512];

	while (len && !o->err) {
		size_t n = len < sizeof(zero) ? len : sizeof(zero);

		exp_put(o, zero, n);
		len -= n;
	}
}

static unsigned long long exp_align(unsigned long long v, unsigned int a)
{
	return (v + a - 1) & ~(unsigned long long)(a - 1);
}

static void exp_put_headers(struct exp_ctx *c, struct exp_out *o)
{
	unsigned int s, e;

	exp_put(o, EXP_MAGIC, strlen(EXP_MAGIC));
	exp_put_str(o, EXP_FILE_VERSION);
	exp_put_le(o, 0, 1);			/* little-endian */
	exp_put_le(o, EXP_LONG_SIZE, 1);
	exp_put_le(o, c->page_size, 4);

	exp_put_str(o, "header_page");
	exp_put_le(o, c->header_page.len, 8);
	exp_put(o, c->header_page.data, c->header_page.len);
	exp_put_str(o, "header_event");
	exp_put_le(o, c->header_event.len, 8);
	exp_put(o, c->header_event.data, c->header_event.len);

	exp_put_le(o, 0, 4);			/* ftrace event formats */
	exp_put_le(o, c->nr_systems, 4);
	for (s = 0; s < c->nr_systems; s++) {
		struct exp_system *sys = &c->systems[s];

		exp_put_str(o, sys->name);
		exp_put_le(o, sys->nr_events, 4);
		for (e = 0; e < sys->nr_events; e++) {
			exp_put_le(o, sys->events[e].format.len, 8);
			exp_put(o, sys->events[e].format.data,
				sys->events[e].format.len);
		}
	}
	exp_put_le(o, 0, 4);			/* kallsyms */
	exp_put_le(o, 0, 4);			/* printk formats */
	exp_put_le(o, c->cmdlines.len, 8);
	exp_put(o, c->cmdlines.data, c->cmdlines.len);
	exp_put_le(o, c->nr_cpus, 4);

	exp_put(o, "options  ", 10);
	exp_put_le(o, EXP_OPT_TRACECLOCK, 2);
	exp_put_le(o, strlen(c->clock_text) + 1, 4);
	exp_put_str(o, c->clock_text);
	exp_put_le(o, EXP_OPT_CPUCOUNT, 2);
	exp_put_le(o, 4, 4);
	exp_put_le(o, c->nr_cpus, 4);
	exp_put_le(o, EXP_OPT_DONE, 2);
}

/*
 * Copy one CPU's pages, checked (and their stamps fixed) again as they
 * are written: what is written is what was checked.
 */
static int exp_copy_cpu(struct exp_ctx *c, struct exp_out *o,
			struct kbuffer *kbuf, unsigned int cpu)
{
	unsigned long long i, nr = c->cpu_size[cpu] / c->page_size;
	char name[32];
	char *path;
	FILE *f;
	int ret = 0;

	snprintf(name, sizeof(name), "cpu%u.raw", cpu);
	path = exp_path(c->dir, name, NULL, NULL);
	if (!path)
		return -ENOMEM;
	f = fopen(path, "r");
	if (!f) {
		ret = -errno;
		exp_err("%s: %s", path, strerror(errno));
		free(path);
		return ret;
	}
	for (i = 0; i < nr && !ret && !o->err; i++) {
		ret = exp_read_page(c, f, path, i);
		if (!ret)
			ret = exp_check_page(c, kbuf, path, i * c->page_size);
		if (!ret)
			exp_put(o, c->page, c->page_size);
	}
	if (!ret && fgetc(f) != EOF) {
		exp_err("%s: grew while it was exported", path);
		ret = -EAGAIN;
	}
	fclose(f);
	free(path);
	return ret ? ret : o->err;
}

static int exp_write(struct exp_ctx *c, const char *out_path)
{
	unsigned long long off, records = c->records, fixed = c->abs_fixed;
	unsigned long long folded = c->pages_folded;
	struct exp_out o = { .path = out_path };
	/* "-": standard output, written in order (the file is never sought) */
	bool to_stdout = !strcmp(out_path, "-");
	struct kbuffer *kbuf;
	struct stat st;
	unsigned int cpu;
	int ret = 0;

	kbuf = kbuffer_alloc(KBUFFER_LSIZE_8, KBUFFER_ENDIAN_LITTLE);
	if (!kbuf)
		return -ENOMEM;
	if (to_stdout)
		o.path = "standard output";
	o.f = to_stdout ? stdout : fopen(out_path, "w");
	if (!o.f) {
		ret = -errno;
		exp_err("%s: %s", out_path, strerror(errno));
		kbuffer_free(kbuf);
		return ret;
	}
	exp_put_headers(c, &o);
	exp_put(&o, "flyrecord", 10);
	/* the CPU table, the trace clock, then the page-aligned data */
	off = o.pos + (unsigned long long)c->nr_cpus * 16 + 8 +
	      strlen(c->clock_text);
	off = exp_align(off, c->page_size);
	for (cpu = 0; cpu < c->nr_cpus; cpu++) {
		exp_put_le(&o, off, 8);
		exp_put_le(&o, c->cpu_size[cpu], 8);
		off += c->cpu_size[cpu];
	}
	exp_put_le(&o, strlen(c->clock_text), 8);
	exp_put(&o, c->clock_text, strlen(c->clock_text));
	exp_put_zeroes(&o, exp_align(o.pos, c->page_size) - o.pos);
	c->records = 0;
	c->abs_fixed = 0;
	c->pages_folded = 0;
	for (cpu = 0; cpu < c->nr_cpus && !ret && !o.err; cpu++)
		ret = exp_copy_cpu(c, &o, kbuf, cpu);
	if (!ret)
		ret = o.err;
	if (!ret && (c->records != records || c->abs_fixed != fixed ||
		     c->pages_folded != folded)) {
		exp_err("%s: the recording changed while it was exported",
			c->dir);
		ret = -EAGAIN;
	}
	kbuffer_free(kbuf);
	if ((to_stdout ? fflush(o.f) : fclose(o.f)) && !ret) {
		ret = -errno;
		exp_err("%s: %s", o.path, strerror(errno));
	}
	/* never a device or FIFO given as the output (-o /dev/null) */
	if (ret && !to_stdout && !stat(out_path, &st) && S_ISREG(st.st_mode))
		unlink(out_path);
	return ret;
}

static void exp_free(struct exp_ctx *c)
{
	unsigned int s, e;

	for (s = 0; s < c->nr_systems; s++) {
		for (e = 0; e < c->systems[s].nr_events; e++)
			free(c->systems[s].events[e].format.data);
		free(c->systems[s].events);
		free(c->systems[s].name);
	}
	free(c->systems);
	free(c->header_page.data);
	free(c->header_event.data);
	free(c->cmdlines.data);
	free(c->cpu_size);
	free(c->pids);
	free(c->pid_hash);
	free(c->page);
	if (c->tep)
		tep_free(c->tep);
}

/**
 * rbtrace_export_stats - write a recording as a trace-cmd data file
 * @rec_dir:	the recording: header_page, header_event,
 *		events/SYSTEM/EVENT/format, cpu0.raw .. cpuN.raw, and
 *		optionally trace_clock and saved_cmdlines
 * @out_path:	the trace-cmd file to write (replaced; removed on error)
 * @stats:	if not NULL, filled in with what was written
 *
 * Writes a trace-cmd file of version 6 that "trace-cmd report" reads: the
 * recording's header_page and header_event, its event formats, cmdlines
 * (saved_cmdlines, or one "rbnest" entry per pid found in the records),
 * the trace clock option (the recording's trace_clock, default "local")
 * and a flyrecord with every CPU's sub-buffers, page aligned. Every input
 * is checked first; nothing is written for a recording that does not pass.
 *
 * Return: 0, or a negative errno after a message on stderr that names the
 * file (and the offset) at fault.
 */
int rbtrace_export_stats(const char *rec_dir, const char *out_path,
			 struct rbtrace_export_stats *stats)
{
	struct exp_ctx c;
	int ret;

	if (!rec_dir || !out_path)
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	c.dir = rec_dir;
	c.tep = tep_alloc();
	c.pids = malloc(EXP_MAX_PIDS * sizeof(*c.pids));
	c.pid_hash = calloc(EXP_PID_HASH, sizeof(*c.pid_hash));
	if (!c.tep || !c.pids || !c.pid_hash) {
		ret = -ENOMEM;
		goto out;
	}
	tep_set_long_size(c.tep, EXP_LONG_SIZE);
	tep_set_file_bigendian(c.tep, TEP_LITTLE_ENDIAN);
	tep_set_local_bigendian(c.tep, exp_host_endian());

	ret = exp_load_header_page(&c);
	if (!ret)
		ret = exp_load_header_event(&c);
	if (!ret)
		ret = exp_load_clock(&c);
	if (!ret)
		ret = exp_load_formats(&c);
	if (!ret)
		ret = exp_find_cpus(&c);
	if (ret)
		goto out;
	c.page = calloc(1, c.page_size + EXP_SLACK);
	if (!c.page) {
		ret = -ENOMEM;
		goto out;
	}
	ret = exp_check_cpus(&c);
	if (!ret)
		ret = exp_load_cmdlines(&c);
	if (!ret)
		ret = exp_write(&c, out_path);
	if (!ret && stats) {
		stats->nr_cpus = c.nr_cpus;
		stats->nr_events = c.nr_events;
		stats->pages = c.pages;
		stats->records = c.records;
		stats->abs_fixed = c.abs_fixed;
		stats->pages_folded = c.pages_folded;
		stats->nr_pids = c.nr_pids;
		stats->page_size = c.page_size;
	}
out:
	if (ret == -ENOMEM)
		exp_err("out of memory");
	exp_free(&c);
	return ret;
}

/**
 * rbtrace_export - write a recording as a trace-cmd data file
 * @rec_dir:	the recording directory (see rbtrace_export_stats())
 * @out_path:	the trace-cmd file to write
 *
 * Return: 0, or a negative errno after a message on stderr.
 */
int rbtrace_export(const char *rec_dir, const char *out_path)
{
	return rbtrace_export_stats(rec_dir, out_path, NULL);
}
