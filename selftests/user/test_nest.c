// SPDX-License-Identifier: GPL-2.0
/*
 * test_nest.c - exhaustive nesting of writers on the real rb_core.c.
 *
 * Every tree of writers with up to four levels (task, softirq, hardirq,
 * NMI), up to two interrupts per writer at any label of its write path,
 * is run at several positions in a sub-buffer (first event of a page,
 * middle, exactly filling it, crossing its end, a nested writer crossing
 * it), with a steady clock, with a clock jump of 2^27 ns or more at every
 * point of the scenario, with a clock that steps back (1 ns, 2^27 ns,
 * 2^32 ns, and across 2^59) at every point, and with clock values around
 * 2^59. After each
 * scenario a reader rebuilds the time stamps and the invariants are
 * checked (nest_check()). A second family runs in overwrite mode on a
 * full ring with readers acting at the labels, where the head page is
 * pushed by nested writers and swapped by readers.
 *
 * RBN_NEST_QUICK=1 runs a sample of the four-writer trees (sanitizer
 * builds).
 */
#include <stdlib.h>

#include "ktap.h"
#include "nest_harness.h"

#define MAX_TREES	40000
#define MAX_DEPTH	4

static struct nest_tree *trees;
static int nr_trees;

/* Payload per depth: small, small, large (type_len 0), small. */
static const unsigned short depth_len[MAX_DEPTH + 1] = { 0, 24, 40, 120, 16 };

/*
 * Build all subtrees of exactly @n nodes rooted at @depth into @out;
 * returns how many. Subtrees are stored with their root at index 0 and
 * children after it.
 */
static int gen(int depth, int n, struct nest_tree *out, int max)
{
	int cnt = 0, l1, l2, a, i, j;

	if (n == 1) {
		if (max < 1)
			return 0;
		memset(&out[0], 0, sizeof(out[0]));
		out[0].nr = 1;
		out[0].n[0].len = depth_len[depth];
		return 1;
	}
	if (depth >= MAX_DEPTH)
		return 0;

	/* one interrupt, at any label */
	{
		struct nest_tree *sub = malloc(sizeof(*sub) * MAX_TREES);
		int ns = gen(depth + 1, n - 1, sub, MAX_TREES);

		for (l1 = 0; l1 < RBN_NR_LABELS; l1++) {
			for (i = 0; i < ns && cnt < max; i++) {
				struct nest_tree *t = &out[cnt++];

				memset(t, 0, sizeof(*t));
				t->nr = 1 + sub[i].nr;
				t->n[0].len = depth_len[depth];
				t->n[0].nr_child = 1;
				t->n[0].label[0] = l1;
				t->n[0].child[0] = 1;
				for (j = 0; j < sub[i].nr; j++) {
					t->n[1 + j] = sub[i].n[j];
					t->n[1 + j].child[0] += 1;
					t->n[1 + j].child[1] += 1;
				}
			}
		}
		free(sub);
	}

	/* two interrupts: at two labels, or twice at the same one */
	for (a = 1; a <= n - 2; a++) {
		struct nest_tree *s1 = malloc(sizeof(*s1) * MAX_TREES);
		struct nest_tree *s2 = malloc(sizeof(*s2) * MAX_TREES);
		int n1 = gen(depth + 1, a, s1, MAX_TREES);
		int n2 = gen(depth + 1, n - 1 - a, s2, MAX_TREES);

		for (long x = 0; x < (long)RBN_NR_LABELS * RBN_NR_LABELS * n1 * n2 &&
		     cnt < max; x++) {
			struct nest_tree *t;
			int k, off2;

			/* x enumerates (l1 <= l2, first subtree, second subtree) */
			j = x % n2;
			i = x / n2 % n1;
			l2 = x / n2 / n1 % RBN_NR_LABELS;
			l1 = x / n2 / n1 / RBN_NR_LABELS;
			if (l2 < l1)
				continue;
			t = &out[cnt++];
			off2 = 1 + s1[i].nr;

			memset(t, 0, sizeof(*t));
			t->nr = 1 + s1[i].nr + s2[j].nr;
			t->n[0].len = depth_len[depth];
			t->n[0].nr_child = 2;
			t->n[0].label[0] = l1;
			t->n[0].label[1] = l2;
			t->n[0].child[0] = 1;
			t->n[0].child[1] = off2;
			for (k = 0; k < s1[i].nr; k++) {
				t->n[1 + k] = s1[i].n[k];
				t->n[1 + k].child[0] += 1;
				t->n[1 + k].child[1] += 1;
			}
			for (k = 0; k < s2[j].nr; k++) {
				t->n[off2 + k] = s2[j].n[k];
				t->n[off2 + k].child[0] += off2;
				t->n[off2 + k].child[1] += off2;
			}
		}
		free(s1);
		free(s2);
	}
	return cnt;
}

enum pos {
	POS_START,	/* root is the first event of a fresh sub-buffer */
	POS_MID,	/* plenty of room */
	POS_EXACT,	/* root exactly fills the sub-buffer */
	POS_CROSS,	/* root does not fit */
	POS_NESTED,	/* root fits, the first nested writer does not */
	POS_FILL_NESTED,	/* a depth-2 event, then the root fill it exactly */
	POS_FILL_NESTED_ABS,	/* the same with the depth-2 event absolute */
	POS_SHORT_NESTED,	/* a depth-2 event and the root leave 4 bytes */
	NR_POS
};

static const char * const pos_name[NR_POS] = {
	"page-start", "middle", "exact-fill", "crossing", "nested-crossing",
	"fill-after-nested", "fill-after-abs", "short-after-nested"
};

/* Bytes left in the sub-buffer before the root writes. */
static unsigned int pos_room(int pos, unsigned int subbuf)
{
	unsigned int root = 4 + depth_len[1];

	switch (pos) {
	case POS_MID:
		return subbuf / 2;
	case POS_EXACT:
		return root;
	case POS_CROSS:
		return root - 4;
	case POS_NESTED:
		/* the root with a stamp fits; a depth-2 event does not */
		return root + 8 + 20;
	case POS_FILL_NESTED:
		return root + 4 + depth_len[2];
	case POS_FILL_NESTED_ABS:
		return root + 4 + depth_len[2] + 8;
	case POS_SHORT_NESTED:
		return root + 4 + depth_len[2] + 4;
	default:
		return subbuf;
	}
}

enum clk {
	CLK_STEADY,	/* 1 ns per clock read, no jump */
	CLK_JUMP,	/* 2^27 ns jump at one hook call */
	CLK_JUMP_BIG,	/* 2^32 + 3 ns jump at one hook call */
	CLK_HIGH,	/* around 2^59, crossing it */
	CLK_HIGH_JUMP,	/* above 2^59 - 2^27, jump across 2^59 */
	CLK_BACK,	/* the next clock read 1 ns below the last one */
	CLK_BACK_27,	/* ... 2^27 ns below */
	CLK_BACK_32,	/* ... 2^32 ns below */
	CLK_HIGH_BACK,	/* just above 2^59, 2^27 ns back across it */
	NR_CLK
};

struct family_stats {
	unsigned long scenarios;
	unsigned long effective;	/* every planned interrupt fired */
	unsigned long failed;
	unsigned long by_pos[NR_POS];
	unsigned long by_clk[NR_CLK];
	unsigned long by_nodes[NEST_MAX_NODES + 1];
	unsigned long label_fired[RBN_NR_LABELS];
};

static bool run_one(struct nest_ctx *c, const struct nest_tree *t, int pos,
		    int clk, long jump_at, struct family_stats *fs,
		    bool verbose_fail)
{
	unsigned int subbuf = rbn_subbuf_size(c->buffer) - RBN_PAGE_HDR_SIZE;
	unsigned int room = pos_room(pos, subbuf);
	u64 base = 1000, jump = 0;
	bool ok;

	switch (clk) {
	case CLK_JUMP:
		jump = 1ULL << 27;
		break;
	case CLK_JUMP_BIG:
		jump = (1ULL << 32) + 3;
		break;
	case CLK_HIGH:
		base = (1ULL << 59) - 40;
		break;
	case CLK_HIGH_JUMP:
		base = (1ULL << 59) - (1ULL << 26);
		jump = 1ULL << 27;
		break;
	/*
	 * A step back of N: the hook call takes N + 1 off the clock, so the
	 * next read (which adds the step of 1) is N below the last one.
	 */
	case CLK_BACK:
		base = 1ULL << 40;
		jump = -2ULL;
		break;
	case CLK_BACK_27:
		base = 1ULL << 40;
		jump = -((1ULL << 27) + 1);
		break;
	case CLK_BACK_32:
		base = 1ULL << 40;
		jump = -((1ULL << 32) + 1);
		break;
	case CLK_HIGH_BACK:
		base = (1ULL << 59) + 20;
		jump = -((1ULL << 27) + 1);
		break;
	}
	nest_begin(c, t, base, 1, jump, jump_at);
	if (room < subbuf && !nest_filler(c, subbuf - room)) {
		snprintf(c->err, sizeof(c->err), "filler of %u bytes failed",
			 subbuf - room);
		ok = false;
	} else {
		nest_run(c);
		nest_drain(c);
		ok = nest_check(c, room < subbuf ? 1 : 0);
	}

	fs->scenarios++;
	fs->by_pos[pos]++;
	fs->by_clk[clk]++;
	fs->by_nodes[t->nr]++;
	if (c->fired_total == c->planned)
		fs->effective++;
	for (int i = 0; i < t->nr; i++)
		for (int k = 0; k < t->n[i].nr_child; k++)
			if (c->fired[i][k])
				fs->label_fired[t->n[i].label[k]]++;
	if (!ok) {
		fs->failed++;
		if (verbose_fail && fs->failed <= 10) {
			char desc[256];
			int len = 0;

			for (int i = 0; i < t->nr; i++) {
				len += snprintf(desc + len, sizeof(desc) - len, " [%d:", i);
				for (int k = 0; k < t->n[i].nr_child; k++)
					len += snprintf(desc + len, sizeof(desc) - len,
							" L%d->%d", t->n[i].label[k],
							t->n[i].child[k]);
				len += snprintf(desc + len, sizeof(desc) - len, "]");
			}
			ktap_print("FAIL %s clk=%d jump_at=%ld tree%s: %s",
				   pos_name[pos], clk, jump_at, desc, c->err);
		}
	}
	return ok;
}

static struct nest_ctx ctx;

static void print_paths(struct nest_ctx *c)
{
	ktap_print("events %lu: fast %lu, forced-absolute %lu, slow (interrupted before reserve) %lu, zero-delta %lu, time-extend %lu, page-start %lu, clock-back %lu",
		   c->events, c->paths[0], c->paths[1], c->paths[2],
		   c->paths[3], c->paths[4], c->paths[5], c->paths[6]);
}

static void print_family(const char *name, struct family_stats *fs)
{
	int i;

	ktap_print("%s: %lu scenarios, %lu with every planned interrupt fired, %lu failed",
		   name, fs->scenarios, fs->effective, fs->failed);
	for (i = 0; i < NR_POS; i++)
		if (fs->by_pos[i])
			ktap_print("  position %-16s %lu", pos_name[i], fs->by_pos[i]);
	ktap_print("  clocks: steady %lu, jump 2^27 %lu, jump 2^32 %lu, near 2^59 %lu, across 2^59 %lu",
		   fs->by_clk[0], fs->by_clk[1], fs->by_clk[2], fs->by_clk[3],
		   fs->by_clk[4]);
	ktap_print("  clocks stepping back: 1 ns %lu, 2^27 %lu, 2^32 %lu, across 2^59 %lu",
		   fs->by_clk[CLK_BACK], fs->by_clk[CLK_BACK_27],
		   fs->by_clk[CLK_BACK_32], fs->by_clk[CLK_HIGH_BACK]);
	ktap_print("  writers per scenario: 1:%lu 2:%lu 3:%lu 4:%lu",
		   fs->by_nodes[1], fs->by_nodes[2], fs->by_nodes[3],
		   fs->by_nodes[4]);
	for (i = 0; i < RBN_NR_LABELS; i++)
		if (!fs->label_fired[i])
			ktap_print("  label %d never fired", i);
}

/* Trees of up to four writers in producer/consumer mode. */
static bool family_nest(bool quick)
{
	struct family_stats fs = { 0 };
	struct rbn_config cfg = {
		.size = 16 * 4096, .clock = nest_clock, .nr_cpus = 1,
	};
	int t, pos, clk;

	ctx.buffer = rbn_alloc(&cfg);
	if (IS_ERR(ctx.buffer))
		return false;

	for (t = 0; t < nr_trees; t++) {
		const struct nest_tree *tree = &trees[t];
		bool small = tree->nr <= 3;

		if (quick && !small && t % 13)
			continue;
		for (pos = 0; pos < NR_POS; pos++) {
			long calls;

			/* Steady clock; count the hook calls for the jumps. */
			run_one(&ctx, tree, pos, CLK_STEADY, -1, &fs, true);
			calls = ctx.hook_calls;
			run_one(&ctx, tree, pos, CLK_HIGH, -1, &fs, true);
			for (clk = CLK_JUMP; clk < NR_CLK; clk++) {
				long k;

				if (clk == CLK_HIGH)
					continue;
				if (small) {
					for (k = 0; k < calls; k++)
						run_one(&ctx, tree, pos, clk, k,
							&fs, true);
				} else {
					run_one(&ctx, tree, pos, clk, 0, &fs, true);
					run_one(&ctx, tree, pos, clk, calls / 2,
						&fs, true);
					run_one(&ctx, tree, pos, clk, calls - 1,
						&fs, true);
				}
			}
		}
	}
	print_family("nest", &fs);
	print_paths(&ctx);
	rbn_free(ctx.buffer);
	/* The clocks that step back must have made clock-back events. */
	return fs.failed == 0 && fs.effective > 0 && ctx.paths[6] > 0;
}

/*
 * Overwrite mode on a full ring of three sub-buffers: the root and the
 * nested writers write events of a third of a page, so that writers cross
 * pages and push the head while nested, and readers act at the labels.
 */
static bool family_overwrite(void)
{
	struct family_stats fs = { 0 };
	struct rbn_config cfg = {
		.size = 3 * 4080, .clock = nest_clock, .nr_cpus = 1,
		.overwrite = true,
	};
	static struct nest_tree ow[MAX_TREES];
	unsigned long paths0[8];
	int nr = 0, l1, l2, a1, a2, r1, t, pos, i;

	ctx.buffer = rbn_alloc(&cfg);
	if (IS_ERR(ctx.buffer))
		return false;
	ctx.page = rbn_alloc_read_page(ctx.buffer, 0);
	memcpy(paths0, ctx.paths, sizeof(paths0));

	/*
	 * Root (1300 bytes) interrupted at l1 by a writer (of one or four
	 * events) or a reader action, which (if a writer) is interrupted at
	 * l2 by a writer or a reader action.
	 */
	for (int x = 0; x < RBN_NR_LABELS * 3 * 2 * (RBN_NR_LABELS + 1) * 3; x++) {
		struct nest_tree *tr;

		/* x enumerates (l1, a1, r1, l2, a2); l2 == NR_LABELS: none */
		a2 = x % 3;
		l2 = x / 3 % (RBN_NR_LABELS + 1);
		r1 = x / 3 / (RBN_NR_LABELS + 1) % 2 * 3;
		a1 = x / 3 / (RBN_NR_LABELS + 1) / 2 % 3;
		l1 = x / 3 / (RBN_NR_LABELS + 1) / 2 / 3;

		if (a1 != NEST_WRITE && (l2 || a2 || r1))
			continue;
		/*
		 * A reader that finds the head flagged UPDATE waits for the
		 * writer that set it (from PAGE_HEAD to the end of the push,
		 * nested writers included); inside that writer it would wait
		 * forever. On real CPUs it spins until the writer is done.
		 */
		if ((a1 != NEST_WRITE && (l1 == RBN_LABEL_PAGE_HEAD ||
					      l1 == RBN_LABEL_PAGE_NEW_HEAD)) ||
		    (a2 != NEST_WRITE && (l2 == RBN_LABEL_PAGE_HEAD ||
					      l2 == RBN_LABEL_PAGE_NEW_HEAD ||
					      l1 == RBN_LABEL_PAGE_HEAD ||
					      l1 == RBN_LABEL_PAGE_NEW_HEAD)))
			continue;
		if (l2 == RBN_NR_LABELS && a2)
			continue;
		tr = &ow[nr++];
		memset(tr, 0, sizeof(*tr));
		tr->n[0].len = 1300;
		tr->n[0].nr_child = 1;
		tr->n[0].label[0] = l1;
		tr->n[0].child[0] = 1;
		tr->n[1].action = a1;
		/* a nested writer of four events crosses pages itself */
		tr->n[1].repeat = r1;
		tr->n[1].len = 1300;
		tr->nr = 2;
		if (a1 == NEST_WRITE && l2 < RBN_NR_LABELS) {
			tr->n[1].nr_child = 1;
			tr->n[1].label[0] = l2;
			tr->n[1].child[0] = 2;
			tr->n[2].action = a2;
			tr->n[2].len = 1300;
			tr->nr = 3;
		}
	}

	for (t = 0; t < nr; t++) {
		for (pos = 0; pos < 4; pos++) {
			int fill;
			bool ok;

			nest_begin(&ctx, &ow[t], 1000, 1, 0, -1);
			/*
			 * Fill the ring so the tail sits on its last page,
			 * with @pos more events of 1300 bytes: the root
			 * lands at different offsets relative to the head.
			 */
			ok = true;
			for (fill = 0; fill < 7 + pos && ok; fill++)
				ok = nest_filler(&ctx, 1300 + 8);
			if (!ok) {
				fs.failed++;
				continue;
			}
			/* some of the filler may be overwritten: lost is counted */
			nest_run(&ctx);
			nest_drain(&ctx);
			ok = nest_check(&ctx, 7 + pos);
			fs.scenarios++;
			fs.by_pos[pos < NR_POS ? pos : 0]++;
			fs.by_nodes[ow[t].nr]++;
			if (ctx.fired_total == ctx.planned)
				fs.effective++;
			for (i = 0; i < ow[t].nr; i++)
				for (int k = 0; k < ow[t].n[i].nr_child; k++)
					if (ctx.fired[i][k])
						fs.label_fired[ow[t].n[i].label[k]]++;
			if (!ok && ++fs.failed <= 10)
				ktap_print("FAIL overwrite tree %d (L%d a%d L%d a%d) fill %d: %s",
					   t, ow[t].n[0].label[0], ow[t].n[1].action,
					   ow[t].n[1].label[0], ow[t].n[2].action,
					   pos, ctx.err);
		}
	}
	ktap_print("overwrite: %lu scenarios (ring of 3 sub-buffers, readers acting at labels %lu times), %lu with every planned interrupt fired, %lu failed",
		   fs.scenarios, ctx.reader_actions, fs.effective, fs.failed);
	for (i = 0; i < RBN_NR_LABELS; i++)
		if (!fs.label_fired[i])
			ktap_print("  label %d never fired", i);
	for (i = 0; i < 7; i++)
		ctx.paths[i] -= paths0[i];
	print_paths(&ctx);
	rbn_free_read_page(ctx.buffer, 0, ctx.page);
	ctx.page = NULL;
	rbn_free(ctx.buffer);
	return fs.failed == 0;
}

int main(void)
{
	bool quick = getenv("RBN_NEST_QUICK") && atoi(getenv("RBN_NEST_QUICK"));
	int n, total = 0;

	nest_cur = &ctx;
	rbn_user_nr_cpus = 1;
	trees = malloc(sizeof(*trees) * MAX_TREES * 2);
	for (n = 1; n <= 4; n++) {
		int got = gen(1, n, trees + total, MAX_TREES * 2 - total);

		total += got;
	}
	nr_trees = total;

	ktap_start(2);
	ktap_print("%d writer trees (1 to 4 writers, depth up to 4, 0-2 interrupts per writer at %d labels)%s",
		   nr_trees, RBN_NR_LABELS, quick ? ", quick sample of 4-writer trees" : "");
	ktap_result(family_nest(quick), "nest_exhaustive");
	ktap_result(family_overwrite(), "nest_overwrite_readers");
	free(trees);
	return ktap_finish();
}
