// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/perfmon, in perfmon2's layout where it fits:
 *
 *   version                 ABI version, "2.91"
 *   task_sessions_count     loaded per-thread contexts
 *   sys_sessions_count      loaded system-wide contexts
 *   ctx_per_user_max        contexts a uid may hold
 *   paranoid                who may do what, perf_event_paranoid's numbers
 *                           -1..3, default 2 (Documentation/security.rst)
 *   smpl_buffer_mem_max     bytes all sampling buffers may take together
 *                           (-1: no limit; default 1/16 of RAM)
 *   smpl_buffer_mem_cur     bytes they take now (read-only)
 *   smpl_user_mlock_kb      KiB per CPU a user's buffers may lock beyond
 *                           RLIMIT_MEMLOCK (perf_event_mlock_kb; 516)
 *   sets_per_ctx_max        event sets a context may hold (1..65536,
 *                           default 64)
 *   switch_irqoff_max_ns    longest ctx->lock section (interrupts off) of
 *                           a set-switch timer or an overflow since load;
 *                           writing 0 starts over
 *   max_ovfl_rate           overflow interrupts per second a CPU takes
 *                           before throttling (0: none; 100000)
 *   formats/<name>/         one directory per registered sampling format
 *   pmu_desc/model          the registered PMU description's name
 *   pmu_desc/module         the module that registered it (pfm_pmuv3 or
 *                           pfm_perf for the same model, say)
 *   pmu_desc/counter_width  bits of a hardware counter
 *   pmu_desc/pmcN/, pmdN/   name, type, dfl_val, rsvd_msk, addr
 *   pmu_desc/cfgN/          driver setting N (PFM_SET_DRV_CONFIG): name and
 *                           dfl_val matter, the rest reads as for a PMC
 *
 * pmu_desc/ exists while a description is registered (pfm_pmu_mutex).
 * The writable files are mode 0644 and also need CAP_SYS_ADMIN of the
 * writer: root in a user namespace or without the capability is refused
 * (-EPERM).
 */
#include <linux/capability.h>
#include <linux/kobject.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "perfmon.h"

static struct kobject *pfm_kobj;
static struct kobject *pfm_formats_kobj;
static struct kobject *pfm_pmu_kobj;

static ssize_t version_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%u.%u\n", PFM_VERSION_MAJ, PFM_VERSION_MIN);
}

static ssize_t task_sessions_count_show(struct kobject *kobj,
					struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", pfm_sessions_count(false));
}

static ssize_t sys_sessions_count_show(struct kobject *kobj,
				       struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", pfm_sessions_count(true));
}

/*
 * The value written to a knob of unsigned integers, by a writer with
 * CAP_SYS_ADMIN.  0, -EPERM, or kstrtouint()'s -EINVAL or -ERANGE.
 */
static int pfm_knob_uint(const char *buf, unsigned int *v)
{
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	return kstrtouint(buf, 0, v);
}

static ssize_t ctx_per_user_max_show(struct kobject *kobj,
				     struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(pfm_ctx_per_user_max));
}

static ssize_t ctx_per_user_max_store(struct kobject *kobj,
				      struct kobj_attribute *attr,
				      const char *buf, size_t count)
{
	unsigned int v;
	int ret;

	ret = pfm_knob_uint(buf, &v);
	if (ret)
		return ret;
	WRITE_ONCE(pfm_ctx_per_user_max, v);
	return count;
}

static ssize_t paranoid_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(pfm_paranoid));
}

static ssize_t paranoid_store(struct kobject *kobj, struct kobj_attribute *attr,
			      const char *buf, size_t count)
{
	int v, ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = kstrtoint(buf, 0, &v);
	if (ret)
		return ret;
	if (v < PFM_PARANOID_MIN || v > PFM_PARANOID_MAX)
		return -EINVAL;
	WRITE_ONCE(pfm_paranoid, v);
	return count;
}

static ssize_t smpl_buffer_mem_max_show(struct kobject *kobj,
					struct kobj_attribute *attr, char *buf)
{
	unsigned long max = READ_ONCE(pfm_smpl_mem_max);

	/* perfmon2 tools compare the value with (unsigned long)-1. */
	return sysfs_emit(buf, "%lu\n", max);
}

static ssize_t smpl_buffer_mem_max_store(struct kobject *kobj,
					 struct kobj_attribute *attr,
					 const char *buf, size_t count)
{
	unsigned long v;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (sysfs_streq(buf, "-1")) {
		v = ULONG_MAX;
	} else {
		ret = kstrtoul(buf, 0, &v);
		if (ret)
			return ret;
	}
	/* Lowering it frees nothing: buffers in use stay. */
	WRITE_ONCE(pfm_smpl_mem_max, v);
	return count;
}

static ssize_t smpl_buffer_mem_cur_show(struct kobject *kobj,
					struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lu\n", pfm_smpl_mem_used());
}

static ssize_t smpl_user_mlock_kb_show(struct kobject *kobj,
				       struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(pfm_smpl_user_mlock_kb));
}

static ssize_t smpl_user_mlock_kb_store(struct kobject *kobj,
					struct kobj_attribute *attr,
					const char *buf, size_t count)
{
	unsigned int v;
	int ret;

	ret = pfm_knob_uint(buf, &v);
	if (ret)
		return ret;
	/* Lowering it frees nothing: buffers in use stay charged. */
	WRITE_ONCE(pfm_smpl_user_mlock_kb, v);
	return count;
}

static ssize_t sets_per_ctx_max_show(struct kobject *kobj,
				     struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(pfm_sets_per_ctx_max));
}

static ssize_t sets_per_ctx_max_store(struct kobject *kobj,
				      struct kobj_attribute *attr,
				      const char *buf, size_t count)
{
	unsigned int v;
	int ret;

	ret = pfm_knob_uint(buf, &v);
	if (ret)
		return ret;
	/* Set 0 always exists; set ids are 16 bits. */
	if (!v || v > PFM_MAX_EVTSETS)
		return -EINVAL;
	WRITE_ONCE(pfm_sets_per_ctx_max, v);
	return count;
}

static ssize_t switch_irqoff_max_ns_show(struct kobject *kobj,
					 struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", pfm_irqoff_max_ns());
}

/* Only 0: start the measure over. */
static ssize_t switch_irqoff_max_ns_store(struct kobject *kobj,
					  struct kobj_attribute *attr,
					  const char *buf, size_t count)
{
	unsigned int v;
	int ret;

	ret = pfm_knob_uint(buf, &v);
	if (ret)
		return ret;
	if (v)
		return -EINVAL;
	pfm_irqoff_reset();
	return count;
}

static ssize_t max_ovfl_rate_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(pfm_max_ovfl_rate));
}

static ssize_t max_ovfl_rate_store(struct kobject *kobj,
				   struct kobj_attribute *attr,
				   const char *buf, size_t count)
{
	unsigned int v;
	int ret;

	ret = pfm_knob_uint(buf, &v);
	if (ret)
		return ret;
	WRITE_ONCE(pfm_max_ovfl_rate, v);
	return count;
}

static struct kobj_attribute pfm_attr_version = __ATTR_RO(version);
static struct kobj_attribute pfm_attr_task = __ATTR_RO(task_sessions_count);
static struct kobj_attribute pfm_attr_sys = __ATTR_RO(sys_sessions_count);
static struct kobj_attribute pfm_attr_limit = __ATTR_RW_MODE(ctx_per_user_max,
							     0644);
static struct kobj_attribute pfm_attr_paranoid = __ATTR_RW_MODE(paranoid, 0644);
static struct kobj_attribute pfm_attr_mem_max =
	__ATTR_RW_MODE(smpl_buffer_mem_max, 0644);
static struct kobj_attribute pfm_attr_mem_cur = __ATTR_RO(smpl_buffer_mem_cur);
static struct kobj_attribute pfm_attr_user_mlock =
	__ATTR_RW_MODE(smpl_user_mlock_kb, 0644);
static struct kobj_attribute pfm_attr_sets_max =
	__ATTR_RW_MODE(sets_per_ctx_max, 0644);
static struct kobj_attribute pfm_attr_irqoff =
	__ATTR_RW_MODE(switch_irqoff_max_ns, 0644);
static struct kobj_attribute pfm_attr_ovfl_rate =
	__ATTR_RW_MODE(max_ovfl_rate, 0644);

static struct attribute *pfm_attrs[] = {
	&pfm_attr_version.attr,
	&pfm_attr_task.attr,
	&pfm_attr_sys.attr,
	&pfm_attr_limit.attr,
	&pfm_attr_paranoid.attr,
	&pfm_attr_mem_max.attr,
	&pfm_attr_mem_cur.attr,
	&pfm_attr_user_mlock.attr,
	&pfm_attr_sets_max.attr,
	&pfm_attr_irqoff.attr,
	&pfm_attr_ovfl_rate.attr,
	NULL,
};

static const struct attribute_group pfm_group = {
	.attrs = pfm_attrs,
};

/* One register of the description: a directory of read-only values. */
struct pfm_reg_kobj {
	struct kobject kobj;
	struct list_head list;
	const struct pfm_regmap_desc *desc;
};

/* The register directories shown (pfm_pmu_mutex). */
static LIST_HEAD(pfm_reg_kobjs);

#define to_reg(k) container_of(k, struct pfm_reg_kobj, kobj)

static ssize_t name_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%s\n", to_reg(kobj)->desc->name);
}

static ssize_t type_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "0x%x\n", to_reg(kobj)->desc->type);
}

static ssize_t dfl_val_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "0x%llx\n", to_reg(kobj)->desc->dfl_val);
}

static ssize_t rsvd_msk_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "0x%llx\n", to_reg(kobj)->desc->rsvd_msk);
}

static ssize_t addr_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "0x%lx\n", to_reg(kobj)->desc->hw_addr);
}

static struct kobj_attribute pfm_reg_name = __ATTR_RO(name);
static struct kobj_attribute pfm_reg_type = __ATTR_RO(type);
static struct kobj_attribute pfm_reg_dfl = __ATTR_RO(dfl_val);
static struct kobj_attribute pfm_reg_rsvd = __ATTR_RO(rsvd_msk);
static struct kobj_attribute pfm_reg_addr = __ATTR_RO(addr);

static struct attribute *pfm_reg_attrs[] = {
	&pfm_reg_name.attr,
	&pfm_reg_type.attr,
	&pfm_reg_dfl.attr,
	&pfm_reg_rsvd.attr,
	&pfm_reg_addr.attr,
	NULL,
};
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
static struct pfm_pmu_config *pfm_sysfs_pmu;

static ssize_t model_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%s\n", pfm_sysfs_pmu->pmu_name);
}

static ssize_t counter_width_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", pfm_sysfs_pmu->counter_width);
}

static ssize_t module_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%s\n", module_name(pfm_sysfs_pmu->owner));
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

static struct attribute_group *pfm_sysfs_build_events(struct pfm_pmu_config *pmu)
{
	struct attribute_group *grp;
	struct pfm_event_attr *ev;
	u16 i;

	grp = kzalloc(sizeof(*grp), GFP_KERNEL);
	if (!grp)
		return NULL;
	grp->name = "events";
	grp->attrs = kcalloc(pmu->num_events + 1, sizeof(*grp->attrs),
			     GFP_KERNEL);
	ev = kcalloc(pmu->num_events, sizeof(*ev), GFP_KERNEL);
	if (!grp->attrs || !ev) {
		kfree(ev);
		pfm_sysfs_free_events(grp);
		return NULL;
	}
	for (i = 0; i < pmu->num_events; i++) {
		sysfs_attr_init(&ev[i].attr.attr);
		ev[i].attr.attr.name = pmu->events[i].name;
		ev[i].attr.attr.mode = 0444;
		ev[i].attr.show = pfm_event_show;
		ev[i].code = pmu->events[i].code;
		grp->attrs[i] = &ev[i].attr.attr;
	}
	return grp;
}

/* Add pmu_desc/events/ when the description names events. */
static void pfm_sysfs_add_events(struct pfm_pmu_config *pmu)
{
	if (!pmu->num_events)
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
static void pfm_sysfs_pmu_add(struct pfm_pmu_config *pmu)
{
	pfm_pmu_kobj = kobject_create_and_add("pmu_desc", pfm_kobj);
	if (!pfm_pmu_kobj)
		return;
	pfm_sysfs_pmu = pmu;
	if (sysfs_create_group(pfm_pmu_kobj, &pfm_pmu_group))
		return;
	pfm_sysfs_add_regs(pmu->pmc_desc, pmu->num_pmc_entries, "pmc");
	pfm_sysfs_add_regs(pmu->pmd_desc, pmu->num_pmd_entries, "pmd");
	pfm_sysfs_add_regs(pmu->cfg_desc, pmu->num_cfg, "cfg");
	pfm_sysfs_add_events(pmu);
}

/**
 * pfm_sysfs_pmu_remove() - remove pmu_desc/
 * @pmu: the description
 *
 * Context: under pfm_pmu_mutex.
 */
static void pfm_sysfs_pmu_remove(struct pfm_pmu_config *pmu)
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

/**
 * pfm_sysfs_fmt_add() - show a registered format as formats/<name>/
 * @fmt: the format
 *
 * Best effort, as pfm_sysfs_pmu_add().  Context: under pfm_fmt_mutex.
 */
static void pfm_sysfs_fmt_add(struct pfm_smpl_fmt *fmt)
{
	fmt->kobj = kobject_create_and_add(fmt->name, pfm_formats_kobj);
}

/**
 * pfm_sysfs_fmt_remove() - remove formats/<name>/
 * @fmt: the format
 *
 * Context: under pfm_fmt_mutex.
 */
static void pfm_sysfs_fmt_remove(struct pfm_smpl_fmt *fmt)
{
	kobject_put(fmt->kobj);
	fmt->kobj = NULL;
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

static int pfm_sysfs_fmt_event(struct notifier_block *nb,
			       unsigned long event, void *data)
{
	if (event == PFM_FMT_REGISTERED)
		pfm_sysfs_fmt_add(data);
	else
		pfm_sysfs_fmt_remove(data);
	return NOTIFY_OK;
}

static struct notifier_block pfm_sysfs_fmt_nb = {
	.notifier_call = pfm_sysfs_fmt_event,
};

int pfm_sysfs_init(void)
{
	int ret;

	pfm_kobj = kobject_create_and_add("perfmon", kernel_kobj);
	if (!pfm_kobj)
		return -ENOMEM;
	ret = sysfs_create_group(pfm_kobj, &pfm_group);
	if (ret)
		goto put_kobj;
	pfm_formats_kobj = kobject_create_and_add("formats", pfm_kobj);
	if (!pfm_formats_kobj) {
		ret = -ENOMEM;
		goto put_kobj;
	}
	/* Before any description or format module can register. */
	pfm_pmu_notifier_register(&pfm_sysfs_pmu_nb);
	pfm_fmt_notifier_register(&pfm_sysfs_fmt_nb);
	return 0;

put_kobj:
	kobject_put(pfm_kobj);
	return ret;
}

void pfm_sysfs_exit(void)
{
	pfm_fmt_notifier_unregister(&pfm_sysfs_fmt_nb);
	pfm_pmu_notifier_unregister(&pfm_sysfs_pmu_nb);
	kobject_put(pfm_formats_kobj);
	kobject_put(pfm_kobj);
}
