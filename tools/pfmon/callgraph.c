// SPDX-License-Identifier: GPL-2.0
/*
 * A call graph from folded stacks ("comm;outer;...;inner COUNT"): each
 * function with the share of the counts spent in it (self) and in it or
 * what it calls (total), then who calls it and what it calls, each
 * with the share through that call.  Shares are of all the counts, as
 * perf report's "children" view gives them; pfmon report's counts are
 * the samples' periods.  A function recursing counts once per stack in
 * its total and per call edge.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfmon.h"
#include "callgraph.h"

/* Callers and callees shown per function, the rest summed. */
#define CG_MAX_EDGES	8

struct cg_sym {
	char *name;
	uint64_t self, total;
	size_t stamp;		/* the last stack that counted it, + 1 */
};

struct cg_edge {
	size_t caller, callee;
	uint64_t count;
	size_t stamp;
};

struct cg {
	struct cg_sym *syms;
	size_t nr_syms, cap_syms;
	size_t *sym_slots;	/* hash table of sym index + 1 */
	size_t nr_sym_slots;
	struct cg_edge *edges;
	size_t nr_edges, cap_edges;
	size_t *edge_slots;	/* hash table of edge index + 1 */
	size_t nr_edge_slots;
};

static uint64_t cg_hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (len--)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h;
}

static uint64_t edge_hash(size_t a, size_t b)
{
	uint64_t h = (uint64_t)a * 0x9e3779b97f4a7c15ULL ^ b;

	return h ^ (h >> 29);
}

static void *grow(void *array, size_t *cap, size_t nr, size_t size)
{
	if (nr < *cap)
		return array;
	*cap = *cap ? 2 * *cap : 64;
	return pfmon_xrealloc(array, *cap, size);
}

/* A table of @n slots (a power of 2) holding index + 1 of @nr items. */
static size_t *slots_new(size_t n)
{
	return pfmon_xcalloc(n, sizeof(size_t));
}

static void sym_rehash(struct cg *g)
{
	size_t i, h, mask;

	free(g->sym_slots);
	g->nr_sym_slots = g->nr_sym_slots ? 2 * g->nr_sym_slots : 256;
	g->sym_slots = slots_new(g->nr_sym_slots);
	mask = g->nr_sym_slots - 1;
	for (i = 0; i < g->nr_syms; i++) {
		h = cg_hash(g->syms[i].name, strlen(g->syms[i].name)) & mask;
		while (g->sym_slots[h])
			h = (h + 1) & mask;
		g->sym_slots[h] = i + 1;
	}
}

/* The index of function @name (@len bytes), added when new. */
static size_t sym_get(struct cg *g, const char *name, size_t len)
{
	size_t h, mask, i;
	struct cg_sym *s;

	if (2 * (g->nr_syms + 1) > g->nr_sym_slots)
		sym_rehash(g);
	mask = g->nr_sym_slots - 1;
	for (h = cg_hash(name, len) & mask; g->sym_slots[h];
	     h = (h + 1) & mask) {
		s = &g->syms[g->sym_slots[h] - 1];
		if (!strncmp(s->name, name, len) && !s->name[len])
			return g->sym_slots[h] - 1;
	}
	g->syms = grow(g->syms, &g->cap_syms, g->nr_syms, sizeof(*g->syms));
	i = g->nr_syms++;
	g->syms[i] = (struct cg_sym){ .name = pfmon_xcalloc(len + 1, 1) };
	memcpy(g->syms[i].name, name, len);
	g->sym_slots[h] = i + 1;
	return i;
}

static void edge_rehash(struct cg *g)
{
	size_t i, h, mask;

	free(g->edge_slots);
	g->nr_edge_slots = g->nr_edge_slots ? 2 * g->nr_edge_slots : 256;
	g->edge_slots = slots_new(g->nr_edge_slots);
	mask = g->nr_edge_slots - 1;
	for (i = 0; i < g->nr_edges; i++) {
		h = edge_hash(g->edges[i].caller, g->edges[i].callee) & mask;
		while (g->edge_slots[h])
			h = (h + 1) & mask;
		g->edge_slots[h] = i + 1;
	}
}

static struct cg_edge *edge_get(struct cg *g, size_t caller, size_t callee)
{
	size_t h, mask, i;
	struct cg_edge *e;

	if (2 * (g->nr_edges + 1) > g->nr_edge_slots)
		edge_rehash(g);
	mask = g->nr_edge_slots - 1;
	for (h = edge_hash(caller, callee) & mask; g->edge_slots[h];
	     h = (h + 1) & mask) {
		e = &g->edges[g->edge_slots[h] - 1];
		if (e->caller == caller && e->callee == callee)
			return e;
	}
	g->edges = grow(g->edges, &g->cap_edges, g->nr_edges,
			sizeof(*g->edges));
	i = g->nr_edges++;
	g->edges[i] = (struct cg_edge){ .caller = caller, .callee = callee };
	g->edge_slots[h] = i + 1;
	return &g->edges[i];
}

/* Stack number @stamp - 1: @stack's frames after the command. */
static void cg_add(struct cg *g, const char *stack, uint64_t count,
		   size_t stamp)
{
	const char *p = strchr(stack, ';'), *end;
	size_t prev = SIZE_MAX, cur = SIZE_MAX;
	struct cg_edge *e;

	while (p && *p == ';') {
		p++;
		end = strchrnul(p, ';');
		cur = sym_get(g, p, end - p);
		if (g->syms[cur].stamp != stamp) {
			g->syms[cur].stamp = stamp;
			g->syms[cur].total += count;
		}
		if (prev != SIZE_MAX) {
			e = edge_get(g, prev, cur);
			if (e->stamp != stamp) {
				e->stamp = stamp;
				e->count += count;
			}
		}
		prev = cur;
		p = end;
	}
	if (cur != SIZE_MAX)
		g->syms[cur].self += count;
}

static int cmp_total(const void *a, const void *b, void *arg)
{
	const struct cg_sym *syms = arg;
	const struct cg_sym *x = &syms[*(const size_t *)a];
	const struct cg_sym *y = &syms[*(const size_t *)b];

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int cmp_edge_count(const void *a, const void *b)
{
	const struct cg_edge *x = *(const struct cg_edge *const *)a;
	const struct cg_edge *y = *(const struct cg_edge *const *)b;

	return x->count > y->count ? -1 : x->count < y->count;
}

static double pct(uint64_t n, uint64_t all)
{
	return all ? 100.0 * n / all : 0.0;
}

/* The callers (@callers) or callees of function @sym, most first. */
static void print_edges(FILE *f, const struct cg *g, size_t sym,
			bool callers, uint64_t all, const struct cg_edge **tmp)
{
	const char *what = callers ? "called by" : "calls";
	uint64_t rest = 0;
	size_t i, n = 0;

	for (i = 0; i < g->nr_edges; i++)
		if ((callers ? g->edges[i].callee : g->edges[i].caller) == sym)
			tmp[n++] = &g->edges[i];
	qsort(tmp, n, sizeof(*tmp), cmp_edge_count);
	for (i = 0; i < n; i++) {
		if (i == CG_MAX_EDGES) {
			rest += tmp[i]->count;
			continue;
		}
		fprintf(f, "%19s %-9s %6.2f%%  %s\n", "", i ? "" : what,
			pct(tmp[i]->count, all),
			g->syms[callers ? tmp[i]->caller : tmp[i]->callee].name);
	}
	if (n > CG_MAX_EDGES)
		fprintf(f, "%19s %-9s %6.2f%%  (%zu more)\n", "", "",
			pct(rest, all), n - CG_MAX_EDGES);
}

/**
 * callgraph_print() - a call graph of folded stacks
 * @f: where to print it
 * @stacks: "comm;outer;...;inner" lines
 * @counts: the weight of each: the events its samples stand for
 * @n: entries of @stacks and @counts
 * @samples: how many samples the stacks hold, for the heading
 * @top: functions shown, most total weight first (0: all)
 *
 * Return: the functions the stacks hold.
 */
size_t callgraph_print(FILE *f, const char *const *stacks,
		       const uint64_t *counts, size_t n, uint64_t samples,
		       size_t top)
{
	const struct cg_edge **tmp;
	struct cg g = { };
	uint64_t all = 0;
	size_t i, *order, nr;

	for (i = 0; i < n; i++) {
		cg_add(&g, stacks[i], counts[i], i + 1);
		all += counts[i];
	}
	order = pfmon_xcalloc(g.nr_syms + 1, sizeof(*order));
	tmp = pfmon_xcalloc(g.nr_edges + 1, sizeof(*tmp));
	for (i = 0; i < g.nr_syms; i++)
		order[i] = i;
	qsort_r(order, g.nr_syms, sizeof(*order), cmp_total, g.syms);
	nr = top && top < g.nr_syms ? top : g.nr_syms;
	fprintf(f, "#   Total     Self  Function (%" PRIu64 " samples, shares of their periods; total: in it and what it calls)\n",
		samples);
	for (i = 0; i < nr; i++) {
		const struct cg_sym *s = &g.syms[order[i]];

		fprintf(f, "%s%7.2f%%  %6.2f%%  %s\n", i ? "\n" : "",
			pct(s->total, all), pct(s->self, all), s->name);
		print_edges(f, &g, order[i], true, all, tmp);
		print_edges(f, &g, order[i], false, all, tmp);
	}
	if (nr < g.nr_syms)
		fprintf(f, "# %zu more functions (-n 0 shows all)\n",
			g.nr_syms - nr);
	for (i = 0; i < g.nr_syms; i++)
		free(g.syms[i].name);
	nr = g.nr_syms;
	free(g.syms);
	free(g.sym_slots);
	free(g.edges);
	free(g.edge_slots);
	free(order);
	free(tmp);
	return nr;
}
