// SPDX-License-Identifier: GPL-2.0
/*
 * Trace files of `blkwise record` (layout in trace.h): the writer, and the
 * reader that hands out events one at a time from a block buffer.  Pure:
 * stdio only.  Every refusal is one line naming the file and byte offset.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "model/trace.h"

#define TAIL_LEN sizeof(struct bw_ttail)
#define FRAME_LEN (sizeof(struct bw_tblock) + TAIL_LEN)

static __u32 pad8(__u32 n)
{
	return (n + 7) & ~7u;
}

/* One block: head, body (padded to 8), tail.  0, or -1 when the write failed. */
static int put_block(struct bw_twriter *w, __u32 type, const void *a, __u32 alen,
		     const void *b, __u32 blen)
{
	static const char zeros[8];
	__u32 body = alen + blen, len = FRAME_LEN + pad8(body);
	struct bw_tblock head = { .type = type, .len = len };
	struct bw_ttail tail = { .len = len, .type = type };

	fwrite(&head, sizeof(head), 1, w->f);
	if (alen)
		fwrite(a, alen, 1, w->f);
	if (blen)
		fwrite(b, blen, 1, w->f);
	if (pad8(body) != body)
		fwrite(zeros, pad8(body) - body, 1, w->f);
	fwrite(&tail, sizeof(tail), 1, w->f);
	w->off += len;
	return ferror(w->f) ? -1 : 0;
}

int bw_tw_begin(struct bw_twriter *w, FILE *f, const struct bw_tinfo *info,
		const struct bw_tdev *devs)
{
	struct bw_tfile_head h = { .version = BW_TRACE_VERSION, .bom = BW_TRACE_BOM };

	memset(w, 0, offsetof(struct bw_twriter, buf));
	w->f = f;
	w->ncpus = info->ncpus;
	memcpy(h.magic, BW_TRACE_MAGIC, sizeof(BW_TRACE_MAGIC));
	if (fwrite(&h, sizeof(h), 1, f) != 1)
		return -1;
	w->off = sizeof(h);
	return put_block(w, BW_TB_INFO, info, sizeof(*info), devs,
			 info->ndevs * sizeof(*devs));
}

int bw_tw_flush(struct bw_twriter *w)
{
	int err;

	if (!w->n)
		return 0;
	err = put_block(w, BW_TB_EVENTS, w->buf, w->n * sizeof(w->buf[0]), NULL, 0);
	w->events += w->n;
	w->n = 0;
	return err;
}

int bw_tw_event(struct bw_twriter *w, const struct bw_trec *ev)
{
	w->buf[w->n++] = *ev;
	return w->n == BW_TRACE_BLOCK_EVENTS ? bw_tw_flush(w) : 0;
}

static int put_lost(struct bw_twriter *w, __u32 type, __u64 ts, const __u64 *lost,
		    __u32 reason)
{
	struct bw_tlost l = { .ts = ts, .ncpus = w->ncpus, .reason = reason };

	if (bw_tw_flush(w))
		return -1;
	l.events = w->events;
	return put_block(w, type, &l, sizeof(l), lost, w->ncpus * sizeof(*lost));
}

int bw_tw_lost(struct bw_twriter *w, __u64 ts, const __u64 *lost)
{
	return put_lost(w, BW_TB_LOST, ts, lost, 0);
}

int bw_tw_end(struct bw_twriter *w, __u64 ts, const __u64 *lost, __u32 reason)
{
	if (put_lost(w, BW_TB_END, ts, lost, reason))
		return -1;
	return fflush(w->f) ? -1 : 0;
}

int bw_tw_cgroup(struct bw_twriter *w, __u64 id, const char *path)
{
	struct bw_tcgroup c = { .id = id };
	size_t len = strnlen(path, BW_TRACE_MAX_PATH - 1);
	char p[BW_TRACE_MAX_PATH];

	memcpy(p, path, len);
	p[len] = '\0';
	return put_block(w, BW_TB_CGROUP, &c, sizeof(c), p, (__u32)len + 1);
}

const char *bw_tcgroup_path(const struct bw_tcgroups *c, __u64 id)
{
	int i;

	for (i = c ? c->n - 1 : -1; i >= 0; i--)
		if (c->e[i].id == id)
			return c->e[i].path[0] ? c->e[i].path : NULL;
	return NULL;
}

/* Reader */

static int fail(struct bw_treader *r, __u64 off, const char *fmt, ...)
{
	char msg[384];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(r->err, sizeof(r->err), "%s: %s at offset %llu", r->name, msg,
		 (unsigned long long)off);
	return -1;
}

/* Cut short: what was whole before off is kept; a warning, not an error. */
static int cut_short(struct bw_treader *r, __u64 off, const char *what)
{
	r->truncated = true;
	r->done = true;
	snprintf(r->err, sizeof(r->err), "%s: truncated at offset %llu (%s): "
		 "read up to the last whole record", r->name, (unsigned long long)off, what);
	return 0;
}

static size_t rd(struct bw_treader *r, void *p, size_t len)
{
	size_t got = fread(p, 1, len, r->f);

	r->off += got;
	return got;
}

static int check_tail(struct bw_treader *r, const struct bw_tblock *h, __u64 start)
{
	struct bw_ttail t;
	__u64 at = r->off;
	size_t got = rd(r, &t, sizeof(t));

	if (got < sizeof(t))
		return cut_short(r, at, "block tail missing") ? -1 : 1;
	if (t.len != h->len || t.type != h->type)
		return fail(r, at, "corrupt block (its tail does not match the head at %llu)",
			    (unsigned long long)start);
	return 0;
}

/*
 * The body of a block that is not events, into *p (malloc'd, the caller's
 * to free): 0, 1 when the file ended inside it, -1 on error (*p NULL).
 */
static int read_body(struct bw_treader *r, __u32 len, __u64 start, void **p)
{
	__u64 at = r->off;

	*p = malloc(len);
	if (!*p)
		return fail(r, start, "out of memory");
	if (rd(r, *p, len) < len)
		return cut_short(r, at, "block body cut") ? -1 : 1;
	return 0;
}

static int read_lost(struct bw_treader *r, const struct bw_tblock *h, __u64 start)
{
	__u32 body = h->len - FRAME_LEN;
	struct bw_tlost l;
	__u64 *v;
	int err;

	if (body < sizeof(l) || body > sizeof(l) + BW_TRACE_MAX_CPUS * sizeof(__u64))
		return fail(r, start, "corrupt drop-count block (length %u)", h->len);
	err = read_body(r, body, start, (void **)&v);
	if (err)
		goto out;
	memcpy(&l, v, sizeof(l));
	if (l.ncpus != r->info.ncpus || sizeof(l) + l.ncpus * sizeof(__u64) > body) {
		err = fail(r, start, "corrupt drop-count block (%u CPUs, the header says %u)",
			   l.ncpus, r->info.ncpus);
		goto out;
	}
	memcpy(r->lost, (char *)v + sizeof(l), l.ncpus * sizeof(__u64));
	if (h->type == BW_TB_END)
		r->ended = true;
out:
	free(v);
	return err;
}

/* Version 1's events, read packed into buf: each moved to its slot, cgroup 0. */
static void widen(struct bw_trec *buf, size_t n, __u32 rec_size)
{
	size_t i;

	for (i = n; i-- > 0;) {
		memmove(&buf[i], (char *)buf + i * rec_size, rec_size);
		memset((char *)&buf[i] + rec_size, 0, sizeof(*buf) - rec_size);
	}
}

static int read_events(struct bw_treader *r, const struct bw_tblock *h, __u64 start)
{
	__u32 body = h->len - FRAME_LEN, rs = r->rec_size;
	size_t want = body / rs, got, i, room = want * sizeof(struct bw_trec);
	__u64 at = r->off;

	if (body % rs)
		return fail(r, start, "corrupt event block (length %u is not whole records)",
			    h->len);
	if (room > r->buf_cap) {	/* as large as the largest block yet */
		void *p = realloc(r->buf, room);

		if (!p)
			return fail(r, start, "out of memory for a block of %u bytes", body);
		r->buf = p;
		r->buf_cap = room;
	}
	got = rd(r, r->buf, body) / rs;
	if (rs != sizeof(struct bw_trec))
		widen(r->buf, got, rs);
	for (i = 0; i < got; i++) {
		const struct bw_trec *e = &r->buf[i];

		if (!e->type || e->type >= BW_EV_MAX)
			return fail(r, at + i * rs, "corrupt event (type %u)", e->type);
	}
	r->n = got;
	r->i = 0;
	if (got < want)
		return cut_short(r, at + got * rs, "event block cut");
	return check_tail(r, h, start);
}

static int read_cgroup(struct bw_treader *r, const struct bw_tblock *h, __u64 start)
{
	__u32 body = h->len - FRAME_LEN;
	struct bw_tcgroups *c = &r->cgroups;
	char *v;
	int err;

	if (body < sizeof(struct bw_tcgroup) + 1)
		return fail(r, start, "corrupt cgroup block (length %u)", h->len);
	err = read_body(r, body, start, (void **)&v);
	if (err)
		goto out;
	v[body - 1] = '\0';
	if (c->n == c->cap) {
		int cap = c->cap ? 2 * c->cap : 16;
		void *e = realloc(c->e, cap * sizeof(*c->e));

		if (!e) {
			err = fail(r, start, "out of memory");
			goto out;
		}
		c->e = e;
		c->cap = cap;
	}
	memcpy(&c->e[c->n].id, v, sizeof(__u64));
	c->e[c->n].path = strdup(v + sizeof(struct bw_tcgroup));
	if (!c->e[c->n].path) {
		err = fail(r, start, "out of memory");
		goto out;
	}
	c->n++;
out:
	free(v);
	return err;
}

static int skip_body(struct bw_treader *r, const struct bw_tblock *h, __u64 start)
{
	if (fseek(r->f, h->len - FRAME_LEN, SEEK_CUR))
		return fail(r, start, "cannot skip block type %u", h->type);
	r->off += h->len - FRAME_LEN;
	return 0;
}

/* Next block; 0 when one was taken in (events may be waiting), 1 at the end, -1 error. */
static int next_block(struct bw_treader *r)
{
	struct bw_tblock h;
	__u64 start = r->off;
	size_t got = rd(r, &h, sizeof(h));
	int err;

	if (!got) {
		if (!r->ended)
			cut_short(r, start, "no end block: recording did not finish");
		return 1;
	}
	if (got < sizeof(h))
		return cut_short(r, start, "block head cut") ? -1 : 1;
	if (r->ended)
		return fail(r, start, "data after the end block");
	if (h.len < FRAME_LEN || h.len % 8 || h.len > BW_TRACE_MAX_BLOCK)
		return fail(r, start, "corrupt block (type %u, length %u)", h.type, h.len);
	switch (h.type) {
	case BW_TB_EVENTS:
		return read_events(r, &h, start);
	case BW_TB_LOST:
	case BW_TB_END:
		err = read_lost(r, &h, start);
		break;
	case BW_TB_CGROUP:
		/* Read once: a rewound pass has them all. */
		if (r->cgroups_done) {
			err = skip_body(r, &h, start);
			break;
		}
		err = read_cgroup(r, &h, start);
		break;
	case BW_TB_INFO:
		return fail(r, start, "a second header block");
	default:
		/* A block type from a later version: skip it. */
		err = skip_body(r, &h, start);
	}
	if (err)
		return err;
	if (r->done)
		return 1;
	return check_tail(r, &h, start);
}

int bw_tr_next(struct bw_treader *r, const struct bw_trec **ev)
{
	int err;

	while (r->i >= r->n) {
		r->n = r->i = 0;
		if (r->done)
			return 0;
		err = next_block(r);
		if (err < 0)
			return -1;
		if (err > 0 && r->i >= r->n) {
			r->done = true;
			return 0;
		}
	}
	*ev = &r->buf[r->i++];
	return 1;
}

static int read_head(struct bw_treader *r, struct bw_tblock *h)
{
	struct bw_tfile_head fh;
	size_t got = rd(r, &fh, sizeof(fh));

	if (!got)
		return fail(r, 0, "empty file, not a blkwise trace");
	if (got < sizeof(fh) || memcmp(fh.magic, BW_TRACE_MAGIC, sizeof(BW_TRACE_MAGIC)))
		return fail(r, 0, "not a blkwise trace (no BWTRACE magic)");
	if (fh.bom != BW_TRACE_BOM)
		return fail(r, 12, "written in the other byte order, which this reader does not swap");
	if (fh.version < 1 || fh.version > BW_TRACE_VERSION)
		return fail(r, 8, "format version %u, this blkwise reads versions 1 to %u",
			    fh.version, BW_TRACE_VERSION);
	r->version = fh.version;
	if (rd(r, h, sizeof(*h)) < sizeof(*h))
		return fail(r, r->off, "truncated before the header block ended");
	if (h->type != BW_TB_INFO || h->len < FRAME_LEN + sizeof(r->info) || h->len % 8 ||
	    h->len > BW_TRACE_MAX_BLOCK)
		return fail(r, sizeof(fh), "corrupt header block (type %u, length %u)", h->type,
			    h->len);
	if (rd(r, &r->info, sizeof(r->info)) < sizeof(r->info))
		return fail(r, r->off, "truncated before the header block ended");
	return 0;
}

static void terminate(char *s, size_t len)
{
	s[len - 1] = '\0';
}

int bw_tr_open(struct bw_treader *r, FILE *f, const char *name)
{
	struct bw_tinfo *in = &r->info;
	__u64 hstart = sizeof(struct bw_tfile_head);
	struct bw_tblock h;
	__u32 devlen, i, skip;

	memset(r, 0, sizeof(*r));
	r->f = f;
	r->name = name;
	if (read_head(r, &h))
		return -1;
	terminate(in->clock, sizeof(in->clock));
	terminate(in->release, sizeof(in->release));
	terminate(in->hostname, sizeof(in->hostname));
	terminate(in->source, sizeof(in->source));
	terminate(in->attach, sizeof(in->attach));
	r->rec_size = r->version == 1 ? BW_TREC_V1_SIZE : sizeof(struct bw_trec);
	if (in->rec_size != r->rec_size)
		return fail(r, hstart, "records of %u bytes, this blkwise reads %u in a version %u "
			    "trace", in->rec_size, r->rec_size, r->version);
	if (!in->ncpus || in->ncpus > BW_TRACE_MAX_CPUS || in->ndevs > BW_TRACE_MAX_DEVS)
		return fail(r, hstart, "corrupt header (%u CPUs, %u devices)", in->ncpus,
			    in->ndevs);
	devlen = in->ndevs * sizeof(struct bw_tdev);
	if (FRAME_LEN + sizeof(*in) + devlen > h.len)
		return fail(r, hstart, "corrupt header (%u devices do not fit its length %u)",
			    in->ndevs, h.len);
	r->devs = calloc(in->ndevs + 1, sizeof(*r->devs));
	r->lost = calloc(in->ncpus, sizeof(*r->lost));
	if (!r->devs || !r->lost)
		return fail(r, hstart, "out of memory");
	if (rd(r, r->devs, devlen) < devlen)
		return fail(r, r->off, "truncated inside the device table");
	for (i = 0; i < in->ndevs; i++) {
		terminate(r->devs[i].name, sizeof(r->devs[i].name));
		terminate(r->devs[i].scheduler, sizeof(r->devs[i].scheduler));
		terminate(r->devs[i].model, sizeof(r->devs[i].model));
	}
	/* Room a later version may have added to the header: skip it. */
	skip = h.len - FRAME_LEN - sizeof(*in) - devlen;
	if (skip && fseek(f, skip, SEEK_CUR))
		return fail(r, r->off, "cannot seek past the header");
	r->off += skip;
	if (check_tail(r, &h, hstart))
		return -1;
	if (r->truncated)
		return fail(r, r->off, "truncated before the first event");
	r->first_block = r->off;
	return 0;
}

int bw_tr_rewind(struct bw_treader *r)
{
	if (fseek(r->f, r->first_block, SEEK_SET))
		return fail(r, r->first_block, "cannot seek back for another pass");
	r->off = r->first_block;
	r->n = r->i = 0;
	r->cgroups_done = true;
	r->ended = r->truncated = r->done = false;
	r->err[0] = '\0';
	return 0;
}

void bw_tr_close(struct bw_treader *r)
{
	int i;

	for (i = 0; i < r->cgroups.n; i++)
		free(r->cgroups.e[i].path);
	free(r->cgroups.e);
	r->cgroups.e = NULL;
	r->cgroups.n = r->cgroups.cap = 0;
	free(r->devs);
	free(r->lost);
	free(r->buf);
	r->devs = NULL;
	r->lost = NULL;
	r->buf = NULL;
}

static int src_next(void *ctx, const struct bw_trec **ev)
{
	return bw_tr_next(ctx, ev);
}

static int src_rewind(void *ctx)
{
	return bw_tr_rewind(ctx);
}

void bw_tr_source(struct bw_treader *r, struct bw_tsource *s)
{
	*s = BW_TSOURCE_OF(r, src_next, src_rewind);
}
