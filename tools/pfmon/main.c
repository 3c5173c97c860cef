// SPDX-License-Identifier: GPL-2.0
/*
 * pfmon: count and profile with perfmon.
 *
 *   pfmon stat    count events of a command, threads, or CPUs
 *   pfmon record  sample them into a file (the ring sampling format)
 *   pfmon report  top symbols of a recording, or its folded stacks
 *   pfmon list    the PMU's registers and the events it knows
 *
 * Documentation/tool.rst says more.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfmon.h"
#include "flame.h"

int pfmon_verbose;

static void vmsg(const char *what, const char *fmt, va_list ap)
{
	fprintf(stderr, "pfmon: %s", what);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void pfmon_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void pfmon_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

/* Allocations the tool cannot go on without: exit 1 when they fail. */
void *pfmon_xrealloc(void *p, size_t nmemb, size_t size)
{
	p = reallocarray(p, nmemb ? nmemb : 1, size);
	if (!p) {
		pfmon_err("out of memory");
		exit(1);
	}
	return p;
}

void *pfmon_xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size);

	if (!p) {
		pfmon_err("out of memory");
		exit(1);
	}
	return p;
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} cmds[] = {
	{ "stat", cmd_stat, "count events of a command, threads or CPUs" },
	{ "record", cmd_record, "sample events into a file" },
	{ "report", cmd_report, "top symbols of a recording; --folded stacks" },
	{ "list", cmd_list, "the PMU's registers and events" },
	{ "flame", cmd_flame, "folded stacks to an SVG flame graph" },
	{ "export", cmd_export, "a recording as a perf.data file" },
};

static int usage(FILE *f, int ret)
{
	size_t i;

	fprintf(f, "usage: pfmon [-v] COMMAND [ARGS]\n\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-8s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "\n'pfmon COMMAND -h' for a command's options.\n");
	return ret;
}

int main(int argc, char **argv)
{
	size_t i;

	while (argc > 1 && !strcmp(argv[1], "-v")) {
		pfmon_verbose++;
		argc--;
		argv++;
	}
	if (argc < 2)
		return usage(stderr, 2);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
		return usage(stdout, 0);
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	pfmon_err("unknown command '%s'", argv[1]);
	return usage(stderr, 2);
}
