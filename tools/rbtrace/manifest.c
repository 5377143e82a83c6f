// SPDX-License-Identifier: GPL-2.0
/*
 * manifest.c - a recording's manifest: written by "rbtrace record", read
 * by check, report and export, which refuse the same recordings.
 *
 * REC/manifest is text, one "key: value" per line ('#' starts a comment
 * line). record writes its first part before it reads the first page and
 * appends the rest once every reader is closed, so a recording whose
 * rbtrace record was killed has no "end:" line:
 *
 *   rbtrace-manifest: 1          the format (a newer one is refused)
 *   rbtrace: VERSION
 *   module: DIR                  the module's debugfs directory (-d)
 *   kernel: RELEASE              uname -r, and machine: uname -m
 *   param.NAME: VALUE            /sys/module/rbnest/parameters/NAME
 *   setting.NAME: VALUE          DIR/NAME: trace_clock, timestamp_mode,
 *                                buffer_size_kb, buffer_percent, validate
 *   tracing_on: 0|1              at the start (end.tracing_on: at the end)
 *   sources: NAME ...|none       the sources on at the start (end.sources)
 *   subbuf_size: BYTES           a sub-buffer, header included
 *   cpus: N ...                  the CPUs recorded
 *   start: SEC.NSEC              CLOCK_REALTIME (end: at the end)
 *   start.stats.cpuN: K=V ...    DIR/per_cpu/cpuN/stats at the start
 *   stopped: time|size|signal|end-of-data
 *   cpuN.pages: N                what record wrote into cpuN.raw
 *   cpuN.bytes: N
 *   cpuN.lost: N                 the missed-events counts it saw there
 *   end.stats.cpuN: K=V ...      the stats at the end
 *   saved_cmdlines: N lines|none DIR/saved_cmdlines, copied when present
 *   end: SEC.NSEC
 *
 * Unknown keys are skipped: a reader of format 1 takes a manifest with
 * more keys. The counters of "rbtrace check" are compared in
 * rbt_manifest_check(); the relation and why it holds are told there.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "fmtcheck.h"
#include "manifest.h"
#include "rbtrace.h"

#define MAN_MAX_CPUS		1024		/* rbtrace.c's MAX_CPUS */
#define MAN_MAX_TEXT		(4U << 20)	/* a manifest, a stats file */
#define MAN_PARAMS_DIR		"/sys/module/rbnest/parameters"
#define MAN_PG_HDR		16U
#define MAN_COMMIT_MASK		((1ULL << 30) - 1)

/* The counters of a stats file the checks use. */
struct man_stats {
	bool have;
	unsigned long long written, read, overrun, dropped, commit_overrun;
	unsigned int seen;		/* bits of the five above */
};

struct man_cpu {
	bool listed;
	bool have_bytes, have_lost;
	unsigned long long bytes, pages, lost;
	struct man_stats start, end;
};

/* The manifest rbt_rec_verify() read last. */
static struct {
	bool present;
	char path[PATH_MAX];
	unsigned long long subbuf;
	bool have_subbuf, have_cpus, have_end;
	int tracing_on, end_tracing_on;		/* -1: not said */
	char sources[256];
	char stopped[32];
	int nr_listed;
	struct man_cpu cpu[MAN_MAX_CPUS];
} man;

/* ------------------------------------------------------------------ */
/* Files                                                              */
/* ------------------------------------------------------------------ */

/* A text file of at most MAN_MAX_TEXT bytes, NUL-terminated; NULL + errno. */
static char *man_read_text(const char *path, size_t *len)
{
	size_t n = 0, cap = 4096;
	char *buf = malloc(cap + 1), *nb;
	ssize_t r;
	int fd, err;

	if (!buf)
		return NULL;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		goto fail;
	for (;;) {
		if (n == cap) {
			if (cap >= MAN_MAX_TEXT) {
				errno = EFBIG;
				goto fail_fd;
			}
			cap *= 2;
			nb = realloc(buf, cap + 1);
			if (!nb)
				goto fail_fd;
			buf = nb;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0)
			goto fail_fd;
		if (!r)
			break;
		n += r;
	}
	close(fd);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
fail_fd:
	err = errno;
	close(fd);
	errno = err;
fail:
	err = errno;
	free(buf);
	errno = err;
	return NULL;
}

static char *man_path(char *buf, size_t size, const char *dir,
		      const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(buf, size, "%s/", dir);
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < size)
		vsnprintf(buf + n, size - n, fmt, ap);
	va_end(ap);
	return buf;
}

/* "cpuN.raw", N decimal without a leading zero and below MAN_MAX_CPUS. */
static int man_cpu_file(const char *name)
{
	const char *p = name + 3;
	int cpu = 0;

	if (strncmp(name, "cpu", 3) || *p < '0' || *p > '9' ||
	    (*p == '0' && p[1] >= '0' && p[1] <= '9'))
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		cpu = cpu * 10 + (*p - '0');
		if (cpu >= MAN_MAX_CPUS)
			return -1;
	}
	return strcmp(p, ".raw") ? -1 : cpu;
}

/* ------------------------------------------------------------------ */
/* Writing                                                            */
/* ------------------------------------------------------------------ */

/* One line of @text (or all of it), control characters made '?'. */
static void man_put_value(FILE *f, const char *text, bool one_line)
{
	const char *p = text;
	size_t n;

	while (*p == ' ' || *p == '\t')
		p++;
	n = strlen(p);
	if (one_line && strchr(p, '\n'))
		n = strchr(p, '\n') - p;
	while (n && (p[n - 1] == '\n' || p[n - 1] == ' ' || p[n - 1] == '\t'))
		n--;
	for (; n; n--, p++)
		fputc((unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p, f);
	fputc('\n', f);
}

/* "key: " and the first line of the file @path, if it can be read. */
static void man_put_file(FILE *f, const char *key, const char *path)
{
	char *text = man_read_text(path, NULL);

	if (!text)
		return;
	fprintf(f, "%s: ", key);
	man_put_value(f, text, true);
	free(text);
}

/* The "[selected]" one of a "a [b] c" choice file. */
static void man_put_choice(FILE *f, const char *key, const char *path)
{
	char *text = man_read_text(path, NULL), *a, *b;

	if (!text)
		return;
	a = strchr(text, '[');
	b = a ? strchr(a, ']') : NULL;
	if (a && b) {
		*b = '\0';
		fprintf(f, "%s: ", key);
		man_put_value(f, a + 1, true);
	} else {
		fprintf(f, "%s: ", key);
		man_put_value(f, text, true);
	}
	free(text);
}

/* The sources on, from DIR/sources ("NAME on|off ..." per line). */
static void man_put_sources(FILE *f, const char *key, const char *moddir)
{
	char path[PATH_MAX], *text, *line, *save = NULL;
	unsigned int on = 0;

	text = man_read_text(man_path(path, sizeof(path), moddir, "sources"),
			     NULL);
	if (!text)
		return;
	fprintf(f, "%s:", key);
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[64], state[8];

		if (sscanf(line, "%63[A-Za-z0-9_-] %7s", name, state) == 2 &&
		    !strcmp(state, "on")) {
			fprintf(f, " %s", name);
			on++;
		}
	}
	fprintf(f, "%s\n", on ? "" : " none");
	free(text);
}

/* DIR/per_cpu/cpuN/stats ("name: value" lines) as "K=V ..." on one line. */
static void man_put_stats(FILE *f, const char *when, const char *moddir,
			  int cpu)
{
	char path[PATH_MAX], *text, *line, *save = NULL;

	text = man_read_text(man_path(path, sizeof(path), moddir,
				      "per_cpu/cpu%d/stats", cpu), NULL);
	if (!text)
		return;
	fprintf(f, "%s.stats.cpu%d:", when, cpu);
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[64];
		unsigned long long v;

		if (sscanf(line, "%63[a-z0-9_]: %llu", name, &v) == 2)
			fprintf(f, " %s=%llu", name, v);
	}
	fputc('\n', f);
	free(text);
}

static void man_put_time(FILE *f, const char *key)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	fprintf(f, "%s: %lld.%09ld\n", key, (long long)ts.tv_sec, ts.tv_nsec);
}

static int man_close(FILE *f, const char *path)
{
	int err = ferror(f) ? (errno ? errno : EIO) : 0;

	if (fclose(f) && !err)
		err = errno;
	if (!err)
		return 0;
	fprintf(stderr, "rbtrace record: %s: %s\n", path, strerror(err));
	return -1;
}

static FILE *man_open(const char *out, const char *mode, char *path,
		      size_t size)
{
	FILE *f = fopen(man_path(path, size, out, RBT_MANIFEST), mode);

	if (!f)
		fprintf(stderr, "rbtrace record: %s: %s\n", path,
			strerror(errno));
	return f;
}

int rbt_manifest_begin(const char *out, const char *moddir, const int *cpus,
		       int nr, unsigned int subbuf)
{
	static const char *const settings[] = {
		"buffer_size_kb", "buffer_percent", "validate",
	};
	char path[PATH_MAX], p[PATH_MAX];
	struct dirent **list = NULL;
	struct utsname u;
	FILE *f;
	int i, n;

	f = man_open(out, "w", path, sizeof(path));
	if (!f)
		return -1;
	fprintf(f, "# what rbtrace record recorded here (see rbtrace's README)\n");
	fprintf(f, "rbtrace-manifest: %d\n", RBT_MANIFEST_FORMAT);
	fprintf(f, "rbtrace: %s\n", RBTRACE_VERSION);
	fprintf(f, "module: ");
	man_put_value(f, moddir, true);
	if (!uname(&u)) {
		fprintf(f, "kernel: ");
		man_put_value(f, u.release, true);
		fprintf(f, "machine: ");
		man_put_value(f, u.machine, true);
	}
	n = scandir(MAN_PARAMS_DIR, &list, NULL, alphasort);
	for (i = 0; i < n; i++) {
		char key[300];

		if (list[i]->d_name[0] != '.') {
			snprintf(key, sizeof(key), "param.%s",
				 list[i]->d_name);
			man_put_file(f, key, man_path(p, sizeof(p),
						      MAN_PARAMS_DIR, "%s",
						      list[i]->d_name));
		}
		free(list[i]);
	}
	free(list);
	man_put_choice(f, "setting.trace_clock",
		       man_path(p, sizeof(p), moddir, "trace_clock"));
	man_put_choice(f, "setting.timestamp_mode",
		       man_path(p, sizeof(p), moddir, "timestamp_mode"));
	for (i = 0; i < (int)ARRAY_SIZE(settings); i++) {
		char key[64];

		snprintf(key, sizeof(key), "setting.%s", settings[i]);
		man_put_file(f, key, man_path(p, sizeof(p), moddir, "%s",
					      settings[i]));
	}
	man_put_file(f, "tracing_on", man_path(p, sizeof(p), moddir,
					       "tracing_on"));
	man_put_sources(f, "sources", moddir);
	fprintf(f, "subbuf_size: %u\n", subbuf);
	fprintf(f, "cpus:");
	for (i = 0; i < nr; i++)
		fprintf(f, " %d", cpus[i]);
	fprintf(f, "\n");
	man_put_time(f, "start");
	for (i = 0; i < nr; i++)
		man_put_stats(f, "start", moddir, cpus[i]);
	return man_close(f, path);
}

/* DIR/saved_cmdlines into OUT/saved_cmdlines; its line count, -1 if none. */
static long man_copy_cmdlines(const char *out, const char *moddir)
{
	char from[PATH_MAX], to[PATH_MAX], *text;
	size_t len, i;
	long lines = 0;
	FILE *f;

	text = man_read_text(man_path(from, sizeof(from), moddir,
				      "saved_cmdlines"), &len);
	if (!text)
		return -1;
	for (i = 0; i < len; i++)
		lines += text[i] == '\n';
	f = fopen(man_path(to, sizeof(to), out, "saved_cmdlines"), "w");
	if (!f || fwrite(text, 1, len, f) != len || man_close(f, to)) {
		if (!f)
			fprintf(stderr, "rbtrace record: %s: %s\n", to,
				strerror(errno));
		free(text);
		return -2;
	}
	free(text);
	return lines;
}

int rbt_manifest_end(const char *out, const char *moddir, const int *cpus,
		     int nr, const unsigned long long *bytes,
		     const unsigned long long *lost, unsigned int subbuf,
		     const char *stopped)
{
	char path[PATH_MAX], p[PATH_MAX];
	long lines;
	FILE *f;
	int i;

	lines = man_copy_cmdlines(out, moddir);
	if (lines == -2)
		return -1;
	f = man_open(out, "a", path, sizeof(path));
	if (!f)
		return -1;
	fprintf(f, "stopped: %s\n", stopped);
	man_put_file(f, "end.tracing_on", man_path(p, sizeof(p), moddir,
						   "tracing_on"));
	man_put_sources(f, "end.sources", moddir);
	for (i = 0; i < nr; i++) {
		fprintf(f, "cpu%d.pages: %llu\n", cpus[i], bytes[i] / subbuf);
		fprintf(f, "cpu%d.bytes: %llu\n", cpus[i], bytes[i]);
		fprintf(f, "cpu%d.lost: %llu\n", cpus[i], lost[i]);
	}
	for (i = 0; i < nr; i++)
		man_put_stats(f, "end", moddir, cpus[i]);
	if (lines >= 0)
		fprintf(f, "saved_cmdlines: %ld lines\n", lines);
	else
		fprintf(f, "saved_cmdlines: none\n");
	man_put_time(f, "end");
	return man_close(f, path);
}

/* ------------------------------------------------------------------ */
/* The module directory and the output directory of record            */
/* ------------------------------------------------------------------ */

int rbt_module_dir_check(const char *cmd, const char *moddir)
{
	char path[PATH_MAX];
	int fd;

	fd = open(man_path(path, sizeof(path), moddir, "header_page"),
		  O_RDONLY);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno == EACCES || errno == EPERM)
		fprintf(stderr, "rbtrace %s: %s: %s: run as root (debugfs is root's only)\n",
			cmd, path, strerror(errno));
	else if (errno == ENOENT)
		fprintf(stderr, "rbtrace %s: %s: %s: is rbnest.ko loaded and debugfs mounted at /sys/kernel/debug? (-d DIR: the module's directory)\n",
			cmd, path, strerror(errno));
	else
		fprintf(stderr, "rbtrace %s: %s: %s\n", cmd, path,
			strerror(errno));
	return -1;
}

/* A file of a recording: header_page, cpuN.raw, events/..., ... */
static bool man_rec_file(const char *name)
{
	static const char *const files[] = {
		RBT_MANIFEST, "header_page", "header_event", "trace_clock",
		"saved_cmdlines", "events",
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(files); i++)
		if (!strcmp(name, files[i]))
			return true;
	return man_cpu_file(name) >= 0;
}

/*
 * Remove DIR/events: SYSTEM/EVENT/format files and their directories
 * only; anything else in it stays (and so does the directory).
 */
static int man_remove_events(const char *out)
{
	char path[PATH_MAX], sub[PATH_MAX * 2], f[PATH_MAX * 3];
	struct dirent *s, *e;
	DIR *ds, *de;
	int ret = 0;

	man_path(path, sizeof(path), out, "events");
	ds = opendir(path);
	if (!ds)
		return errno == ENOENT ? 0 : -1;
	while ((s = readdir(ds))) {
		if (s->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, s->d_name);
		de = opendir(sub);
		if (!de) {
			ret = -1;
			continue;
		}
		while ((e = readdir(de))) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(f, sizeof(f), "%s/%s/format", sub, e->d_name);
			if (unlink(f) && errno != ENOENT)
				ret = -1;
			snprintf(f, sizeof(f), "%s/%s", sub, e->d_name);
			if (rmdir(f))
				ret = -1;
		}
		closedir(de);
		if (rmdir(sub))
			ret = -1;
	}
	closedir(ds);
	if (rmdir(path))
		ret = -1;
	return ret;
}

int rbt_rec_prepare_dir(const char *out, bool force)
{
	char path[PATH_MAX], first[NAME_MAX + 1] = "";
	struct dirent *d;
	bool rec = false;
	struct stat st;
	DIR *dir;

	if (!strcmp(out, "-")) {
		fprintf(stderr, "rbtrace record: -o -: a recording is a directory of files, not a stream: give a directory\n");
		return -1;
	}
	if (mkdir(out, 0755) == 0)
		return 0;
	if (errno != EEXIST) {
		fprintf(stderr, "rbtrace record: %s: %s\n", out,
			strerror(errno));
		return -1;
	}
	dir = opendir(out);
	if (!dir) {
		fprintf(stderr, "rbtrace record: %s: %s\n", out,
			strerror(errno));
		return -1;
	}
	while ((d = readdir(dir))) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		man_path(path, sizeof(path), out, "%s", d->d_name);
		/* a FIFO or device cpuN.raw is an output to write into */
		if (man_cpu_file(d->d_name) >= 0 &&
		    (stat(path, &st) || !S_ISREG(st.st_mode)))
			continue;
		if (man_rec_file(d->d_name)) {
			if (strcmp(d->d_name, "events") &&
			    strcmp(d->d_name, "header_event") &&
			    strcmp(d->d_name, "trace_clock") &&
			    strcmp(d->d_name, "saved_cmdlines"))
				rec = true;
		} else if (!*first) {
			snprintf(first, sizeof(first), "%s", d->d_name);
		}
	}
	closedir(dir);
	if (!rec && !force)
		return 0;
	if (!force) {
		fprintf(stderr, "rbtrace record: %s already holds a recording: give another directory, or --force to replace it\n",
			out);
		return -1;
	}
	if (*first) {
		fprintf(stderr, "rbtrace record: --force: %s holds %s, which is not part of a recording: not emptied, give another directory\n",
			out, first);
		return -1;
	}
	/* --force: the files of a recording go, nothing else is there */
	dir = opendir(out);
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		if (!man_rec_file(d->d_name) || !strcmp(d->d_name, "events"))
			continue;
		man_path(path, sizeof(path), out, "%s", d->d_name);
		if (man_cpu_file(d->d_name) >= 0 &&
		    (stat(path, &st) || !S_ISREG(st.st_mode)))
			continue;
		if (unlink(path)) {
			fprintf(stderr, "rbtrace record: --force: %s: %s\n",
				path, strerror(errno));
			closedir(dir);
			return -1;
		}
	}
	closedir(dir);
	if (man_remove_events(out)) {
		fprintf(stderr, "rbtrace record: --force: %s/events: cannot remove it (it holds more than format files?)\n",
			out);
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Reading                                                            */
/* ------------------------------------------------------------------ */

static const char *const man_stat_names[] = {
	"written", "read", "overrun", "dropped", "commit_overrun",
};

/* "K=V ..." of a stats line into @s. */
static int man_parse_stats(struct man_stats *s, char *val, const char **why)
{
	char *tok, *save = NULL;
	unsigned int i;

	memset(s, 0, sizeof(*s));
	for (tok = strtok_r(val, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');
		unsigned long long v;

		if (!eq || eq == tok) {
			*why = "not NAME=VALUE";
			return -1;
		}
		*eq = '\0';
		if (rbt_parse_uint(eq + 1, ~0ULL, &v, why))
			return -1;
		for (i = 0; i < ARRAY_SIZE(man_stat_names); i++) {
			unsigned long long *f[] = {
				&s->written, &s->read, &s->overrun,
				&s->dropped, &s->commit_overrun,
			};

			if (strcmp(tok, man_stat_names[i]))
				continue;
			*f[i] = v;
			s->seen |= 1U << i;
		}
	}
	/* written, read and overrun are what the checks need */
	s->have = (s->seen & 7) == 7;
	return 0;
}

/* "cpuN.rest" and "(start|end).stats.cpuN": N, else -1. */
static int man_key_cpu(const char *key, const char *prefix, const char *suffix)
{
	size_t pl = strlen(prefix), sl = strlen(suffix), kl = strlen(key);
	unsigned long long cpu;
	char num[16];
	const char *why;

	if (kl <= pl + sl || strncmp(key, prefix, pl) ||
	    strcmp(key + kl - sl, suffix) || kl - pl - sl >= sizeof(num))
		return -1;
	memcpy(num, key + pl, kl - pl - sl);
	num[kl - pl - sl] = '\0';
	if (rbt_parse_uint(num, MAN_MAX_CPUS - 1, &cpu, &why) ||
	    (num[0] == '0' && num[1]))
		return -2;
	return cpu;
}

static int man_fail(const char *cmd, unsigned int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rbtrace %s: %s: line %u: ", cmd, man.path, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return RBT_EXIT_INPUT;
}

/*
 * The entry of CPU @cpu (man_key_cpu() of @key), or NULL, said, when it
 * is no CPU number or a CPU that "cpus:" does not list.
 */
static struct man_cpu *man_cpu_entry(const char *cmd, unsigned int ln,
				     const char *key, int cpu)
{
	if (cpu < 0) {
		man_fail(cmd, ln, "%s: not a CPU number below %d", key,
			 MAN_MAX_CPUS);
		return NULL;
	}
	if (!man.cpu[cpu].listed) {
		man_fail(cmd, ln, "%s: CPU %d is not in \"cpus:\"", key, cpu);
		return NULL;
	}
	return &man.cpu[cpu];
}

/* One "key: value" line (@key, @val NUL-terminated). */
static int man_line(const char *cmd, unsigned int ln, char *key, char *val,
		    bool *seen_format)
{
	unsigned long long v;
	const char *why;
	int cpu;

	if (!*seen_format) {
		if (strcmp(key, "rbtrace-manifest"))
			return man_fail(cmd, ln, "not \"rbtrace-manifest: %d\" first: not a manifest of rbtrace record",
					RBT_MANIFEST_FORMAT);
		if (rbt_parse_uint(val, ~0ULL, &v, &why))
			return man_fail(cmd, ln, "format '%s': %s", val, why);
		if (v != RBT_MANIFEST_FORMAT)
			return man_fail(cmd, ln, "format %llu: this rbtrace (%s) reads format %d only; use a newer rbtrace",
					v, RBTRACE_VERSION,
					RBT_MANIFEST_FORMAT);
		*seen_format = true;
		return 0;
	}
	if (!strcmp(key, "subbuf_size")) {
		if (rbt_parse_uint(val, 1ULL << 30, &v, &why) || v <= MAN_PG_HDR)
			return man_fail(cmd, ln, "subbuf_size '%s': %s", val,
					v <= MAN_PG_HDR ? "too small" : why);
		man.subbuf = v;
		man.have_subbuf = true;
	} else if (!strcmp(key, "cpus")) {
		char *tok, *save = NULL;

		for (tok = strtok_r(val, " ", &save); tok;
		     tok = strtok_r(NULL, " ", &save)) {
			if (rbt_parse_uint(tok, MAN_MAX_CPUS - 1, &v, &why))
				return man_fail(cmd, ln, "cpus: '%s': %s", tok,
						why);
			if (man.cpu[v].listed)
				return man_fail(cmd, ln, "cpus: %llu twice", v);
			man.cpu[v].listed = true;
			man.nr_listed++;
		}
		man.have_cpus = true;
	} else if (!strcmp(key, "tracing_on") ||
		   !strcmp(key, "end.tracing_on")) {
		if (rbt_parse_uint(val, 1, &v, &why))
			return man_fail(cmd, ln, "%s '%s': %s", key, val, why);
		*(key[0] == 'e' ? &man.end_tracing_on : &man.tracing_on) = v;
	} else if (!strcmp(key, "sources")) {
		snprintf(man.sources, sizeof(man.sources), "%s", val);
	} else if (!strcmp(key, "stopped")) {
		snprintf(man.stopped, sizeof(man.stopped), "%s", val);
	} else if (!strcmp(key, "end")) {
		man.have_end = true;
	} else if (man_key_cpu(key, "cpu", ".bytes") != -1 ||
		   man_key_cpu(key, "cpu", ".pages") != -1 ||
		   man_key_cpu(key, "cpu", ".lost") != -1) {
		/* b"y"tes, p"a"ges, "l"ost */
		char k = key[strlen(key) - 4];
		struct man_cpu *c;

		cpu = man_key_cpu(key, "cpu", strrchr(key, '.'));
		c = man_cpu_entry(cmd, ln, key, cpu);
		if (!c)
			return RBT_EXIT_INPUT;
		if (rbt_parse_uint(val, ~0ULL, &v, &why))
			return man_fail(cmd, ln, "%s '%s': %s", key, val, why);
		if (k == 'y') {
			c->bytes = v;
			c->have_bytes = true;
		} else if (k == 'a') {
			c->pages = v;
		} else {
			c->lost = v;
			c->have_lost = true;
		}
	} else if (man_key_cpu(key, "start.stats.cpu", "") != -1 ||
		   man_key_cpu(key, "end.stats.cpu", "") != -1) {
		struct man_cpu *c;

		cpu = man_key_cpu(key, key[0] == 's' ? "start.stats.cpu" :
				  "end.stats.cpu", "");
		c = man_cpu_entry(cmd, ln, key, cpu);
		if (!c)
			return RBT_EXIT_INPUT;
		if (man_parse_stats(key[0] == 's' ? &c->start : &c->end, val,
				    &why))
			return man_fail(cmd, ln, "%s: %s", key, why);
	}
	return 0;
}

/* Read DIR/manifest into man: 0, -1 when there is none, or an exit status. */
static int man_load(const char *cmd, const char *dir)
{
	bool seen_format = false;
	char *text, *p, *next;
	unsigned int ln = 0;
	size_t len;
	int ret;

	memset(&man, 0, sizeof(man));
	man.tracing_on = man.end_tracing_on = -1;
	man_path(man.path, sizeof(man.path), dir, RBT_MANIFEST);
	text = man_read_text(man.path, &len);
	if (!text) {
		if (errno == ENOENT)
			return -1;
		fprintf(stderr, "rbtrace %s: %s: %s\n", cmd, man.path,
			strerror(errno));
		return RBT_EXIT_INPUT;
	}
	if (memchr(text, '\0', len)) {
		free(text);
		return man_fail(cmd, 1, "a NUL byte: not a manifest");
	}
	man.present = true;
	for (p = text; *p; p = next) {
		char *colon;

		ln++;
		next = strchr(p, '\n');
		if (next)
			*next++ = '\0';
		else
			next = p + strlen(p);
		if (!*p || *p == '#')
			continue;
		colon = strstr(p, ": ");
		if (!colon && p[strlen(p) - 1] == ':')
			colon = p + strlen(p) - 1;
		if (!colon || colon == p) {
			free(text);
			if (!seen_format)
				return man_fail(cmd, ln, "not \"rbtrace-manifest: %d\" first: not a manifest of rbtrace record",
						RBT_MANIFEST_FORMAT);
			return man_fail(cmd, ln, "not \"key: value\"");
		}
		*colon = '\0';
		ret = man_line(cmd, ln, p, colon[1] ? colon + 2 : colon + 1,
			       &seen_format);
		if (ret) {
			free(text);
			return ret;
		}
	}
	free(text);
	if (!seen_format)
		return man_fail(cmd, ln, "empty: not a manifest of rbtrace record");
	if (!man.have_subbuf || !man.have_cpus)
		return man_fail(cmd, ln, "no \"%s:\" line",
				man.have_subbuf ? "cpus" : "subbuf_size");
	return 0;
}

/* ------------------------------------------------------------------ */
/* The checks of a recording as a whole                               */
/* ------------------------------------------------------------------ */

/*
 * Whether the CPU files hold a data event: 1 yes, 0 no, -1 cannot tell
 * (a page the loaders refuse; they say why). Stops at the first one.
 */
static int man_any_event(const char *dir, unsigned int subbuf,
			 unsigned long long *pages)
{
	unsigned char *pg = malloc(subbuf);
	char path[PATH_MAX];
	int cpu, found = 0;

	*pages = 0;
	if (!pg)
		return -1;
	for (cpu = 0; cpu < MAN_MAX_CPUS && !found; cpu++) {
		int fd = open(man_path(path, sizeof(path), dir, "cpu%d.raw",
				       cpu), O_RDONLY);

		if (fd < 0)
			continue;
		while (!found && read(fd, pg, subbuf) == (ssize_t)subbuf) {
			unsigned long long cw;
			unsigned int commit, off = 0;

			(*pages)++;
			memcpy(&cw, pg + 8, 8);
			commit = cw & MAN_COMMIT_MASK;
			if (cw >> 32 || commit > subbuf - MAN_PG_HDR) {
				found = -1;
				break;
			}
			while (off + 4 <= commit) {
				unsigned int hdr, type, len;

				memcpy(&hdr, pg + MAN_PG_HDR + off, 4);
				type = hdr & 31;
				if (type >= 1 && type <= 28) {
					found = 1;
					break;
				}
				if (off + 8 > commit) {
					/* a bare end marker, else bad */
					found = type == 29 ? 0 : -1;
					break;
				}
				memcpy(&len, pg + MAN_PG_HDR + off + 4, 4);
				if (type == 30 || type == 31) {
					off += 8;
					continue;
				}
				if (len < 4 || len & 3 || len > commit - off - 4) {
					found = type ? 0 : -1;
					break;
				}
				if (type == 0) {
					found = 1;
					break;
				}
				off += len + 4;	/* padding */
			}
		}
		close(fd);
	}
	free(pg);
	return found;
}

/* Why a recording with a manifest holds no event. */
static const char *man_why_empty(char *buf, size_t size)
{
	bool wrote = false, had = false;
	int cpu;

	if (!strcmp(man.sources, "none"))
		return "no source was on (the manifest says \"sources: none\"): turn one on, e.g. echo all > sources";
	if (man.tracing_on == 0 && man.end_tracing_on != 1)
		return "tracing was off (tracing_on 0 when recording started): echo 1 > tracing_on";
	for (cpu = 0; cpu < MAN_MAX_CPUS; cpu++) {
		struct man_cpu *c = &man.cpu[cpu];

		if (!c->listed || !c->start.have || !c->end.have)
			continue;
		if (c->end.written != c->start.written)
			wrote = true;
		if (c->start.written > c->start.overrun + c->start.read)
			had = true;
	}
	if (!wrote && !had)
		return "the module wrote no event on the CPUs recorded while recording (their written counters did not move) and none was waiting in the buffer";
	snprintf(buf, size, "no page of the CPU files has one (stopped: %s)",
		 *man.stopped ? man.stopped : "not said");
	return buf;
}

int rbt_rec_verify(const char *cmd, const char *dir)
{
	static struct rbt_fmt hf;
	char path[PATH_MAX], why[160], *text;
	unsigned long long pages;
	bool files[MAN_MAX_CPUS] = { false };
	unsigned long long size[MAN_MAX_CPUS];
	unsigned int subbuf;
	int ret, cpu, nr_files = 0, bad = 0, any;
	struct dirent *d;
	struct stat st;
	size_t len;
	DIR *dp;

	memset(&man, 0, sizeof(man));
	if (stat(dir, &st)) {
		fprintf(stderr, "rbtrace %s: %s: %s%s\n", cmd, dir,
			strerror(errno), errno == ENOENT ?
			": give the directory rbtrace record wrote" : "");
		return RBT_EXIT_INPUT;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "rbtrace %s: %s: not a directory: a recording is the directory rbtrace record wrote (header_page, events/, cpuN.raw)\n",
			cmd, dir);
		return RBT_EXIT_INPUT;
	}
	dp = opendir(dir);
	if (!dp) {
		fprintf(stderr, "rbtrace %s: %s: %s\n", cmd, dir,
			strerror(errno));
		return RBT_EXIT_INPUT;
	}
	while ((d = readdir(dp))) {
		cpu = man_cpu_file(d->d_name);
		if (cpu < 0)
			continue;
		man_path(path, sizeof(path), dir, "%s", d->d_name);
		errno = 0;
		if (stat(path, &st) || !S_ISREG(st.st_mode)) {
			fprintf(stderr, "rbtrace %s: %s: %s\n", cmd, path,
				errno ? strerror(errno) : "not a regular file");
			closedir(dp);
			return RBT_EXIT_INPUT;
		}
		files[cpu] = true;
		size[cpu] = st.st_size;
		nr_files++;
	}
	closedir(dp);

	text = man_read_text(man_path(path, sizeof(path), dir, "header_page"),
			     &len);
	if (!text) {
		if (errno == ENOENT)
			fprintf(stderr, "rbtrace %s: %s: not a recording (no header_page): give the directory rbtrace record wrote\n",
				cmd, dir);
		else
			fprintf(stderr, "rbtrace %s: %s: %s\n", cmd, path,
				strerror(errno));
		return RBT_EXIT_INPUT;
	}
	if (!rbt_header_page_check(&hf, text, len)) {
		fprintf(stderr, "rbtrace %s: %s: line %u: %s\n", cmd, path,
			hf.line, hf.err);
		free(text);
		return RBT_EXIT_INPUT;
	}
	free(text);
	subbuf = hf.data_size + MAN_PG_HDR;
	if (stat(man_path(path, sizeof(path), dir,
			  "events/rbnest/sample/format"), &st)) {
		fprintf(stderr, "rbtrace %s: %s: not a whole recording (%s: %s): give the directory rbtrace record wrote\n",
			cmd, dir, path, strerror(errno));
		return RBT_EXIT_INPUT;
	}

	ret = man_load(cmd, dir);
	if (ret > 0)
		return ret;
	if (ret < 0) {
		fprintf(stderr, "rbtrace %s: warning: %s has no manifest (an older rbtrace, or made by hand): the CPU files are checked only against each other\n",
			cmd, dir);
	} else {
		if (man.subbuf != subbuf) {
			fprintf(stderr, "rbtrace %s: %s: %u-byte sub-buffers, the manifest says %llu: not the header_page of this recording\n",
				cmd, path, subbuf, man.subbuf);
			bad++;
		}
		for (cpu = 0; cpu < MAN_MAX_CPUS; cpu++) {
			struct man_cpu *c = &man.cpu[cpu];

			man_path(path, sizeof(path), dir, "cpu%d.raw", cpu);
			if (c->listed && !files[cpu]) {
				fprintf(stderr, "rbtrace %s: %s: missing: the manifest lists CPU %d (%llu bytes)\n",
					cmd, path, cpu, c->bytes);
				bad++;
			} else if (!c->listed && files[cpu]) {
				fprintf(stderr, "rbtrace %s: %s: not in the manifest (it recorded %d CPUs): not part of this recording\n",
					cmd, path, man.nr_listed);
				bad++;
			} else if (c->listed && c->have_bytes &&
				   size[cpu] != c->bytes &&
				   !(size[cpu] % subbuf)) {
				/* a partial page: the loaders refuse it */
				fprintf(stderr, "rbtrace %s: %s: %llu bytes (%llu pages), the manifest says %llu (%llu pages): %s than rbtrace record wrote\n",
					cmd, path, size[cpu], size[cpu] / subbuf,
					c->bytes, c->bytes / subbuf,
					size[cpu] < c->bytes ? "shorter" :
					"longer");
				bad++;
			}
		}
		if (!man.have_end) {
			fprintf(stderr, "rbtrace %s: %s: no \"end:\": rbtrace record did not finish (killed?), the CPU files may be cut short\n",
				cmd, man.path);
			bad++;
		}
	}
	if (bad)
		return RBT_EXIT_VIOLATION;
	if (!nr_files) {
		fprintf(stderr, "rbtrace %s: %s: no cpuN.raw file: not a recording, or one without its CPU files\n",
			cmd, dir);
		return RBT_EXIT_INPUT;
	}
	any = man_any_event(dir, subbuf, &pages);
	if (!any) {
		fprintf(stderr, "rbtrace %s: %s: holds no event (%llu pages): %s\n",
			cmd, dir, pages, man.present ?
			man_why_empty(why, sizeof(why)) :
			"no cpuN.raw file has one");
		return RBT_EXIT_VIOLATION;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* The counts of check against the module's counters                  */
/* ------------------------------------------------------------------ */

static void __printf(3, 4)
man_say(const struct rbt_manifest_out *out, bool violation,
	const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (violation)
		out->violation(out->arg, msg);
	else if (out->note)
		out->note(out->arg, msg);
}

/*
 * For each CPU recorded, with S0 and S1 its stats at the start and at the
 * end (W written, O overrun, R read: S1 - S0) and N the events check read
 * in its file:
 *
 *   N == R, that is  N + O == W + E0 - E1
 *
 * with E = written - overrun - read at either end, the events in the
 * buffer. It holds because the module's read counter counts every data
 * event that leaves the ring through a reader, and only those: a whole
 * sub-buffer adds its entries (its committed events, discarded ones
 * taken off), a partly read one each event copied out (rbn_read_page());
 * and rbtrace record is the only reader of the CPU between S0 and S1: it
 * reads S0 before the first page and S1 after it closed trace_pipe_raw,
 * and every page it was given is in the file (rbt_rec_verify() compared
 * the sizes). So N < R means events taken by another reader (trace_pipe,
 * a second recording), or lost on their way into the file; N > R, pages
 * that are not from this recording. The second form is only arithmetic,
 * shown because it says where the events come from; it needs no
 * consistent snapshot of the counters (writers run while they are read).
 *
 * And for the missed-events counts: a count on a page is the overrun
 * (events overwritten) since the reader's previous sub-buffer, so all
 * the counts of the pages of a CPU add up to at most its overrun counter
 * at the end (S1 overrun, which counts since the last reset), and with no
 * overrun at all no page may say events were lost. They need not add up
 * to O: what was overwritten before S0 may be counted on the first page,
 * what was overwritten after the last page read on none. Events refused
 * (dropped, commit_overrun) never entered the buffer and took no
 * sequence number: they are shown, not compared.
 *
 * A reset of the buffer (reset, a clock or mode change) sets the
 * counters to 0: when one went back, the counts are not compared. A
 * snapshot (echo 1 > snapshot) swaps the ring and its counters with the
 * spare's: the relation does not hold across it, and a swap that the
 * counters do not show is reported as a mismatch.
 */
unsigned long rbt_manifest_check(const struct rbt_cpu_counts *cpu,
				 int nr_cpus,
				 const struct rbt_manifest_out *out)
{
	unsigned long bad = 0;
	int i;

	if (!man.present)
		return 0;
	for (i = 0; i < MAN_MAX_CPUS; i++) {
		const struct man_cpu *c = &man.cpu[i];
		const struct man_stats *s0 = &c->start, *s1 = &c->end;
		const struct rbt_cpu_counts *n = i < nr_cpus ? &cpu[i] : NULL;
		unsigned long long r, o, w;
		long long e0, e1;

		if (!c->listed || !n || !n->present)
			continue;
		if (c->have_lost && c->lost != n->missed_sum) {
			man_say(out, true, "manifest: cpu %d: rbtrace record saw %llu lost events in the page headers of cpu%d.raw, the pages say %llu now",
				i, c->lost, i, n->missed_sum);
			bad++;
		}
		if (!s0->have || !s1->have) {
			man_say(out, false, "manifest: cpu %d: no stats of the module at the %s: counts not compared",
				i, s0->have ? "end" : "start");
			continue;
		}
		if (s1->written < s0->written || s1->read < s0->read ||
		    s1->overrun < s0->overrun) {
			man_say(out, false, "manifest: cpu %d: the module's counters went back (written %llu -> %llu, read %llu -> %llu): the buffer was reset while recording, counts not compared",
				i, s0->written, s1->written, s0->read,
				s1->read);
			continue;
		}
		r = s1->read - s0->read;
		o = s1->overrun - s0->overrun;
		w = s1->written - s0->written;
		e0 = (long long)(s0->written - s0->overrun - s0->read);
		e1 = (long long)(s1->written - s1->overrun - s1->read);
		if (n->events != r) {
			man_say(out, true, "manifest: cpu %d: %llu events in cpu%d.raw, but the module handed %llu to readers while recording (read %llu -> %llu): %llu %s",
				i, n->events, i, r, s0->read, s1->read,
				n->events < r ? r - n->events :
				n->events - r,
				n->events < r ?
				"missing: taken by another reader (trace_pipe, a second recording) or lost on the way to the file" :
				"too many: pages not from this recording, or read twice");
			bad++;
		} else {
			man_say(out, false, "manifest: cpu %d: %llu events read = %lld in the buffer at the start + %llu written - %llu overwritten - %lld left at the end",
				i, n->events, e0, w, o, e1);
		}
		if (!s1->overrun && n->missed_pages) {
			man_say(out, true, "manifest: cpu %d: %llu pages of cpu%d.raw say events were lost, but the module overwrote none (overrun 0)",
				i, n->missed_pages, i);
			bad++;
		} else if (n->missed_sum > s1->overrun) {
			man_say(out, true, "manifest: cpu %d: the missed-events counts of cpu%d.raw add up to %llu, more than the module ever overwrote (overrun %llu)",
				i, i, n->missed_sum, s1->overrun);
			bad++;
		}
		if ((s1->seen & 24) == 24 &&
		    (s1->dropped > s0->dropped ||
		     s1->commit_overrun > s0->commit_overrun))
			man_say(out, false, "manifest: cpu %d: %llu events refused by a full buffer (dropped), %llu by nested writers that filled it (commit_overrun): never written, not missing",
				i, s1->dropped - s0->dropped,
				s1->commit_overrun - s0->commit_overrun);
	}
	return bad;
}
