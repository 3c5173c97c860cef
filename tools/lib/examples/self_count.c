// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * self_count: count the task-clock of this thread with the software PMU
 * ("soft"), perfmon2 style.
 *
 *   gcc self_count.c $(pkg-config --cflags --libs libperfmon)
 *
 * Exits 0 and prints "task-clock: N ns" when the counter counted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <perfmon/perfmon.h>

#define SOFT_EVT_TASK_CLOCK	0x1	/* PMC bits 7:0: the event */
#define BUSY_NS			200000000ULL

/* Report a failed call perror-style and exit 1. */
static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* Nanoseconds of CPU time this thread has used. */
static unsigned long long cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		die("clock_gettime");
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * Spin for about BUSY_NS of CPU time.  Reading the thread's CPU clock is a
 * system call, so the compiler cannot remove the loop.
 */
static void busy(void)
{
	unsigned long long end = cpu_ns() + BUSY_NS;

	while (cpu_ns() < end)
		continue;
}

int main(void)
{
	pfarg_ctx_t ctx;
	pfarg_pmc_t pc[1];
	pfarg_pmd_t pd[1];
	pfarg_load_t load;
	int fd;

	memset(&ctx, 0, sizeof(ctx));
	memset(pc, 0, sizeof(pc));
	memset(pd, 0, sizeof(pd));
	memset(&load, 0, sizeof(load));

	fd = pfm_create_context(&ctx, NULL, NULL, 0);
	if (fd < 0)
		die("pfm_create_context");

	pc[0].reg_num = 0;
	pc[0].reg_value = SOFT_EVT_TASK_CLOCK;
	if (pfm_write_pmcs(fd, pc, 1))
		die("pfm_write_pmcs");

	pd[0].reg_num = 0;
	pd[0].reg_value = 0;
	if (pfm_write_pmds(fd, pd, 1))
		die("pfm_write_pmds");

	load.load_pid = getpid();
	if (pfm_load_context(fd, &load))
		die("pfm_load_context");

	if (pfm_start(fd, NULL))
		die("pfm_start");
	busy();
	if (pfm_stop(fd))
		die("pfm_stop");

	if (pfm_read_pmds(fd, pd, 1))
		die("pfm_read_pmds");
	printf("task-clock: %llu ns\n", (unsigned long long)pd[0].reg_value);
	close(fd);

	if (!pd[0].reg_value) {
		fprintf(stderr, "self_count: task-clock did not count\n");
		return 1;
	}
	return 0;
}
