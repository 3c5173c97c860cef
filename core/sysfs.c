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
 *   pmu_desc/               the registered description (core/sysfs_pmu.c)
 *
 * The writable files are mode 0644 and also need CAP_SYS_ADMIN of the
 * writer: root in a user namespace or without the capability is refused
 * (-EPERM).
 */
#include <linux/capability.h>
#include <linux/kobject.h>
#include <linux/sysfs.h>

#include "perfmon.h"

static struct kobject *pfm_kobj;
static struct kobject *pfm_formats_kobj;

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

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = kstrtouint(buf, 0, &v);
	if (ret)
		return ret;
	if (v)
		return -EINVAL;
	pfm_irqoff_reset();
	return count;
}

/**
 * struct pfm_knob - a writable integer of /sys/kernel/perfmon
 * @attr: its file, mode 0644; writes also need CAP_SYS_ADMIN
 * @sval: the variable, when it is signed
 * @uval: the variable, when it is unsigned
 * @min: the lowest value a write may set
 * @max: the highest
 */
struct pfm_knob {
	struct kobj_attribute attr;
	int *sval;
	unsigned int *uval;
	s64 min;
	s64 max;
};

#define to_knob(a) container_of(a, struct pfm_knob, attr)

static ssize_t pfm_knob_show(struct kobject *kobj, struct kobj_attribute *attr,
			     char *buf)
{
	const struct pfm_knob *k = to_knob(attr);

	if (k->sval)
		return sysfs_emit(buf, "%d\n", READ_ONCE(*k->sval));
	return sysfs_emit(buf, "%u\n", READ_ONCE(*k->uval));
}

/*
 * -EPERM without CAP_SYS_ADMIN; -EINVAL for what is not a number or is
 * outside [min, max]; -ERANGE past an unsigned int, as kstrtouint() says.
 */
static ssize_t pfm_knob_store(struct kobject *kobj, struct kobj_attribute *attr,
			      const char *buf, size_t count)
{
	const struct pfm_knob *k = to_knob(attr);
	s64 v;
	int ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = kstrtos64(buf, 0, &v);
	if (ret)
		return ret;
	if (k->uval && v > UINT_MAX)
		return -ERANGE;
	if (v < k->min || v > k->max)
		return -EINVAL;
	if (k->sval)
		WRITE_ONCE(*k->sval, v);
	else
		WRITE_ONCE(*k->uval, v);
	return count;
}

#define PFM_KNOB(_name, _sval, _uval, _min, _max) {			\
	.attr = __ATTR(_name, 0644, pfm_knob_show, pfm_knob_store),	\
	.sval = _sval, .uval = _uval, .min = _min, .max = _max,		\
}

/*
 * Lowering ctx_per_user_max or smpl_user_mlock_kb takes nothing back:
 * contexts and buffers in use stay.  Set 0 always exists and set ids are
 * 16 bits: sets_per_ctx_max is 1..PFM_MAX_EVTSETS.
 */
static struct pfm_knob pfm_knobs[] = {
	PFM_KNOB(ctx_per_user_max, NULL, &pfm_ctx_per_user_max, 0, UINT_MAX),
	PFM_KNOB(paranoid, &pfm_paranoid, NULL,
		 PFM_PARANOID_MIN, PFM_PARANOID_MAX),
	PFM_KNOB(smpl_user_mlock_kb, NULL, &pfm_smpl_user_mlock_kb,
		 0, UINT_MAX),
	PFM_KNOB(sets_per_ctx_max, NULL, &pfm_sets_per_ctx_max,
		 1, PFM_MAX_EVTSETS),
	PFM_KNOB(max_ovfl_rate, NULL, &pfm_max_ovfl_rate, 0, UINT_MAX),
};

static struct kobj_attribute pfm_attr_version = __ATTR_RO(version);
static struct kobj_attribute pfm_attr_task = __ATTR_RO(task_sessions_count);
static struct kobj_attribute pfm_attr_sys = __ATTR_RO(sys_sessions_count);
static struct kobj_attribute pfm_attr_mem_max =
	__ATTR_RW_MODE(smpl_buffer_mem_max, 0644);
static struct kobj_attribute pfm_attr_mem_cur = __ATTR_RO(smpl_buffer_mem_cur);
static struct kobj_attribute pfm_attr_irqoff =
	__ATTR_RW_MODE(switch_irqoff_max_ns, 0644);

#define PFM_FIXED_ATTRS	6

/* The files above, then one per knob (pfm_sysfs_init()), then NULL. */
static struct attribute *pfm_attrs[PFM_FIXED_ATTRS + ARRAY_SIZE(pfm_knobs) + 1] = {
	&pfm_attr_version.attr,
	&pfm_attr_task.attr,
	&pfm_attr_sys.attr,
	&pfm_attr_mem_max.attr,
	&pfm_attr_mem_cur.attr,
	&pfm_attr_irqoff.attr,
};

static const struct attribute_group pfm_group = {
	.attrs = pfm_attrs,
};

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
	unsigned int i;
	int ret;

	for (i = 0; i < ARRAY_SIZE(pfm_knobs); i++)
		pfm_attrs[PFM_FIXED_ATTRS + i] = &pfm_knobs[i].attr.attr;
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
	pfm_sysfs_pmu_init(pfm_kobj);
	pfm_fmt_notifier_register(&pfm_sysfs_fmt_nb);
	return 0;

put_kobj:
	kobject_put(pfm_kobj);
	return ret;
}

void pfm_sysfs_exit(void)
{
	pfm_fmt_notifier_unregister(&pfm_sysfs_fmt_nb);
	pfm_sysfs_pmu_exit();
	kobject_put(pfm_formats_kobj);
	kobject_put(pfm_kobj);
}
