// SPDX-License-Identifier: GPL-2.0
/*
 * fail_nth - run one system call with its Nth fault-injection point failed.
 *
 * Usage: fail_nth N OP ARG...
 *
 *   insmod MODULE [PARAM...]   finit_module() of MODULE with the PARAMs
 *   write FILE STRING          write(2) STRING and a newline to FILE
 *   open FILE                  open(2) FILE for reading, read(2) once
 *   splice FILE                open(2) FILE for reading, splice(2) one
 *                              page of it into a pipe
 *
 * Before the operation's system calls, N is written to /proc/self/fail-nth
 * (CONFIG_FAULT_INJECTION): the Nth call of this task to a fault-injection
 * point (failslab, fail_page_alloc, ... whichever are enabled) fails, and
 * only in this task. For write, the file is opened first, so that only the
 * write(2) counts; open and splice count the open(2) too. N = 0 injects
 * nothing.
 *
 * Prints one line: "rc=0" when the operation succeeded, "rc=-E errno=E
 * (text)" when it failed, then " injected=1" when the Nth point was
 * reached, " injected=0 points=K" when the operation passed only K < N
 * points.
 * Exits 0 when the operation succeeded, 1 when it failed, 2 on a usage
 * or setup error (no /proc/self/fail-nth: exit 3).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int nth_fd = -1;
static unsigned int nth_left;

static void usage(void)
{
	fprintf(stderr,
		"usage: fail_nth N insmod MODULE [PARAM...]\n"
		"       fail_nth N write FILE STRING\n"
		"       fail_nth N open FILE\n"
		"       fail_nth N splice FILE\n");
	exit(2);
}

static void set_nth(unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	/* The file has no llseek: pwrite() at 0 (ESPIPE from lseek()). */
	if (pwrite(nth_fd, buf, len, 0) != len) {
		perror("fail_nth: /proc/self/fail-nth");
		exit(2);
	}
}

/*
 * Right after the operation's last system call: keep what is left of the
 * count (0 once the Nth point was reached) and stop counting, so that
 * the clean-up (close) does not count.
 */
static void end_nth(void)
{
	char buf[16] = "";

	if (pread(nth_fd, buf, sizeof(buf) - 1, 0) <= 0) {
		perror("fail_nth: /proc/self/fail-nth");
		exit(2);
	}
	nth_left = strtoul(buf, NULL, 10);
	set_nth(0);
}

static int op_insmod(unsigned int n, int argc, char **argv)
{
	size_t len = 1;
	char *params;
	int fd, i, ret;

	if (argc < 1)
		usage();
	for (i = 1; i < argc; i++)
		len += strlen(argv[i]) + 1;
	params = calloc(1, len);
	if (!params)
		exit(2);
	for (i = 1; i < argc; i++) {
		if (i > 1)
			strcat(params, " ");
		strcat(params, argv[i]);
	}
	fd = open(argv[0], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror(argv[0]);
		exit(2);
	}
	set_nth(n);
	ret = syscall(SYS_finit_module, fd, params, 0);
	if (ret)
		ret = -errno;
	end_nth();
	close(fd);
	free(params);
	return ret;
}

static int op_write(unsigned int n, int argc, char **argv)
{
	size_t len;
	char *buf;
	ssize_t w;
	int fd;

	if (argc != 2)
		usage();
	len = strlen(argv[1]) + 1;
	buf = malloc(len + 1);
	if (!buf)
		exit(2);
	snprintf(buf, len + 1, "%s\n", argv[1]);
	fd = open(argv[0], O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0) {
		perror(argv[0]);
		exit(2);
	}
	set_nth(n);
	w = write(fd, buf, len);
	w = w < 0 ? -errno : (w == (ssize_t)len ? 0 : -EIO);
	end_nth();
	close(fd);
	free(buf);
	return w;
}

static int op_open(unsigned int n, int argc, char **argv, int do_splice)
{
	char buf[256];
	int fd, p[2], ret = 0;

	if (argc != 1)
		usage();
	if (do_splice && pipe(p)) {
		perror("pipe");
		exit(2);
	}
	set_nth(n);
	fd = open(argv[0], O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		end_nth();
		return ret;
	}
	if (do_splice) {
		if (splice(fd, NULL, p[1], NULL, 4096, SPLICE_F_NONBLOCK) < 0 &&
		    errno != EAGAIN)
			ret = -errno;
	} else if (read(fd, buf, sizeof(buf)) < 0 && errno != EAGAIN) {
		ret = -errno;
	}
	end_nth();
	if (do_splice) {
		close(p[0]);
		close(p[1]);
	}
	close(fd);
	return ret;
}

int main(int argc, char **argv)
{
	unsigned int n;
	char *end;
	int ret;

	if (argc < 4)
		usage();
	n = strtoul(argv[1], &end, 10);
	if (*end || end == argv[1])
		usage();
	nth_fd = open("/proc/self/fail-nth", O_RDWR | O_CLOEXEC);
	if (nth_fd < 0) {
		perror("fail_nth: /proc/self/fail-nth");
		return 3;
	}
	if (!strcmp(argv[2], "insmod"))
		ret = op_insmod(n, argc - 3, argv + 3);
	else if (!strcmp(argv[2], "write"))
		ret = op_write(n, argc - 3, argv + 3);
	else if (!strcmp(argv[2], "open"))
		ret = op_open(n, argc - 3, argv + 3, 0);
	else if (!strcmp(argv[2], "splice"))
		ret = op_open(n, argc - 3, argv + 3, 1);
	else
		usage();
	if (ret)
		printf("rc=%d errno=%d (%s)", ret, -ret, strerror(-ret));
	else
		printf("rc=0");
	printf(" injected=%d", n && !nth_left);
	/* Not reached: the operation passed this many points. */
	if (n && nth_left)
		printf(" points=%u", n - nth_left);
	printf("\n");
	return ret ? 1 : 0;
}
