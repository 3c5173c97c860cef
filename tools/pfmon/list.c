// SPDX-License-Identifier: GPL-2.0
/*
 * pfmon list: the PMU perfmon drives, its registers, and the events that
 * can be named on it.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfmon.h"

static void list_regs(const struct pfmon_pmu *pmu, int kind, int max)
{
	struct pfarg_reg_info ri;
	int i;

	for (i = 0; i < max; i++) {
		memset(&ri, 0, sizeof(ri));
		ri.info_num = i;
		ri.info_kind = kind;
		if (pfm_get_reg_info(&ri, 1) ||
		    (ri.info_flags & PFM_REG_RETFL_NOTAVAIL))
			continue;
		printf("  %s%-3d %-20s", kind == PFM_REG_KIND_PMC ? "pmc" : "pmd",
		       i, ri.info_name);
		if (kind == PFM_REG_KIND_PMD)
			printf(" %s%s", ri.info_type & PFM_REGT_CNTR ? "counter" : "",
			       ri.info_type & PFM_REGT_INTR ? ", interrupts" : "");
		else
			printf(" default 0x%" PRIx64, (uint64_t)ri.info_dfl_val);
		putchar('\n');
	}
}

static void list_counters(const struct pfmon_pmu *pmu)
{
	int i;

	printf("\nCounters the events go on: %d general-purpose", pmu->ngen);
	for (i = 0; i < pmu->ngen; i++)
		printf("%s%d", i ? "," : " (pmd", pmu->gen[i]);
	printf("%s", pmu->ngen ? ")" : "");
	if (pmu->cycle_pmd >= 0)
		printf(", and pmd%d for cycles", pmu->cycle_pmd);
	printf("\n");
}

static void list_events(const struct pfmon_pmu *pmu)
{
	const char *aliases = pfmon_model_aliases(pmu);
	int i;

	if (aliases)
		printf("\nAliases: %s\n", aliases);
	if (!pmu->nevents)
		return;
	printf("\nEvents of the PMU description (/sys/kernel/perfmon/pmu_desc/events):\n");
	for (i = 0; i < pmu->nevents; i++)
		printf("  %-32s r0x%" PRIx64 "\n", pmu->events[i].name,
		       (uint64_t)pmu->events[i].code);
}

int cmd_list(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	struct pfmon_pmu pmu;
	bool verbose = false;
	int c;

	while ((c = getopt_long(argc, argv, "vh", lo, NULL)) != -1) {
		switch (c) {
		case 'v':
			verbose = true;
			break;
		case 'h':
			printf("usage: pfmon list [-v]\n"
			       "  -v  libpfm4's event descriptions too\n");
			return 0;
		default:
			fprintf(stderr, "usage: pfmon list [-v]\n");
			return 2;
		}
	}
	if (pfmon_pmu_open(&pmu))
		return 1;
	printf("PMU: %s, %u-bit counters, %u PMCs, %u PMDs\n",
	       pmu.info.pmu_name, pmu.info.pmu_counter_width,
	       pmu.info.pmu_num_pmcs, pmu.info.pmu_num_pmds);
	printf("\nRegisters:\n");
	list_regs(&pmu, PFM_REG_KIND_PMC, pmu.info.pmu_max_pmc);
	list_regs(&pmu, PFM_REG_KIND_PMD, pmu.info.pmu_max_pmd);
	list_counters(&pmu);
	list_events(&pmu);
	pfmon_list_libpfm(verbose);
	printf("\nRaw: rHEX (an event code, e.g. r0x11), pmcN=VALUE[@pmdM] (a PMC as is).\n"
	       "Modifiers: EV:u user only, EV:k kernel only (PMUs that filter).\n");
	pfmon_pmu_close(&pmu);
	return 0;
}
