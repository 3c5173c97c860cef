// SPDX-License-Identifier: GPL-2.0
/*
 * pfmon export: a recording as a perf.data file (perf's format,
 * tools/perf/Documentation/perf.data-file-format.txt), so that perf
 * report, perf script and the viewers that read perf.data open it.
 *
 * Each event of the recording is an attribute (PERF_TYPE_RAW, its name
 * in the EVENT_DESC feature); each sample a PERF_RECORD_SAMPLE with its
 * id, IP, pid/tid, time, CPU, period and call chain (the kernel IP,
 * then the user chain, behind perf's context markers); command names
 * and mappings PERF_RECORD_COMM and PERF_RECORD_MMAP, an exec a COMM
 * flagged PERF_RECORD_MISC_COMM_EXEC; lost samples PERF_RECORD_LOST.
 * Every record carries its time (sample_id_all), and the records are
 * written in time order: a mapping and a command name at the start of
 * their image (the recording's start, or the exec), which is where they
 * belong even when the recorder learned them later.  The BUILD_ID
 * feature holds the build ids of the mapped files and of the running
 * kernel, read when exporting: export on the machine that recorded.
 *
 * The kernel's own map is a PERF_RECORD_MMAP of "[kernel.kallsyms]_text"
 * (pid -1, from _text to the end of the address space, _text's address
 * as its offset), as perf writes it: with it, and the recording
 * machine's kernel symbols (its /proc/kallsyms, or perf's --kallsyms
 * elsewhere), perf names the kernel frames.  It is read when exporting
 * too; without the kernel's addresses (kptr_restrict) it is left out,
 * with a warning.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <sys/utsname.h>
#include <linux/perf_event.h>

#include "pfmon.h"
#include "datafile.h"
#include "pprof.h"
#include "symbols.h"

#define DEFAULT_INPUT	"pfmon.data"
#define DEFAULT_OUTPUT	"perf.data"
#define DEFAULT_PPROF	"pfmon.pb.gz"

#define PERF_MAGIC		0x32454c4946524550ULL	/* "PERFILE2" */
#define PERF_NAME_ALIGN		64
#define PERF_BUILD_ID_MAX	20	/* bytes perf keeps of a build id */
#define PERF_MISC_BUILD_ID_SIZE	(1 << 15)	/* id size in the record */

/* Feature bits (perf's enum of header features). */
#define FEAT_BUILD_ID		2
#define FEAT_ARCH		6
#define FEAT_EVENT_DESC		12
#define FEAT_BITS		256

#define SAMPLE_TYPE	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | \
			 PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
			 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | \
			 PERF_SAMPLE_CALLCHAIN)

struct perf_file_section {
	uint64_t offset;
	uint64_t size;
};

struct perf_file_header {
	uint64_t magic;
	uint64_t size;
	uint64_t attr_size;
	struct perf_file_section attrs;
	struct perf_file_section data;
	struct perf_file_section event_types;
	uint64_t features[FEAT_BITS / 64];
};

struct perf_file_attr {
	struct perf_event_attr attr;
	struct perf_file_section ids;
};

/* What sample_id_all appends to a record other than a sample. */
struct id_trailer {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
	uint64_t id;
};

/* A record to write, in time order (@seq: file order among equals). */
struct out_rec {
	uint64_t time;
	uint64_t seq;
	void *buf;
};

/* The image a pid runs: since when, and whether an exec began it. */
struct proc {
	uint32_t pid;
	uint64_t start_ns;
	bool exec;
};

/* A mapped file, for the BUILD_ID feature. */
struct mapped_file {
	char *path;
};

struct export {
	const char *input;
	const char *output;
	struct pfmon_data data;
	uint64_t *periods;	/* by event id */
	uint32_t *freqs;	/* by event id: record -F, else 0 */
	char (*names)[65];	/* by event id */
	struct out_rec *recs;
	size_t nr_recs, cap_recs;
	struct proc *procs;
	size_t nr_procs, cap_procs;
	struct mapped_file *files;
	size_t nr_files, cap_files;
	/* the last sample, which a call chain record may follow */
	struct pfmon_rec_sample last;
	bool last_valid;
	uint64_t samples, chains, bad_event;
};

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static void *grow(void *array, size_t *cap, size_t nr, size_t size)
{
	if (nr < *cap)
		return array;
	*cap = *cap ? 2 * *cap : 64;
	return pfmon_xrealloc(array, *cap, size);
}

/* A perf record of @size bytes (header filled in) to write at @time. */
static void *rec_new(struct export *ex, uint32_t type, uint16_t misc,
		     size_t size, uint64_t time)
{
	struct perf_event_header *h = pfmon_xcalloc(1, size);

	h->type = type;
	h->misc = misc;
	h->size = size;
	ex->recs = grow(ex->recs, &ex->cap_recs, ex->nr_recs,
			sizeof(*ex->recs));
	ex->recs[ex->nr_recs] = (struct out_rec){ time, ex->nr_recs, h };
	ex->nr_recs++;
	return h;
}

static struct proc *proc_get(struct export *ex, uint32_t pid)
{
	size_t i;

	for (i = 0; i < ex->nr_procs; i++)
		if (ex->procs[i].pid == pid)
			return &ex->procs[i];
	ex->procs = grow(ex->procs, &ex->cap_procs, ex->nr_procs,
			 sizeof(*ex->procs));
	ex->procs[i] = (struct proc){ pid, ex->data.hdr.start_ns, false };
	ex->nr_procs++;
	return &ex->procs[i];
}

static void trailer(void *end, uint32_t pid, uint32_t tid, uint64_t time)
{
	struct id_trailer t = { pid, tid, time, 0, 0, 1 };

	memcpy((char *)end - sizeof(t), &t, sizeof(t));
}

static bool is_kernel(uint64_t ip)
{
	return ip >> 63;	/* x86_64 and arm64 alike */
}

/*
 * The pending sample, with @nr frames @ips, if any: the first @nkern
 * the kernel chain (which begins at the sample's IP), then the user
 * chain.  Any record but a call chain ends it: none follows then.
 */
static void sample_flush(struct export *ex, const uint64_t *ips,
			 uint32_t nr, uint32_t nkern)
{
	const struct pfmon_rec_sample *s = &ex->last;
	bool kernel = is_kernel(s->ip);
	uint64_t chain[PFMON_MAX_CHAIN + 4], *p;
	size_t n = 0, size;

	if (!ex->last_valid)
		return;
	ex->last_valid = false;
	if (nkern > nr)
		nkern = 0;
	if (kernel || nkern) {
		chain[n++] = PERF_CONTEXT_KERNEL;
		if (nkern) {
			memcpy(chain + n, ips, nkern * sizeof(uint64_t));
			n += nkern;
			ips += nkern;
			nr -= nkern;
		} else {
			chain[n++] = s->ip;
		}
	}
	if (nr) {
		chain[n++] = PERF_CONTEXT_USER;
		memcpy(chain + n, ips, nr * sizeof(uint64_t));
		n += nr;
	} else if (!kernel) {
		chain[n++] = PERF_CONTEXT_USER;
		chain[n++] = s->ip;
	}
	size = sizeof(struct perf_event_header) + 8 * 7 + 8 * n;
	p = (uint64_t *)((struct perf_event_header *)
			 rec_new(ex, PERF_RECORD_SAMPLE,
				 kernel ? PERF_RECORD_MISC_KERNEL :
					  PERF_RECORD_MISC_USER,
				 size, s->time_ns) + 1);
	*p++ = s->event + 1;			/* IDENTIFIER */
	*p++ = s->ip;
	*p++ = (uint64_t)s->tid << 32 | s->pid;	/* pid, then tid */
	*p++ = s->time_ns;
	*p++ = s->cpu;				/* cpu, then res */
	*p++ = s->period;
	*p++ = n;
	memcpy(p, chain, n * sizeof(uint64_t));
	ex->samples++;
}

static void on_sample(void *arg, const struct pfmon_rec_sample *s)
{
	struct export *ex = arg;

	sample_flush(ex, NULL, 0, 0);
	ex->last = *s;
	ex->last_valid = true;
}

static void on_callchain(void *arg, const struct pfmon_rec_callchain *c,
			 const uint64_t *ips)
{
	struct export *ex = arg;

	if (ex->last_valid)
		ex->chains++;
	sample_flush(ex, ips, c->nr, c->nr_kernel);
}

static void on_event(void *arg, const struct pfmon_rec_event *e,
		     const char *name)
{
	struct export *ex = arg;

	sample_flush(ex, NULL, 0, 0);
	ex->periods[e->id] = e->period;
	ex->freqs[e->id] = e->freq;
	snprintf(ex->names[e->id], sizeof(ex->names[e->id]), "%s", name);
}

struct perf_comm {
	struct perf_event_header h;
	uint32_t pid, tid;
	char comm[];
};

static void on_comm(void *arg, const struct pfmon_rec_comm *c, size_t len)
{
	size_t size = sizeof(struct perf_comm) + align8(len + 1) +
		      sizeof(struct id_trailer);
	struct export *ex = arg;
	struct perf_comm *r;
	struct proc *p;

	sample_flush(ex, NULL, 0, 0);
	p = proc_get(ex, c->pid);
	r = rec_new(ex, PERF_RECORD_COMM,
		    p->exec && c->pid == c->tid ? PERF_RECORD_MISC_COMM_EXEC : 0,
		    size, p->start_ns);
	r->pid = c->pid;
	r->tid = c->tid;
	memcpy(r->comm, c->comm, len);
	trailer((char *)r + size, c->pid, c->tid, p->start_ns);
}

struct perf_mmap {
	struct perf_event_header h;
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	char filename[];
};

static void file_note(struct export *ex, const char *path, size_t len)
{
	size_t i;

	if (path[0] != '/')
		return;		/* [vdso] and such: no file */
	for (i = 0; i < ex->nr_files; i++)
		if (!strncmp(ex->files[i].path, path, len) &&
		    !ex->files[i].path[len])
			return;
	ex->files = grow(ex->files, &ex->cap_files, ex->nr_files,
			 sizeof(*ex->files));
	ex->files[i].path = pfmon_xcalloc(len + 1, 1);
	memcpy(ex->files[i].path, path, len);
	ex->nr_files++;
}

static void on_mmap(void *arg, const struct pfmon_rec_mmap *m,
		    const char *path, size_t len)
{
	size_t size = sizeof(struct perf_mmap) + align8(len + 1) +
		      sizeof(struct id_trailer);
	struct export *ex = arg;
	struct perf_mmap *r;
	struct proc *p;

	sample_flush(ex, NULL, 0, 0);
	p = proc_get(ex, m->pid);
	r = rec_new(ex, PERF_RECORD_MMAP, PERF_RECORD_MISC_USER, size,
		    p->start_ns);
	r->pid = m->pid;
	r->tid = m->pid;
	r->addr = m->start;
	r->len = m->end - m->start;
	r->pgoff = m->pgoff;
	memcpy(r->filename, path, len);
	trailer((char *)r + size, m->pid, m->pid, p->start_ns);
	file_note(ex, path, len);
}

struct perf_lost {
	struct perf_event_header h;
	uint64_t id, lost;
};

/* The kernel's map, first of the records; false without its address. */
static bool kernel_mmap(struct export *ex)
{
	static const char name[] = "[kernel.kallsyms]_text";
	size_t size = sizeof(struct perf_mmap) + align8(sizeof(name)) +
		      sizeof(struct id_trailer);
	uint64_t text = symbols_kernel_text(NULL);
	uint64_t time = ex->data.hdr.start_ns;
	struct perf_mmap *r;

	if (!text)
		return false;
	r = rec_new(ex, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL, size, time);
	r->pid = UINT32_MAX;	/* perf's -1: the host's kernel */
	r->tid = 0;
	r->addr = text;
	r->len = UINT64_MAX - text;
	r->pgoff = text;
	memcpy(r->filename, name, sizeof(name));
	trailer((char *)r + size, UINT32_MAX, 0, time);
	return true;
}

static void on_lost(void *arg, const struct pfmon_rec_lost *l)
{
	size_t size = sizeof(struct perf_lost) + sizeof(struct id_trailer);
	struct export *ex = arg;
	struct perf_lost *r;
	uint64_t time = 0;
	size_t i;

	sample_flush(ex, NULL, 0, 0);
	/* at the latest sample written before it */
	for (i = ex->nr_recs; !time && i; i--)
		time = ex->recs[i - 1].time;
	r = rec_new(ex, PERF_RECORD_LOST, 0, size, time);
	r->id = 1;
	r->lost = l->lost;
	trailer((char *)r + size, 0, 0, time);
}

static void on_exec(void *arg, const struct pfmon_rec_exec *x)
{
	struct export *ex = arg;
	struct proc *p;

	sample_flush(ex, NULL, 0, 0);
	p = proc_get(ex, x->pid);
	p->start_ns = x->time_ns;
	p->exec = true;
}

/*
 * A record pfmon_data_walk() passes over: a sample of an event the
 * header does not have ends the pending one and is left out; a newer
 * recorder's record is not in the way of a call chain.
 */
static void on_skip(void *arg, enum pfmon_skip why,
		    const union pfmon_rec_any *r)
{
	struct export *ex = arg;

	if (why == PFMON_SKIP_NEWER)
		return;
	sample_flush(ex, NULL, 0, 0);
	if (why == PFMON_SKIP_SAMPLE_EVENT)
		ex->bad_event++;
}

static const struct pfmon_data_ops export_ops = {
	.event = on_event,
	.sample = on_sample,
	.callchain = on_callchain,
	.comm = on_comm,
	.mmap = on_mmap,
	.lost = on_lost,
	.exec = on_exec,
	.skip = on_skip,
};

static int out_rec_cmp(const void *a, const void *b)
{
	const struct out_rec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void attr_fill(struct perf_event_attr *a, uint64_t period,
		      uint32_t freq)
{
	memset(a, 0, sizeof(*a));
	a->type = PERF_TYPE_RAW;
	a->size = sizeof(*a);
	a->sample_period = freq ? freq : period;	/* or sample_freq */
	a->freq = !!freq;
	a->sample_type = SAMPLE_TYPE;
	a->sample_id_all = 1;
}

/* perf's string: a u32 length, then the string padded with NULs. */
static int put_string(FILE *f, const char *s)
{
	uint32_t len = (strlen(s) + 1 + PERF_NAME_ALIGN - 1) &
		       ~(PERF_NAME_ALIGN - 1);
	char pad[PERF_NAME_ALIGN] = "";

	return fwrite(&len, 4, 1, f) != 1 ||
	       fwrite(s, strlen(s), 1, f) != !!strlen(s) ||
	       fwrite(pad, len - strlen(s), 1, f) != 1 ? -1 : 0;
}

/* A build id record (perf_record_header_build_id) of @path. */
static int put_build_id(FILE *f, const char *path, uint16_t misc,
			const unsigned char *id, size_t nr)
{
	struct {
		struct perf_event_header h;
		int32_t pid;
		uint8_t id[24];
	} r = { };
	size_t len = (strlen(path) + 1 + PERF_NAME_ALIGN - 1) &
		     ~(size_t)(PERF_NAME_ALIGN - 1);
	char pad[PERF_NAME_ALIGN] = "";

	r.h.misc = misc | PERF_MISC_BUILD_ID_SIZE;
	r.h.size = sizeof(r) + len;
	r.pid = -1;		/* the host machine, as perf record writes */
	memcpy(r.id, id, nr);
	r.id[20] = nr;
	return fwrite(&r, sizeof(r), 1, f) != 1 ||
	       fwrite(path, strlen(path), 1, f) != 1 ||
	       fwrite(pad, len - strlen(path), 1, f) != 1 ? -1 : 0;
}

static size_t align4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

/* The running kernel's build id, from its ELF notes in sysfs. */
static size_t kernel_build_id(unsigned char *id, size_t max)
{
	FILE *f = fopen("/sys/kernel/notes", "r");
	unsigned char buf[4096];
	size_t n, off = 0;
	uint32_t nh[3];		/* name size, desc size, type */

	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	while (off + sizeof(nh) <= n) {
		memcpy(nh, buf + off, sizeof(nh));
		off += sizeof(nh);
		if (nh[0] > n || nh[1] > n ||
		    off + align4(nh[0]) + align4(nh[1]) > n)
			break;
		if (nh[2] == NT_GNU_BUILD_ID && nh[0] == 4 &&
		    !memcmp(buf + off, "GNU", 4) && nh[1] <= max) {
			memcpy(id, buf + off + 4, nh[1]);
			return nh[1];
		}
		off += align4(nh[0]) + align4(nh[1]);
	}
	return 0;
}

static int put_build_ids(struct export *ex, FILE *f)
{
	unsigned char id[64];
	size_t i, nr;

	nr = kernel_build_id(id, sizeof(id));
	if (nr && nr <= PERF_BUILD_ID_MAX &&
	    put_build_id(f, "[kernel.kallsyms]", PERF_RECORD_MISC_KERNEL,
			 id, nr))
		return -1;
	for (i = 0; i < ex->nr_files; i++) {
		nr = symbols_build_id(ex->files[i].path, id, sizeof(id));
		if (!nr || nr > PERF_BUILD_ID_MAX)
			continue;
		if (put_build_id(f, ex->files[i].path, PERF_RECORD_MISC_USER,
				 id, nr))
			return -1;
	}
	return 0;
}

static int put_event_desc(struct export *ex, FILE *f)
{
	uint32_t nr = ex->data.hdr.nr_events, size = sizeof(struct perf_event_attr);
	struct perf_event_attr a;
	uint32_t i, one = 1;
	uint64_t id;

	if (fwrite(&nr, 4, 1, f) != 1 || fwrite(&size, 4, 1, f) != 1)
		return -1;
	for (i = 0; i < nr; i++) {
		attr_fill(&a, ex->periods[i], ex->freqs[i]);
		id = i + 1;
		if (fwrite(&a, sizeof(a), 1, f) != 1 ||
		    fwrite(&one, 4, 1, f) != 1 ||
		    put_string(f, ex->names[i][0] ? ex->names[i] : "pfmon") ||
		    fwrite(&id, 8, 1, f) != 1)
			return -1;
	}
	return 0;
}

static int put_arch(FILE *f)
{
	struct utsname u;

	return uname(&u) ? -1 : put_string(f, u.machine);
}

/*
 * The features after the data: a section (offset, size) for each, in
 * bit order, then their contents.
 */
static int put_features(struct export *ex, FILE *f,
			struct perf_file_header *h)
{
	static const int bits[] = { FEAT_BUILD_ID, FEAT_ARCH, FEAT_EVENT_DESC };
	struct perf_file_section secs[3];
	long at, start;
	size_t i;

	start = ftell(f);
	if (fseek(f, sizeof(secs), SEEK_CUR))
		return -1;
	for (i = 0; i < 3; i++) {
		h->features[bits[i] / 64] |= 1ULL << (bits[i] % 64);
		secs[i].offset = ftell(f);
		if ((bits[i] == FEAT_BUILD_ID && put_build_ids(ex, f)) ||
		    (bits[i] == FEAT_ARCH && put_arch(f)) ||
		    (bits[i] == FEAT_EVENT_DESC && put_event_desc(ex, f)))
			return -1;
		secs[i].size = ftell(f) - secs[i].offset;
	}
	at = ftell(f);
	if (fseek(f, start, SEEK_SET) ||
	    fwrite(secs, sizeof(secs), 1, f) != 1)
		return -1;
	return fseek(f, at, SEEK_SET);
}

/* Attributes and their ids, then the records: the header last. */
static int write_perf_data(struct export *ex, FILE *f)
{
	struct perf_file_header h = {
		.magic = PERF_MAGIC,
		.size = sizeof(h),
		.attr_size = sizeof(struct perf_file_attr),
	};
	uint32_t i, nr = ex->data.hdr.nr_events;
	struct perf_file_attr fa;
	uint64_t id;
	size_t r;

	if (fseek(f, sizeof(h), SEEK_SET))
		return -1;
	for (i = 0; i < nr; i++) {	/* the ids, one per attribute */
		id = i + 1;
		if (fwrite(&id, 8, 1, f) != 1)
			return -1;
	}
	h.attrs.offset = ftell(f);
	for (i = 0; i < nr; i++) {
		attr_fill(&fa.attr, ex->periods[i], ex->freqs[i]);
		fa.ids.offset = sizeof(h) + 8 * i;
		fa.ids.size = 8;
		if (fwrite(&fa, sizeof(fa), 1, f) != 1)
			return -1;
	}
	h.attrs.size = ftell(f) - h.attrs.offset;
	h.data.offset = ftell(f);
	qsort(ex->recs, ex->nr_recs, sizeof(*ex->recs), out_rec_cmp);
	for (r = 0; r < ex->nr_recs; r++) {
		const struct perf_event_header *e = ex->recs[r].buf;

		if (fwrite(e, e->size, 1, f) != 1)
			return -1;
	}
	h.data.size = ftell(f) - h.data.offset;
	if (put_features(ex, f, &h) || fseek(f, 0, SEEK_SET) ||
	    fwrite(&h, sizeof(h), 1, f) != 1)
		return -1;
	return fflush(f) || ferror(f) ? -1 : 0;
}

static void export_free(struct export *ex)
{
	size_t i;

	for (i = 0; i < ex->nr_recs; i++)
		free(ex->recs[i].buf);
	for (i = 0; i < ex->nr_files; i++)
		free(ex->files[i].path);
	free(ex->recs);
	free(ex->procs);
	free(ex->files);
	free(ex->periods);
	free(ex->freqs);
	free(ex->names);
}

static int export_usage(FILE *f, int ret)
{
	fprintf(f,
		"usage: pfmon export [-i FILE] [-o FILE] [--format perf|pprof]\n"
		"  A recording (-i, default " DEFAULT_INPUT ") as a perf.data file\n"
		"  (-o, default " DEFAULT_OUTPUT ") for perf report, perf script and\n"
		"  the viewers that read perf's format; --format pprof: as a gzip'd\n"
		"  pprof profile.proto (-o, default " DEFAULT_PPROF ") for pprof,\n"
		"  Pyroscope and Parca.  Run it where the recording was made: it\n"
		"  reads the build ids of the files mapped.\n");
	return ret;
}

static int export_write(struct export *ex)
{
	FILE *f = fopen(ex->output, "w");
	int ret;

	if (!f) {
		pfmon_err("%s: %s", ex->output, strerror(errno));
		return 1;
	}
	ret = write_perf_data(ex, f);
	if (fclose(f))
		ret = -1;
	if (ret) {
		pfmon_err("%s: %s", ex->output, strerror(errno));
		return 1;
	}
	return 0;
}

int cmd_export(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	struct export ex = {
		.input = DEFAULT_INPUT,
	};
	bool pprof = false;
	int c, ret;

	while ((c = getopt_long(argc, argv, "i:o:f:h", longopts, NULL)) != -1) {
		if (c == 'i') {
			ex.input = optarg;
		} else if (c == 'o') {
			ex.output = optarg;
		} else if (c == 'f' && (!strcmp(optarg, "perf") ||
					!strcmp(optarg, "pprof"))) {
			pprof = !strcmp(optarg, "pprof");
		} else if (c == 'f') {
			pfmon_err("--format %s: perf or pprof", optarg);
			return 2;
		} else {
			return export_usage(c == 'h' ? stdout : stderr,
					    c == 'h' ? 0 : 2);
		}
	}
	if (optind < argc)
		return export_usage(stderr, 2);
	if (pprof)
		return pprof_export(ex.input, ex.output ? ex.output :
				    DEFAULT_PPROF);
	if (!ex.output)
		ex.output = DEFAULT_OUTPUT;
	if (pfmon_data_open(&ex.data, ex.input))
		return 1;
	ex.periods = pfmon_xcalloc(ex.data.hdr.nr_events + 1,
				   sizeof(*ex.periods));
	ex.freqs = pfmon_xcalloc(ex.data.hdr.nr_events + 1, sizeof(*ex.freqs));
	ex.names = pfmon_xcalloc(ex.data.hdr.nr_events + 1,
				 sizeof(*ex.names));
	if (!kernel_mmap(&ex))
		pfmon_warn("/proc/kallsyms shows no kernel addresses: perf will name no kernel frame (export as root, or with kernel.kptr_restrict=0)");
	ret = pfmon_data_walk(&ex.data, &export_ops, &ex);
	sample_flush(&ex, NULL, 0, 0);
	pfmon_data_close(&ex.data);
	if (!ret)
		ret = export_write(&ex);
	if (!ret)
		fprintf(stderr, "pfmon export: %" PRIu64 " samples (%" PRIu64 " with call chains) in %s\n",
			ex.samples, ex.chains, ex.output);
	if (ex.bad_event)
		pfmon_warn("%" PRIu64 " samples of an event the file does not declare: left out",
			   ex.bad_event);
	export_free(&ex);
	return ret;
}
