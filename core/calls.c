// SPDX-License-Identifier: GPL-2.0
/*
 * The calls both front ends make, one per ioctl: the char device
 * (core/dev.c) copies the arguments in and out, the kernel API
 * (kapi/kapi.c) checks its descriptor; both then run pfm_call() with
 * the call's struct pfm_op below (PFM_READ_VALUES, the call a monitor
 * polls with, has an entry of its own here, pfm_call_read_values(), that
 * takes the op only when it must).  Each names its one __pfm_* core entry
 * point (context lock held), where it runs (on the saved set, or in
 * place on the live one), and what must sleep before and after it; a
 * call that changes what the context counts ends with a virtual
 * description's sync (pfm_vpmu_finish(), core/vpmu.c).
 * Documentation/design.rst has the same table, with the description ops
 * each call uses.
 */
#include "perfmon.h"

const struct pfm_op pfm_op_create_context = {
	.prepare = pfm_create_context_prepare,
	.fn = __pfm_create_context,
	.finish = pfm_create_context_end,
};

const struct pfm_op pfm_op_write_pmcs = {
	.fn = __pfm_write_pmcs,
	.finish = pfm_vpmu_finish,
};

const struct pfm_op pfm_op_write_pmds = {
	.fn = __pfm_write_pmds,
	.finish = pfm_vpmu_finish,
};

/* The live set is read in place: a read while counting is cheap. */
const struct pfm_op pfm_op_read_pmds = {
	.fn = __pfm_read_pmds,
	.in_place = true,
};

static int pfm_read_values_fn(struct pfm_context *ctx, struct pfm_args *a)
	__must_hold(&ctx->lock)
{
	return __pfm_read_values(ctx, a->values);
}

/*
 * The same, 8 bytes a PMD: the counts alone, for monitors that poll.
 * Both front ends call pfm_call_read_values() below, which takes this op
 * only for a context live on another CPU.
 */
static const struct pfm_op pfm_op_read_values = {
	.fn = pfm_read_values_fn,
	.in_place = true,
};

/* A read of a context live on another CPU: by IPI there. */
static noinline int pfm_call_read_values_there(struct pfm_context *ctx,
					       struct pfm_values *v)
{
	struct pfm_args a = { .values = v };

	return pfm_call(ctx, &pfm_op_read_values, &a);
}

/**
 * pfm_call_read_values() - PFM_READ_VALUES: read PMD values, 8 bytes each
 * @ctx: the context, not locked
 * @v: the read, in kernel memory; its nr and values out
 *
 * The call a monitor polls with, without pfm_call()'s generic steps: a
 * read has no prepare or finish step, is never tried again and runs in
 * place, so where the set is live on this CPU or nowhere (a thread
 * reading itself, a saved context), the read runs at once
 * under the lock with interrupts off, as pfm_run() would run it, with no
 * struct pfm_args to fill.  Live on another CPU, it goes through
 * pfm_call() (an IPI there).
 *
 * Context: process context, no lock held.
 * Return: as __pfm_read_values().
 */
int pfm_call_read_values(struct pfm_context *ctx, struct pfm_values *v)
{
	unsigned long flags;
	bool here, there;
	int ret = 0;

	raw_spin_lock_irqsave(&ctx->lock, flags);
	here = pfm_ctx_live_here(ctx);
	there = !here && ctx->live_cpu >= 0;
	if (likely(!there))
		ret = pfm_values_read(ctx, v, here);
	raw_spin_unlock_irqrestore(&ctx->lock, flags);
	if (likely(!there))
		return ret;
	return pfm_call_read_values_there(ctx, v);
}

/* An exec of the target between the check and the attach: try again. */
const struct pfm_op pfm_op_load_context = {
	.prepare = pfm_load_context_prepare,
	.fn = __pfm_load_context,
	.finish = pfm_load_context_end,
	.tries = PFM_LOAD_TRIES,
};

const struct pfm_op pfm_op_unload_context = {
	.prepare = pfm_unload_context_prepare,
	.fn = __pfm_unload_context,
	.finish = pfm_unload_context_end,
};

const struct pfm_op pfm_op_start = {
	.fn = __pfm_start,
	.in_place = true,
};

const struct pfm_op pfm_op_stop = {
	.fn = __pfm_stop,
	.in_place = true,
};

const struct pfm_op pfm_op_restart = {
	.fn = __pfm_restart,
	.finish = pfm_restart_end,
};

/*
 * A concurrent deletion of a set the array names leaves too few sets
 * prepared: prepare again, a bounded number of times.
 */
const struct pfm_op pfm_op_create_evtsets = {
	.prepare = pfm_create_evtsets_prepare,
	.fn = __pfm_create_evtsets,
	.finish = pfm_create_evtsets_end,
	.tries = PFM_CREATE_EVTSETS_TRIES,
};

const struct pfm_op pfm_op_delete_evtsets = {
	.fn = __pfm_delete_evtsets,
	.finish = pfm_delete_evtsets_end,
};

const struct pfm_op pfm_op_getinfo_evtsets = {
	.fn = __pfm_getinfo_evtsets,
};

const struct pfm_op pfm_op_set_drv_config = {
	.prepare = pfm_set_drv_config_prepare,
	.fn = __pfm_set_drv_config,
	.finish = pfm_vpmu_finish,
};

/* The values are the context's, not the PMU's: nothing to save. */
const struct pfm_op pfm_op_get_drv_config = {
	.prepare = pfm_get_drv_config_prepare,
	.fn = __pfm_get_drv_config,
	.in_place = true,
};
