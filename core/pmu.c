// SPDX-License-Identifier: GPL-2.0
/*
 * Registration of PMU descriptions and their introspection.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kmod.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "perfmon.h"

/* Guards pfm_pmu: registration, unregistration and context binding. */
static DEFINE_MUTEX(pfm_pmu_mutex);
/* Told of descriptions as they come and go: /sys/kernel/perfmon. */
static BLOCKING_NOTIFIER_HEAD(pfm_pmu_chain);
/* The registered description, as the core derives it; NULL: none. */
static struct pfm_pmu pfm_pmu_slot;
static struct pfm_pmu *pfm_pmu;

static bool pfm_regmap_valid(const struct pfm_regmap_desc *d, u16 n,
			     const char *kind)
{
	u16 i;

	for (i = 0; i < n; i++) {
		if (!(d[i].type & PFM_REGT_IMPL))
			continue;
		if (!d[i].name || strlen(d[i].name) >= PFM_NAME_LEN) {
			pr_err("%s%u: missing or too long name\n", kind, i);
			return false;
		}
	}
	return true;
}

/* What a map without checks or settings has: nothing to call. */
static const struct pfm_pmu_checks pfm_no_checks;
static const struct pfm_pmu_settings pfm_no_settings;

/* Derive the bitmaps and counts the core uses from @conf's tables. */
static void pfm_pmu_derive(struct pfm_pmu *pmu, struct pfm_pmu_config *conf)
{
	const struct pfm_pmu_map *map = conf->map;
	u16 i;

	memset(pmu, 0, sizeof(*pmu));
	pmu->conf = conf;
	pmu->map = map;
	pmu->ops = conf->ops;
	pmu->checks = map->checks ?: &pfm_no_checks;
	pmu->cfg = map->settings ?: &pfm_no_settings;
	for (i = 0; i < map->num_pmc_entries; i++) {
		if (map->pmc_desc[i].type & PFM_REGT_IMPL) {
			__set_bit(i, pmu->impl_pmcs);
			pmu->max_pmc = i + 1;
		}
	}
	for (i = 0; i < map->num_pmd_entries; i++) {
		if (!(map->pmd_desc[i].type & PFM_REGT_IMPL))
			continue;
		__set_bit(i, pmu->impl_pmds);
		if (map->pmd_desc[i].type & PFM_REGT_CNTR)
			__set_bit(i, pmu->cnt_pmds);
		pmu->max_pmd = i + 1;
	}
	pmu->num_pmcs = bitmap_weight(pmu->impl_pmcs, PFM_MAX_PMCS);
	pmu->num_pmds = bitmap_weight(pmu->impl_pmds, PFM_MAX_PMDS);
	pmu->ovfl_mask = pfm_pmu_ovfl_mask(map);
}

/*
 * A default that counts what an unprivileged context may not must have
 * a user-level variant (pmc_user_val), which needs nothing and keeps
 * the reserved bits, so that such a context can start from it.
 */
static bool pfm_pmu_dfl_valid(const struct pfm_pmu_map *map)
{
	const struct pfm_pmu_checks *c = map->checks;
	const struct pfm_regmap_desc *d;
	u64 user;
	u16 i;

	if (!c || !c->pmc_priv)
		return true;
	for (i = 0; i < map->num_pmc_entries; i++) {
		d = &map->pmc_desc[i];
		if (!(d->type & PFM_REGT_IMPL) ||
		    !c->pmc_priv(map, i, d->dfl_val))
			continue;
		if (!c->pmc_user_val) {
			pr_err("PMC%u's default needs a privilege and the map has no pmc_user_val\n",
			       i);
			return false;
		}
		user = c->pmc_user_val(map, i, d->dfl_val);
		if (c->pmc_priv(map, i, user) ||
		    ((user ^ d->dfl_val) & d->rsvd_msk)) {
			pr_err("PMC%u: pmc_user_val() of the default still needs a privilege or changes reserved bits\n",
			       i);
			return false;
		}
	}
	return true;
}

/* The map's tables and settings are usable by the core. */
static bool pfm_pmu_map_valid(const struct pfm_pmu_map *map)
{
	const struct pfm_pmu_settings *cfg = map->settings;

	if (!map->pmu_name || strlen(map->pmu_name) >= PFM_NAME_LEN ||
	    !map->counter_width || map->counter_width > 64 ||
	    map->num_pmc_entries > PFM_MAX_PMCS ||
	    map->num_pmd_entries > PFM_MAX_PMDS ||
	    !pfm_regmap_valid(map->pmc_desc, map->num_pmc_entries, "PMC") ||
	    !pfm_regmap_valid(map->pmd_desc, map->num_pmd_entries, "PMD"))
		return false;
	if (cfg && (cfg->num > PFM_MAX_DRV_CFG || (cfg->num && !cfg->check) ||
		    !pfm_regmap_valid(cfg->desc, cfg->num, "setting")))
		return false;
	return pfm_pmu_dfl_valid(map);
}

/* The engine has every op the core calls unconditionally. */
static bool pfm_pmu_ops_valid(const struct pfm_pmu_config *pmu)
{
	const struct pfm_pmu_ops *ops = pmu->ops;
	bool settings = pmu->map->settings && pmu->map->settings->num;

	return ops->write_pmc && ops->write_pmd && ops->read_pmd &&
	       ops->start && ops->stop && (!settings || ops->load_cfg) &&
	       !((!!ops->ctx_alloc + !!ops->ctx_free + !!ops->ctx_sync) % 3);
}

/**
 * pfm_pmu_register() - make a PMU description the one the core uses
 * @pmu: the description; what the core derives from it is its own
 *
 * Context: process context; may sleep.
 * Return: 0; -EINVAL for a malformed description; -EBUSY when another
 * description is registered.
 */
int pfm_pmu_register(struct pfm_pmu_config *pmu)
{
	int ret = 0;

	if (!pmu->map || !pmu->ops || !pfm_pmu_map_valid(pmu->map) ||
	    !pfm_pmu_ops_valid(pmu)) {
		pr_err("refusing malformed PMU description\n");
		return -EINVAL;
	}

	mutex_lock(&pfm_pmu_mutex);
	if (pfm_pmu) {
		pr_err("cannot register PMU %s: %s is registered; unload its module first\n",
		       pmu->map->pmu_name, pfm_pmu->map->pmu_name);
		ret = -EBUSY;
	} else {
		/* No context holds the last one: its module was unloaded. */
		pfm_pmu_derive(&pfm_pmu_slot, pmu);
		pfm_pmu = &pfm_pmu_slot;
		blocking_notifier_call_chain(&pfm_pmu_chain,
					     PFM_PMU_REGISTERED, pfm_pmu);
		pr_info("PMU %s registered: %u PMCs, %u PMDs, %u-bit counters\n",
			pmu->map->pmu_name, pfm_pmu->num_pmcs, pfm_pmu->num_pmds,
			pmu->map->counter_width);
	}
	mutex_unlock(&pfm_pmu_mutex);
	return ret;
}
EXPORT_SYMBOL_GPL(pfm_pmu_register);

/**
 * pfm_pmu_unregister() - withdraw a PMU description
 * @pmu: the description passed to pfm_pmu_register()
 *
 * Contexts hold a reference on the description's module, so this runs
 * only once no context uses it.
 *
 * Context: process context; may sleep.
 */
void pfm_pmu_unregister(struct pfm_pmu_config *pmu)
{
	mutex_lock(&pfm_pmu_mutex);
	if (pfm_pmu && pfm_pmu->conf == pmu) {
		blocking_notifier_call_chain(&pfm_pmu_chain,
					     PFM_PMU_UNREGISTERED, pfm_pmu);
		pfm_pmu = NULL;
		pr_info("PMU %s unregistered\n", pmu->map->pmu_name);
	}
	mutex_unlock(&pfm_pmu_mutex);
}
EXPORT_SYMBOL_GPL(pfm_pmu_unregister);

/**
 * pfm_pmu_notifier_register() - be told when a description comes and goes
 * @nb: called with PFM_PMU_REGISTERED after a description is registered
 *      and PFM_PMU_UNREGISTERED before it goes, under pfm_pmu_mutex
 *
 * How /sys/kernel/perfmon (core/sysfs.c, above this file) follows the
 * description without this file calling up into it.
 *
 * Return: 0.
 */
int pfm_pmu_notifier_register(struct notifier_block *nb)
{
	return blocking_notifier_chain_register(&pfm_pmu_chain, nb);
}

void pfm_pmu_notifier_unregister(struct notifier_block *nb)
{
	blocking_notifier_chain_unregister(&pfm_pmu_chain, nb);
}

/**
 * pfm_pmu_get() - take a reference on the registered description
 *
 * Return: the description, or NULL when none is registered (or its module
 * is going away).
 */
struct pfm_pmu *pfm_pmu_get(void)
{
	struct pfm_pmu *pmu;

	mutex_lock(&pfm_pmu_mutex);
	pmu = pfm_pmu;
	if (pmu && !try_module_get(pmu->conf->owner))
		pmu = NULL;
	mutex_unlock(&pfm_pmu_mutex);
	return pmu;
}

/*
 * Which description a context that finds none loads (perfmon.pmu): the
 * CPU's own, which needs the PMU to itself, then pfm_perf, which counts
 * through perf beside perf's other users.  Descriptions declare
 * themselves with the module alias "pfm-pmu-<kind>".
 */
enum pfm_pmu_choice {
	PFM_PMU_AUTO,
	PFM_PMU_NATIVE,
	PFM_PMU_PERF,
	PFM_PMU_SOFT,
	PFM_PMU_NONE,
};

static const char * const pfm_pmu_choices[] = {
	[PFM_PMU_AUTO] = "auto",
	[PFM_PMU_NATIVE] = "native",
	[PFM_PMU_PERF] = "perf",
	[PFM_PMU_SOFT] = "soft",
	[PFM_PMU_NONE] = "none",
};

static int pfm_pmu_choice;
/* One load attempt at a time: a burst of creates spawns one modprobe. */
static DEFINE_MUTEX(pfm_pmu_load_mutex);

static int pfm_pmu_choice_set(const char *val, const struct kernel_param *kp)
{
	int i = sysfs_match_string(pfm_pmu_choices, val);

	if (i < 0)
		return -EINVAL;
	WRITE_ONCE(pfm_pmu_choice, i);
	return 0;
}

static int pfm_pmu_choice_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n",
			  pfm_pmu_choices[READ_ONCE(pfm_pmu_choice)]);
}

static const struct kernel_param_ops pfm_pmu_choice_ops = {
	.set = pfm_pmu_choice_set,
	.get = pfm_pmu_choice_get,
};
module_param_cb(pmu, &pfm_pmu_choice_ops, NULL, 0644);
MODULE_PARM_DESC(pmu, "description a context loads when none is registered: auto (the CPU's own, else pfm_perf; default), native, perf, soft, none");

/* Is a description registered? */
static bool pfm_pmu_registered(void)
{
	bool found;

	mutex_lock(&pfm_pmu_mutex);
	found = pfm_pmu;
	mutex_unlock(&pfm_pmu_mutex);
	return found;
}

/* Ask for the description of @kind; true once one is registered. */
static bool pfm_pmu_request(const char *kind)
{
	request_module("pfm-pmu-%s", kind);
	return pfm_pmu_registered();
}

/* Load a description by perfmon.pmu's choice; quiet when none comes. */
static void pfm_pmu_autoload(void)
{
	int choice = READ_ONCE(pfm_pmu_choice);

	if (choice == PFM_PMU_NONE)
		return;
	mutex_lock(&pfm_pmu_load_mutex);
	/* Loaded by the attempt this one waited for? */
	if (pfm_pmu_registered())
		goto unlock;
	if (choice == PFM_PMU_AUTO) {
		if (!pfm_pmu_request("native") && pfm_pmu_request("perf"))
			pr_info("the CPU's own PMU description could not load (see its log line): pfm_perf serves, over perf's counters; perfmon.pmu=native refuses instead\n");
	} else {
		pfm_pmu_request(pfm_pmu_choices[choice]);
	}
unlock:
	mutex_unlock(&pfm_pmu_load_mutex);
}

/**
 * pfm_pmu_get_or_load() - pfm_pmu_get(), loading a description first
 * when none is registered
 *
 * The module parameter perfmon.pmu says which: "auto" (the CPU's own
 * description, else pfm_perf), "native", "perf", "soft" or "none".
 * /sys/kernel/perfmon/pmu_desc/module then names the one that serves.
 *
 * Context: process context; may sleep (it may run modprobe).
 * Return: the description, referenced, or NULL when none could load.
 */
struct pfm_pmu *pfm_pmu_get_or_load(void)
{
	struct pfm_pmu *pmu = pfm_pmu_get();

	if (pmu)
		return pmu;
	pfm_pmu_autoload();
	return pfm_pmu_get();
}

/**
 * pfm_pmu_choice_name() - perfmon.pmu's value, for messages
 *
 * Return: "auto", "native", "perf", "soft" or "none".
 */
const char *pfm_pmu_choice_name(void)
{
	return pfm_pmu_choices[READ_ONCE(pfm_pmu_choice)];
}

void pfm_pmu_put(struct pfm_pmu *pmu)
{
	module_put(pmu->conf->owner);
}

/*
 * Fill @info from the registered description, loaded first when none is
 * (pfm_pmu_get_or_load()); -ENODEV when none could load.
 */
int pfm_pmu_info(struct pfarg_pmu_info *info)
{
	struct pfm_pmu *pmu = pfm_pmu_get_or_load();

	if (!pmu)
		return -ENODEV;
	memset(info, 0, sizeof(*info));
	strscpy(info->pmu_name, pmu->map->pmu_name, sizeof(info->pmu_name));
	info->pmu_counter_width = pmu->map->counter_width;
	info->pmu_num_pmcs = pmu->num_pmcs;
	info->pmu_num_pmds = pmu->num_pmds;
	info->pmu_max_pmc = pmu->max_pmc;
	info->pmu_max_pmd = pmu->max_pmd;
	bitmap_to_arr64(info->pmu_impl_pmcs, pmu->impl_pmcs, PFM_MAX_PMCS);
	bitmap_to_arr64(info->pmu_impl_pmds, pmu->impl_pmds, PFM_MAX_PMDS);
	pfm_pmu_put(pmu);
	return 0;
}

/* The output fields of a register's description, zeroed. */
static void pfm_reg_info_clear(struct pfarg_reg_info *r)
{
	r->info_type = 0;
	r->info_dfl_val = 0;
	r->info_rsvd_msk = 0;
	r->info_hw_addr = 0;
	memset(r->info_name, 0, sizeof(r->info_name));
}

static int pfm_reg_info_one(const struct pfm_pmu *pmu,
			    struct pfarg_reg_info *r)
{
	const struct pfm_regmap_desc *d = NULL;

	if (r->info_flags || r->info_reserved1 || r->info_reserved[0] ||
	    r->info_reserved[1]) {
		r->info_flags = PFM_REG_RETFL_EFLAGS;
		pfm_reg_info_clear(r);
		return -EINVAL;
	}
	switch (r->info_kind) {
	case PFM_REG_KIND_PMC:
		if (r->info_num < pmu->max_pmc)
			d = &pmu->map->pmc_desc[r->info_num];
		break;
	case PFM_REG_KIND_PMD:
		if (r->info_num < pmu->max_pmd)
			d = &pmu->map->pmd_desc[r->info_num];
		break;
	case PFM_REG_KIND_CFG:
		if (r->info_num < pmu->cfg->num)
			d = &pmu->cfg->desc[r->info_num];
		break;
	default:
		r->info_flags = PFM_REG_RETFL_EINVAL;
		pfm_reg_info_clear(r);
		return -EINVAL;
	}

	/*
	 * An unimplemented register is an answer, not an error.  Every
	 * output field is written either way: what the caller left there
	 * must not read as an answer.
	 */
	if (!d || !(d->type & PFM_REGT_IMPL)) {
		r->info_flags = PFM_REG_RETFL_NOTAVAIL;
		pfm_reg_info_clear(r);
		return 0;
	}
	r->info_type = d->type;
	r->info_dfl_val = d->dfl_val;
	r->info_rsvd_msk = d->rsvd_msk;
	r->info_hw_addr = d->hw_addr;
	strscpy_pad(r->info_name, d->name, sizeof(r->info_name));
	return 0;
}

/*
 * Describe @count registers of the registered description (loaded first
 * when none is).  Every entry is answered; a malformed entry gets its
 * error flag and the call returns -EINVAL.
 */
int pfm_pmu_reg_info(struct pfarg_reg_info *req, unsigned int count)
{
	struct pfm_pmu *pmu = pfm_pmu_get_or_load();
	unsigned int i;
	int ret = 0;

	if (!pmu)
		return -ENODEV;
	for (i = 0; i < count; i++) {
		if (pfm_reg_info_one(pmu, &req[i]))
			ret = -EINVAL;
	}
	pfm_pmu_put(pmu);
	return ret;
}
