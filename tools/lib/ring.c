// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libperfmon extensions: the reader of the "ring" sampling format and
 * the events a PMU description names.
 *
 * The ring's reader protocol is the one of <perfmon/perfmon_ring.h>:
 * load-acquire data_head, read the records up to it, store-release
 * data_tail.  A record that wraps from the end of the data area to its
 * start is copied whole into a bounce buffer, so callbacks always see a
 * contiguous record.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <perfmon/perfmon.h>

#define PFM_SYSFS_EVENTS	"/sys/kernel/perfmon/pmu_desc/events"

/* A record's header fields, at most this big (pfm_ring_rec.size). */
#define PFM_RING_REC_MAX	UINT16_MAX

/* Map the control page alone to learn the data area's size. */
static int pfm_ring_size(int fd, size_t page, uint64_t *size)
{
	struct pfm_ring_ctrl *ctrl;
	int ret = 0;

	ctrl = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);
	if (ctrl == MAP_FAILED)
		return -1;
	if (ctrl->version >> 16 != PFM_RING_VERSION_MAJ ||
	    ctrl->data_offset != page || !ctrl->data_size ||
	    (ctrl->data_size & (ctrl->data_size - 1))) {
		errno = EPROTO;	/* not the ring format, or a newer one */
		ret = -1;
	}
	*size = ctrl->data_size;
	munmap(ctrl, page);
	return ret;
}

/*
 * Map the ring buffer of context fd (created with the "ring" format).
 * Overwrite mode's buffer is mapped read-only, as the kernel requires.
 */
int pfm_ring_map(int fd, struct pfm_ring *ring)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t size;
	int prot = PROT_READ | PROT_WRITE;
	void *p;

	if (!ring) {
		errno = EFAULT;
		return -1;
	}
	memset(ring, 0, sizeof(*ring));
	if (pfm_ring_size(fd, page, &size))
		return -1;
	if (size > SIZE_MAX - page) {
		errno = EOVERFLOW;
		return -1;
	}
	p = mmap(NULL, page + size, prot, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED && errno == EPERM) {
		prot = PROT_READ;	/* overwrite mode */
		p = mmap(NULL, page + size, prot, MAP_SHARED, fd, 0);
	}
	if (p == MAP_FAILED)
		return -1;
	ring->ctrl = p;
	ring->data = (unsigned char *)p + page;
	ring->map_len = page + size;
	ring->data_size = size;
	ring->read_only = prot == PROT_READ;
	return 0;
}

/* Unmap a ring and free its bounce buffer. */
void pfm_ring_unmap(struct pfm_ring *ring)
{
	if (!ring || !ring->ctrl)
		return;
	munmap(ring->ctrl, ring->map_len);
	free(ring->bounce);
	memset(ring, 0, sizeof(*ring));
}

/* The record at free-running offset pos, contiguous (bounced if it wraps). */
static const struct pfm_ring_rec *pfm_ring_rec_at(struct pfm_ring *ring,
						  uint64_t pos, uint64_t avail,
						  uint16_t *size)
{
	uint64_t off = pos & (ring->data_size - 1);
	struct pfm_ring_rec hdr;
	uint64_t first = ring->data_size - off;
	unsigned char *b = (unsigned char *)&hdr;

	/* Even the header may wrap when data_size is tiny: copy it. */
	memcpy(b, ring->data + off, first < sizeof(hdr) ? first : sizeof(hdr));
	if (first < sizeof(hdr))
		memcpy(b + first, ring->data, sizeof(hdr) - first);
	if (hdr.size < sizeof(hdr) || hdr.size % 8 || hdr.size > avail) {
		errno = EPROTO;
		return NULL;
	}
	*size = hdr.size;
	if (off + hdr.size <= ring->data_size)
		return (const struct pfm_ring_rec *)(ring->data + off);
	if (!ring->bounce) {
		ring->bounce = malloc(PFM_RING_REC_MAX);
		if (!ring->bounce)
			return NULL;
	}
	memcpy(ring->bounce, ring->data + off, first);
	memcpy((unsigned char *)ring->bounce + first, ring->data,
	       hdr.size - first);
	return ring->bounce;
}

/*
 * Hand every unread record to fn, oldest first, and release them.  fn
 * returning non-zero stops the walk after that record.  Returns the
 * records handed over, or -1 (EPROTO: a malformed record; what came
 * before it is released).
 *
 * In overwrite mode the kernel owns data_tail: read after the context
 * is stopped; nothing is released.
 */
int pfm_ring_read(struct pfm_ring *ring, pfm_ring_fn fn, void *arg)
{
	const struct pfm_ring_rec *rec;
	uint64_t head, tail;
	int n = 0, stop = 0, ret = 0;
	uint16_t size;

	if (!ring || !ring->ctrl || !fn) {
		errno = EINVAL;
		return -1;
	}
	head = __atomic_load_n(&ring->ctrl->data_head, __ATOMIC_ACQUIRE);
	tail = __atomic_load_n(&ring->ctrl->data_tail, __ATOMIC_ACQUIRE);
	while (tail != head && !stop) {
		rec = pfm_ring_rec_at(ring, tail, head - tail, &size);
		if (!rec) {
			ret = -1;
			break;
		}
		stop = fn(rec, arg);
		tail += size;
		n++;
	}
	if (!ring->read_only)
		__atomic_store_n(&ring->ctrl->data_tail, tail, __ATOMIC_RELEASE);
	return ret ? ret : n;
}

/* Parse one sysfs event file: "0x11". */
static int pfm_read_event(const char *name, struct pfm_event_name *ev)
{
	char path[sizeof(PFM_SYSFS_EVENTS) + PFM_NAME_LEN + 1];
	unsigned long long code;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), PFM_SYSFS_EVENTS "/%s", name);
	f = fopen(path, "re");
	if (!f)
		return -1;
	ok = fscanf(f, "%llx", &code) == 1;
	fclose(f);
	if (!ok) {
		errno = EPROTO;
		return -1;
	}
	memset(ev, 0, sizeof(*ev));
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	ev->code = code;
	return 0;
}

static int pfm_event_cmp(const void *a, const void *b)
{
	const struct pfm_event_name *x = a, *y = b;

	if (x->code != y->code)
		return x->code < y->code ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * The events the registered PMU description names: fills up to count
 * entries of ev (ev may be NULL when count is 0) and returns how many
 * there are, 0 when it names none.  -1 with ENOSYS without perfmon,
 * ENODEV without a PMU description.
 */
int pfm_get_pmu_events(struct pfm_event_name *ev, int count)
{
	struct dirent *de;
	DIR *d;
	int n = 0;

	if (count < 0 || (count && !ev)) {
		errno = EINVAL;
		return -1;
	}
	d = opendir(PFM_SYSFS_EVENTS);
	if (!d) {
		if (errno != ENOENT)
			return -1;
		if (access("/sys/kernel/perfmon", F_OK))
			errno = ENOSYS;
		else if (access("/sys/kernel/perfmon/pmu_desc", F_OK))
			errno = ENODEV;
		else
			return 0;
		return -1;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || strlen(de->d_name) >= PFM_NAME_LEN)
			continue;
		if (n < count && pfm_read_event(de->d_name, &ev[n]))
			continue;	/* gone with the description: skip */
		n++;
	}
	closedir(d);
	if (count)
		qsort(ev, n < count ? n : count, sizeof(*ev), pfm_event_cmp);
	return n;
}
