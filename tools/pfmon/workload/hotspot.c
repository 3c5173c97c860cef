// SPDX-License-Identifier: GPL-2.0
/*
 * hotspot: a workload whose profile is known, for pfmon's demo and
 * tests.  Per round, hot_loop() does 16 times the work of cold_loop()
 * and 4 times that of warm_loop(): about 76%, 19% and 5% of the time.
 *
 *   hotspot [-r ROUNDS] [-t THREADS] [-s USEC] [-l USEC]
 *
 * Each of THREADS threads (1) runs ROUNDS rounds (200), sleeping USEC
 * microseconds (0: not at all) after each: a CPU-bound thread alone on
 * an idle CPU may never be switched out, so a test that needs switches
 * spread over the whole run asks for them.  With -l the threads beyond
 * the first are created that late: a monitor attached to the running
 * process meanwhile must find them (pfmon -p).  Built without optimization
 * of the loops' bodies away: they store to a volatile sink.
 *
 * Its last line gives the CPU time the kernel accounted to the process
 * (all its threads, user and system, from its fork on): the reference a
 * clock counter of the command is checked against.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#define UNIT	100000UL	/* iterations of cold_loop per round */

static volatile unsigned long sink;
static unsigned long rounds = 200;
static unsigned long sleep_us;

/*
 * Called at the end of each loop function: a leaf function gets no
 * frame from GCC even with -fno-omit-frame-pointer, and a call chain
 * sampled in it (pfmon record -g) would miss its caller.
 */
static __attribute__((noinline)) void done(void)
{
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void spin(unsigned long n)
{
	unsigned long i, x = sink;

	for (i = 0; i < n; i++)
		x = x * 2654435761UL + i;
	sink = x;
	done();
}

/* Each is its own function, so each is its own symbol in the report. */
__attribute__((noinline)) void hot_loop(void)
{
	unsigned long i, x = sink;

	for (i = 0; i < 16 * UNIT; i++)
		x = x * 2654435761UL + i;
	sink = x;
	done();
}

__attribute__((noinline)) void warm_loop(void)
{
	unsigned long i, x = sink;

	for (i = 0; i < 4 * UNIT; i++)
		x = x * 2654435761UL + i;
	sink = x;
	done();
}

__attribute__((noinline)) void cold_loop(void)
{
	spin(UNIT);
}

static void *worker(void *arg)
{
	unsigned long r;

	for (r = 0; r < rounds; r++) {
		hot_loop();
		warm_loop();
		cold_loop();
		if (sleep_us)
			usleep(sleep_us);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[64];
	unsigned long late_us = 0;
	int c, i, threads = 1;
	struct rusage ru;

	while ((c = getopt(argc, argv, "r:t:s:l:")) != -1) {
		switch (c) {
		case 'r':
			rounds = strtoul(optarg, NULL, 0);
			break;
		case 't':
			threads = atoi(optarg);
			break;
		case 's':
			sleep_us = strtoul(optarg, NULL, 0);
			break;
		case 'l':
			late_us = strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: hotspot [-r ROUNDS] [-t THREADS] [-s USEC] [-l USEC]\n");
			return 2;
		}
	}
	if (threads < 1 || threads > 64) {
		fprintf(stderr, "hotspot: 1 to 64 threads\n");
		return 2;
	}
	if (late_us)
		usleep(late_us);
	for (i = 1; i < threads; i++)
		if (pthread_create(&th[i], NULL, worker, NULL)) {
			perror("hotspot: pthread_create");
			return 1;
		}
	worker(NULL);
	for (i = 1; i < threads; i++)
		pthread_join(th[i], NULL);
	if (getrusage(RUSAGE_SELF, &ru)) {
		perror("hotspot: getrusage");
		return 1;
	}
	printf("hotspot: %d thread(s), %lu rounds, sink %lu, cpu %lld us\n",
	       threads, rounds, sink,
	       (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000LL +
	       ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
	return 0;
}
