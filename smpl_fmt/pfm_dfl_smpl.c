// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_dfl_smpl: perfmon2's "default" sampling format.  A header, then
 * entries (struct pfm_dfl_smpl_entry, perfmon2 v2.8's, or with
 * PFM_DFL_SMPL_FL_V2 struct pfm_dfl_smpl_entry_v2, then the sampled PMD
 * values, then for a PMD with PFM_REGFL_CALLCHAIN the call chain: a u64
 * count and that many u64 addresses) until the buffer is full; full
 * means notify the monitor and mask until it restarts, which empties the
 * buffer.  Layout and protocol:
 * include/uapi/linux/perfmon_dfl_smpl.h, Documentation/sampling.rst.
 *
 * The buffer is mapped read-only, so what the header says can be
 * trusted: only this file writes it, under the context lock.
 */
#include <linux/module.h>
#include <linux/string.h>
#include <perfmon/smpl_fmt.h>
#include <uapi/linux/perfmon_dfl_smpl.h>

static int dfl_validate(u32 ctx_flags, const void *data)
{
	const struct pfm_dfl_smpl_arg *arg = data;
	size_t entry = arg->buf_flags & PFM_DFL_SMPL_FL_V2 ?
		       sizeof(struct pfm_dfl_smpl_entry_v2) :
		       sizeof(struct pfm_dfl_smpl_entry);

	if ((arg->buf_flags & ~PFM_DFL_SMPL_FL_V2) || arg->res1 ||
	    memchr_inv(arg->reserved, 0, sizeof(arg->reserved)))
		return -EINVAL;
	/* Smallest useful buffer: the header and one entry without values. */
	return arg->buf_size < sizeof(struct pfm_dfl_smpl_hdr) + entry ?
	       -EINVAL : 0;
}

static size_t dfl_getsize(const void *data)
{
	const struct pfm_dfl_smpl_arg *arg = data;

	/* The core refuses sizes beyond its limit; keep the value whole. */
	return min_t(u64, arg->buf_size, SIZE_MAX);
}

/* Layout 2.0 was asked for (the header, read-only to user space, says). */
static bool dfl_v2(const struct pfm_dfl_smpl_hdr *hdr)
{
	return hdr->hdr_buf_flags & PFM_DFL_SMPL_FL_V2;
}

static size_t dfl_entry_size(const struct pfm_dfl_smpl_hdr *hdr,
			     unsigned int nr_values)
{
	return (dfl_v2(hdr) ? sizeof(struct pfm_dfl_smpl_entry_v2) :
			      sizeof(struct pfm_dfl_smpl_entry)) +
	       nr_values * sizeof(u64);
}

/* The call chain after an entry's values: its count, then the chain. */
static size_t dfl_chain_size(bool callchain, unsigned int nr_ips)
{
	return callchain ? (1 + nr_ips) * sizeof(u64) : 0;
}

static void dfl_write_chain(void *p, const struct pfm_ovfl_arg *arg)
{
	u64 nr = arg->nr_ips | (u64)arg->nr_kips << 16;

	memcpy(p, &nr, sizeof(nr));
	memcpy(p + sizeof(nr), arg->ips, arg->nr_ips * sizeof(u64));
}

static int dfl_init(struct pfm_smpl_buf *buf, u32 ctx_flags, const void *data)
{
	const struct pfm_dfl_smpl_arg *arg = data;
	struct pfm_dfl_smpl_hdr *hdr = buf->addr;

	/* perfmon2: the size asked for, not the pages it was rounded to. */
	hdr->hdr_buf_size = arg->buf_size;
	hdr->hdr_cur_offs = sizeof(*hdr);
	hdr->hdr_buf_flags = arg->buf_flags;
	hdr->hdr_version = dfl_v2(hdr) ? PFM_DFL_SMPL_VERSION_2 :
					 PFM_DFL_SMPL_VERSION;
	hdr->hdr_min_buf_space = dfl_entry_size(hdr, 0);
	return 0;
}

/* perfmon2 v2.8's entry: pid is the thread's id, tgid its process's. */
static void dfl_write_entry(struct pfm_dfl_smpl_entry *e,
			    const struct pfm_ovfl_arg *arg)
{
	e->pid = arg->tid;
	e->ovfl_pmd = arg->ovfl_pmd;
	e->reserved = 0;
	e->last_reset_val = arg->last_reset_val;
	e->ip = arg->ip;
	e->tstamp = arg->tstamp;
	e->cpu = arg->cpu;
	e->set = arg->active_set;
	e->tgid = arg->pid;
	memcpy(e + 1, arg->values, arg->nr_values * sizeof(u64));
}

static void dfl_write_entry_v2(struct pfm_dfl_smpl_entry_v2 *e,
			       const struct pfm_ovfl_arg *arg)
{
	e->pid = arg->pid;
	e->tid = arg->tid;
	e->ip = arg->ip;
	e->tstamp = arg->tstamp;
	e->cpu = arg->cpu;
	e->set = arg->active_set;
	e->ovfl_pmd = arg->ovfl_pmd;
	e->nr_values = arg->nr_values;
	e->last_reset_val = arg->last_reset_val;
	e->eventid = arg->eventid;
	memcpy(e + 1, arg->values, arg->nr_values * sizeof(u64));
}

/*
 * Record the sample and go on; when the entry just written leaves no
 * room for another, ask for a notification and keep the PMD for its
 * long reset at restart.  A sample that finds no room at all (a PMD
 * with more values than the one that filled the buffer) is counted in
 * hdr_overflows.
 */
static u32 dfl_handler(struct pfm_smpl_buf *buf, const struct pfm_ovfl_arg *arg)
{
	struct pfm_dfl_smpl_hdr *hdr = buf->addr;
	size_t vsize = dfl_entry_size(hdr, arg->nr_values);
	size_t esize = vsize + dfl_chain_size(arg->callchain, arg->nr_ips);
	/* The next entry of this PMD, at its longest chain. */
	size_t next = vsize + dfl_chain_size(arg->callchain, PFM_MAX_CALLCHAIN);
	void *e = buf->addr + hdr->hdr_cur_offs;

	if (hdr->hdr_cur_offs + esize > hdr->hdr_buf_size) {
		hdr->hdr_overflows++;
		return PFM_FMT_NOTIFY;
	}
	if (dfl_v2(hdr))
		dfl_write_entry_v2(e, arg);
	else
		dfl_write_entry(e, arg);
	if (arg->callchain)
		dfl_write_chain(e + vsize, arg);
	hdr->hdr_cur_offs += esize;
	hdr->hdr_min_buf_space = max_t(u64, hdr->hdr_min_buf_space, esize);
	hdr->hdr_count++;
	if (hdr->hdr_cur_offs + next > hdr->hdr_buf_size)
		return PFM_FMT_NOTIFY;
	return PFM_FMT_RESET;
}

/* The monitor has read the buffer: start over. */
static void dfl_restart(struct pfm_smpl_buf *buf)
{
	struct pfm_dfl_smpl_hdr *hdr = buf->addr;

	hdr->hdr_count = 0;
	hdr->hdr_cur_offs = sizeof(*hdr);
	hdr->hdr_min_buf_space = dfl_entry_size(hdr, 0);
}

/* Copy-out offsets are offsets in the buffer, header included. */
static void dfl_data_area(struct pfm_smpl_buf *buf, void **base, size_t *size,
			  bool *ring)
{
	struct pfm_dfl_smpl_hdr *hdr = buf->addr;

	*base = buf->addr;
	*size = hdr->hdr_buf_size;
	*ring = false;
}

static struct pfm_smpl_fmt dfl_fmt = {
	.name		= PFM_DFL_SMPL_NAME,
	.owner		= THIS_MODULE,
	.arg_size	= sizeof(struct pfm_dfl_smpl_arg),
	.validate	= dfl_validate,
	.getsize	= dfl_getsize,
	.init		= dfl_init,
	.handler	= dfl_handler,
	.restart	= dfl_restart,
	.data_area	= dfl_data_area,
};

static int __init pfm_dfl_smpl_init(void)
{
	return pfm_fmt_register(&dfl_fmt);
}

static void __exit pfm_dfl_smpl_exit(void)
{
	pfm_fmt_unregister(&dfl_fmt);
}

module_init(pfm_dfl_smpl_init);
module_exit(pfm_dfl_smpl_exit);

MODULE_DESCRIPTION("perfmon: perfmon2's default sampling format");
MODULE_LICENSE("GPL");
MODULE_ALIAS("pfm-fmt-" PFM_DFL_SMPL_NAME);
