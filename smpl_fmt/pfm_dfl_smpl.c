// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_dfl_smpl: perfmon2's "default" sampling format.  A header, then
 * fixed entries (struct pfm_dfl_smpl_entry and the sampled PMD values)
 * until the buffer is full; full means notify the monitor and mask
 * until it restarts, which empties the buffer.  Layout and protocol:
 * include/uapi/linux/perfmon_dfl_smpl.h, Documentation/sampling.rst.
 *
 * The buffer is mapped read-only, so what the header says can be
 * trusted: only this file writes it, under the context lock.
 */
#include <linux/module.h>
#include <linux/string.h>
#include <perfmon/smpl_fmt.h>
#include <uapi/linux/perfmon_dfl_smpl.h>

/* Smallest useful buffer: the header and one entry without values. */
#define DFL_MIN_SIZE	(sizeof(struct pfm_dfl_smpl_hdr) + \
			 sizeof(struct pfm_dfl_smpl_entry))

static int dfl_validate(u32 ctx_flags, const void *data)
{
	const struct pfm_dfl_smpl_arg *arg = data;

	if (arg->buf_flags || arg->reserved1 ||
	    memchr_inv(arg->reserved2, 0, sizeof(arg->reserved2)))
		return -EINVAL;
	return arg->buf_size < DFL_MIN_SIZE ? -EINVAL : 0;
}

static size_t dfl_getsize(const void *data)
{
	const struct pfm_dfl_smpl_arg *arg = data;

	/* The core refuses sizes beyond its limit; keep the value whole. */
	return min_t(u64, arg->buf_size, SIZE_MAX);
}

static int dfl_init(struct pfm_smpl_buf *buf, u32 ctx_flags, const void *data)
{
	const struct pfm_dfl_smpl_arg *arg = data;
	struct pfm_dfl_smpl_hdr *hdr = buf->addr;

	/* perfmon2: the size asked for, not the pages it was rounded to. */
	hdr->hdr_buf_size = arg->buf_size;
	hdr->hdr_cur_offs = sizeof(*hdr);
	hdr->hdr_version = PFM_DFL_SMPL_VERSION;
	return 0;
}

static size_t dfl_entry_size(const struct pfm_ovfl_arg *arg)
{
	return sizeof(struct pfm_dfl_smpl_entry) +
	       arg->nr_values * sizeof(u64);
}

static void dfl_write_entry(struct pfm_dfl_smpl_entry *e,
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
	size_t esize = dfl_entry_size(arg);

	if (hdr->hdr_cur_offs + esize > hdr->hdr_buf_size) {
		hdr->hdr_overflows++;
		return PFM_FMT_NOTIFY;
	}
	dfl_write_entry(buf->addr + hdr->hdr_cur_offs, arg);
	hdr->hdr_cur_offs += esize;
	hdr->hdr_count++;
	if (hdr->hdr_cur_offs + esize > hdr->hdr_buf_size)
		return PFM_FMT_NOTIFY;
	return PFM_FMT_RESET;
}

/* The monitor has read the buffer: start over. */
static void dfl_restart(struct pfm_smpl_buf *buf)
{
	struct pfm_dfl_smpl_hdr *hdr = buf->addr;

	hdr->hdr_count = 0;
	hdr->hdr_cur_offs = sizeof(*hdr);
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
