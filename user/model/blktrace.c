// SPDX-License-Identifier: GPL-2.0
/*
 * blktrace captures (blktrace -o NAME: one NAME.blktrace.CPU file per CPU)
 * read into the events of our own traces.  Each file is a sequence of
 * struct blk_io_trace (include/uapi/linux/blktrace_api.h: 48 bytes, then
 * pdu_len bytes of payload) in the byte order of the machine that wrote
 * it, which the magic tells; the files are merged by time.  Requests have
 * no address here: analyze pairs them by device and sector, as btt does.
 * Pure: stdio only.
 */
#include <stdlib.h>
#include <string.h>
#include "model/trace.h"

#define BT_MAGIC 0x65617400u
#define BT_VERSION 0x07u
#define BT_TC_SHIFT 16
#define BT_TC_WRITE (1u << 1)
#define BT_TC_FLUSH (1u << 2)
#define BT_TC_SYNC (1u << 3)
#define BT_TC_NOTIFY (1u << 10)
#define BT_TC_DISCARD (1u << 13)
#define BT_TC_FUA (1u << 15)
#define REQ_SYNC_BIT (1u << 11)	/* as the kernel's cmd_flags, so replay reads one form */
#define REQ_FUA_BIT (1u << 17)

/* __BLK_TA_* */
enum { TA_QUEUE = 1, TA_BACKMERGE, TA_FRONTMERGE, TA_GETRQ, TA_SLEEPRQ, TA_REQUEUE,
       TA_ISSUE, TA_COMPLETE, TA_PLUG, TA_UNPLUG_IO, TA_UNPLUG_TIMER, TA_INSERT };
#define TN_PROCESS 0

struct bt_rec {
	__u32 magic;
	__u32 sequence;
	__u64 time;
	__u64 sector;
	__u32 bytes;
	__u32 action;
	__u32 pid;
	__u32 device;
	__u32 cpu;
	__u16 error;
	__u16 pdu_len;
};

struct bt_file {
	FILE *f;
	const char *name;
	__u64 off;
	bool swap, have, done;
	struct bw_trec ev;	/* the next event of this file */
};

struct bw_btreader {
	struct bt_file *files;
	int n;
	struct bw_tinfo info;
	struct bw_tdev devs[1];
	__u64 *lost;
	struct bw_tcgroups cgroups;	/* none: blktrace names no cgroup */
	bool truncated;
	char *err;
	size_t errlen;
	char pdu[65536];
};

bool bw_bt_magic(const void *buf, size_t len)
{
	__u32 m;

	if (len < 4)
		return false;
	memcpy(&m, buf, 4);
	return (m & 0xffffff00u) == BT_MAGIC || (__builtin_bswap32(m) & 0xffffff00u) == BT_MAGIC;
}

static void swap_rec(struct bt_rec *r)
{
	r->magic = __builtin_bswap32(r->magic);
	r->sequence = __builtin_bswap32(r->sequence);
	r->time = __builtin_bswap64(r->time);
	r->sector = __builtin_bswap64(r->sector);
	r->bytes = __builtin_bswap32(r->bytes);
	r->action = __builtin_bswap32(r->action);
	r->pid = __builtin_bswap32(r->pid);
	r->device = __builtin_bswap32(r->device);
	r->cpu = __builtin_bswap32(r->cpu);
	r->error = __builtin_bswap16(r->error);
	r->pdu_len = __builtin_bswap16(r->pdu_len);
}

static int bt_fail(struct bw_btreader *b, const struct bt_file *f, __u64 off, const char *what,
		   unsigned int v)
{
	snprintf(b->err, b->errlen, "%s: %s %#x at offset %llu", f->name, what, v,
		 (unsigned long long)off);
	return -1;
}

static void bt_cut(struct bw_btreader *b, struct bt_file *f, __u64 off)
{
	b->truncated = true;
	f->done = true;
	snprintf(b->err, b->errlen, "%s: truncated at offset %llu (record cut): read up to the "
		 "last whole record", f->name, (unsigned long long)off);
}

static __u32 op_flags(__u32 tc, __u32 bytes)
{
	__u32 fl = 0;

	if (tc & BT_TC_DISCARD)
		fl = 3;			/* REQ_OP_DISCARD */
	else if (tc & BT_TC_WRITE)
		fl = 1;			/* REQ_OP_WRITE */
	else if ((tc & BT_TC_FLUSH) && !bytes)
		fl = 2;			/* REQ_OP_FLUSH */
	if (tc & BT_TC_SYNC)
		fl |= REQ_SYNC_BIT;
	if (tc & BT_TC_FUA)
		fl |= REQ_FUA_BIT;
	return fl;
}

/* Our event type of a blktrace action; 0 for those analyze has no use for. */
static __u8 ev_type(__u32 act)
{
	switch (act) {
	case TA_QUEUE:
		return BW_EV_QUEUE;
	case TA_BACKMERGE:
		return BW_EV_BACKMERGE;
	case TA_FRONTMERGE:
		return BW_EV_FRONTMERGE;
	case TA_GETRQ:
		return BW_EV_GETRQ;
	case TA_REQUEUE:
		return BW_EV_REQUEUE;
	case TA_ISSUE:
		return BW_EV_ISSUE;
	case TA_COMPLETE:
		return BW_EV_COMPLETE;
	case TA_INSERT:
		return BW_EV_INSERT;
	default:
		return 0;
	}
}

/* The file's next event we use: 1, 0 at its end, -1 on damage. */
static int bt_advance(struct bw_btreader *b, struct bt_file *f)
{
	struct bt_rec r;
	size_t got;
	__u32 tc, act;
	__u64 at;

	f->have = false;
	while (!f->done) {
		at = f->off;
		got = fread_unlocked(&r, 1, sizeof(r), f->f);
		f->off += got;
		if (!got) {
			f->done = true;
			return 0;
		}
		if (got < sizeof(r)) {
			bt_cut(b, f, at);
			return 0;
		}
		if ((r.magic & 0xffffff00u) != BT_MAGIC) {
			if ((__builtin_bswap32(r.magic) & 0xffffff00u) != BT_MAGIC)
				return bt_fail(b, f, at, "not a blktrace record: magic", r.magic);
			if (!f->swap && at)
				return bt_fail(b, f, at, "byte order changes: magic", r.magic);
			f->swap = true;
		}
		if (f->swap)
			swap_rec(&r);
		if ((r.magic & 0xff) != BT_VERSION)
			return bt_fail(b, f, at, "blktrace version", r.magic & 0xff);
		if (r.pdu_len && fread_unlocked(b->pdu, 1, r.pdu_len, f->f) < r.pdu_len) {
			bt_cut(b, f, at);
			return 0;
		}
		f->off += r.pdu_len;
		tc = r.action >> BT_TC_SHIFT;
		act = r.action & 0xffff;
		memset(&f->ev, 0, sizeof(f->ev));
		f->ev.ts = r.time;
		f->ev.pid = r.pid;
		f->ev.cpu = (__u16)r.cpu;
		f->ev.dev = r.device;
		f->ev.tag = BW_TAG_NONE;
		if (tc & BT_TC_NOTIFY) {
			if (act != TN_PROCESS)
				continue;
			f->ev.type = BW_EV_COMM;
			memcpy(f->ev.comm, b->pdu, r.pdu_len < BW_COMM_LEN ? r.pdu_len : BW_COMM_LEN);
			f->ev.comm[BW_COMM_LEN - 1] = '\0';
			f->have = true;
			return 1;
		}
		f->ev.type = ev_type(act & 0xff);	/* the low byte: past it, cgroup flags */
		if (!f->ev.type)
			continue;
		f->ev.sector = r.sector;
		f->ev.bytes = r.bytes;
		f->ev.flags = op_flags(tc, r.bytes);
		f->ev.error = r.error;
		if (r.cpu >= b->info.ncpus && r.cpu < BW_TRACE_MAX_CPUS)
			b->info.ncpus = r.cpu + 1;
		f->have = true;
		return 1;
	}
	return 0;
}

static int bt_next(void *ctx, const struct bw_trec **ev)
{
	struct bw_btreader *b = ctx;
	struct bt_file *best = NULL;
	int i;

	for (i = 0; i < b->n; i++) {
		struct bt_file *f = &b->files[i];

		if (!f->have && !f->done && bt_advance(b, f) < 0)
			return -1;
		if (f->have && (!best || f->ev.ts < best->ev.ts))
			best = f;
	}
	if (!best)
		return 0;
	best->have = false;
	*ev = &best->ev;
	return 1;
}

static int bt_rewind(void *ctx)
{
	struct bw_btreader *b = ctx;
	int i;

	for (i = 0; i < b->n; i++) {
		struct bt_file *f = &b->files[i];

		if (fseek(f->f, 0, SEEK_SET)) {
			snprintf(b->err, b->errlen, "%s: cannot seek back for another pass", f->name);
			return -1;
		}
		f->off = 0;
		f->have = f->done = f->swap = false;
	}
	b->truncated = false;
	return 0;
}

int bw_bt_open(struct bw_btreader **out, FILE **files, const char **names, int nfiles,
	       char *err, size_t errlen)
{
	struct bw_btreader *b;
	int i;

	if (nfiles <= 0 || nfiles > BW_BT_MAX_FILES) {
		snprintf(err, errlen, "no blktrace files");
		return -1;
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	b->files = calloc(nfiles, sizeof(*b->files));
	b->lost = calloc(BW_TRACE_MAX_CPUS, sizeof(*b->lost));
	if (!b->files || !b->lost) {
		bw_bt_close(b);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	b->n = nfiles;
	b->err = err;
	b->errlen = errlen;
	for (i = 0; i < nfiles; i++) {
		b->files[i].f = files[i];
		b->files[i].name = names[i];
	}
	snprintf(b->info.source, sizeof(b->info.source), "blktrace");
	snprintf(b->info.clock, sizeof(b->info.clock), "blktrace");
	snprintf(b->info.attach, sizeof(b->info.attach), "blktrace");
	b->info.ncpus = nfiles;
	b->info.rec_size = sizeof(struct bw_trec);
	/* The first record of each file: refuse what is not blktrace now, not midway. */
	for (i = 0; i < nfiles; i++) {
		if (bt_advance(b, &b->files[i]) < 0) {
			bw_bt_close(b);
			return -1;
		}
		if (!b->files[i].have && !b->files[i].done)
			continue;
		if (i == 0 && !b->files[0].have && !b->truncated && nfiles == 1) {
			snprintf(err, errlen, "%s: empty blktrace file at offset 0", names[0]);
			bw_bt_close(b);
			return -1;
		}
	}
	*out = b;
	return 0;
}

void bw_bt_close(struct bw_btreader *b)
{
	if (!b)
		return;
	free(b->files);
	free(b->lost);
	free(b);
}

void bw_bt_source(struct bw_btreader *b, struct bw_tsource *s)
{
	*s = BW_TSOURCE_OF(b, bt_next, bt_rewind);
}
