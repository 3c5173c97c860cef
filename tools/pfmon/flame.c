// SPDX-License-Identifier: GPL-2.0
/*
 * Flame graphs: folded stacks ("frame;frame;frame COUNT") drawn as one
 * self-contained SVG file a browser opens from disk.  Each frame is a
 * box as wide as its share of the samples, its callees stacked on it;
 * hovering shows its name, samples and share; clicking zooms on it,
 * "Reset Zoom" goes back.  The script and style are inside the file.
 *
 * Every box is a <g class="f"> with its samples (data-samples), depth
 * (data-d), and place and width as fractions of the whole (data-x,
 * data-w); the bottom box, "all", holds every sample.  Tests and scripts
 * read those attributes.
 *
 *   pfmon report --flame FILE.svg   (a recording's folded stacks)
 *   pfmon flame [-t TITLE] [-o FILE.svg] < FOLDED
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfmon.h"
#include "flame.h"

#define FLAME_WIDTH	1200	/* px */
#define FLAME_PAD	10	/* px left and right */
#define FRAME_H		16	/* px per stack level */
#define TOP_H		36	/* title */
#define BOTTOM_H	24	/* details line */
#define CHAR_W		7	/* px of a 12 px monospace character */

/**
 * struct fnode - a frame of the merged stacks
 * @name: its name
 * @count: samples in it and its callees
 * @child: first callee
 * @next: next callee of the same caller
 */
struct fnode {
	char *name;
	uint64_t count;
	struct fnode *child;
	struct fnode *next;
};

static struct fnode *fnode_new(const char *name, size_t len)
{
	struct fnode *n = pfmon_xcalloc(1, sizeof(*n));

	n->name = pfmon_xcalloc(len + 1, 1);
	memcpy(n->name, name, len);
	return n;
}

/* The callee @name of @parent, added in name order when new. */
static struct fnode *fnode_child(struct fnode *parent, const char *name,
				 size_t len)
{
	struct fnode **p = &parent->child, *n;
	int c;

	for (; *p; p = &(*p)->next) {
		c = strncmp((*p)->name, name, len);
		if (!c && !(*p)->name[len])
			return *p;
		if (c > 0 || (!c && (*p)->name[len]))
			break;
	}
	n = fnode_new(name, len);
	n->next = *p;
	*p = n;
	return n;
}

static void fnode_free(struct fnode *n)
{
	struct fnode *next;

	for (; n; n = next) {
		next = n->next;
		fnode_free(n->child);
		free(n->name);
		free(n);
	}
}

/* Add @count samples of stack @stack ("a;b;c") under @root. */
static void flame_add(struct fnode *root, const char *stack, uint64_t count)
{
	struct fnode *n = root;
	const char *end;

	root->count += count;
	while (*stack) {
		end = strchrnul(stack, ';');
		if (end > stack) {
			n = fnode_child(n, stack, end - stack);
			n->count += count;
		}
		stack = *end ? end + 1 : end;
	}
}

static unsigned int flame_depth(const struct fnode *n)
{
	unsigned int d, max = 0;

	for (n = n->child; n; n = n->next) {
		d = flame_depth(n);
		if (d > max)
			max = d;
	}
	return max + 1;
}

/*
 * XML text: the five characters XML reserves escaped, control
 * characters and bytes past ASCII (symbol names are ASCII; a broken
 * UTF-8 sequence would make the whole file unreadable) as '?'.
 */
static void xml_escape(FILE *f, const char *s, size_t max)
{
	for (; *s && max; s++, max--) {
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&apos;", f);
			break;
		default:
			fputc((unsigned char)*s < 0x20 ||
			      (unsigned char)*s > 0x7e ? '?' : *s, f);
		}
	}
}

/* flamegraph.pl's warm palette, the same color for the same name. */
static void frame_color(const char *name, unsigned int *r, unsigned int *g,
			unsigned int *b)
{
	uint32_t h = 2166136261u;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	*r = 205 + h % 51;
	*g = (h >> 8) % 231;
	*b = (h >> 16) % 56;
}

struct flame_out {
	FILE *f;
	uint64_t total;
	unsigned int height;
};

static void frame_write(const struct flame_out *o, const struct fnode *n,
			unsigned int depth, uint64_t x0)
{
	double fx = (double)x0 / o->total, fw = (double)n->count / o->total;
	double px = FLAME_PAD + fx * (FLAME_WIDTH - 2 * FLAME_PAD);
	double pw = fw * (FLAME_WIDTH - 2 * FLAME_PAD);
	unsigned int y = o->height - BOTTOM_H - (depth + 1) * FRAME_H;
	unsigned int r, g, b;
	int fit = (int)((pw - 6) / CHAR_W);

	frame_color(n->name, &r, &g, &b);
	fprintf(o->f, "<g class=\"f\" data-x=\"%.9f\" data-w=\"%.9f\" data-d=\"%u\" data-samples=\"%" PRIu64 "\" data-n=\"",
		fx, fw, depth, n->count);
	xml_escape(o->f, n->name, SIZE_MAX);
	fprintf(o->f, "\"><title>");
	xml_escape(o->f, n->name, SIZE_MAX);
	fprintf(o->f, " (%" PRIu64 " samples, %.2f%%)</title>", n->count,
		100.0 * fw);
	fprintf(o->f, "<rect x=\"%.1f\" y=\"%u\" width=\"%.1f\" height=\"%u\" fill=\"rgb(%u,%u,%u)\" rx=\"2\"/>",
		px, y, pw, FRAME_H - 1, r, g, b);
	fprintf(o->f, "<text x=\"%.1f\" y=\"%u\">", px + 3, y + FRAME_H - 4);
	if (fit >= 3) {
		if (strlen(n->name) <= (size_t)fit) {
			xml_escape(o->f, n->name, SIZE_MAX);
		} else {
			xml_escape(o->f, n->name, fit - 2);
			fputs("..", o->f);
		}
	}
	fprintf(o->f, "</text></g>\n");
}

static void frames_write(const struct flame_out *o, const struct fnode *n,
			 unsigned int depth, uint64_t x0)
{
	const struct fnode *c;

	frame_write(o, n, depth, x0);
	for (c = n->child; c; c = c->next) {
		frames_write(o, c, depth + 1, x0);
		x0 += c->count;
	}
}

/*
 * Hover shows a frame in the details line; click zooms on it.  W and P
 * are FLAME_WIDTH and FLAME_PAD.
 */
static const char flame_script[] =
"var frames, details, unz, W = 1200, P = 10;\n"
"function init(e) {\n"
"  frames = document.getElementById('frames').getElementsByTagName('g');\n"
"  details = document.getElementById('details');\n"
"  unz = document.getElementById('unzoom');\n"
"}\n"
"function s(g) { details.textContent = g.getElementsByTagName('title')[0].textContent; }\n"
"function c() { details.textContent = ' '; }\n"
"function place(g, x, w) {\n"
"  var r = g.getElementsByTagName('rect')[0], t = g.getElementsByTagName('text')[0];\n"
"  var px = P + x * (W - 2 * P), pw = w * (W - 2 * P), n = g.getAttribute('data-n');\n"
"  var fit = Math.floor((pw - 6) / 7);\n"
"  r.setAttribute('x', px); r.setAttribute('width', pw); t.setAttribute('x', px + 3);\n"
"  t.textContent = fit < 3 ? '' : n.length <= fit ? n : n.substring(0, fit - 2) + '..';\n"
"  g.style.display = '';\n"
"}\n"
"function attr(g, a) { return +g.getAttribute(a); }\n"
"function zoom(z) {\n"
"  var zx = attr(z, 'data-x'), zw = attr(z, 'data-w'), zd = attr(z, 'data-d'), e = 1e-9;\n"
"  for (var i = 0; i < frames.length; i++) {\n"
"    var g = frames[i], x = attr(g, 'data-x'), w = attr(g, 'data-w'), d = attr(g, 'data-d');\n"
"    if (d < zd && x <= zx + e && x + w >= zx + zw - e) place(g, 0, 1);\n"
"    else if (d >= zd && x >= zx - e && x + w <= zx + zw + e) place(g, (x - zx) / zw, w / zw);\n"
"    else g.style.display = 'none';\n"
"  }\n"
"  unz.style.opacity = 1;\n"
"}\n"
"function unzoom() {\n"
"  for (var i = 0; i < frames.length; i++)\n"
"    place(frames[i], attr(frames[i], 'data-x'), attr(frames[i], 'data-w'));\n"
"  unz.style.opacity = 0;\n"
"}\n";

static void flame_head(const struct flame_out *o, const char *title)
{
	FILE *f = o->f;

	fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n");
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" onload=\"init(evt)\">\n",
		FLAME_WIDTH, o->height, FLAME_WIDTH, o->height);
	fprintf(f, "<style>text { font: 12px monospace; fill: #000; } .f text { pointer-events: none; } .f:hover rect { stroke: #000; stroke-width: 0.5; } .f { cursor: pointer; }</style>\n");
	fprintf(f, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n",
		flame_script);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"#fdf6e3\"/>\n",
		FLAME_WIDTH, o->height);
	fprintf(f, "<text x=\"%u\" y=\"24\" text-anchor=\"middle\" style=\"font-size: 17px\">",
		FLAME_WIDTH / 2);
	xml_escape(f, title, SIZE_MAX);
	fprintf(f, "</text>\n<text id=\"unzoom\" x=\"%u\" y=\"24\" onclick=\"unzoom()\" style=\"opacity: 0; cursor: pointer\">Reset Zoom</text>\n",
		FLAME_PAD);
	fprintf(f, "<text id=\"details\" x=\"%u\" y=\"%u\"> </text>\n", FLAME_PAD,
		o->height - 8);
}

/**
 * flame_write() - draw folded stacks as an SVG flame graph
 * @f: where to write it
 * @title: its title
 * @stacks: the stacks, "frame;frame;frame", outermost first
 * @counts: the samples of each
 * @n: entries of @stacks and @counts
 *
 * Return: 0, or -1 (errno set) when writing failed.
 */
int flame_write(FILE *f, const char *title, const char *const *stacks,
		const uint64_t *counts, size_t n)
{
	struct fnode *root = fnode_new("all", 3);
	struct flame_out o = { .f = f };
	size_t i;

	for (i = 0; i < n; i++)
		flame_add(root, stacks[i], counts[i]);
	o.total = root->count ? root->count : 1;
	o.height = TOP_H + BOTTOM_H + flame_depth(root) * FRAME_H;
	flame_head(&o, title);
	fprintf(f, "<g id=\"frames\">\n");
	frames_write(&o, root, 0, 0);
	fprintf(f, "</g>\n</svg>\n");
	fnode_free(root);
	return fflush(f) || ferror(f) ? -1 : 0;
}

/* One "stack count" line of @line into @stack and @count; false if not. */
static bool folded_parse(char *line, char **stack, uint64_t *count)
{
	char *sp, *end;

	line[strcspn(line, "\n")] = '\0';
	sp = strrchr(line, ' ');
	if (!sp || sp == line)
		return false;
	errno = 0;
	*count = strtoull(sp + 1, &end, 10);
	if (errno || end == sp + 1 || *end)
		return false;
	*sp = '\0';
	*stack = line;
	return true;
}

static int flame_usage(FILE *f, int ret)
{
	fprintf(f,
		"usage: pfmon flame [-t TITLE] [-o FILE.svg] < FOLDED\n"
		"  Folded stacks (\"a;b;c COUNT\" lines: pfmon report --folded,\n"
		"  stackcollapse-perf.pl) to an SVG flame graph (stdout).\n");
	return ret;
}

int cmd_flame(int argc, char **argv)
{
	const char *title = "Flame Graph", *out = NULL;
	char **stacks = NULL, *line = NULL, *stack;
	uint64_t *counts = NULL, count;
	size_t n = 0, cap = 0, len = 0, lineno = 0;
	FILE *f = stdout;
	int c, ret = 1;

	while ((c = getopt(argc, argv, "t:o:h")) != -1) {
		if (c == 't')
			title = optarg;
		else if (c == 'o')
			out = optarg;
		else
			return flame_usage(c == 'h' ? stdout : stderr, c == 'h' ? 0 : 2);
	}
	while (getline(&line, &len, stdin) > 0) {
		lineno++;
		if (line[strspn(line, " \t\r\n")] == '\0')
			continue;	/* blank */
		if (!folded_parse(line, &stack, &count)) {
			pfmon_err("line %zu: not \"stack count\"", lineno);
			goto out;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			stacks = pfmon_xrealloc(stacks, cap, sizeof(*stacks));
			counts = pfmon_xrealloc(counts, cap, sizeof(*counts));
		}
		stacks[n] = pfmon_xcalloc(strlen(stack) + 1, 1);
		strcpy(stacks[n], stack);
		counts[n++] = count;
	}
	if (out)
		f = fopen(out, "w");
	if (!f) {
		pfmon_err("%s: %s", out, strerror(errno));
		goto out;
	}
	ret = flame_write(f, title, (const char *const *)stacks, counts, n);
	if (ret)
		pfmon_err("writing the flame graph: %s", strerror(errno));
	if (out && fclose(f) && !ret) {
		pfmon_err("%s: %s", out, strerror(errno));
		ret = 1;
	}
	ret = ret ? 1 : 0;
out:
	while (n)
		free(stacks[--n]);
	free(stacks);
	free(counts);
	free(line);
	return ret;
}
