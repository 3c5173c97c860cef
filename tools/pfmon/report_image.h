/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The processes of a recording, for pfmon report's counting
 * (report_image.c): each pid's images, exec to exec, with their command
 * names and mappings, and the object and symbol of an IP of one; and
 * the report's strings, one copy of each.
 */
#ifndef PFMON_REPORT_IMAGE_H
#define PFMON_REPORT_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pfmon_data.h"

struct images;
struct image;
struct symbols;

/* A 64-bit mix for the report's hash tables. */
static inline uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

/* FNV-1a of a string, for the tables of strings (report, pprof). */
static inline uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h;
}

/* A mapping of an image, as image_mapping() finds it. */
struct image_map_info {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	const char *path;
};

struct images *images_new(struct symbols *syms, bool kernel_hidden);
void images_free(struct images *ims);
const char *images_intern(struct images *ims, const char *s, size_t len);
struct image *image_get(struct images *ims, uint32_t pid);
void image_exec(struct images *ims, uint32_t pid);
void image_name(struct images *ims, const struct pfmon_rec_comm *c,
		size_t len);
void image_map(struct images *ims, const struct pfmon_rec_mmap *m,
	       const char *path, size_t len);
uint32_t image_epoch(const struct image *img);
const char *image_comm(struct images *ims, struct image *img);
void image_resolve(struct images *ims, struct image *img, uint32_t epoch,
		   uint64_t ip, const char **obj, const char **sym);
bool image_mapping(struct image *img, uint32_t epoch, uint64_t ip,
		   struct image_map_info *info);

#endif /* PFMON_REPORT_IMAGE_H */
