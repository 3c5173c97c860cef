// SPDX-License-Identifier: GPL-2.0
/*
 * Events: from what the user writes to PMC values on counters.
 *
 * A name resolves, in this order, as: a raw event code (r0x11), a PMC
 * written verbatim (pmc3=0x530076[@pmdN]), an alias of the tool (cycles,
 * instructions), an event the PMU description names in sysfs, an event
 * of the PMU libpfm4 detected.  The PMU model (below) turns an event
 * code and privilege levels into a PMC value: libpfm4's own filter bits
 * are not used, since its PMU tables were written for perf_events.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfmon/pfmlib.h>

#include "pfmon.h"

/**
 * struct pfmon_model - how to program a PMU description's PMCs
 * @name: the description's model name
 * @code_mask: bits of a PMC that select the event
 * @filters: the PMC can filter user and kernel levels
 * @encode: PMC value counting @code at privilege levels @plm
 * @cycles: event code of core cycles, or -1
 * @instructions: event code of instructions retired, or -1
 * @max_gen: general-purpose counters are the PMDs below this index
 * @cycle_pmd: PMD dedicated to cycles, or -1
 * @sample_event: what "record" samples by default (every 1000000 events, or -F)
 * @listed: event codes the description's sysfs list holds exactly when
 *          the PMU implements them (others may be missing from it), or NULL
 */
struct pfmon_model {
	const char *name;
	uint64_t code_mask;
	bool filters;
	uint64_t (*encode)(uint64_t code, unsigned int plm, int pmd);
	int64_t cycles;
	int64_t instructions;
	int max_gen;
	int cycle_pmd;
	const char *sample_event;
	bool (*listed)(uint64_t code);
};

static uint64_t soft_encode(uint64_t code, unsigned int plm, int pmd)
{
	return code;
}

/* PMEVTYPER<n>_EL0 / PMCCFILTR_EL0: P (bit 31) and U (bit 30) exclude. */
static uint64_t pmuv3_encode(uint64_t code, unsigned int plm, int pmd)
{
	uint64_t v = pmd == 31 ? 0 : code;

	if (!(plm & PFMON_PLM_KERNEL))
		v |= 1ULL << 31;
	if (!(plm & PFMON_PLM_USER))
		v |= 1ULL << 30;
	return v;
}

/*
 * PMUv3's common events, which PMCEID<n>_EL0 report implemented or not:
 * the description lists in sysfs those the PMU implements.  QEMU, for
 * one, implements INST_RETIRED only under -icount.
 */
static bool pmuv3_common(uint64_t code)
{
	return code < 0x40 || (code >= 0x4000 && code < 0x4040);
}

/* PERFEVTSEL: USR (16), OS (17), EN (22); the engine sets INT. */
static uint64_t x86_encode(uint64_t code, unsigned int plm, int pmd)
{
	uint64_t v = code | 1ULL << 22;

	if (plm & PFMON_PLM_USER)
		v |= 1ULL << 16;
	if (plm & PFMON_PLM_KERNEL)
		v |= 1ULL << 17;
	return v;
}

/* Event, unit mask, edge, inverse, counter mask (and AMD's high event). */
#define X86_CODE_MASK	(0xffffULL | 1ULL << 18 | 0xff800000ULL)

static const struct pfmon_model models[] = {
	{ "soft", 0xff, false, soft_encode, -1, -1, 64, -1,
	  "task-clock", NULL },
	{ "armv8_pmuv3", 0xffff, true, pmuv3_encode, 0x11, 0x08, 31, 31,
	  "cycles", pmuv3_common },
	{ "intel_arch", X86_CODE_MASK, true, x86_encode, 0x3c, 0xc0, 16, -1,
	  "cycles", NULL },
	{ "amd64", X86_CODE_MASK | 0xf00000000ULL, true, x86_encode, 0x76,
	  0xc0, 64, -1, "cycles", NULL },
	{ "x86_sim", X86_CODE_MASK, true, x86_encode, 0x3c, 0xc0, 16, -1,
	  "cycles", NULL },
};

static bool libpfm_ready;

static void libpfm_init(void)
{
	static bool tried;
	int ret;

	if (tried)
		return;
	tried = true;
	ret = pfm_initialize();
	if (ret != PFM_SUCCESS)
		pfmon_warn("libpfm4 is unusable (%s): event names from it are unknown",
			   pfm_strerror(ret));
	libpfm_ready = ret == PFM_SUCCESS;
}

/* Is @idx a PMU libpfm4 found on this machine (not perf's generic ones)? */
static bool libpfm_core_pmu(pfm_pmu_t p)
{
	pfm_pmu_info_t info;

	if (p == PFM_PMU_PERF_EVENT || p == PFM_PMU_PERF_EVENT_RAW)
		return false;
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	return pfm_get_pmu_info(p, &info) == PFM_SUCCESS && info.is_present;
}

static int pmu_read_regs(struct pfmon_pmu *pmu)
{
	const struct pfmon_model *m = pmu->model;
	struct pfarg_reg_info ri[2];
	int i;

	pmu->cycle_pmd = m ? m->cycle_pmd : -1;
	for (i = 0; i < pmu->info.pmu_max_pmd && pmu->ngen < 64; i++) {
		memset(ri, 0, sizeof(ri));
		ri[0].info_num = i;
		ri[0].info_kind = PFM_REG_KIND_PMD;
		ri[1].info_num = i;
		ri[1].info_kind = PFM_REG_KIND_PMC;
		if (i >= pmu->info.pmu_max_pmc ||
		    pfm_get_reg_info(ri, 2) ||
		    (ri[0].info_flags | ri[1].info_flags) & PFM_REG_RETFL_NOTAVAIL)
			continue;
		if (!(ri[0].info_type & PFM_REGT_CNTR) ||
		    !(ri[0].info_type & PFM_REGT_INTR))
			continue;
		if (m && (i >= m->max_gen || i == m->cycle_pmd))
			continue;
		pmu->gen[pmu->ngen++] = i;
	}
	if (pmu->cycle_pmd >= 0 &&
	    !(pmu->info.pmu_impl_pmds[pmu->cycle_pmd / 64] &
	      (1ULL << (pmu->cycle_pmd % 64))))
		pmu->cycle_pmd = -1;
	return 0;
}

static void pmu_read_events(struct pfmon_pmu *pmu)
{
	int n = pfm_get_pmu_events(NULL, 0);

	if (n <= 0)
		return;
	pmu->events = calloc(n, sizeof(*pmu->events));
	if (!pmu->events)
		return;
	pmu->nevents = pfm_get_pmu_events(pmu->events, n);
	if (pmu->nevents > n)
		pmu->nevents = n;
}

/**
 * pfmon_pmu_open() - find the PMU perfmon drives
 * @pmu: filled
 *
 * Return: 0, or -1 after explaining on stderr what is missing.
 */
int pfmon_pmu_open(struct pfmon_pmu *pmu)
{
	size_t i;

	memset(pmu, 0, sizeof(*pmu));
	if (pfm_get_pmu_desc(&pmu->info)) {
		if (errno == ENODEV)
			pfmon_explain_no_pmu();
		else
			pfmon_explain("cannot query perfmon", errno);
		return -1;
	}
	for (i = 0; i < sizeof(models) / sizeof(models[0]); i++)
		if (!strcmp(models[i].name, pmu->info.pmu_name))
			pmu->model = &models[i];
	if (!pmu->model)
		pfmon_warn("PMU description '%s' is unknown to this pfmon: only pmcN=VALUE events work",
			   pmu->info.pmu_name);
	pmu_read_regs(pmu);
	pmu_read_events(pmu);
	return 0;
}

void pfmon_pmu_close(struct pfmon_pmu *pmu)
{
	free(pmu->events);
	pmu->events = NULL;
}

/* False when the PMU is known not to implement event @code. */
static bool event_implemented(const struct pfmon_pmu *pmu, uint64_t code)
{
	const struct pfmon_model *m = pmu->model;
	int i;

	if (!m || !m->listed || !m->listed(code) || !pmu->nevents)
		return true;
	for (i = 0; i < pmu->nevents; i++)
		if (pmu->events[i].code == code)
			return true;
	return false;
}

/* Default event of stat ("NULL": the model's usual set) or record. */
const char *pfmon_default_event(const struct pfmon_pmu *pmu, bool sampling)
{
	const struct pfmon_model *m = pmu->model;

	if (!m)
		return NULL;
	if (sampling)
		return m->sample_event;
	if (m->cycles >= 0 && m->instructions >= 0 &&
	    !event_implemented(pmu, m->instructions))
		return "cycles";
	if (m->cycles >= 0)
		return "cycles,instructions";
	return "task-clock,context-switches,syscalls";
}

/* The tool's aliases on this PMU, for list. */
const char *pfmon_model_aliases(const struct pfmon_pmu *pmu)
{
	return pmu->model && pmu->model->cycles >= 0 ?
	       "cycles, instructions" : NULL;
}

/* Split "name:u" / "name:k" / "name:uk": the privilege suffix. */
static int parse_plm(char *name, unsigned int *plm)
{
	char *c = strrchr(name, ':');
	unsigned int p = 0;
	const char *s;

	*plm = PFMON_PLM_USER | PFMON_PLM_KERNEL;
	if (!c || !c[1] || strspn(c + 1, "uk") != strlen(c + 1))
		return 0;
	for (s = c + 1; *s; s++)
		p |= *s == 'u' ? PFMON_PLM_USER : PFMON_PLM_KERNEL;
	*c = '\0';
	*plm = p;
	return 1;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || *end ? -1 : 0;
}

/* pmcN=VALUE[@pmdM] */
static int resolve_pmc(struct pfmon_pmu *pmu, const char *name,
		       struct pfmon_event *ev)
{
	unsigned int pmc, pmd;
	char val[64], rest[64] = "";
	uint64_t v;
	int n;

	n = sscanf(name, "pmc%u=%63[^@]@pmd%u%63s", &pmc, val, &pmd, rest);
	if (n < 2 || n == 4)
		return -1;
	if (n == 2)
		pmd = pmc;
	if (parse_u64(val, &v) || pmc >= PFM_MAX_PMCS || pmd >= PFM_MAX_PMDS)
		return -1;
	ev->fixed = true;
	ev->pmc = pmc;
	ev->pmd = pmd;
	ev->pmc_value = v;
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	return 0;
}

static int resolve_alias(struct pfmon_pmu *pmu, const char *name,
			 struct pfmon_event *ev)
{
	const struct pfmon_model *m = pmu->model;

	if (!m)
		return -1;
	if (!strcasecmp(name, "cycles") && m->cycles >= 0) {
		ev->code = m->cycles;
		ev->role = PFMON_ROLE_CYCLES;
	} else if (!strcasecmp(name, "instructions") && m->instructions >= 0) {
		ev->code = m->instructions;
		ev->role = PFMON_ROLE_INSTRUCTIONS;
	} else {
		return -1;
	}
	return 0;
}

static int resolve_sysfs(struct pfmon_pmu *pmu, const char *name,
			 struct pfmon_event *ev)
{
	int i;

	for (i = 0; i < pmu->nevents; i++)
		if (!strcasecmp(name, pmu->events[i].name)) {
			ev->code = pmu->events[i].code;
			return 0;
		}
	return -1;
}

static int resolve_libpfm(struct pfmon_pmu *pmu, const char *name,
			  struct pfmon_event *ev)
{
	pfm_pmu_encode_arg_t arg;
	pfm_event_info_t info;
	uint64_t *codes = NULL;
	int ret;

	/*
	 * Only now: libpfm4's initialization walks every tracepoint for its
	 * perf layer (0.7 s in the arm64 guest), for names it rarely gives.
	 */
	libpfm_init();
	if (!libpfm_ready || !pmu->model)
		return -1;
	memset(&arg, 0, sizeof(arg));
	arg.size = sizeof(arg);
	arg.codes = codes;
	ret = pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3, PFM_OS_NONE,
					&arg);
	if (ret != PFM_SUCCESS)
		return -1;
	memset(&info, 0, sizeof(info));
	info.size = sizeof(info);
	if (pfm_get_event_info(arg.idx, PFM_OS_NONE, &info) != PFM_SUCCESS ||
	    !libpfm_core_pmu(info.pmu) || arg.count < 1) {
		free(arg.codes);
		return -1;
	}
	ev->code = arg.codes[0] & pmu->model->code_mask;
	free(arg.codes);
	return 0;
}

/* Give the event the role its code has on this PMU. */
static void event_role(struct pfmon_pmu *pmu, struct pfmon_event *ev)
{
	const struct pfmon_model *m = pmu->model;

	if (ev->fixed || !m || ev->role != PFMON_ROLE_OTHER)
		return;
	if (m->cycles >= 0 && ev->code == (uint64_t)m->cycles)
		ev->role = PFMON_ROLE_CYCLES;
	else if (m->instructions >= 0 && ev->code == (uint64_t)m->instructions)
		ev->role = PFMON_ROLE_INSTRUCTIONS;
	if (!strcmp(m->name, "soft") && (ev->code == 1 || ev->code == 2))
		ev->unit = "ns";
	if (!strcmp(m->name, "soft") && ev->code == 1)
		ev->role = PFMON_ROLE_TASK_CLOCK;
}

/*
 * @ev's name as the user asked for it: two rows of one event with other
 * filters (inst_retired:u, inst_retired:k) must be told apart in stat's
 * output and in a recording's event list.
 */
static void name_with_plm(struct pfmon_event *ev, const char *plm)
{
	size_t len = strlen(ev->name);

	snprintf(ev->name + len, sizeof(ev->name) - len, ":%s", plm);
}

static int resolve(struct pfmon_pmu *pmu, char *name, struct pfmon_event *ev)
{
	uint64_t code;
	bool mod = parse_plm(name, &ev->plm);
	/* parse_plm() ended @name at the ':'; the modifiers follow. */
	const char *plm = mod ? name + strlen(name) + 1 : NULL;

	if (!resolve_pmc(pmu, name, ev)) {
		if (mod) {
			pfmon_err("%s: pmcN=VALUE takes no :u/:k (the value holds the filters)",
				  ev->spec);
			return -1;
		}
		return 0;
	}
	if (!pmu->model) {
		pfmon_err("%s: the PMU description '%s' is unknown to pfmon: use pmcN=VALUE",
			  ev->spec, pmu->info.pmu_name);
		return -1;
	}
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	if (name[0] == 'r' && !parse_u64(name + 1, &code)) {
		if (code & ~pmu->model->code_mask) {
			pfmon_err("%s: 0x%" PRIx64 " has bits outside the event field (0x%" PRIx64 ") of %s",
				  ev->spec, code, pmu->model->code_mask,
				  pmu->model->name);
			return -1;
		}
		ev->code = code;
	} else if (resolve_alias(pmu, name, ev) &&
		   resolve_sysfs(pmu, name, ev) &&
		   resolve_libpfm(pmu, name, ev)) {
		pfmon_err("%s: unknown event on PMU '%s' (see 'pfmon list'; raw codes: rHEX, pmcN=VALUE)",
			  ev->spec, pmu->info.pmu_name);
		return -1;
	}
	if (!event_implemented(pmu, ev->code)) {
		pfmon_err("%s: %s does not implement event 0x%" PRIx64 " (see 'pfmon list')",
			  ev->spec, pmu->model->name, ev->code);
		return -1;
	}
	if (mod && !pmu->model->filters) {
		pfmon_err("%s: the %s PMU cannot filter by privilege level: drop :%s",
			  ev->spec, pmu->model->name, strrchr(ev->spec, ':') + 1);
		return -1;
	}
	event_role(pmu, ev);
	if (mod)
		name_with_plm(ev, plm);
	return 0;
}

/* Split "EVENT[/PERIOD]"; a sampling event without a period gets one. */
static int parse_period(char *spec, bool sampling, struct pfmon_event *ev)
{
	char *slash = strrchr(spec, '/');

	if (!slash) {
		ev->period = sampling ? 1000000 : 0;
		return 0;
	}
	*slash = '\0';
	ev->period_set = true;
	if (!sampling) {
		pfmon_err("%s: a period samples; stat counts (use record)",
			  ev->spec);
		return -1;
	}
	if (parse_u64(slash + 1, &ev->period) || !ev->period ||
	    ev->period > (1ULL << 62)) {
		pfmon_err("%s: the period must be a number from 1 to 2^62",
			  ev->spec);
		return -1;
	}
	return 0;
}

static int parse_one(struct pfmon_pmu *pmu, const char *spec, int group,
		     bool sampling, struct pfmon_event *ev)
{
	char buf[sizeof(ev->spec)];

	memset(ev, 0, sizeof(*ev));
	ev->pmc = -1;
	ev->pmd = -1;
	ev->group = group;
	if (strlen(spec) >= sizeof(ev->spec) || !*spec) {
		pfmon_err("'%s': an event name from 1 to %zu characters",
			  spec, sizeof(ev->spec) - 1);
		return -1;
	}
	snprintf(ev->spec, sizeof(ev->spec), "%s", spec);
	snprintf(buf, sizeof(buf), "%s", spec);
	if (parse_period(buf, sampling, ev))
		return -1;
	if (resolve(pmu, buf, ev))
		return -1;
	if (!ev->fixed)
		ev->pmc_value = 0;	/* by pfmon_assign(), once placed */
	return 0;
}

/**
 * pfmon_parse_events() - parse a comma-separated list of events
 * @pmu: the PMU
 * @list: "a,b:u,c/PERIOD"
 * @group: number of the -e option
 * @sampling: record: every event gets a period
 * @evs: array grown by the events
 * @nev: its entries
 *
 * Return: 0, or -1 after a message naming the event.
 */
int pfmon_parse_events(struct pfmon_pmu *pmu, const char *list, int group,
		       bool sampling, struct pfmon_event **evs, int *nev)
{
	char *copy = strdup(list), *tok, *save = NULL;
	struct pfmon_event *n;
	int ret = 0;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok && !ret;
	     tok = strtok_r(NULL, ",", &save)) {
		n = realloc(*evs, (*nev + 1) * sizeof(**evs));
		if (!n) {
			ret = -1;
			break;
		}
		*evs = n;
		ret = parse_one(pmu, tok, group, sampling, &n[*nev]);
		if (!ret)
			(*nev)++;
	}
	free(copy);
	return ret;
}

/* Is PMD @pmd of set @set taken by an event already placed? */
static bool pmd_taken(const struct pfmon_event *evs, int n, int set, int pmd)
{
	int i;

	for (i = 0; i < n; i++)
		if (evs[i].set == set && evs[i].pmd == pmd)
			return true;
	return false;
}

/* Place ev in set @set; false when the set has no counter for it. */
static bool place(struct pfmon_pmu *pmu, struct pfmon_event *evs, int i,
		  int set)
{
	struct pfmon_event *ev = &evs[i];
	int k;

	ev->set = set;
	if (ev->fixed)
		return !pmd_taken(evs, i, set, ev->pmd);
	if (ev->role == PFMON_ROLE_CYCLES && pmu->cycle_pmd >= 0 &&
	    !pmd_taken(evs, i, set, pmu->cycle_pmd)) {
		ev->pmd = pmu->cycle_pmd;
	} else {
		for (k = 0; k < pmu->ngen; k++)
			if (!pmd_taken(evs, i, set, pmu->gen[k]))
				break;
		if (k == pmu->ngen)
			return false;
		ev->pmd = pmu->gen[k];
	}
	ev->pmc = ev->pmd;
	ev->pmc_value = pmu->model->encode(ev->code, ev->plm, ev->pmd);
	return true;
}

/**
 * pfmon_assign() - put the events on counters, in as few sets as fit
 * @pmu: the PMU
 * @evs: the events, in order
 * @nev: how many
 * @split_groups: each -e option starts a new set (--sets)
 *
 * Events go to the current set while it has a counter for them, then to
 * a new one: the sets are multiplexed.
 *
 * Return: the number of sets, or -1 when an event fits in no set.
 */
int pfmon_assign(struct pfmon_pmu *pmu, struct pfmon_event *evs, int nev,
		 bool split_groups)
{
	int i, set = 0;

	for (i = 0; i < nev; i++) {
		if (split_groups && i && evs[i].group != evs[i - 1].group)
			set++;
		if (place(pmu, evs, i, set))
			continue;
		/* The first event of a set always fits, unless it never can. */
		if (++set >= PFMON_MAX_SETS) {
			pfmon_err("%s: more events than %d event sets hold (each would count 1/%d of the time)",
				  evs[i].spec, PFMON_MAX_SETS, PFMON_MAX_SETS);
			return -1;
		}
		if (!place(pmu, evs, i, set)) {
			pfmon_err("%s: PMU '%s' has no general-purpose counter (name a PMC: pmcN=VALUE)",
				  evs[i].spec, pmu->info.pmu_name);
			return -1;
		}
	}
	return set + 1;
}

/* libpfm4's events of the PMUs it found here, for list. */
void pfmon_list_libpfm(bool verbose)
{
	pfm_event_info_t ev;
	pfm_pmu_info_t info;
	int p, i, shown = 0;

	libpfm_init();
	if (!libpfm_ready)
		return;
	pfm_for_all_pmus(p) {
		if (!libpfm_core_pmu(p))
			continue;
		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		pfm_get_pmu_info(p, &info);
		printf("\nlibpfm4 events of %s (%s):\n", info.name, info.desc);
		for (i = info.first_event; i != -1; i = pfm_get_event_next(i)) {
			memset(&ev, 0, sizeof(ev));
			ev.size = sizeof(ev);
			if (pfm_get_event_info(i, PFM_OS_NONE, &ev) != PFM_SUCCESS)
				continue;
			if (verbose)
				printf("  %-40s 0x%-6" PRIx64 " %s\n", ev.name,
				       ev.code, ev.desc ? ev.desc : "");
			else
				printf("  %s\n", ev.name);
		}
		shown++;
	}
	if (!shown)
		printf("\nlibpfm4 knows no PMU of this CPU%s; the names above and raw codes work.\n",
		       getenv("LIBPFM_FORCE_PMU") ? " (LIBPFM_FORCE_PMU is set)" :
		       " (LIBPFM_FORCE_PMU=<pmu> makes it use one of its tables)");
}
