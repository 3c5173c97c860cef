// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_ring_smpl: the "ring" sampling format.  A control page and 2^n
 * data pages of typed, variable-size records; the reader consumes them
 * while monitoring goes on.  It never masks and never blocks: a record
 * that finds no room is dropped, counted, and reported by a lost record
 * as soon as one fits.  Layout and reader protocol:
 * include/uapi/linux/perfmon_ring.h, Documentation/sampling.rst.
 *
 * The mapping is writable (the reader stores data_tail) except in
 * overwrite mode, so nothing is read back from the control page but
 * data_tail, and that is checked.  The writer's own state is @priv.
 */
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <perfmon/smpl_fmt.h>
#include <uapi/linux/perfmon_ring.h>

/**
 * struct ring - the writer's state (kernel memory, never mapped)
 * @ctrl: the control page
 * @data: the data area
 * @size: its bytes, a power of two
 * @head: bytes written (published in ctrl->data_head)
 * @tail: overwrite mode: oldest whole record (published in data_tail)
 * @overwrite: PFM_RING_OVERWRITE
 * @pending_lost: records dropped since the last lost record
 * @lost: records dropped in all
 * @overwritten: records overwritten in all
 * @records: records written in all
 * @wakeups: wake-ups in all
 * @wake_events: wake-up every that many records (0: off)
 * @wake_bytes: wake-up after that many bytes (0: off)
 * @recs_since: records since the last wake-up
 * @bytes_since: bytes since the last wake-up
 */
struct ring {
	struct pfm_ring_ctrl *ctrl;
	void *data;
	u64 size;
	u64 head;
	u64 tail;
	bool overwrite;
	u64 pending_lost;
	u64 lost;
	u64 overwritten;
	u64 records;
	u64 wakeups;
	u64 wake_events;
	u64 wake_bytes;
	u64 recs_since;
	u64 bytes_since;
};

static int ring_validate(u32 ctx_flags, const void *data)
{
	const struct pfm_ring_smpl_arg *arg = data;

	if ((arg->flags & ~PFM_RING_OVERWRITE) || arg->reserved1 ||
	    memchr_inv(arg->reserved2, 0, sizeof(arg->reserved2)))
		return -EINVAL;
	if (!is_power_of_2(arg->data_pages) ||
	    arg->data_pages > (1U << PFM_RING_MAX_ORDER))
		return -EINVAL;
	/* A flight recorder wakes nobody. */
	if ((arg->flags & PFM_RING_OVERWRITE) &&
	    (arg->wakeup_events || arg->wakeup_bytes))
		return -EINVAL;
	return 0;
}

static size_t ring_getsize(const void *data)
{
	const struct pfm_ring_smpl_arg *arg = data;

	return ((size_t)arg->data_pages + 1) * PAGE_SIZE;
}

static int ring_init(struct pfm_smpl_buf *buf, u32 ctx_flags, const void *data)
{
	const struct pfm_ring_smpl_arg *arg = data;
	struct ring *r;

	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		return -ENOMEM;
	r->ctrl = buf->addr;
	r->data = buf->addr + PAGE_SIZE;
	r->size = (u64)arg->data_pages * PAGE_SIZE;
	r->overwrite = arg->flags & PFM_RING_OVERWRITE;
	r->wake_events = arg->wakeup_events;
	r->wake_bytes = arg->wakeup_bytes;
	if (!r->overwrite && !r->wake_events && !r->wake_bytes)
		r->wake_bytes = r->size / 2;

	r->ctrl->version = PFM_RING_VERSION;
	r->ctrl->flags = arg->flags;
	r->ctrl->data_offset = PAGE_SIZE;
	r->ctrl->data_size = r->size;
	buf->priv = r;
	buf->flags = r->overwrite ? 0 : PFM_SMPL_MAP_WRITE;
	return 0;
}

static void ring_exit(struct pfm_smpl_buf *buf)
{
	kfree(buf->priv);
}

/* Copy @len bytes at the head, wrapping at the end of the data area. */
static void ring_copy(struct ring *r, const void *src, size_t len)
{
	size_t off = r->head & (r->size - 1);
	size_t first = min_t(size_t, len, r->size - off);

	memcpy(r->data + off, src, first);
	memcpy(r->data, src + first, len - first);
	r->head += len;
}

/* Read @len bytes at free-running offset @pos (overwrite mode). */
static void ring_peek(struct ring *r, u64 pos, void *dst, size_t len)
{
	size_t off = pos & (r->size - 1);
	size_t first = min_t(size_t, len, r->size - off);

	memcpy(dst, r->data + off, first);
	memcpy(dst + first, r->data, len - first);
}

/*
 * Overwrite mode: drop the oldest whole records until @need bytes are
 * free.  Only this file writes the data there (the mapping is
 * read-only), so the record sizes can be trusted.
 */
static void ring_make_room(struct ring *r, size_t need)
{
	struct pfm_ring_rec rec;

	while (r->size - (r->head - r->tail) < need) {
		ring_peek(r, r->tail, &rec, sizeof(rec));
		if (WARN_ON_ONCE(rec.size < sizeof(rec))) {
			r->tail = r->head;	/* cannot happen: start over */
			break;
		}
		r->tail += rec.size;
		r->overwritten++;
	}
	WRITE_ONCE(r->ctrl->overwritten, r->overwritten);
	WRITE_ONCE(r->ctrl->data_tail, r->tail);
}

/*
 * Room for @need bytes?  data_tail is the reader's: acquire pairs with
 * its release, so its reads of the records are done before they are
 * overwritten.  A tail that makes no sense leaves no room.
 */
static bool ring_has_room(struct ring *r, size_t need)
{
	u64 used;

	if (need > r->size)	/* not with the largest sample and a page */
		return false;
	if (r->overwrite) {
		ring_make_room(r, need);
		return true;
	}
	/* Pairs with the reader's store-release of data_tail. */
	used = r->head - smp_load_acquire(&r->ctrl->data_tail);
	return used <= r->size && r->size - used >= need;
}

/*
 * Publish what was written.  The lost, overwritten and wake-up counts
 * are stored where they change (rarely); all before this release.
 */
static void ring_publish(struct ring *r)
{
	struct pfm_ring_ctrl *ctrl = r->ctrl;

	WRITE_ONCE(ctrl->records, r->records);
	/* The records' bytes before the head that covers them. */
	smp_store_release(&ctrl->data_head, r->head);
}

/* The lost record for the records dropped since the last one. */
static noinline void ring_put_lost(struct ring *r)
{
	struct pfm_ring_lost lost = {
		.hdr = { .type = PFM_RING_REC_LOST, .size = sizeof(lost) },
		.lost = r->pending_lost,
	};

	r->pending_lost = 0;
	ring_copy(r, &lost, sizeof(lost));
	r->records++;
	r->recs_since++;
	r->bytes_since += sizeof(lost);
}

/*
 * Make room for @nrec records of @size bytes in all, preceded by the
 * pending lost record if there is one.  False (and the records counted
 * as one lost) when the reader left no room.
 */
static __always_inline bool ring_reserve(struct ring *r, size_t size,
					 unsigned int nrec)
{
	size_t lsize = r->pending_lost ? sizeof(struct pfm_ring_lost) : 0;

	if (!ring_has_room(r, size + lsize)) {
		r->lost++;
		r->pending_lost++;
		WRITE_ONCE(r->ctrl->lost, r->lost);
		return false;
	}
	if (lsize)
		ring_put_lost(r);
	r->records += nrec;
	r->recs_since += nrec;
	r->bytes_since += size;
	return true;
}

/* Wake the reader when a watermark is reached; true when it is. */
static bool ring_wake_due(struct ring *r)
{
	if (r->overwrite)
		return false;
	if ((r->wake_events && r->recs_since >= r->wake_events) ||
	    (r->wake_bytes && r->bytes_since >= r->wake_bytes)) {
		r->recs_since = 0;
		r->bytes_since = 0;
		r->wakeups++;
		WRITE_ONCE(r->ctrl->wakeups, r->wakeups);
		return true;
	}
	return false;
}

/* Every field, reserved ones included: @s may be the ring itself. */
static void ring_fill_sample(struct pfm_ring_sample *s,
			     const struct pfm_ovfl_arg *arg, size_t size)
{
	s->hdr.type = PFM_RING_REC_SAMPLE;
	s->hdr.size = size;
	s->hdr.reserved = 0;
	s->pid = arg->pid;
	s->tid = arg->tid;
	s->ip = arg->ip;
	s->tstamp = arg->tstamp;
	s->cpu = arg->cpu;
	s->set = arg->active_set;
	s->ovfl_pmd = arg->ovfl_pmd;
	s->nr_values = arg->nr_values;
	s->last_reset_val = arg->last_reset_val;
	s->eventid = arg->eventid;
}

/* A sample that wraps around the end: built apart, copied in two. */
static noinline void ring_write_sample_wrapped(struct ring *r,
					       const struct pfm_ovfl_arg *arg,
					       size_t size)
{
	struct pfm_ring_sample s;

	ring_fill_sample(&s, arg, size);
	ring_copy(r, &s, sizeof(s));
}

/*
 * The sample's fixed part at the head, filled in place (no copy, no
 * stack object) unless it wraps around the end of the data area.  The
 * head is a multiple of 8, as every record's size.
 */
static void ring_write_sample(struct ring *r, const struct pfm_ovfl_arg *arg,
			      size_t size)
{
	size_t off = r->head & (r->size - 1);
	struct pfm_ring_sample *s = r->data + off;

	if (off + sizeof(*s) > r->size) {
		ring_write_sample_wrapped(r, arg, size);
		return;
	}
	ring_fill_sample(s, arg, size);
	r->head += sizeof(*s);
}

/* The call chain record that follows a sample; its bytes, or 0. */
static size_t ring_chain_size(const struct pfm_ovfl_arg *arg)
{
	if (!arg->callchain)
		return 0;
	return sizeof(struct pfm_ring_callchain) + arg->nr_ips * sizeof(u64);
}

static void ring_copy_chain(struct ring *r, const struct pfm_ovfl_arg *arg,
			    size_t size)
{
	struct pfm_ring_callchain c = {
		.hdr = { .type = PFM_RING_REC_CALLCHAIN, .size = size },
		.nr = arg->nr_ips,
		.nr_kernel = arg->nr_kips,
	};

	ring_copy(r, &c, sizeof(c));
	ring_copy(r, arg->ips, arg->nr_ips * sizeof(u64));
}

/* Every sample resets its PMD and goes on: the ring never masks. */
static u32 ring_handler(struct pfm_smpl_buf *buf, const struct pfm_ovfl_arg *arg)
{
	size_t vsize = arg->nr_values * sizeof(u64);
	size_t csize = ring_chain_size(arg);
	size_t ssize = sizeof(struct pfm_ring_sample) + vsize;
	struct ring *r = buf->priv;
	u32 ret = PFM_FMT_RESET;

	if (ring_reserve(r, ssize + csize, csize ? 2 : 1)) {
		ring_write_sample(r, arg, ssize);
		if (vsize)
			ring_copy(r, arg->values, vsize);
		if (csize)
			ring_copy_chain(r, arg, csize);
		if (ring_wake_due(r))
			ret |= PFM_FMT_WAKE;
	}
	ring_publish(r);
	return ret;
}

static void ring_set_switch(struct pfm_smpl_buf *buf, u16 from, u16 to,
			    u16 cpu, u64 tstamp)
{
	struct pfm_ring_set_switch rec = {
		.hdr = { .type = PFM_RING_REC_SET_SWITCH, .size = sizeof(rec) },
		.tstamp = tstamp,
		.from_set = from,
		.to_set = to,
		.cpu = cpu,
	};
	struct ring *r = buf->priv;

	/* A wake-up, if due, goes with the next sample. */
	if (ring_reserve(r, sizeof(rec), 1))
		ring_copy(r, &rec, sizeof(rec));
	ring_publish(r);
}

/* Copy-out offsets run free, as data_head and data_tail. */
static void ring_data_area(struct pfm_smpl_buf *buf, void **base,
			   size_t *size, bool *ring)
{
	struct ring *r = buf->priv;

	*base = r->data;
	*size = r->size;
	*ring = true;
}

static struct pfm_smpl_fmt ring_fmt = {
	.name		= PFM_RING_SMPL_NAME,
	.owner		= THIS_MODULE,
	.arg_size	= sizeof(struct pfm_ring_smpl_arg),
	.validate	= ring_validate,
	.getsize	= ring_getsize,
	.init		= ring_init,
	.handler	= ring_handler,
	.set_switch	= ring_set_switch,
	.exit		= ring_exit,
	.data_area	= ring_data_area,
};

static int __init pfm_ring_smpl_init(void)
{
	return pfm_fmt_register(&ring_fmt);
}

static void __exit pfm_ring_smpl_exit(void)
{
	pfm_fmt_unregister(&ring_fmt);
}

module_init(pfm_ring_smpl_init);
module_exit(pfm_ring_smpl_exit);

MODULE_DESCRIPTION("perfmon: ring sampling format (head/tail, watermark, overwrite)");
MODULE_LICENSE("GPL");
MODULE_ALIAS("pfm-fmt-" PFM_RING_SMPL_NAME);
