/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The file "pfmon record" writes and "pfmon report" reads.
 *
 * A header, then records, each starting with struct pfmon_rec and a
 * multiple of 8 bytes long, in the order they were written.  Fields are
 * in the byte order of the machine that recorded; a reader refuses a
 * version it does not know and skips record types it does not know by
 * their size, so the format grows by new types.
 *
 * Mappings and command names are written when the recorder learns them:
 * at the start, when a traced process execs, when it exits (its
 * mappings are read then, libraries loaded late included), at the end.
 * So a mapping may come after the samples that fall in it.  What ties
 * them is the process image: an EXEC record of a pid starts a new image,
 * and a sample belongs to the image of its pid current where it appears
 * in the file, as does a mapping.  The recorder writes the samples taken
 * before an exec ahead of its EXEC record.  Command names (COMM) belong
 * to images the same way.  A sample whose image has no mapping covering
 * its IP is reported as "[unknown]".
 */
#ifndef PFMON_DATA_H
#define PFMON_DATA_H

#include <stdint.h>

#define PFMON_DATA_MAGIC	"PFMONDAT"	/* 8 bytes, no NUL */
#define PFMON_DATA_VERSION	1

/* pfmon_file_header.flags */
#define PFMON_F_SYSTEM_WIDE	0x1	/* -a / -C: CPUs, every thread on them */
#define PFMON_F_KERNEL_HIDDEN	0x2	/* kernel IPs were reported as 0 */

/**
 * struct pfmon_file_header - the start of the file
 * @magic: PFMON_DATA_MAGIC
 * @version: PFMON_DATA_VERSION
 * @hdr_size: bytes of this header; records start there
 * @flags: PFMON_F_*
 * @nr_events: events sampled (event ids 0 .. nr_events - 1)
 * @start_ns: CLOCK_MONOTONIC at the start of recording
 * @end_ns: CLOCK_MONOTONIC at its end (0 when the recorder died)
 * @pmu: PMU description the samples come from
 * @command: the command line recorded, space separated, truncated
 */
struct pfmon_file_header {
	char magic[8];
	uint32_t version;
	uint32_t hdr_size;
	uint32_t flags;
	uint32_t nr_events;
	uint64_t start_ns;
	uint64_t end_ns;
	char pmu[64];
	char command[256];
};

/* Record types. */
#define PFMON_REC_EVENT		1	/* struct pfmon_rec_event */
#define PFMON_REC_SAMPLE	2	/* struct pfmon_rec_sample */
#define PFMON_REC_COMM		3	/* struct pfmon_rec_comm */
#define PFMON_REC_MMAP		4	/* struct pfmon_rec_mmap */
#define PFMON_REC_LOST		5	/* struct pfmon_rec_lost */
#define PFMON_REC_EXEC		6	/* struct pfmon_rec_exec */
#define PFMON_REC_CALLCHAIN	7	/* struct pfmon_rec_callchain */

/* Entries of a call chain at most (the kernel's PFM_MAX_CALLCHAIN). */
#define PFMON_MAX_CHAIN		64

/**
 * struct pfmon_rec - header of every record
 * @type: PFMON_REC_*
 * @size: bytes of the record, header included, a multiple of 8
 */
struct pfmon_rec {
	uint32_t type;
	uint32_t size;
};

/**
 * struct pfmon_rec_event - an event sampled; precedes its samples
 * @hdr: type PFMON_REC_EVENT
 * @id: the event's id in samples
 * @freq: record -F: overflows per second asked, @period being the first
 *        guess; 0: a fixed period
 * @period: sampling period (events per sample)
 * @name: the event as the user named it, NUL-terminated
 */
struct pfmon_rec_event {
	struct pfmon_rec hdr;
	uint32_t id;
	uint32_t freq;
	uint64_t period;
	char name[64];
};

/**
 * struct pfmon_rec_sample - one sample
 * @hdr: type PFMON_REC_SAMPLE
 * @pid: process id of the interrupted thread (0: idle)
 * @tid: its thread id
 * @ip: instruction pointer (0: unknown or hidden kernel address)
 * @time_ns: CLOCK_MONOTONIC of the overflow
 * @cpu: CPU of the overflow
 * @event: id of the event that overflowed
 * @period: events the sample stands for (the kernel's last_reset_val);
 *          absent from files of pfmon before -F, whose records end at
 *          @event: their event's period (pfmon_sample_copy())
 */
struct pfmon_rec_sample {
	struct pfmon_rec hdr;
	uint32_t pid;
	uint32_t tid;
	uint64_t ip;
	uint64_t time_ns;
	uint32_t cpu;
	uint32_t event;
	uint64_t period;
};

/* A sample record is at least this long: @period came later. */
#define PFMON_REC_SAMPLE_MIN	offsetof(struct pfmon_rec_sample, period)

/**
 * struct pfmon_rec_callchain - the call chain of the sample before it
 * @hdr: type PFMON_REC_CALLCHAIN; right after its sample (record -g)
 * @nr: entries of @ips, at most PFMON_MAX_CHAIN
 * @nr_kernel: of them the first, the kernel chain (the sample's kernel
 *             IP, then return addresses; a recorder that may see kernel
 *             addresses); 0 in files of a pfmon before kernel chains
 * @ips: the kernel entries, then the user IP and its return addresses,
 *       innermost first
 */
struct pfmon_rec_callchain {
	struct pfmon_rec hdr;
	uint32_t nr;
	uint32_t nr_kernel;
	uint64_t ips[];
};

/**
 * struct pfmon_rec_comm - the command name of a thread
 * @hdr: type PFMON_REC_COMM
 * @pid: its process id
 * @tid: its thread id
 * @comm: its name (/proc/PID/task/TID/comm), NUL-terminated
 */
struct pfmon_rec_comm {
	struct pfmon_rec hdr;
	uint32_t pid;
	uint32_t tid;
	char comm[16];
};

/**
 * struct pfmon_rec_mmap - an executable mapping of a process
 * @hdr: type PFMON_REC_MMAP
 * @pid: the process
 * @reserved: zero
 * @start: first address of the mapping
 * @end: first address past it
 * @pgoff: file offset mapped at @start, in bytes
 * @path: the mapped file ("[vdso]" and such for anonymous ones),
 *        NUL-terminated, padded with NULs to the record's size
 *
 * Within one image, a later mapping overlapping an earlier one replaces
 * it (dlopen after dlclose).
 */
struct pfmon_rec_mmap {
	struct pfmon_rec hdr;
	uint32_t pid;
	uint32_t reserved;
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	char path[];
};

/**
 * struct pfmon_rec_lost - samples the kernel dropped for want of room
 * @hdr: type PFMON_REC_LOST
 * @lost: samples dropped
 * @cpu: CPU whose buffer dropped them (system-wide), else 0
 * @reserved: zero
 */
struct pfmon_rec_lost {
	struct pfmon_rec hdr;
	uint64_t lost;
	uint32_t cpu;
	uint32_t reserved;
};

/**
 * struct pfmon_rec_exec - a process exec'd: a new image begins
 * @hdr: type PFMON_REC_EXEC
 * @pid: the process
 * @reserved: zero
 * @time_ns: CLOCK_MONOTONIC when the recorder saw it
 */
struct pfmon_rec_exec {
	struct pfmon_rec hdr;
	uint32_t pid;
	uint32_t reserved;
	uint64_t time_ns;
};

#endif /* PFMON_DATA_H */
