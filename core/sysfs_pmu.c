// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/perfmon/pmu_desc: the registered PMU description, shown
 * while it is registered (it follows the description notifier chain,
 * under pfm_pmu_mutex):
 *
 *   model                   the description's name
 *   module                  the module that registered it (pfm_pmuv3 or
 *                           pfm_perf for the same model, say)
 *   counter_width           bits of a hardware counter
 *   pmcN/, pmdN/            name, type, dfl_val, rsvd_msk, addr
 *   cfgN/                   driver setting N (PFM_SET_DRV_CONFIG): name
 *                           and dfl_val matter, the rest reads as for a PMC
 *   events/<name>           an event's code, where the description names
 *                           its events
 */
#include <linux/build_bug.h>
#include <linux/kobject.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/stddef.h>
#include <linux/sysfs.h>

#include "perfmon.h"

/* /sys/kernel/perfmon, and pmu_desc/ in it while a description is. */
static struct kobject *pfm_kobj;
static struct kobject *pfm_pmu_kobj;

/* One register of the description: a directory of read-only values. */
struct pfm_reg_kobj {
	struct kobject kobj;
	struct list_head list;
	const struct pfm_regmap_desc *desc;
};

/* The register directories shown (pfm_pmu_mutex). */
static LIST_HEAD(pfm_reg_kobjs);

#define to_reg(k) container_of(k, struct pfm_reg_kobj, kobj)

/* How a field of a register's description reads. */
enum pfm_reg_fmt { PFM_REG_STR, PFM_REG_U32, PFM_REG_U64, PFM_REG_ULONG };

/**
 * struct pfm_reg_attr - a file of pmcN/, pmdN/, cfgN/: one field
 * @attr: the file, read by pfm_reg_show()
 * @off: the field's offset in struct pfm_regmap_desc
 * @fmt: its type; numbers read in hexadecimal
 */
struct pfm_reg_attr {
	struct kobj_attribute attr;
	size_t off;
	enum pfm_reg_fmt fmt;
};

static ssize_t pfm_reg_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	const struct pfm_reg_attr *ra = container_of(attr, struct pfm_reg_attr,
						     attr);
	const void *f = (const void *)to_reg(kobj)->desc + ra->off;

	switch (ra->fmt) {
	case PFM_REG_STR:
		return sysfs_emit(buf, "%s\n", *(const char * const *)f);
	case PFM_REG_U32:
		return sysfs_emit(buf, "0x%x\n", *(const u32 *)f);
	case PFM_REG_U64:
		return sysfs_emit(buf, "0x%llx\n", *(const u64 *)f);
	default:
		return sysfs_emit(buf, "0x%lx\n", *(const unsigned long *)f);
	}
}

#define PFM_REG_ATTR(_name, _field, _fmt) {				\
	.attr = __ATTR(_name, 0444, pfm_reg_show, NULL),		\
	.off = offsetof(struct pfm_regmap_desc, _field),		\
	.fmt = (_fmt) }

static struct pfm_reg_attr pfm_reg_files[] = {
	PFM_REG_ATTR(name, name, PFM_REG_STR),
	PFM_REG_ATTR(type, type, PFM_REG_U32),
	PFM_REG_ATTR(dfl_val, dfl_val, PFM_REG_U64),
	PFM_REG_ATTR(rsvd_msk, rsvd_msk, PFM_REG_U64),
	PFM_REG_ATTR(addr, hw_addr, PFM_REG_ULONG),
};

static struct attribute *pfm_reg_attrs[] = {
	&pfm_reg_files[0].attr.attr,
	&pfm_reg_files[1].attr.attr,
	&pfm_reg_files[2].attr.attr,
	&pfm_reg_files[3].attr.attr,
	&pfm_reg_files[4].attr.attr,
	NULL,
};

static_assert(ARRAY_SIZE(pfm_reg_attrs) == ARRAY_SIZE(pfm_reg_files) + 1);
ATTRIBUTE_GROUPS(pfm_reg);

static void pfm_reg_release(struct kobject *kobj)
{
	kfree(to_reg(kobj));
}

static const struct kobj_type pfm_reg_ktype = {
	.release	= pfm_reg_release,
	.sysfs_ops	= &kobj_sysfs_ops,
	.default_groups	= pfm_reg_groups,
};

static ssize_t model_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf);
static ssize_t counter_width_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf);
static ssize_t module_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf);
static struct kobj_attribute pfm_pmu_model = __ATTR_RO(model);
static struct kobj_attribute pfm_pmu_width = __ATTR_RO(counter_width);
static struct kobj_attribute pfm_pmu_module = __ATTR_RO(module);
static struct attribute *pfm_pmu_attrs[] = {
	&pfm_pmu_model.attr,
	&pfm_pmu_width.attr,
	&pfm_pmu_module.attr,
	NULL,
};

static const struct attribute_group pfm_pmu_group = {
	.attrs = pfm_pmu_attrs,
};

/* The description shown; set and cleared under pfm_pmu_mutex. */
static struct pfm_pmu *pfm_sysfs_pmu;

static ssize_t model_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%s\n", pfm_sysfs_pmu->map->pmu_name);
}

static ssize_t counter_width_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", pfm_sysfs_pmu->map->counter_width);
}

static ssize_t module_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%s\n", module_name(pfm_sysfs_pmu->conf->owner));
}

/**
 * struct pfm_event_attr - pmu_desc/events/<name>: the event's code
 * @attr: the file
 * @code: what it shows
 */
struct pfm_event_attr {
	struct kobj_attribute attr;
	u64 code;
};

static ssize_t pfm_event_show(struct kobject *kobj, struct kobj_attribute *attr,
			      char *buf)
{
	return sysfs_emit(buf, "0x%llx\n",
			  container_of(attr, struct pfm_event_attr, attr)->code);
}

/* pmu_desc/events/, built from the description's table; NULL without. */
static struct attribute_group *pfm_events_group;

static void pfm_sysfs_free_events(struct attribute_group *grp)
{
	if (!grp)
		return;
	/* attrs[0] is the first pfm_event_attr of the array. */
	if (grp->attrs && grp->attrs[0])
		kfree(container_of(grp->attrs[0], struct pfm_event_attr,
				   attr.attr));
	kfree(grp->attrs);
	kfree(grp);
}

static struct attribute_group *pfm_sysfs_build_events(struct pfm_pmu *pmu)
{
	struct attribute_group *grp;
	struct pfm_event_attr *ev;
	u16 i;

	grp = kzalloc(sizeof(*grp), GFP_KERNEL);
	if (!grp)
		return NULL;
	grp->name = "events";
	grp->attrs = kcalloc(pmu->map->num_events + 1, sizeof(*grp->attrs),
			     GFP_KERNEL);
	ev = kcalloc(pmu->map->num_events, sizeof(*ev), GFP_KERNEL);
	if (!grp->attrs || !ev) {
		kfree(ev);
		pfm_sysfs_free_events(grp);
		return NULL;
	}
	for (i = 0; i < pmu->map->num_events; i++) {
		sysfs_attr_init(&ev[i].attr.attr);
		ev[i].attr.attr.name = pmu->map->events[i].name;
		ev[i].attr.attr.mode = 0444;
		ev[i].attr.show = pfm_event_show;
		ev[i].code = pmu->map->events[i].code;
		grp->attrs[i] = &ev[i].attr.attr;
	}
	return grp;
}

/* Add pmu_desc/events/ when the description names events. */
static void pfm_sysfs_add_events(struct pfm_pmu *pmu)
{
	if (!pmu->map->num_events)
		return;
	pfm_events_group = pfm_sysfs_build_events(pmu);
	if (pfm_events_group &&
	    sysfs_create_group(pfm_pmu_kobj, pfm_events_group)) {
		pfm_sysfs_free_events(pfm_events_group);
		pfm_events_group = NULL;
	}
}

/* Add pmu_desc/<kind><i>/ for every implemented register of @d. */
static void pfm_sysfs_add_regs(const struct pfm_regmap_desc *d, u16 n,
			       const char *kind)
{
	struct pfm_reg_kobj *r;
	u16 i;

	for (i = 0; i < n; i++) {
		if (!(d[i].type & PFM_REGT_IMPL))
			continue;
		r = kzalloc(sizeof(*r), GFP_KERNEL);
		if (!r)
			return;
		r->desc = &d[i];
		if (kobject_init_and_add(&r->kobj, &pfm_reg_ktype, pfm_pmu_kobj,
					 "%s%u", kind, i)) {
			kobject_put(&r->kobj);
			return;
		}
		list_add(&r->list, &pfm_reg_kobjs);
	}
}

/**
 * pfm_sysfs_pmu_add() - show a registered description in pmu_desc/
 * @pmu: the description
 *
 * Best effort: a failure leaves the directory incomplete, not the
 * registration refused.  Context: under pfm_pmu_mutex.
 */
static void pfm_sysfs_pmu_add(struct pfm_pmu *pmu)
{
	pfm_pmu_kobj = kobject_create_and_add("pmu_desc", pfm_kobj);
	if (!pfm_pmu_kobj)
		return;
	pfm_sysfs_pmu = pmu;
	if (sysfs_create_group(pfm_pmu_kobj, &pfm_pmu_group))
		return;
	pfm_sysfs_add_regs(pmu->map->pmc_desc, pmu->map->num_pmc_entries, "pmc");
	pfm_sysfs_add_regs(pmu->map->pmd_desc, pmu->map->num_pmd_entries, "pmd");
	pfm_sysfs_add_regs(pmu->cfg->desc, pmu->cfg->num, "cfg");
	pfm_sysfs_add_events(pmu);
}

/**
 * pfm_sysfs_pmu_remove() - remove pmu_desc/
 * @pmu: the description
 *
 * Context: under pfm_pmu_mutex.
 */
static void pfm_sysfs_pmu_remove(struct pfm_pmu *pmu)
{
	struct pfm_reg_kobj *r, *tmp;

	if (!pfm_pmu_kobj)
		return;
	list_for_each_entry_safe(r, tmp, &pfm_reg_kobjs, list) {
		list_del(&r->list);
		kobject_put(&r->kobj);
	}
	if (pfm_events_group) {
		sysfs_remove_group(pfm_pmu_kobj, pfm_events_group);
		pfm_sysfs_free_events(pfm_events_group);
		pfm_events_group = NULL;
	}
	kobject_put(pfm_pmu_kobj);
	pfm_pmu_kobj = NULL;
	pfm_sysfs_pmu = NULL;
}

static int pfm_sysfs_pmu_event(struct notifier_block *nb,
			       unsigned long event, void *data)
{
	if (event == PFM_PMU_REGISTERED)
		pfm_sysfs_pmu_add(data);
	else
		pfm_sysfs_pmu_remove(data);
	return NOTIFY_OK;
}

static struct notifier_block pfm_sysfs_pmu_nb = {
	.notifier_call = pfm_sysfs_pmu_event,
};

/**
 * pfm_sysfs_pmu_init() - follow the descriptions from now on
 * @parent: /sys/kernel/perfmon, where pmu_desc/ goes
 */
void pfm_sysfs_pmu_init(struct kobject *parent)
{
	pfm_kobj = parent;
	pfm_pmu_notifier_register(&pfm_sysfs_pmu_nb);
}

/**
 * pfm_sysfs_pmu_exit() - stop following them
 *
 * No description is registered by then (each description module holds
 * perfmon.ko), so pmu_desc/ is gone already.
 */
void pfm_sysfs_pmu_exit(void)
{
	pfm_pmu_notifier_unregister(&pfm_sysfs_pmu_nb);
}
