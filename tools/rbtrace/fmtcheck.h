/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A strict check of the text of header_page and of an event's format file,
 * in front of tep_parse_header_page() and tep_parse_format().
 *
 * libtraceevent 1.7 trusts the text it parses: a '[' in a field line
 * followed by a byte that is not printable, a NUL or the end of the text
 * makes event_read_fields() call strcmp() on a NULL token (SIGSEGV); it
 * folds "A / B" and "A % B" of two atoms in "print fmt:" and divides by
 * zero (SIGFPE); it follows a NULL pointer on "A ? B" without ":"; and it
 * accepts field offsets that are not numbers, fields past the event,
 * fields that overlap and names used twice. A recording's files are
 * untrusted, so their text must have exactly the shape tracefs prints
 * before libtraceevent sees it:
 *
 *   name: NAME
 *   ID: N
 *   format:
 *   <TAB>field:TYPE NAME;<TAB>offset:N;<TAB>size:N;<TAB>signed:0|1;
 *   ...                                        (the common fields)
 *   (empty line)
 *   <TAB>field:TYPE NAME;<TAB>offset:N;<TAB>size:N;<TAB>signed:0|1;
 *   ...                                        (the event's fields)
 *   (empty line)
 *   print fmt: "STRING", REC->NAME, ...
 *
 * Every byte is printable ASCII, a tab or a newline; TYPE is words of C
 * identifiers, "*" and "IDENT[]"; NAME is a C identifier, optionally with
 * "[N]"; numbers are decimal; the first field is common_type at offset 0,
 * 2 bytes (tep_data_type() reads it unchecked); every field lies inside
 * the event's largest possible size, no two overlap, no name is used
 * twice; the print fmt string has only integer conversions (and %s for an
 * array), one per argument, and every argument is a field of the event:
 * "REC->NAME", or for a %s of a plain field the names of its values as
 * the kernel's TP_printk() has them,
 *
 *   __print_symbolic(REC->NAME, { VALUE, "TEXT" }, ...)
 *   __print_flags(REC->NAME, "DELIM", { VALUE, "TEXT" }, ...)
 *
 * with 1..RBT_FMT_MAX_SYMS values, each decimal or 0x and up to 16 hex
 * digits, TEXT 1..RBT_FMT_MAX_NAME bytes and DELIM up to 8, neither
 * holding '"' or '\\'.
 */
#ifndef _RBTRACE_FMTCHECK_H
#define _RBTRACE_FMTCHECK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define RBT_FMT_MAX_FIELDS	64
#define RBT_FMT_MAX_NAME	63
#define RBT_FMT_MAX_NUMBER	0x8000000U	/* 2^27 */
#define RBT_FMT_MAX_SYMS	64

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#endif
#ifndef __printf
#define __printf(a, b)		__attribute__((format(printf, a, b)))
#endif

/* One field line. */
struct rbt_fmt_field {
	char name[RBT_FMT_MAX_NAME + 1];
	unsigned int offset;
	unsigned int size;
	unsigned int arraylen;		/* N of "NAME[N]", 0 if none */
	bool dynamic;			/* __data_loc or __rel_loc */
	bool is_signed;
	unsigned int line;
};

/* What a format file holds, or where and why it is refused. */
struct rbt_fmt {
	char name[RBT_FMT_MAX_NAME + 1];
	unsigned int id;
	unsigned int nr_common;
	unsigned int nr_fields;		/* the common ones included */
	struct rbt_fmt_field field[RBT_FMT_MAX_FIELDS];
	unsigned int end;		/* largest offset + size */
	/* header_page: the "data" field's offset and size */
	unsigned int data_offset;
	unsigned int data_size;
	/* the refusal */
	unsigned int line;
	char err[192];
};

/* A cursor over the text, one line at a time. */
struct rbt_fmt_cur {
	const char *p, *end;		/* the current line */
	const char *next, *text_end;
	unsigned int line;
};

static inline bool __printf(3, 4)
rbt_fmt_fail(struct rbt_fmt *f, unsigned int line, const char *fmt, ...)
{
	va_list ap;

	f->line = line;
	va_start(ap, fmt);
	vsnprintf(f->err, sizeof(f->err), fmt, ap);
	va_end(ap);
	return false;
}

static inline bool rbt_fmt_is_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static inline bool rbt_fmt_is_ident(char c)
{
	return rbt_fmt_is_ident_start(c) || (c >= '0' && c <= '9');
}

/* Every byte printable ASCII, a tab or a newline. */
static inline bool rbt_fmt_bytes_ok(struct rbt_fmt *f, const char *text,
				    size_t len)
{
	unsigned int line = 1, col = 1;
	size_t i;

	for (i = 0; i < len; i++, col++) {
		unsigned char c = text[i];

		if (c == '\n') {
			line++;
			col = 0;
			continue;
		}
		if (c != '\t' && (c < 0x20 || c > 0x7e))
			return rbt_fmt_fail(f, line,
					    "byte 0x%02x in column %u is not printable ASCII",
					    c, col);
	}
	return true;
}

static inline void rbt_fmt_start(struct rbt_fmt_cur *c, const char *text,
				 size_t len)
{
	c->next = text;
	c->text_end = text + len;
	c->line = 0;
}

/*
 * Move to the next line; false at the end of the text. @nl is set to
 * whether the line ends with a newline.
 */
static inline bool rbt_fmt_next(struct rbt_fmt_cur *c, bool *nl)
{
	const char *q;

	if (c->next >= c->text_end)
		return false;
	c->p = c->next;
	q = memchr(c->p, '\n', c->text_end - c->p);
	c->end = q ? q : c->text_end;
	c->next = q ? q + 1 : c->text_end;
	c->line++;
	if (nl)
		*nl = q;
	return true;
}

/* Consume @s at *@p (before @end). */
static inline bool rbt_fmt_lit(const char **p, const char *end, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(end - *p) < n || memcmp(*p, s, n))
		return false;
	*p += n;
	return true;
}

/* A decimal number without leading zeros, at most RBT_FMT_MAX_NUMBER. */
static inline bool rbt_fmt_num(const char **p, const char *end,
			       unsigned int *v)
{
	const char *q = *p;
	unsigned long long n = 0;

	if (q >= end || *q < '0' || *q > '9')
		return false;
	if (*q == '0' && q + 1 < end && q[1] >= '0' && q[1] <= '9')
		return false;
	while (q < end && *q >= '0' && *q <= '9') {
		n = n * 10 + (*q++ - '0');
		if (n > RBT_FMT_MAX_NUMBER)
			return false;
	}
	*v = n;
	*p = q;
	return true;
}

/* A C identifier of at most RBT_FMT_MAX_NAME bytes, copied to @buf. */
static inline bool rbt_fmt_ident(const char **p, const char *end, char *buf)
{
	const char *q = *p;
	size_t n;

	if (q >= end || !rbt_fmt_is_ident_start(*q))
		return false;
	while (q < end && rbt_fmt_is_ident(*q))
		q++;
	n = q - *p;
	if (n > RBT_FMT_MAX_NAME)
		return false;
	if (buf) {
		memcpy(buf, *p, n);
		buf[n] = '\0';
	}
	*p = q;
	return true;
}

/*
 * "<TAB>field:[ ]TYPE NAME[[N]];<TAB>offset:N;<TAB>size:N;<TAB>signed:0|1;"
 * on the current line, into @fl. A plain field has 1, 2, 4 or 8 bytes
 * unless @any_size.
 */
static inline bool rbt_fmt_field_line(struct rbt_fmt *f,
				      const struct rbt_fmt_cur *c,
				      struct rbt_fmt_field *fl, bool any_size)
{
	const char *p = c->p, *end = c->end, *decl, *semi, *name, *tend, *q;
	unsigned int sgn, words = 0;
	char word[RBT_FMT_MAX_NAME + 1];

	memset(fl, 0, sizeof(*fl));
	fl->line = c->line;
	if (!rbt_fmt_lit(&p, end, "\tfield:"))
		return rbt_fmt_fail(f, c->line, "not a field line");
	if (p < end && *p == ' ')
		p++;
	decl = p;
	semi = memchr(p, ';', end - p);
	if (!semi)
		return rbt_fmt_fail(f, c->line, "field declaration has no ';'");
	/* the name is the last word of the declaration */
	name = semi;
	while (name > decl && name[-1] != ' ')
		name--;
	if (name == decl)
		return rbt_fmt_fail(f, c->line, "field has no type");
	/* the type, up to the space before the name: "*", IDENT, IDENT[] */
	tend = name - 1;
	for (q = decl; q < tend;) {
		words++;
		if (*q == '*') {
			q++;
		} else if (rbt_fmt_ident(&q, tend, word)) {
			if (words == 1 && (!strcmp(word, "__data_loc") ||
					   !strcmp(word, "__rel_loc")))
				fl->dynamic = true;
			rbt_fmt_lit(&q, tend, "[]");
		}
		if (q < tend && *q == ' ')
			q++;
		else if (q < tend)
			return rbt_fmt_fail(f, c->line,
					    "field type has a bad character in column %u",
					    (unsigned int)(q - c->p + 1));
		else
			break;
		if (q == tend || *q == ' ')
			return rbt_fmt_fail(f, c->line,
					    "field type has two spaces in a row");
	}
	if (!words || (fl->dynamic && words < 2))
		return rbt_fmt_fail(f, c->line, "field has no type");
	q = name;
	if (!rbt_fmt_ident(&q, semi, fl->name) ||
	    (q < semi && (!rbt_fmt_lit(&q, semi, "[") ||
			  !rbt_fmt_num(&q, semi, &fl->arraylen) ||
			  !fl->arraylen || !rbt_fmt_lit(&q, semi, "]") ||
			  q != semi)))
		return rbt_fmt_fail(f, c->line,
				    "field name \"%.*s\" is not a C identifier of at most %u characters, with an optional [N]",
				    (int)(semi - name < 80 ? semi - name : 80),
				    name, RBT_FMT_MAX_NAME);
	p = semi + 1;
	if (!rbt_fmt_lit(&p, end, "\toffset:") ||
	    !rbt_fmt_num(&p, end, &fl->offset) ||
	    !rbt_fmt_lit(&p, end, ";\tsize:") ||
	    !rbt_fmt_num(&p, end, &fl->size) ||
	    !rbt_fmt_lit(&p, end, ";\tsigned:") ||
	    !rbt_fmt_num(&p, end, &sgn) || sgn > 1 ||
	    !rbt_fmt_lit(&p, end, ";") || p != end)
		return rbt_fmt_fail(f, c->line,
				    "field %s: not \"offset:N;<TAB>size:N;<TAB>signed:0|1;\" after the name",
				    fl->name);
	fl->is_signed = sgn;
	if (fl->dynamic && (fl->arraylen || fl->size != 4))
		return rbt_fmt_fail(f, c->line,
				    "field %s: a dynamic array is a 4-byte field without [N]",
				    fl->name);
	if (fl->arraylen && fl->size % fl->arraylen)
		return rbt_fmt_fail(f, c->line,
				    "field %s: size %u is not a multiple of %u elements",
				    fl->name, fl->size, fl->arraylen);
	if (!any_size && !fl->arraylen && !fl->dynamic && fl->size != 1 &&
	    fl->size != 2 && fl->size != 4 && fl->size != 8)
		return rbt_fmt_fail(f, c->line,
				    "field %s: size %u is not 1, 2, 4 or 8",
				    fl->name, fl->size);
	return true;
}

static inline const struct rbt_fmt_field *
rbt_fmt_find(const struct rbt_fmt *f, const char *name, size_t len)
{
	unsigned int i;

	for (i = 0; i < f->nr_fields; i++)
		if (strlen(f->field[i].name) == len &&
		    !memcmp(f->field[i].name, name, len))
			return &f->field[i];
	return NULL;
}

/* A value of a symbol list: decimal, or 0x and 1..16 hex digits. */
static inline bool rbt_fmt_symval(const char **p, const char *end)
{
	const char *q = *p;
	unsigned int v, n = 0;

	if (!rbt_fmt_lit(&q, end, "0x"))
		return rbt_fmt_num(p, end, &v);
	while (q < end && strchr("0123456789abcdefABCDEF", *q) && *q) {
		q++;
		if (++n > 16)
			return false;
	}
	if (!n)
		return false;
	*p = q;
	return true;
}

/* A quoted text of @min..@max bytes without '"' or '\\'. */
static inline bool rbt_fmt_qstr(const char **p, const char *end,
				size_t min, size_t max)
{
	const char *q = *p, *s;

	if (!rbt_fmt_lit(&q, end, "\""))
		return false;
	for (s = q; q < end && *q != '"' && *q != '\\'; q++)
		;
	if ((size_t)(q - s) < min || (size_t)(q - s) > max ||
	    !rbt_fmt_lit(&q, end, "\""))
		return false;
	*p = q;
	return true;
}

/*
 * The rest of a __print_symbolic() or __print_flags() after the field
 * (and the delimiter): ", { VALUE, "TEXT" }" 1..RBT_FMT_MAX_SYMS times,
 * then ")".
 */
static inline bool rbt_fmt_syms(const char **p, const char *end)
{
	const char *q = *p;
	unsigned int n = 0;

	do {
		if (++n > RBT_FMT_MAX_SYMS ||
		    !rbt_fmt_lit(&q, end, ", { ") ||
		    !rbt_fmt_symval(&q, end) ||
		    !rbt_fmt_lit(&q, end, ", ") ||
		    !rbt_fmt_qstr(&q, end, 1, RBT_FMT_MAX_NAME) ||
		    !rbt_fmt_lit(&q, end, " }"))
			return false;
	} while (!rbt_fmt_lit(&q, end, ")"));
	*p = q;
	return true;
}

/*
 * The print fmt line from @p to @end: a quoted string of text and
 * conversions, then one ", REC->NAME" per conversion, or for a %s of a
 * plain field its __print_symbolic() or __print_flags().
 */
static inline bool rbt_fmt_print(struct rbt_fmt *f, unsigned int line,
				 const char *p, const char *end)
{
	/* 's' for %s, 'i' for an integer conversion */
	char conv[RBT_FMT_MAX_FIELDS];
	unsigned int nr_conv = 0, nr_args = 0;
	const struct rbt_fmt_field *fl;
	const char *name;
	char kind;

	if (!rbt_fmt_lit(&p, end, "\""))
		return rbt_fmt_fail(f, line, "print fmt is not a quoted string");
	while (p < end && *p != '"') {
		if (*p == '\\') {
			if (p + 1 >= end || !strchr("nt\"\\", p[1]))
				return rbt_fmt_fail(f, line,
						    "print fmt has an escape other than \\n \\t \\\" \\\\");
			p += 2;
			continue;
		}
		if (*p++ != '%')
			continue;
		if (p < end && *p == '%') {
			p++;
			continue;
		}
		while (p < end && strchr("-+ #0", *p))
			p++;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
		if (p < end && *p == '.') {
			p++;
			while (p < end && *p >= '0' && *p <= '9')
				p++;
		}
		if (rbt_fmt_lit(&p, end, "hh") || rbt_fmt_lit(&p, end, "ll"))
			;
		else if (p < end && (*p == 'h' || *p == 'l' || *p == 'z'))
			p++;
		if (p >= end || !strchr("diouxXcs", *p))
			return rbt_fmt_fail(f, line,
					    "print fmt has a conversion other than an integer or %%s");
		if (nr_conv == RBT_FMT_MAX_FIELDS)
			return rbt_fmt_fail(f, line,
					    "print fmt has more than %u conversions",
					    RBT_FMT_MAX_FIELDS);
		conv[nr_conv++] = *p++ == 's' ? 's' : 'i';
	}
	if (!rbt_fmt_lit(&p, end, "\""))
		return rbt_fmt_fail(f, line, "print fmt string does not end");
	while (p < end) {
		/* 'f'ield, 's'ymbolic or 'F'lags */
		if (rbt_fmt_lit(&p, end, ", REC->"))
			kind = 'f';
		else if (rbt_fmt_lit(&p, end, ", __print_symbolic(REC->"))
			kind = 's';
		else if (rbt_fmt_lit(&p, end, ", __print_flags(REC->"))
			kind = 'F';
		else
			return rbt_fmt_fail(f, line,
					    "print fmt has arguments other than \", REC->field\", __print_symbolic() and __print_flags()");
		name = p;
		if (!rbt_fmt_ident(&p, end, NULL))
			return rbt_fmt_fail(f, line,
					    "print fmt argument %u is not a field name",
					    nr_args + 1);
		fl = rbt_fmt_find(f, name, p - name);
		if (!fl)
			return rbt_fmt_fail(f, line,
					    "print fmt argument %u \"REC->%.*s\" is not a field of the event",
					    nr_args + 1, (int)(p - name), name);
		if (nr_args >= nr_conv)
			return rbt_fmt_fail(f, line,
					    "print fmt has more arguments than conversions");
		if (kind != 'f') {
			if (kind == 'F' && (!rbt_fmt_lit(&p, end, ", ") ||
					    !rbt_fmt_qstr(&p, end, 0, 8)))
				return rbt_fmt_fail(f, line,
						    "print fmt argument %u: __print_flags() has no \"DELIM\" of at most 8 bytes",
						    nr_args + 1);
			if (!rbt_fmt_syms(&p, end))
				return rbt_fmt_fail(f, line,
						    "print fmt argument %u: not 1..%u \", { VALUE, \"TEXT\" }\" and \")\"",
						    nr_args + 1, RBT_FMT_MAX_SYMS);
			if (conv[nr_args] != 's' || fl->arraylen || fl->dynamic)
				return rbt_fmt_fail(f, line,
						    "print fmt argument %u: the names of a plain field's values take %%s",
						    nr_args + 1);
			nr_args++;
			continue;
		}
		if ((conv[nr_args] == 's') != (fl->arraylen || fl->dynamic))
			return rbt_fmt_fail(f, line,
					    "print fmt argument %u: %%s takes an array field, other conversions a plain one",
					    nr_args + 1);
		nr_args++;
	}
	if (nr_args != nr_conv)
		return rbt_fmt_fail(f, line,
				    "print fmt has %u conversions and %u arguments",
				    nr_conv, nr_args);
	return true;
}

/*
 * Read the field lines from the current line on up to an empty line, into
 * @f->field[] from @f->nr_fields on.
 */
static inline bool rbt_fmt_fields(struct rbt_fmt *f, struct rbt_fmt_cur *c,
				  unsigned int max_end)
{
	struct rbt_fmt_field *fl;
	unsigned int i;
	bool nl;

	for (;;) {
		if (!rbt_fmt_next(c, &nl))
			return rbt_fmt_fail(f, c->line + 1,
					    "the text ends inside the field lines");
		if (c->p == c->end && nl)
			return true;
		if (!nl)
			return rbt_fmt_fail(f, c->line,
					    "the text ends inside a field line");
		if (f->nr_fields == RBT_FMT_MAX_FIELDS)
			return rbt_fmt_fail(f, c->line, "more than %u fields",
					    RBT_FMT_MAX_FIELDS);
		fl = &f->field[f->nr_fields];
		if (!rbt_fmt_field_line(f, c, fl, false))
			return false;
		if ((unsigned long long)fl->offset + fl->size > max_end)
			return rbt_fmt_fail(f, c->line,
					    "field %s: offset %u + size %u is past the largest event (%u bytes)",
					    fl->name, fl->offset, fl->size,
					    max_end);
		for (i = 0; i < f->nr_fields; i++) {
			const struct rbt_fmt_field *o = &f->field[i];

			if (!strcmp(o->name, fl->name))
				return rbt_fmt_fail(f, c->line,
						    "field %s: the name is used twice (line %u)",
						    fl->name, o->line);
			if (fl->offset < o->offset + o->size &&
			    o->offset < fl->offset + fl->size)
				return rbt_fmt_fail(f, c->line,
						    "field %s overlaps field %s (line %u)",
						    fl->name, o->name, o->line);
		}
		if (fl->offset + fl->size > f->end)
			f->end = fl->offset + fl->size;
		f->nr_fields++;
	}
}

/**
 * rbt_format_check - check the text of an event's format file
 * @f:		filled with what the format holds, or the refusal
 * @text:	the text
 * @len:	its bytes (it may hold NUL bytes, which are refused)
 * @max_end:	the largest event: no field may end past it
 *
 * Return: whether libtraceevent may parse @text; if not, @f->line and
 * @f->err say where and why.
 */
static inline bool rbt_format_check(struct rbt_fmt *f, const char *text,
				    size_t len, unsigned int max_end)
{
	struct rbt_fmt_cur c;
	const char *p;
	bool nl;

	memset(f, 0, sizeof(*f));
	if (!rbt_fmt_bytes_ok(f, text, len))
		return false;
	rbt_fmt_start(&c, text, len);

	if (!rbt_fmt_next(&c, &nl) || !nl)
		return rbt_fmt_fail(f, 1, "no \"name:\" line");
	p = c.p;
	if (!rbt_fmt_lit(&p, c.end, "name: ") ||
	    !rbt_fmt_ident(&p, c.end, f->name) || p != c.end)
		return rbt_fmt_fail(f, c.line,
				    "not \"name: NAME\" with a C identifier");
	if (!rbt_fmt_next(&c, &nl) || !nl)
		return rbt_fmt_fail(f, 2, "no \"ID:\" line");
	p = c.p;
	if (!rbt_fmt_lit(&p, c.end, "ID: ") || !rbt_fmt_num(&p, c.end, &f->id) ||
	    p != c.end || !f->id || f->id > 65535)
		return rbt_fmt_fail(f, c.line, "not \"ID: N\" with N in 1..65535");
	if (!rbt_fmt_next(&c, &nl) || !nl || c.end - c.p != 7 ||
	    memcmp(c.p, "format:", 7))
		return rbt_fmt_fail(f, 3, "not \"format:\"");

	if (!rbt_fmt_fields(f, &c, max_end))
		return false;
	f->nr_common = f->nr_fields;
	if (!f->nr_common || strcmp(f->field[0].name, "common_type") ||
	    f->field[0].offset || f->field[0].size != 2 ||
	    f->field[0].arraylen || f->field[0].dynamic)
		return rbt_fmt_fail(f, 4,
				    "the first field is not common_type, 2 bytes at offset 0");
	if (!rbt_fmt_fields(f, &c, max_end))
		return false;

	if (!rbt_fmt_next(&c, &nl))
		return rbt_fmt_fail(f, c.line + 1, "no \"print fmt:\" line");
	p = c.p;
	if (!rbt_fmt_lit(&p, c.end, "print fmt: "))
		return rbt_fmt_fail(f, c.line,
				    "not \"print fmt: \" after the fields");
	if (!rbt_fmt_print(f, c.line, p, c.end))
		return false;
	if (rbt_fmt_next(&c, NULL))
		return rbt_fmt_fail(f, c.line, "text after the print fmt line");
	return true;
}

/**
 * rbt_header_page_check - check the text of header_page
 * @f:		filled with the data field's offset and size, or the refusal
 * @text:	the text
 * @len:	its bytes
 *
 * header_page is four field lines: timestamp, commit, overwrite (a flag
 * inside commit) and data, at the offsets and sizes of a 64-bit kernel.
 *
 * Return: whether libtraceevent may parse @text; if not, @f->line and
 * @f->err say where and why.
 */
static inline bool rbt_header_page_check(struct rbt_fmt *f, const char *text,
					 size_t len)
{
	static const struct {
		const char *name;
		unsigned int offset, size;	/* size 0: 16..2^27 */
	} want[] = {
		{ "timestamp", 0, 8 },
		{ "commit", 8, 8 },
		{ "overwrite", 8, 1 },
		{ "data", 16, 0 },
	};
	struct rbt_fmt_field fl;
	struct rbt_fmt_cur c;
	unsigned int i;
	bool nl;

	memset(f, 0, sizeof(*f));
	if (!rbt_fmt_bytes_ok(f, text, len))
		return false;
	rbt_fmt_start(&c, text, len);
	for (i = 0; i < ARRAY_SIZE(want); i++) {
		if (!rbt_fmt_next(&c, &nl) || !nl)
			return rbt_fmt_fail(f, i + 1,
					    "no line for field %s", want[i].name);
		if (!rbt_fmt_field_line(f, &c, &fl, !want[i].size))
			return false;
		if (strcmp(fl.name, want[i].name) || fl.arraylen ||
		    fl.dynamic || fl.offset != want[i].offset ||
		    (want[i].size && fl.size != want[i].size))
			return rbt_fmt_fail(f, c.line,
					    "not field %s at offset %u%s",
					    want[i].name, want[i].offset,
					    want[i].size == 8 ? ", size 8" :
					    want[i].size == 1 ? ", size 1" : "");
		if (!want[i].size && fl.size < 16)
			return rbt_fmt_fail(f, c.line,
					    "field data: size %u is below 16",
					    fl.size);
	}
	if (rbt_fmt_next(&c, NULL))
		return rbt_fmt_fail(f, c.line, "text after the data field");
	f->data_offset = fl.offset;
	f->data_size = fl.size;
	return true;
}

#endif /* _RBTRACE_FMTCHECK_H */
