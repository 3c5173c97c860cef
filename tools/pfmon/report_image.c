// SPDX-License-Identifier: GPL-2.0
/*
 * The processes of a recording, as pfmon report counts their samples:
 * an image is what a pid runs from one exec to the next, with the
 * command name and the mappings the file gives it (pfmon_data.h).
 * Mappings may come after the samples that fall in them, so a sample is
 * counted with its image's epoch, the number of maps it had then, and
 * resolved at the end against the maps of that epoch.
 *
 * The report's strings live here too, one copy of each, so that the
 * tables compare them as pointers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pfmon.h"
#include "datafile.h"
#include "symbols.h"
#include "report_image.h"

/* The number of a map that no later map replaced. */
#define NOT_REPLACED	UINT32_MAX

/**
 * struct map - a mapping of an image
 * @replaced_by: number of the first later map of the image overlapping
 *               it, or NOT_REPLACED
 * @dso: its file, looked up at its first sample
 */
struct map {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	const char *path;
	uint32_t replaced_by;
	struct dso *dso;
};

/**
 * struct image - what a process runs, from an exec to the next
 * @prev: the image before the last exec of the pid, or NULL
 * @comm: its command, NULL while no COMM record named it
 * @comm_main: @comm is the main thread's
 * @maps: every map of the image in file order; a map's number is its
 *        index, and a sample's epoch is how many came before it
 */
struct image {
	struct image *prev;
	uint32_t pid;
	bool comm_main;
	const char *comm;
	struct map *maps;
	uint32_t nr_maps;
	uint32_t cap_maps;
};

/**
 * struct images - the images of a recording, and the report's strings
 * @syms: symbol lookup, the caller's
 * @kernel_hidden: the recorder saw kernel IPs as 0 (PFMON_F_KERNEL_HIDDEN)
 * @images: the current image of each pid (open addressing, a power of
 *          2 slots), each with the pid's earlier ones behind it
 * @last_image: the one found last, likely the next asked for
 * @strs: the strings (open addressing, a power of 2 slots)
 */
struct images {
	struct symbols *syms;
	bool kernel_hidden;
	struct image **images;
	size_t nr_images, cap_images;
	struct image *last_image;
	char **strs;
	size_t nr_strs, cap_strs;
};

static void strs_insert(char **strs, size_t cap, char *s)
{
	size_t i = hash_str(s) & (cap - 1);

	while (strs[i])
		i = (i + 1) & (cap - 1);
	strs[i] = s;
}

/**
 * images_intern() - the report's copy of a string
 * @ims: the images, whose strings it joins
 * @s: the string, not necessarily NUL-terminated
 * @len: its bytes
 *
 * Return: one copy of each string, made printable, so that keys compare
 * as pointers; freed with @ims.
 */
const char *images_intern(struct images *ims, const char *s, size_t len)
{
	char *copy = pfmon_xrealloc(NULL, len + 1, 1), **old;
	size_t i, cap;

	memcpy(copy, s, len);
	copy[len] = '\0';
	pfmon_sanitize(copy);
	if (ims->cap_strs) {
		i = hash_str(copy) & (ims->cap_strs - 1);
		for (; ims->strs[i]; i = (i + 1) & (ims->cap_strs - 1)) {
			if (!strcmp(ims->strs[i], copy)) {
				free(copy);
				return ims->strs[i];
			}
		}
	}
	if (2 * (ims->nr_strs + 1) > ims->cap_strs) {
		old = ims->strs;
		cap = ims->cap_strs;
		ims->cap_strs = cap ? 2 * cap : 256;
		ims->strs = pfmon_xcalloc(ims->cap_strs, sizeof(*ims->strs));
		for (i = 0; i < cap; i++)
			if (old[i])
				strs_insert(ims->strs, ims->cap_strs, old[i]);
		free(old);
	}
	strs_insert(ims->strs, ims->cap_strs, copy);
	ims->nr_strs++;
	return copy;
}

static void images_insert(struct image **images, size_t cap,
			  struct image *img)
{
	size_t i = hash64(img->pid) & (cap - 1);

	while (images[i] && images[i]->pid != img->pid)
		i = (i + 1) & (cap - 1);
	images[i] = img;
}

static struct image *image_find(struct images *ims, uint32_t pid)
{
	size_t i;

	if (ims->last_image && ims->last_image->pid == pid)
		return ims->last_image;
	if (!ims->cap_images)
		return NULL;
	i = hash64(pid) & (ims->cap_images - 1);
	for (; ims->images[i]; i = (i + 1) & (ims->cap_images - 1)) {
		if (ims->images[i]->pid == pid) {
			ims->last_image = ims->images[i];
			return ims->last_image;
		}
	}
	return NULL;
}

/* A new image of @pid, after @prev, becomes its current one. */
static struct image *image_new(struct images *ims, uint32_t pid,
			       struct image *prev)
{
	struct image *img, **old;
	size_t i, cap;

	if (!prev && 2 * (ims->nr_images + 1) > ims->cap_images) {
		old = ims->images;
		cap = ims->cap_images;
		ims->cap_images = cap ? 2 * cap : 64;
		ims->images = pfmon_xcalloc(ims->cap_images,
					    sizeof(*ims->images));
		for (i = 0; i < cap; i++)
			if (old[i])
				images_insert(ims->images, ims->cap_images,
					      old[i]);
		free(old);
	}
	img = pfmon_xcalloc(1, sizeof(*img));
	img->pid = pid;
	img->prev = prev;
	images_insert(ims->images, ims->cap_images, img);
	if (!prev)
		ims->nr_images++;
	ims->last_image = img;
	return img;
}

/**
 * image_get() - the current image of a pid
 * @ims: the images
 * @pid: the pid; one first seen starts an image
 *
 * Return: the image its samples, names and maps now belong to.
 */
struct image *image_get(struct images *ims, uint32_t pid)
{
	struct image *img = image_find(ims, pid);

	return img ? img : image_new(ims, pid, NULL);
}

/**
 * image_exec() - a pid exec'd
 * @ims: the images
 * @pid: the pid, whose samples, names and maps that follow are a new
 *       image's
 */
void image_exec(struct images *ims, uint32_t pid)
{
	image_new(ims, pid, image_find(ims, pid));
}

/**
 * image_name() - a command name of a thread of a pid's current image
 * @ims: the images
 * @c: the COMM record
 * @len: bytes of @c->comm
 *
 * The main thread names its image; another thread only until then.
 */
void image_name(struct images *ims, const struct pfmon_rec_comm *c,
		size_t len)
{
	struct image *img = image_get(ims, c->pid);
	bool main_thread = c->pid == c->tid;

	if (img->comm_main && !main_thread)
		return;
	img->comm = images_intern(ims, c->comm, len);
	img->comm_main = main_thread;
}

/* A map replaces every earlier one of the image it overlaps. */
static void map_add(struct image *img, const struct map *m)
{
	struct map *old;
	uint32_t i;

	if (img->nr_maps == NOT_REPLACED)
		return;
	for (i = 0; i < img->nr_maps; i++) {
		old = &img->maps[i];
		if (old->replaced_by == NOT_REPLACED &&
		    old->start < m->end && m->start < old->end)
			old->replaced_by = img->nr_maps;
	}
	if (img->nr_maps == img->cap_maps) {
		img->cap_maps = img->cap_maps ? 2 * img->cap_maps : 16;
		img->maps = pfmon_xrealloc(img->maps, img->cap_maps,
					   sizeof(*img->maps));
	}
	img->maps[img->nr_maps] = *m;
	img->maps[img->nr_maps].replaced_by = NOT_REPLACED;
	img->nr_maps++;
}

/**
 * image_map() - a mapping of a pid's current image
 * @ims: the images
 * @m: the MMAP record, not empty
 * @path: its file
 * @len: bytes of @path
 */
void image_map(struct images *ims, const struct pfmon_rec_mmap *m,
	       const char *path, size_t len)
{
	struct map map = {
		.start = m->start,
		.end = m->end,
		.pgoff = m->pgoff,
	};

	map.path = images_intern(ims, path, len);
	map_add(image_get(ims, m->pid), &map);
}

/**
 * image_epoch() - where an image is in its mappings
 * @img: the image
 *
 * Return: how many maps it has had so far, what a sample taken now is
 * to be resolved with.
 */
uint32_t image_epoch(const struct image *img)
{
	return img->nr_maps;
}

/*
 * The map of a sample at @ip after the image's first @epoch maps: the
 * one current then, else the first that came later (read at exit).
 */
static struct map *map_find(struct image *img, uint32_t epoch, uint64_t ip)
{
	struct map *m;
	uint32_t i;

	for (i = 0; i < img->nr_maps; i++) {
		m = &img->maps[i];
		if (ip < m->start || ip >= m->end)
			continue;
		if (i >= epoch || m->replaced_by >= epoch)
			return m;
	}
	return NULL;
}

/**
 * image_mapping() - the mapping an IP of an image falls in
 * @img: the image
 * @epoch: the image_epoch() of the sample
 * @ip: the IP
 * @info: set to the mapping's range, file offset and path
 *
 * Return: true, or false where no mapping of @img covers @ip.
 */
bool image_mapping(struct image *img, uint32_t epoch, uint64_t ip,
		   struct image_map_info *info)
{
	struct map *m = map_find(img, epoch, ip);

	if (!m)
		return false;
	*info = (struct image_map_info){ m->start, m->end, m->pgoff, m->path };
	return true;
}

/**
 * image_comm() - the command of an image
 * @ims: the images
 * @img: the image
 *
 * Return: its name; for one no COMM record named, that of another
 * image of its pid, the latest; else "swapper" for pid 0, ":PID".
 */
const char *image_comm(struct images *ims, struct image *img)
{
	struct image *other;
	char buf[16];

	if (img->comm)
		return img->comm;
	for (other = image_find(ims, img->pid); other; other = other->prev)
		if (other->comm)
			return other->comm;
	if (!img->pid)
		return "swapper";
	snprintf(buf, sizeof(buf), ":%u", img->pid);
	return images_intern(ims, buf, strlen(buf));
}

/**
 * image_resolve() - the object and symbol of an IP of an image
 * @ims: the images
 * @img: the image
 * @epoch: the image_epoch() of the sample
 * @ip: the IP
 * @obj: set to the object's name
 * @sym: set to the symbol's, or SYM_UNKNOWN
 */
void image_resolve(struct images *ims, struct image *img, uint32_t epoch,
		   uint64_t ip, const char **obj, const char **sym)
{
	struct map *m = map_find(img, epoch, ip);

	*obj = SYM_UNKNOWN;
	*sym = SYM_UNKNOWN;
	if (!ip) {
		if (ims->kernel_hidden) {
			*obj = OBJ_KERNEL;
			*sym = SYM_HIDDEN;
		}
	} else if (m) {
		if (!m->dso)
			m->dso = symbols_dso(ims->syms, m->path);
		*obj = dso_name(m->dso);
		*sym = dso_symbol(m->dso, ip, m->start, m->pgoff);
	} else if (symbols_is_kernel(ims->syms, ip)) {
		symbols_kernel(ims->syms, ip, obj, sym);
	}
}

/**
 * images_new() - no images yet
 * @syms: symbol lookup, kept until images_free()
 * @kernel_hidden: the recording's PFMON_F_KERNEL_HIDDEN
 *
 * Return: the images, which images_free() frees.
 */
struct images *images_new(struct symbols *syms, bool kernel_hidden)
{
	struct images *ims = pfmon_xcalloc(1, sizeof(*ims));

	ims->syms = syms;
	ims->kernel_hidden = kernel_hidden;
	return ims;
}

/**
 * images_free() - free the images and the strings
 * @ims: the images, or NULL
 */
void images_free(struct images *ims)
{
	struct image *img, *prev;
	size_t i;

	if (!ims)
		return;
	for (i = 0; i < ims->cap_images; i++) {
		for (img = ims->images[i]; img; img = prev) {
			prev = img->prev;
			free(img->maps);
			free(img);
		}
	}
	free(ims->images);
	for (i = 0; i < ims->cap_strs; i++)
		free(ims->strs[i]);
	free(ims->strs);
	free(ims);
}
