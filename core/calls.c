// SPDX-License-Identifier: GPL-2.0
/*
 * The calls both front ends make, one per ioctl: the char device
 * (core/dev.c) copies the arguments in and out, the kernel API
 * (kapi/kapi.c) checks its descriptor; both then run pfm_call() with
 * the call's struct pfm_op below.  Each names its one __pfm_* core entry
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

/* The same, 8 bytes a PMD: the counts alone, for monitors that poll. */
const struct pfm_op pfm_op_read_values = {
	.fn = __pfm_read_values,
	.in_place = true,
};

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
