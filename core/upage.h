/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The control page's update (core/upage.c), inline for its callers.
 * Apart from perfmon.h, so that no inline of perfmon.h calls a function
 * of a file that includes it: upage.c includes perfmon.h, not this.
 */
#ifndef _PERFMON_UPAGE_H
#define _PERFMON_UPAGE_H

#include "perfmon.h"

/*
 * Rewrite the control page, if the context has one: inline, because
 * every context switch and overflow of every context passes here.
 */
static inline void pfm_upage_update(struct pfm_context *ctx)
{
	if (ctx->upage)
		pfm_upage_rewrite(ctx);
}

#endif /* _PERFMON_UPAGE_H */
