/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rbn_decode.h - an independent, bounds-checked decoder of one rbnest
 * (ftrace format, x86_64) sub-buffer image.
 *
 * The decoder is written from the page format only: it shares nothing
 * with the core's reader but the constants of rb_core.h, so that tests
 * can hold the two against each other (and against libtraceevent).
 *
 * Layout of a sub-buffer of subbuf_size bytes (all little-endian):
 *
 *   0   u64 time_stamp   full time of the first event
 *   8   u64 commit       data bytes, RBN_MISSED_EVENTS, RBN_MISSED_STORED
 *   16  data[]           4-byte aligned events; with RBN_MISSED_STORED an
 *                        unsigned long (8 bytes) lost count at data[commit]
 *
 * Every offset below is an offset into data[], not into the page.
 */
#ifndef _RBN_DECODE_H
#define _RBN_DECODE_H

#include <stddef.h>

#include "rb_core.h"

/**
 * struct rbn_dec_event - one data event rebuilt from a page
 * @ts:		its time stamp: page time_stamp plus deltas, extends and
 *		absolute stamps before it
 * @offset:	offset of its header in data[] (after any time extend or
 *		absolute stamp that belongs to it)
 * @len:	payload bytes (a multiple of 4: the writer's length rounded up)
 * @data:	the payload, inside the page image
 * @type_len:	0 or 1..RBN_TYPE_DATA_MAX, as in the header
 * @raw_delta:	the 27-bit time_delta of its header
 * @abs:	an absolute stamp came right before it
 * @extend:	a time extend came right before it
 * @abs_raw:	the 59 stored bits of that absolute stamp (when @abs)
 * @ext_delta:	the delta of that time extend (when @extend)
 */
struct rbn_dec_event {
	u64 ts;
	u32 offset;
	u32 len;
	const void *data;
	u8 type_len;
	u64 raw_delta;
	bool abs;
	bool extend;
	u64 abs_raw;
	u64 ext_delta;
};

/**
 * struct rbn_dec_page - what a page says about itself
 * @time_stamp:		the page header's full time stamp
 * @commit:		data bytes (the commit word without its flags)
 * @missed:		RBN_MISSED_EVENTS is set
 * @missed_stored:	RBN_MISSED_STORED is set: @missed_count is valid
 * @missed_count:	the lost count stored at data[@commit]
 * @nr_events:		data events decoded
 * @nr_padding:		padding entries (end-of-page fills and discarded events)
 * @nr_discard:		of @nr_padding, those that end before the end of data[]
 *			(discarded events; one that ends there counts as fill)
 * @nr_extend:		time extends
 * @nr_abs:		absolute time stamps
 * @nr_backwards:	data events older than the data event before them
 *			(the first one compared with *prev_ts)
 * @end:		offset where decoding stopped: @commit, or the offset
 *			of a bare end marker (a padding header with no room
 *			for its length word before the commit)
 * @first_type:		type_len of the entry at data[0] (0xff: page empty)
 * @pad_dirty:		non-zero bytes inside padding (beyond its length word)
 * @last_ts:		time of the last entry that set the time (@time_stamp
 *			if none)
 */
struct rbn_dec_page {
	u64 time_stamp;
	u32 commit;
	bool missed;
	bool missed_stored;
	unsigned long missed_count;
	unsigned int nr_events;
	unsigned int nr_padding;
	unsigned int nr_discard;
	unsigned int nr_extend;
	unsigned int nr_abs;
	unsigned int nr_backwards;
	u32 end;
	u8 first_type;
	unsigned int pad_dirty;
	u64 last_ts;
};

/* rbn_fix_abs_ts() as the decoder does it, without the core. */
u64 rbn_dec_fix_abs(u64 abs, u64 prev);

int rbn_decode_page(const void *page, size_t subbuf_size, u64 *prev_ts,
		    struct rbn_dec_page *pg, struct rbn_dec_event *ev,
		    int max_ev, char *err, size_t errlen);

int rbn_decode_check_zero(const void *page, size_t subbuf_size,
			  const struct rbn_dec_page *pg, char *err,
			  size_t errlen);

#endif /* _RBN_DECODE_H */
