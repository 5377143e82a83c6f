/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The userspace side of the rbnest port.
 *
 * rb_core.c is written against a small subset of the kernel API. This
 * header provides that subset on top of C11/GCC atomics so that the very
 * same rb_core.c can be linked into userspace tests:
 *
 *  - one "CPU" is one thread: rbn_user_cpu is thread-local and set by the
 *    test before it writes;
 *  - the interrupt context level (normal, softirq, hardirq, NMI) is a
 *    thread-local that signal handlers and injected writers raise;
 *  - local_t is a word updated with atomic read-modify-write operations,
 *    which is what the kernel's local_t is with respect to interrupts on
 *    the same CPU, and is also safe against a reader thread;
 *  - loads and stores of shared words go through __atomic builtins with
 *    acquire/release ordering so that ThreadSanitizer sees the same
 *    happens-before edges that smp_wmb()/smp_rmb() give in the kernel.
 */
#ifndef _RBN_PORT_USER_H
#define _RBN_PORT_USER_H

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;

#ifndef PAGE_SHIFT
#define PAGE_SHIFT	12
#endif
#ifndef PAGE_SIZE
#define PAGE_SIZE	(1UL << PAGE_SHIFT)
#endif

#define likely(x)		__builtin_expect(!!(x), 1)
#define unlikely(x)		__builtin_expect(!!(x), 0)
#ifndef __always_inline
#define __always_inline		inline __attribute__((__always_inline__))
#endif
#define __maybe_unused		__attribute__((__unused__))
#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define WRITE_ONCE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELEASE)
#define barrier()		__asm__ __volatile__("" : : : "memory")
#define smp_mb()		__atomic_thread_fence(__ATOMIC_SEQ_CST)
#define smp_wmb()		__atomic_thread_fence(__ATOMIC_RELEASE)
#define smp_rmb()		__atomic_thread_fence(__ATOMIC_ACQUIRE)
#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#define min_t(type, a, b) ({ type __a = (a); type __b = (b); __a < __b ? __a : __b; })
#define ALIGN(x, a)		(((x) + (a) - 1) & ~((typeof(x))(a) - 1))
#define BIT(n)			(1UL << (n))

/* An error pointer, as in the kernel. */
#define MAX_ERRNO	4095
#define IS_ERR_VALUE(x)	unlikely((unsigned long)(void *)(x) >= (unsigned long)-MAX_ERRNO)
static inline void *ERR_PTR(long error) { return (void *)error; }
static inline long PTR_ERR(const void *ptr) { return (long)ptr; }
static inline bool IS_ERR(const void *ptr) { return IS_ERR_VALUE((unsigned long)ptr); }
static inline bool IS_ERR_OR_NULL(const void *ptr) { return !ptr || IS_ERR(ptr); }

/*
 * local_t: a word that writers on one CPU update with read-modify-write
 * operations that an interrupt (here: a signal or an injected writer)
 * cannot split, and that a reader thread may read at any time.
 */
typedef struct {
	long a;
} local_t;

typedef struct {
	long long a;
} local64_t;

static inline long local_read(const local_t *l)
{
	return __atomic_load_n(&l->a, __ATOMIC_ACQUIRE);
}

static inline void local_set(local_t *l, long v)
{
	__atomic_store_n(&l->a, v, __ATOMIC_RELEASE);
}

static inline long local_add_return(long v, local_t *l)
{
	return __atomic_add_fetch(&l->a, v, __ATOMIC_ACQ_REL);
}

static inline void local_add(long v, local_t *l)
{
	__atomic_add_fetch(&l->a, v, __ATOMIC_RELAXED);
}

static inline void local_sub(long v, local_t *l)
{
	__atomic_sub_fetch(&l->a, v, __ATOMIC_RELAXED);
}

static inline void local_inc(local_t *l)
{
	local_add(1, l);
}

static inline void local_dec(local_t *l)
{
	local_sub(1, l);
}

static inline long local_cmpxchg(local_t *l, long old, long new)
{
	__atomic_compare_exchange_n(&l->a, &old, new, false,
				    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return old;
}

static inline long long local64_read(const local64_t *l)
{
	return __atomic_load_n(&l->a, __ATOMIC_ACQUIRE);
}

static inline void local64_set(local64_t *l, long long v)
{
	__atomic_store_n(&l->a, v, __ATOMIC_RELEASE);
}

static inline long long local64_cmpxchg(local64_t *l, long long old,
					long long new)
{
	__atomic_compare_exchange_n(&l->a, &old, new, false,
				    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return old;
}

typedef struct { int counter; } atomic_t;
static inline int atomic_read(const atomic_t *v)
{ return __atomic_load_n(&v->counter, __ATOMIC_ACQUIRE); }
static inline void atomic_set(atomic_t *v, int i)
{ __atomic_store_n(&v->counter, i, __ATOMIC_RELEASE); }
static inline void atomic_inc(atomic_t *v)
{ __atomic_add_fetch(&v->counter, 1, __ATOMIC_SEQ_CST); }
static inline void atomic_dec(atomic_t *v)
{ __atomic_sub_fetch(&v->counter, 1, __ATOMIC_SEQ_CST); }
static inline int atomic_cmpxchg(atomic_t *v, int old, int new)
{
	__atomic_compare_exchange_n(&v->counter, &old, new, false,
				    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return old;
}

/* Full-barrier compare-and-exchange of a word; returns the old value. */
#define cmpxchg(ptr, old, new) ({					\
	typeof(ptr) __p = (ptr);					\
	typeof(*__p) __o = (old);					\
	__atomic_compare_exchange_n(__p, &__o, (new), false,		\
				    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
	__o;								\
})

/* Allocation: sub-buffers are page aligned like the kernel's pages. */
static inline void *rbn_port_zalloc(size_t size, int cpu)
{
	(void)cpu;
	return calloc(1, size);
}

static inline void rbn_port_free(void *p)
{
	free(p);
}

static inline void *rbn_port_alloc_pages(unsigned int order, int cpu)
{
	size_t size = PAGE_SIZE << order;
	void *p;

	(void)cpu;
	if (posix_memalign(&p, size, size))
		return NULL;
	memset(p, 0, size);
	return p;
}

static inline void rbn_port_free_pages(void *p, unsigned int order)
{
	(void)order;
	free(p);
}

/* Userspace has no default clock: the caller supplies one. */
#define RBN_PORT_DEFAULT_CLOCK	NULL
#define RBN_PORT_HAS_DEFAULT_CLOCK	0

/*
 * Simulated CPUs and interrupt contexts. Tests and the signal stress set
 * these; see rb_port_user.c.
 */
extern __thread int rbn_user_cpu;
extern __thread int rbn_user_context;
extern int rbn_user_nr_cpus;
extern unsigned long rbn_user_warnings;
/* rbn_port_cpu_relax() calls: tests see a reader spinning on the head. */
extern unsigned long rbn_user_relax_count;

#define RBN_NR_CPUS_MAX		64

static inline int rbn_port_nr_cpus(void)
{
	return rbn_user_nr_cpus;
}

static inline int rbn_port_cpu(void)
{
	return rbn_user_cpu;
}

/* 0 normal, 1 softirq, 2 hardirq, 3 NMI: interrupt_context_level(). */
static inline int rbn_port_context_level(void)
{
	return rbn_user_context;
}

/*
 * The userspace build stands for an architecture with NMI-safe cmpxchg,
 * unless a test sets rbn_user_nmi_unsafe: then writers in (simulated)
 * NMI context are refused, as the kernel port refuses them there.
 */
extern bool rbn_user_nmi_unsafe;

static inline bool rbn_port_write_refused(void)
{
	return rbn_user_nmi_unsafe && rbn_user_context == 3;
}

/* A writer runs with preemption disabled; a thread is never migrated. */
#define rbn_port_preempt_disable()	do { } while (0)
#define rbn_port_preempt_enable()	do { } while (0)

/* A reader waiting for a writer's head push; its thread may be preempted. */
static inline void rbn_port_cpu_relax(void)
{
	__atomic_add_fetch(&rbn_user_relax_count, 1, __ATOMIC_RELAXED);
	sched_yield();
}

/*
 * Run fn(arg) on a simulated CPU: this thread stands for it for the call,
 * as an IPI would run it there.
 */
static inline void rbn_port_on_cpu(int cpu, void (*fn)(void *), void *arg)
{
	int saved = rbn_user_cpu;

	rbn_user_cpu = cpu;
	fn(arg);
	rbn_user_cpu = saved;
}

/* Reader serialization. */
typedef pthread_mutex_t rbn_reader_lock_t;
#define rbn_reader_lock_init(l)		pthread_mutex_init((l), NULL)
#define rbn_reader_lock(l, flags)	do { (void)(flags); pthread_mutex_lock(l); } while (0)
#define rbn_reader_unlock(l, flags)	do { (void)(flags); pthread_mutex_unlock(l); } while (0)

/*
 * Wait for writers that may still be inside the write path after
 * recording was disabled. In the kernel that is an RCU grace period (the
 * writers run with preemption disabled); here the caller of a control
 * operation guarantees that no writer thread is running.
 */
static inline void rbn_port_synchronize_writers(void)
{
	/* Order the caller's record_disabled update before what follows. */
	smp_mb();
}

/*
 * The run-time validator's switch, standing for the kernel's static key:
 * on while any buffer validates. Its reports are counted, and printed on
 * stderr when rbn_user_report_print is set.
 */
extern int rbn_user_validate_key;
extern unsigned long rbn_user_reports;
extern bool rbn_user_report_print;
extern char rbn_user_mismatches[4096];
#define RBN_PORT_DEFINE_VALIDATE_KEY	int rbn_user_validate_key
#define rbn_port_validating()						\
	(__atomic_load_n(&rbn_user_validate_key, __ATOMIC_RELAXED) > 0)
#define rbn_port_validate_get()						\
	__atomic_add_fetch(&rbn_user_validate_key, 1, __ATOMIC_SEQ_CST)
#define rbn_port_validate_put()						\
	__atomic_sub_fetch(&rbn_user_validate_key, 1, __ATOMIC_SEQ_CST)
void rbn_port_report(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
#define rbn_port_report_ratelimited(fmt, ...)	rbn_port_report(fmt, ##__VA_ARGS__)

void rbn_port_warn(const char *file, int line, const char *cond);
#define RBN_WARN_ON(cond) ({						\
	bool __c = !!(cond);						\
	if (unlikely(__c))						\
		rbn_port_warn(__FILE__, __LINE__, #cond);		\
	__c;								\
})

/*
 * The test hook: rbn_test_set_hook() installs fn(buffer, cpu, label, arg),
 * called at every label of the write path.
 */
struct rbn_buffer;
typedef void (*rbn_test_hook_fn)(struct rbn_buffer *buffer, int cpu,
				 int label, void *arg);
extern rbn_test_hook_fn rbn_user_hook;
extern void *rbn_user_hook_arg;
void rbn_test_set_hook(rbn_test_hook_fn fn, void *arg);

#define rbn_call_user_hook(hook, arg, buffer, cpu, label)		\
	do {								\
		rbn_test_hook_fn __fn = (hook);				\
		if (unlikely(__fn))					\
			__fn((buffer), (cpu), (label), (arg));		\
	} while (0)

#define RBN_HOOK(buffer, cpu, label)					\
	rbn_call_user_hook(rbn_user_hook, rbn_user_hook_arg,		\
			   (buffer), (cpu), (label))

/*
 * The test hook of the reader's page swap: rbn_test_set_reader_hook()
 * installs fn(buffer, cpu, reader label, arg), called at every label of
 * rb_get_reader_page() (enum rbn_reader_label).
 */
extern rbn_test_hook_fn rbn_user_reader_hook;
extern void *rbn_user_reader_hook_arg;
void rbn_test_set_reader_hook(rbn_test_hook_fn fn, void *arg);

#define RBN_READER_HOOK(buffer, cpu, label)				\
	rbn_call_user_hook(rbn_user_reader_hook, rbn_user_reader_hook_arg, \
			   (buffer), (cpu), (label))

#endif /* _RBN_PORT_USER_H */
