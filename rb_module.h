/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rbnest module internals shared by its files:
 *
 *   rb_module.c   parameters, load/unload, debugfs control files, the
 *                 snapshot's spare buffer
 *   rb_pipe.c     trace_pipe_raw (read, splice, poll), trace, trace_pipe,
 *                 the snapshot file's text, snapshot_raw
 *   rb_writers.c  the writers: tracepoints, kprobes, load generator; the
 *                 names of their tasks (saved_cmdlines)
 *   rb_inject.c   the "inject" file: nested writes at write-path labels
 *   rb_bench.c    the "bench" file: rbnest against the kernel ring buffer
 */
#ifndef _RB_MODULE_H
#define _RB_MODULE_H

#include <linux/debugfs.h>
#include <linux/types.h>

#include "rb_core.h"
#include "rbn_events.h"

/* Every debugfs file of rbnest is root-only. */
#define RBN_MODE_RO	0400
#define RBN_MODE_RW	0600
#define RBN_MODE_WO	0200

/* The one buffer of the module; valid from load to unload. */
extern struct rbn_buffer *rbn_buf;

/* Percent of a CPU buffer that must be full before a blocked reader wakes. */
extern unsigned int rbn_buffer_percent;

/* rb_module.c */
void rbn_buffer_reset(void);
bool rbn_tracing_is_on(void);
struct dentry *rbn_debugfs_cpu_dir(int cpu);
bool rbn_files_ready(void);
struct dentry *rbn_debugfs_check(struct dentry *d);
struct rbn_buffer *rbn_snapshot_get(void);
void rbn_snapshot_put(void);
ssize_t rbn_snapshot_write(struct file *file, const char __user *ubuf,
			   size_t cnt, loff_t *ppos);
void rbn_trace_iter_get(void);
void rbn_trace_iter_put(void);

/* rb_pipe.c */
int rbn_pipe_init(void);
void rbn_pipe_create_files(struct dentry *root);
void rbn_pipe_remove_files(void);
void rbn_pipe_exit(void);
void rbn_pipe_wake_all(void);
void rbn_pipe_reset_done(void);
void rbn_pipe_flush_readers(void);
void rbn_pipe_commit_notify(int cpu);

/* rb_writers.c */
bool rbn_emit(enum rbn_source src, u32 arg);
void rbn_writers_reset_seq(void);
int rbn_writers_init(const char *sources);
void rbn_writers_create_files(struct dentry *root);
void rbn_writers_exit(void);
int rbn_cmdlines_init(void);
void rbn_cmdlines_free(void);

/* rb_inject.c */
typedef void (*rbn_hook_fn)(struct rbn_buffer *buffer, int cpu, int label,
			    void *arg);
int rbn_hook_install(rbn_hook_fn fn, void *arg);
void rbn_hook_remove(void);
int rbn_inject_init(void);
void rbn_inject_create_files(struct dentry *root);
void rbn_inject_exit(void);

/* rb_bench.c */
void rbn_bench_create_files(struct dentry *root);
void rbn_bench_exit(void);

#endif /* _RB_MODULE_H */
