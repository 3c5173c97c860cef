/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal declarations shared by the files of perfmon.ko.
 */
#ifndef _PERFMON_CORE_H
#define _PERFMON_CORE_H

#include <linux/spinlock.h>

/**
 * struct pfm_context - one monitoring context (one open /dev/perfmon)
 * @lock: guards every field below it; taken irqsave from process context
 *        because the overflow interrupt takes it too.
 */
struct pfm_context {
	spinlock_t lock;	/* irqsave: the overflow interrupt takes it */
};

int pfm_dev_init(void);
void pfm_dev_exit(void);

#endif /* _PERFMON_CORE_H */
