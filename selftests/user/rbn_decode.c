// SPDX-License-Identifier: GPL-2.0
/*
 * rbn_decode.c - an independent, bounds-checked decoder of one rbnest
 * sub-buffer image (see rbn_decode.h for the layout).
 *
 * Nothing here trusts the page: every length is checked against the
 * commit before a byte is read, and every field is assembled from bytes
 * (little-endian) so that the decoder does not depend on the host.
 */
#include <stdarg.h>
#include <stdio.h>

#include "rbn_decode.h"

#define DEC_LONG_SIZE	8U	/* unsigned long of the x86_64 writer */
#define DEC_TS_BITS	59
#define DEC_MIN_SUBBUF	(RBN_PAGE_HDR_SIZE + 2 * RBN_EVENT_HDR_SIZE)
#define DEC_MAX_SUBBUF	(1UL << RBN_TS_SHIFT)

static void __attribute__((format(printf, 3, 4)))
dec_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static u32 get_le32(const unsigned char *p)
{
	return (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24;
}

static u64 get_le64(const unsigned char *p)
{
	return (u64)get_le32(p) | (u64)get_le32(p + 4) << 32;
}

static unsigned int count_nonzero(const unsigned char *p, size_t len)
{
	unsigned int n = 0;
	size_t i;

	for (i = 0; i < len; i++)
		n += p[i] != 0;
	return n;
}

/**
 * rbn_dec_fix_abs - restore the full time of an absolute stamp
 * @abs:	the 59 bits stored in the stamp
 * @prev:	the previous full time on the same CPU
 *
 * The stamp lacks the top 5 bits: take them from @prev, and if that makes
 * the time go backwards the 59-bit value wrapped since @prev: add 2^59.
 *
 * Return: the full time.
 */
u64 rbn_dec_fix_abs(u64 abs, u64 prev)
{
	u64 ts = (abs & RBN_ABS_TS_MASK) | (prev & RBN_TS_MSB);

	if (ts < prev)
		ts += 1ULL << DEC_TS_BITS;
	return ts;
}

/**
 * rbn_decode_page - decode and check one sub-buffer image
 * @page:	the image, @subbuf_size bytes
 * @subbuf_size: size of a sub-buffer (PAGE_SIZE << order)
 * @prev_ts:	in: time of the last data event before this page (0 if
 *		none), used only to count events that go backwards; out:
 *		time of the last data event seen (unchanged if none). May
 *		be NULL.
 * @pg:		filled with what the page header and its entries say
 * @ev:		filled with the data events in page order, or NULL to only
 *		count them
 * @max_ev:	room in @ev (ignored when @ev is NULL)
 * @err:	receives a message naming the offending offset on failure
 * @errlen:	size of @err (0: no message)
 *
 * Rules: the page time_stamp is the running time before the first entry.
 * A data event (type_len 0..28) adds its time_delta; a time extend (30)
 * adds array[0] << 27 | time_delta; an absolute stamp (31) replaces the
 * running time with its 59 bits fixed up by rbn_dec_fix_abs(); a padding
 * (29) covers array[0] + 4 bytes and adds its time_delta like a data event
 * (it is a discarded event, whose delta writers behind it counted on, or
 * the fill at the end of a sub-buffer). A time extend or an absolute stamp
 * must be followed by a data event or a discarded event. A padding header
 * with no room for its length word before the commit ends the page.
 *
 * Offsets in messages and in @ev are offsets into data[] (page offset
 * minus RBN_PAGE_HDR_SIZE).
 *
 * Return: the number of data events, or -EINVAL when the image breaks the
 * format: bad size, commit past the end of data[], a stored lost count
 * that does not fit, an entry truncated or running past the commit, a bad
 * array[0], a dangling stamp, or more than @max_ev events.
 */
int rbn_decode_page(const void *page, size_t subbuf_size, u64 *prev_ts,
		    struct rbn_dec_page *pg, struct rbn_dec_event *ev,
		    int max_ev, char *err, size_t errlen)
{
	const unsigned char *p = page;
	const unsigned char *data;
	u64 commit_word, ts, last, stamp_val = 0;
	bool pend_abs = false, pend_ext = false;
	size_t data_size;
	u32 commit, off;
	int nr = 0;

	if (err && errlen)
		err[0] = '\0';
	if (!page || !pg) {
		dec_err(err, errlen, "no page or no result");
		return -EINVAL;
	}
	memset(pg, 0, sizeof(*pg));
	pg->first_type = 0xff;
	if (subbuf_size < DEC_MIN_SUBBUF || subbuf_size > DEC_MAX_SUBBUF ||
	    subbuf_size % RBN_ALIGNMENT) {
		dec_err(err, errlen, "bad sub-buffer size %zu", subbuf_size);
		return -EINVAL;
	}
	data_size = subbuf_size - RBN_PAGE_HDR_SIZE;
	data = p + RBN_PAGE_HDR_SIZE;

	pg->time_stamp = get_le64(p);
	commit_word = get_le64(p + 8);
	pg->missed = commit_word & RBN_MISSED_EVENTS;
	pg->missed_stored = commit_word & RBN_MISSED_STORED;
	commit_word &= ~(u64)RBN_MISSED_FLAGS;
	if (commit_word > data_size) {
		dec_err(err, errlen,
			"commit %#llx past the end of data[] (%zu bytes)",
			(unsigned long long)commit_word, data_size);
		return -EINVAL;
	}
	commit = (u32)commit_word;
	pg->commit = commit;
	pg->end = commit;
	if (commit % RBN_ALIGNMENT) {
		dec_err(err, errlen, "commit %u not 4-byte aligned", commit);
		return -EINVAL;
	}
	if (pg->missed_stored && !pg->missed) {
		dec_err(err, errlen,
			"RBN_MISSED_STORED without RBN_MISSED_EVENTS");
		return -EINVAL;
	}
	if (pg->missed_stored) {
		if (data_size - commit < DEC_LONG_SIZE) {
			dec_err(err, errlen,
				"stored lost count at data[%u] runs past the page (%zu bytes)",
				commit, data_size);
			return -EINVAL;
		}
		pg->missed_count = (unsigned long)get_le64(data + commit);
	}

	ts = pg->time_stamp;
	last = prev_ts ? *prev_ts : 0;
	if (commit)
		pg->first_type = data[0] & 0x1f;

	for (off = 0; off < commit; ) {
		u32 hdr, type_len, delta, a0 = 0, size;
		bool has_a0;

		if (commit - off < RBN_EVENT_HDR_SIZE) {
			dec_err(err, errlen,
				"truncated header at data[%u] (commit %u)",
				off, commit);
			return -EINVAL;
		}
		hdr = get_le32(data + off);
		type_len = hdr & 0x1f;
		delta = hdr >> 5;
		has_a0 = commit - off >= RBN_EVENT_HDR_SIZE + 4;
		if (has_a0)
			a0 = get_le32(data + off + RBN_EVENT_HDR_SIZE);

		if (type_len == RBN_TYPE_PADDING && !has_a0) {
			/* A bare end marker: the rest of the page is unused. */
			if (pend_abs || pend_ext) {
				dec_err(err, errlen,
					"time stamp before data[%u] followed by end padding",
					off);
				return -EINVAL;
			}
			pg->nr_padding++;
			pg->end = off;
			break;
		}

		if (type_len > RBN_TYPE_DATA_MAX || type_len == 0) {
			if (!has_a0) {
				dec_err(err, errlen,
					"truncated %s at data[%u] (commit %u)",
					type_len ? "entry" : "length word",
					off, commit);
				return -EINVAL;
			}
		}

		switch (type_len) {
		case RBN_TYPE_PADDING:
			/*
			 * A discarded event or the fill at the end: its delta
			 * is time, and a stamp before it was the discarded
			 * event's.
			 */
			if (a0 < 4 || a0 % RBN_ALIGNMENT ||
			    a0 > commit - off - RBN_EVENT_HDR_SIZE) {
				dec_err(err, errlen,
					"discarded event at data[%u]: length %u bad or past commit %u",
					off, a0, commit);
				return -EINVAL;
			}
			size = RBN_EVENT_HDR_SIZE + a0;
			ts += delta;
			pend_abs = false;
			pend_ext = false;
			pg->nr_padding++;
			if (off + size < data_size)
				pg->nr_discard++;
			pg->pad_dirty += count_nonzero(data + off + 8,
						       size - 8);
			break;
		case RBN_TYPE_TIME_EXTEND:
		case RBN_TYPE_TIME_STAMP:
			if (pend_abs || pend_ext) {
				dec_err(err, errlen,
					"two time stamps in a row at data[%u]",
					off);
				return -EINVAL;
			}
			size = RBN_LEN_TIME_EXTEND;
			stamp_val = (u64)a0 << RBN_TS_SHIFT | delta;
			if (type_len == RBN_TYPE_TIME_EXTEND) {
				ts += stamp_val;
				pend_ext = true;
				pg->nr_extend++;
			} else {
				ts = rbn_dec_fix_abs(stamp_val, ts);
				pend_abs = true;
				pg->nr_abs++;
			}
			break;
		default:
			if (type_len == 0) {
				if (a0 < RBN_ALIGNMENT + 4 ||
				    a0 % RBN_ALIGNMENT) {
					dec_err(err, errlen,
						"event at data[%u]: array[0] %u too small or unaligned",
						off, a0);
					return -EINVAL;
				}
				if (a0 > commit - off - RBN_EVENT_HDR_SIZE) {
					dec_err(err, errlen,
						"event at data[%u]: array[0] %u runs past commit %u",
						off, a0, commit);
					return -EINVAL;
				}
				size = RBN_EVENT_HDR_SIZE + a0;
			} else {
				size = RBN_EVENT_HDR_SIZE + type_len * 4;
				if (size > commit - off) {
					dec_err(err, errlen,
						"event at data[%u]: type_len %u runs past commit %u",
						off, type_len, commit);
					return -EINVAL;
				}
			}
			ts += delta;
			if (ev) {
				struct rbn_dec_event *e;

				if (nr >= max_ev) {
					dec_err(err, errlen,
						"more than %d events (at data[%u])",
						max_ev, off);
					return -EINVAL;
				}
				e = &ev[nr];
				e->ts = ts;
				e->offset = off;
				e->type_len = type_len;
				e->raw_delta = delta;
				e->abs = pend_abs;
				e->extend = pend_ext;
				e->abs_raw = pend_abs ? stamp_val : 0;
				e->ext_delta = pend_ext ? stamp_val : 0;
				if (type_len) {
					e->len = type_len * 4;
					e->data = data + off +
						  RBN_EVENT_HDR_SIZE;
				} else {
					e->len = a0 - 4;
					e->data = data + off +
						  RBN_EVENT_HDR_SIZE + 4;
				}
			}
			if (ts < last)
				pg->nr_backwards++;
			last = ts;
			pend_abs = false;
			pend_ext = false;
			nr++;
			break;
		}
		off += size;
	}

	if (pend_abs || pend_ext) {
		dec_err(err, errlen, "time stamp at the end of data (commit %u)",
			commit);
		return -EINVAL;
	}
	pg->nr_events = nr;
	pg->last_ts = ts;
	if (prev_ts && nr)
		*prev_ts = last;
	return nr;
}

/**
 * rbn_decode_check_zero - check that unused bytes of a page are zero
 * @page:	the image, already decoded into @pg
 * @subbuf_size: size of a sub-buffer
 * @pg:		the result of rbn_decode_page() on @page
 * @err:	receives a message naming the first non-zero byte
 * @errlen:	size of @err
 *
 * Every byte of data[] past the commit, and past the stored lost count
 * when RBN_MISSED_STORED is set, must be zero: a page handed to user space
 * carries no stale memory. (Bytes inside paddings are counted by
 * rbn_decode_page() in @pg->pad_dirty.)
 *
 * Return: 0, or -EINVAL.
 */
int rbn_decode_check_zero(const void *page, size_t subbuf_size,
			  const struct rbn_dec_page *pg, char *err,
			  size_t errlen)
{
	const unsigned char *data = (const unsigned char *)page +
				    RBN_PAGE_HDR_SIZE;
	size_t data_size, i;
	u32 from;

	if (err && errlen)
		err[0] = '\0';
	if (!page || !pg || subbuf_size < DEC_MIN_SUBBUF ||
	    pg->commit > subbuf_size - RBN_PAGE_HDR_SIZE) {
		dec_err(err, errlen, "bad arguments");
		return -EINVAL;
	}
	data_size = subbuf_size - RBN_PAGE_HDR_SIZE;
	from = pg->commit;
	if (pg->missed_stored)
		from += DEC_LONG_SIZE;
	for (i = from; i < data_size; i++) {
		if (data[i]) {
			dec_err(err, errlen,
				"byte data[%zu] = %#x past commit %u is not zero",
				i, data[i], pg->commit);
			return -EINVAL;
		}
	}
	return 0;
}
