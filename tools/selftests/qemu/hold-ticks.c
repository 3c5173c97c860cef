// SPDX-License-Identifier: GPL-2.0
/*
 * hold-ticks PIDFILE STOP_MS,PERIOD_MS: hold the main thread of the QEMU
 * process PIDFILE names for STOP_MS at a time, with a random 1..PERIOD_MS
 * between holds, until it exits; vm --hold-ticks.
 *
 * With -accel tcg,thread=single the main thread runs QEMU's timers and
 * one other thread runs the vCPUs.  Held, the guest's timer interrupts
 * (its ticks) come late while its code runs on: what a host that starves
 * QEMU's main loop does.  On x86 without a stable TSC (QEMU's), the
 * kernel's local_clock() then stands still at its last tick's time plus
 * one tick until the late tick comes, and jumps.  hold-off stops the
 * whole process instead: guest time runs on, but nothing in the guest
 * sees its clocks stop.
 *
 * A thread, not the process: ptrace (PTRACE_SEIZE, PTRACE_INTERRUPT)
 * stops one thread; SIGSTOP would stop them all.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The PID in @path, once QEMU has written it (10 s at most), or 0. */
static pid_t read_pid(const char *path)
{
	long pid = 0;
	FILE *f;
	int i;

	for (i = 0; i < 100 && pid <= 0; i++) {
		f = fopen(path, "r");
		if (f) {
			if (fscanf(f, "%ld", &pid) != 1)
				pid = 0;
			fclose(f);
		}
		if (pid <= 0)
			sleep_ms(100);
	}
	return pid > 0 ? pid : 0;
}

/*
 * Stop @pid's thread and wait for the stop we asked for (a
 * PTRACE_EVENT_STOP with SIGTRAP): false when the thread is gone, or
 * when a stop signal stopped QEMU (a group-stop: its other threads
 * stay stopped, and ours would run on alone).
 */
static bool hold(pid_t pid)
{
	int st;

	if (ptrace(PTRACE_INTERRUPT, pid, 0, 0))
		return false;
	for (;;) {
		if (waitpid(pid, &st, __WALL) < 0)
			return false;
		if (!WIFSTOPPED(st))
			return false;
		if (st >> 16 == PTRACE_EVENT_STOP) {
			if (WSTOPSIG(st) == SIGTRAP)
				return true;
			fprintf(stderr, "hold-ticks: QEMU was stopped by signal %d: giving up\n",
				WSTOPSIG(st));
			return false;
		}
		/* A signal for QEMU arrived first: pass it on, wait again. */
		if (ptrace(PTRACE_CONT, pid, 0, WSTOPSIG(st)))
			return false;
	}
}

int main(int argc, char **argv)
{
	unsigned int stop, period, holds = 0;
	pid_t pid;

	if (argc != 3 || strchr(argv[2], '-') ||
	    sscanf(argv[2], "%u,%u", &stop, &period) != 2 || !period) {
		fprintf(stderr, "hold-ticks: want PIDFILE STOP_MS,PERIOD_MS\n");
		return 2;
	}
	pid = read_pid(argv[1]);
	if (!pid) {
		fprintf(stderr, "hold-ticks: no QEMU PID in %s\n", argv[1]);
		return 1;
	}
	if (ptrace(PTRACE_SEIZE, pid, 0, 0)) {
		fprintf(stderr, "hold-ticks: cannot trace QEMU (%s): run as root, or set kernel.yama.ptrace_scope to 0\n",
			strerror(errno));
		return 1;
	}
	srand(getpid());
	while (hold(pid)) {
		holds++;
		sleep_ms(stop);
		if (ptrace(PTRACE_CONT, pid, 0, 0))
			break;
		sleep_ms(1 + rand() % period);
	}
	fprintf(stderr, "hold-ticks: %u holds of %u ms\n", holds, stop);
	/* A run this tool never held tested nothing it was asked for. */
	return holds ? 0 : 1;
}
