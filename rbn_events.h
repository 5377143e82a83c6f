/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The events rbnest writes, defined once for the module, the userspace
 * tests and tools/rbtrace: their layout and their format text in tracefs
 * syntax, so that libtraceevent and trace-cmd parse them unchanged.
 *
 * Every event starts with the ftrace common fields, at the offsets ftrace
 * uses, so that "trace-cmd report -l" shows irqs-off, hardirq and softirq
 * context. Every event carries its per-CPU sequence number, the context it
 * was written in and how deep writers were nested, so that loss and order
 * can be checked by a reader.
 */
#ifndef _RBN_EVENTS_H
#define _RBN_EVENTS_H

/*
 * The fields with named values. Each list of names is written once, as
 * the "{ VALUE, "NAME" }, ..." that __print_symbolic() and __print_flags()
 * take in the format's print fmt (so that libtraceevent, trace-cmd and
 * rbtrace print the names), and the module's "trace" file reads its
 * names from the same text. A value never changes meaning: recordings
 * keep theirs.
 */

/* Context of the writer (from preempt_count() in the module). */
enum rbn_ctx {
	RBN_CTX_TASK,
	RBN_CTX_SOFTIRQ,
	RBN_CTX_HARDIRQ,
	RBN_CTX_NMI,
};

#define RBN_CTX_SYMS							\
	"{ 0, \"task\" }, { 1, \"softirq\" }, { 2, \"hardirq\" }, "	\
	"{ 3, \"nmi\" }"

/* Where an event comes from. */
enum rbn_source {
	RBN_SRC_TEST,		/* userspace tests */
	RBN_SRC_TASK,		/* load generator, task context */
	RBN_SRC_HRTIMER,
	RBN_SRC_SOFTIRQ,
	RBN_SRC_IRQ_WORK,
	RBN_SRC_NMI,
	RBN_SRC_TRACEPOINT,
	RBN_SRC_KPROBE,
	RBN_SRC_INJECT,		/* nested write forced by the inject file */
};

#define RBN_SRC_SYMS							\
	"{ 0, \"test\" }, { 1, \"task\" }, { 2, \"hrtimer\" }, "	\
	"{ 3, \"softirq\" }, { 4, \"irq_work\" }, { 5, \"nmi\" }, "	\
	"{ 6, \"tracepoint\" }, { 7, \"kprobe\" }, { 8, \"inject\" }"

/*
 * The tracepoint of a tracepoint event (the tp field), named as the
 * kernel names it; none for the other sources.
 */
enum rbn_tp_id {
	RBN_TP_NONE,
	RBN_TP_IRQ_ENTRY,
	RBN_TP_IRQ_EXIT,
	RBN_TP_SOFTIRQ_ENTRY,
	RBN_TP_SOFTIRQ_EXIT,
	RBN_TP_HRTIMER_ENTRY,
	RBN_TP_LOCAL_TIMER_ENTRY,
	RBN_TP_NMI_HANDLER,
	RBN_TP_SCHED_SWITCH,
	RBN_NR_TP
};

#define RBN_TP_SYMS							\
	"{ 0, \"none\" }, { 1, \"irq_handler_entry\" }, "		\
	"{ 2, \"irq_handler_exit\" }, { 3, \"softirq_entry\" }, "	\
	"{ 4, \"softirq_exit\" }, { 5, \"hrtimer_expire_entry\" }, "	\
	"{ 6, \"local_timer_entry\" }, { 7, \"nmi_handler\" }, "	\
	"{ 8, \"sched_switch\" }"

/*
 * The flags field: the time-stamp path of the event, the RBN_EV_* of
 * rb_core.h, with these values:
 *
 *   fast	 0x01  not interrupted between the reserve's steps A and C
 *   abs	 0x02  absolute stamp (forced by nesting, or absolute mode)
 *   slow	 0x04  interrupted between A and C
 *   zero	 0x08  zero delta: sandwiched, shown at the previous
 *		       event's time
 *   extend	 0x10  a time extend in front of the event
 *   start	 0x20  first event of a sub-buffer
 *   clock_back	 0x40  the clock read below the CPU's latest time
 */
#define RBN_EV_SYMS							\
	"{ 0x01, \"fast\" }, { 0x02, \"abs\" }, { 0x04, \"slow\" }, "	\
	"{ 0x08, \"zero\" }, { 0x10, \"extend\" }, { 0x20, \"start\" }, " \
	"{ 0x40, \"clock_back\" }"

/* ftrace's trace_entry flags in common_flags. */
#define RBN_FLAG_IRQS_OFF	0x01
#define RBN_FLAG_HARDIRQ	0x08
#define RBN_FLAG_SOFTIRQ	0x10
#define RBN_FLAG_NMI		0x40

#define RBN_EVENT_SAMPLE_ID	1

/**
 * struct rbn_sample - the one event type of rbnest ("rbnest:sample")
 * @common_type:	 RBN_EVENT_SAMPLE_ID
 * @common_flags:	 RBN_FLAG_*
 * @common_preempt_count: preempt_count() & 0xff
 * @common_pid:		 current task's pid (0 in interrupts of the idle task)
 * @seq:		 per-CPU sequence number, taken after the reserve
 * @ts:			 the time stamp the writer used (rbn_event_ts())
 * @cpu:		 CPU of the buffer
 * @context:		 enum rbn_ctx
 * @depth:		 writers in progress on this CPU, this one included
 * @source:		 enum rbn_source
 * @flags:		 rbn_event_flags() of the writer (RBN_EV_*)
 * @arg:		 source specific: the tracepoint's value (irq number,
 *			 softirq vector, ...), the generator's per-CPU count
 *			 of runs (its low 32 bits), a kprobe's slot
 * @tp:			 enum rbn_tp_id: the tracepoint, RBN_TP_NONE for the
 *			 other sources
 *
 * Recordings before @tp had one "unsigned long long arg" at offset 32
 * holding @tp - 1 << 32 | @arg for tracepoints (@arg alone otherwise),
 * and no names in the print fmt: they stay readable, their format text
 * describes them.
 */
struct rbn_sample {
	unsigned short common_type;
	unsigned char common_flags;
	unsigned char common_preempt_count;
	int common_pid;
	unsigned long long seq;
	unsigned long long ts;
	unsigned int cpu;
	unsigned char context;
	unsigned char depth;
	unsigned char source;
	unsigned char flags;
	unsigned int arg;
	unsigned int tp;
};

/* The format file of rbnest:sample, as tracefs would print it. */
#define RBN_SAMPLE_FORMAT						\
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
	"\tfield:unsigned int arg;\toffset:32;\tsize:4;\tsigned:0;\n"	\
	"\tfield:unsigned int tp;\toffset:36;\tsize:4;\tsigned:0;\n"	\
	"\n"								\
	"print fmt: \"seq=%llu cpu=%u ctx=%s depth=%u src=%s flags=%s "	\
	"tp=%s arg=%u\", REC->seq, REC->cpu, "				\
	"__print_symbolic(REC->context, " RBN_CTX_SYMS "), REC->depth, " \
	"__print_symbolic(REC->source, " RBN_SRC_SYMS "), "		\
	"__print_flags(REC->flags, \"|\", " RBN_EV_SYMS "), "		\
	"__print_symbolic(REC->tp, " RBN_TP_SYMS "), REC->arg\n"

/*
 * header_page, as tracefs prints it (ring_buffer_print_page_header()):
 * the offsets and sizes come from the sub-buffer header's structure, so
 * that they are right where local_t is 4 bytes. Use with a printf-like
 * function; the arguments are offset, size and signedness of struct
 * rbn_page's time_stamp, commit, commit (its first byte) and data, the
 * size of data being the data bytes of a sub-buffer. On a 64-bit machine
 * it reads:
 *
 *	field: u64 timestamp;	offset:0;	size:8;	signed:0;
 *	field: local_t commit;	offset:8;	size:8;	signed:1;
 *	field: int overwrite;	offset:8;	size:1;	signed:1;
 *	field: char data;	offset:16;	size:4080;	signed:1;
 *
 * (signed for data is char's signedness: 0 where char is unsigned.)
 */
#define RBN_HEADER_PAGE_FMT						\
	"\tfield: u64 timestamp;\toffset:%u;\tsize:%u;\tsigned:%u;\n"	\
	"\tfield: local_t commit;\toffset:%u;\tsize:%u;\tsigned:%u;\n"	\
	"\tfield: int overwrite;\toffset:%u;\tsize:%u;\tsigned:%u;\n"	\
	"\tfield: char data;\toffset:%u;\tsize:%u;\tsigned:%u;\n"

#define RBN_HEADER_EVENT						\
	"# compressed entry header\n"					\
	"\ttype_len    :    5 bits\n"					\
	"\ttime_delta  :   27 bits\n"					\
	"\tarray       :   32 bits\n"					\
	"\n"								\
	"\tpadding     : type == 29\n"					\
	"\ttime_extend : type == 30\n"					\
	"\ttime_stamp : type == 31\n"					\
	"\tdata max type_len  == 28\n"

#endif /* _RBN_EVENTS_H */
