// SPDX-License-Identifier: GPL-2.0
/*
 * pfm_kapi_test: drives the perfmon kernel API (include/perfmon/kapi.h)
 * from kernel threads, for tools/selftests/perfmon/kapi_test.c.  A test
 * module: the guests carry it in /modules without loading it.
 *
 * debugfs pfm_kapi_test/:
 *   run     (write) a scenario's name: runs it in a kernel thread bound
 *           to CPU 0 and returns when it is done ("long", "long_ring":
 *           as soon as it is set up; it runs until the next run or the
 *           module's exit)
 *   result  (read) key=value lines of the last run: scenario=NAME, its
 *           figures, then err=0, or err=-ERRNO and step=NAME of the
 *           first step that failed
 *
 * Scenarios, on the software PMU (pfm_soft: PMC event 1 task-clock, 2
 * cpu-clock; a period P is written as -P):
 *   system    system-wide on CPU 0, cpu-clock, 50 ms busy: count, elapsed
 *   thread    per-thread on itself, task-clock, 50 ms busy, giving the CPU
 *             to whoever else wants it whenever the scheduler asks:
 *             count, elapsed, runtime (the thread's own CPU time taken
 *             around start and stop) and switches (the times it left
 *             the CPU meanwhile; the test shares CPU 0 with a spinning
 *             thread, so count < elapsed)
 *   ring      per-thread on itself, ring of one data page, task-clock
 *             period 100 us (overflows counted by PMD0's set-switch
 *             countdown), a lagging reader that drains the ring once it
 *             lost records, and whenever it is half full with an unread
 *             range that could not wrap; after 20 ms, once that range
 *             wraps, stop: it is copied out and parsed
 *   dfl       per-thread on itself, default format with room for 8
 *             entries, task-clock period 100 us: the full-buffer message
 *             by a blocking pfmk_read(), the buffer copied out, restart,
 *             and the same once more
 *   refusals  each refused input and its errno
 *   long      system-wide on CPU 0 and a per-thread ring context on
 *             itself, running until stopped (the module's exit closes
 *             them under way); the core refuses the per-thread load
 *             while a system-wide session exists (-EBUSY), so the ring
 *             context stays created but unloaded
 *   long_ring the same with the ring context alone, loaded and sampling
 *   close_race pfmk_close() racing other kernel threads' calls on the
 *             same descriptor, round after round: a loader thread loads
 *             the context on itself, starts, reads, stops and unloads it
 *             in a loop, a reader waits in a blocking pfmk_read(); the
 *             scenario's thread closes after a random sleep (its timer
 *             wake-up preempts the loader wherever it is, often inside
 *             a call) and frees the completion once both have seen
 *             -EBADF.  Every call returns 0 or -EBADF, the reader is
 *             woken by the close, the close returns 0.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bits.h>
#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/task.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timer.h>
#include <linux/uaccess.h>
#include <perfmon/kapi.h>
#include <uapi/linux/perfmon_dfl_smpl.h>
#include <uapi/linux/perfmon_ring.h>

/* pfm_soft's events (arch/soft/pfm_soft.c). */
#define KT_EV_TASK_CLOCK	1
#define KT_EV_CPU_CLOCK		2

/* Every scenario's thread runs there; "system" monitors that CPU. */
#define KT_CPU			0
#define KT_COUNT_NS		(50 * NSEC_PER_MSEC)
#define KT_PERIOD_NS		(100 * NSEC_PER_USEC)
#define KT_SLICE_NS		NSEC_PER_MSEC
#define KT_RING_MIN_NS		(20 * NSEC_PER_MSEC)
#define KT_RING_MAX_NS		NSEC_PER_SEC
#define KT_DFL_ENTRIES		8
#define KT_DFL_FILL_NS		NSEC_PER_SEC
#define KT_WATCHDOG_MS		5000
/* Overflow countdown of PMD0 (PFM_SETFL_OVFL_SWITCH) that never ends. */
#define KT_OVFL_COUNTDOWN	BIT_ULL(40)
#define KT_RESULT_SIZE		2048
/* close_race: rounds, the time they may take, the close's random delay. */
#define KT_RACE_ROUNDS		2000
#define KT_RACE_MAX_NS		(20 * NSEC_PER_SEC)
#define KT_RACE_DELAY_US	1500
#define KT_RACE_STUCK_MS	2000

/**
 * struct kt_run - one run of a scenario
 * @sc: the scenario
 * @task: its kernel thread, referenced
 * @ready: completed when the result is final ("long": when set up)
 * @reported: err= (and step=) are in @buf
 * @err: first failure, 0 when none
 * @step: name of the step that failed first
 * @len: bytes in @buf
 * @buf: the result, key=value lines
 */
struct kt_run {
	const struct kt_scenario *sc;
	struct task_struct *task;
	struct completion ready;
	bool reported;
	int err;
	const char *step;
	size_t len;
	char buf[KT_RESULT_SIZE];
};

/**
 * struct kt_scenario - a scenario name and the function running it
 * @name: what is written to debugfs "run"
 * @fn: runs in the scenario's kernel thread; returns 0 or the first error
 * @runs_on: runs until the thread is asked to stop ("long")
 */
struct kt_scenario {
	const char *name;
	int (*fn)(struct kt_run *r);
	bool runs_on;
};

/**
 * struct kt_copy - what a pfmk_smpl_copy() callback gathers
 * @buf: destination (kmalloc'ed)
 * @cap: its bytes
 * @len: bytes received
 * @chunks: callbacks made
 * @big: chunks larger than PAGE_SIZE
 * @fail: error to return from the callback (0: accept)
 */
struct kt_copy {
	u8 *buf;
	size_t cap;
	size_t len;
	unsigned int chunks;
	unsigned int big;
	int fail;
};

/**
 * struct kt_ring_stats - records parsed out of a ring
 * @records: records of any type
 * @samples: sample records
 * @lost_recs: lost records
 * @lost_sum: records dropped, as the lost records say
 * @switches: set-switch records
 * @unknown: records of another type
 * @bad: malformed records, or samples not of this thread, CPU and PMD
 */
struct kt_ring_stats {
	u64 records;
	u64 samples;
	u64 lost_recs;
	u64 lost_sum;
	u64 switches;
	u64 unknown;
	u64 bad;
};

/**
 * struct kt_watchdog - completes a kernel context's completion late
 * @timer: fires once
 * @c: the completion
 * @fired: the timer fired (a blocking pfmk_read() then returns 0)
 */
struct kt_watchdog {
	struct timer_list timer;
	struct completion *c;
	bool fired;
};

static struct dentry *kt_dir;
/* Serializes runs and the module's exit; guards kt_cur. */
static DEFINE_MUTEX(kt_lock);
static struct kt_run *kt_cur;
/* Guards kt_result, the last result published. */
static DEFINE_MUTEX(kt_result_lock);
static char kt_result[KT_RESULT_SIZE];

static __printf(2, 3) void kt_put(struct kt_run *r, const char *fmt, ...)
{
	va_list args;

	va_start(args, fmt);
	r->len += vscnprintf(r->buf + r->len, sizeof(r->buf) - r->len, fmt,
			     args);
	va_end(args);
}

/* Note the first failure; returns @err for the caller's return. */
static int kt_fail(struct kt_run *r, const char *step, int err)
{
	if (!r->err) {
		r->err = err;
		r->step = step;
	}
	return err;
}

/* Close @desc, noting a failure; 0 or the error. */
static int kt_close(struct kt_run *r, struct pfmk_ctx *desc)
{
	int ret = pfmk_close(desc);

	return ret ? kt_fail(r, "close", ret) : 0;
}

/* Spin for @ns without sleeping. */
static void kt_busy(u64 ns)
{
	u64 end = ktime_get_ns() + ns;

	while (ktime_get_ns() < end)
		cpu_relax();
}

/*
 * Spin for @ns of wall time, letting the scheduler run others: on a
 * kernel without full preemption, only cond_resched() lets them in.
 */
static void kt_busy_shared(u64 ns)
{
	u64 end = ktime_get_ns() + ns;

	while (ktime_get_ns() < end)
		cond_resched();
}

/*
 * The thread's CPU time now, as task_sched_runtime() (not exported)
 * computes it: what the scheduler added up to its last update, plus
 * the time since, both on the run queue's clock, which is local_clock()
 * on kernels without IRQ_TIME_ACCOUNTING (Debian's and ours).  With
 * interrupts off, no tick updates the two fields between the reads.
 */
static u64 kt_runtime_now(void)
{
	const struct sched_entity *se = &current->se;
	unsigned long flags;
	u64 sum, start, now;

	local_irq_save(flags);
	sum = se->sum_exec_runtime;
	start = se->exec_start;
	now = local_clock();
	local_irq_restore(flags);
	return now > start ? sum + (now - start) : sum;
}

static void kt_pmc(struct pfarg_pmc *pc, u16 num, u64 event)
{
	memset(pc, 0, sizeof(*pc));
	pc->reg_num = num;
	pc->reg_value = event;
}

/* PMD @num at -@period (0: plain counter), resets at -@period. */
static void kt_pmd(struct pfarg_pmd *pd, u16 num, u32 flags, u64 period)
{
	memset(pd, 0, sizeof(*pd));
	pd->reg_num = num;
	pd->reg_flags = flags;
	pd->reg_value = -period;
	pd->reg_short_reset = -period;
	pd->reg_long_reset = -period;
}

/*
 * A context counting @event on PMC0/PMD0 (@pmd0: its PMD, written
 * first), loaded on @target.  *@desc is set once created (closed by the
 * caller, also on failure).
 */
static int kt_setup(struct kt_run *r, u32 flags, const char *fmt,
		    const void *arg, size_t arg_size, struct completion *c,
		    struct pfmk_ctx **desc, struct pfmk_smpl *smpl, u64 event,
		    struct pfarg_pmd *pmd0, u32 target)
{
	struct pfarg_ctx req = { .ctx_flags = flags };
	struct pfarg_load load = { .load_pid = target };
	struct pfarg_pmc pc;
	int ret;

	ret = pfmk_create_context(&req, fmt, arg, arg_size, c, desc, smpl);
	if (ret) {
		*desc = NULL;
		return kt_fail(r, "create", ret);
	}
	kt_pmc(&pc, 0, event);
	ret = pfmk_write_pmcs(*desc, &pc, 1);
	if (ret)
		return kt_fail(r, "write_pmcs", ret);
	ret = pfmk_write_pmds(*desc, pmd0, 1);
	if (ret)
		return kt_fail(r, "write_pmds", ret);
	ret = pfmk_load_context(*desc, &load);
	return ret ? kt_fail(r, "load", ret) : 0;
}

/* PMD @num of set 0, whole (value, overflow countdown...). */
static int kt_read_pmd(struct kt_run *r, struct pfmk_ctx *desc, u16 num,
		       struct pfarg_pmd *pd)
{
	int ret;

	memset(pd, 0, sizeof(*pd));
	pd->reg_num = num;
	ret = pfmk_read_pmds(desc, pd, 1);
	return ret ? kt_fail(r, "read_pmds", ret) : 0;
}

/*
 * "system" and "thread": count @event for 50 ms of busy loop, elapsed
 * time taken around start and stop; @shared: give way to other tasks,
 * and take the thread's CPU time around start and stop too.
 */
static int kt_count(struct kt_run *r, u32 flags, u64 event, u32 target,
		    bool shared)
{
	struct pfarg_start start = {};
	struct pfmk_ctx *desc = NULL;
	struct pfarg_pmd pd;
	DECLARE_COMPLETION_ONSTACK(c);
	u64 t0, t1, rt0 = 0, rt1 = 0, sw0 = 0, value;
	int ret;

	kt_pmd(&pd, 0, 0, 0);
	ret = kt_setup(r, flags, NULL, NULL, 0, &c, &desc, NULL, event, &pd,
		       target);
	if (ret)
		goto close_ctx;
	if (shared) {
		sw0 = current->nvcsw + current->nivcsw;
		rt0 = kt_runtime_now();
	}
	t0 = ktime_get_ns();
	ret = pfmk_start(desc, &start);
	if (ret) {
		kt_fail(r, "start", ret);
		goto close_ctx;
	}
	if (shared)
		kt_busy_shared(KT_COUNT_NS);
	else
		kt_busy(KT_COUNT_NS);
	ret = pfmk_stop(desc);
	t1 = ktime_get_ns();
	if (ret) {
		kt_fail(r, "stop", ret);
		goto close_ctx;
	}
	if (shared)
		rt1 = kt_runtime_now();
	ret = kt_read_pmd(r, desc, 0, &pd);
	if (ret)
		goto close_ctx;
	/* Stopped: the value alone is the same. */
	ret = pfmk_read_values(desc, 0, 0, 1, &value);
	if (ret) {
		kt_fail(r, "read_values", ret);
		goto close_ctx;
	}
	kt_put(r, "cpu=%d\ncount=%llu\nvalue=%llu\nelapsed=%llu\n",
	       raw_smp_processor_id(), pd.reg_value, value, t1 - t0);
	if (shared)
		kt_put(r, "runtime=%llu\nswitches=%llu\n", rt1 - rt0,
		       current->nvcsw + current->nivcsw - sw0);
close_ctx:
	if (desc)
		kt_close(r, desc);
	return r->err;
}

static int kt_system(struct kt_run *r)
{
	return kt_count(r, PFM_FL_SYSTEM_WIDE, KT_EV_CPU_CLOCK, KT_CPU, false);
}

static int kt_thread(struct kt_run *r)
{
	return kt_count(r, 0, KT_EV_TASK_CLOCK, task_pid_nr(current), true);
}

/* pfmk_copy_fn: gather the chunks in order. */
static int kt_copy_fn(void *priv, const void *chunk, size_t len)
{
	struct kt_copy *cp = priv;

	cp->chunks++;
	if (len > PAGE_SIZE)
		cp->big++;
	if (cp->fail)
		return cp->fail;
	if (len > cp->cap - cp->len)
		return -EOVERFLOW;
	memcpy(cp->buf + cp->len, chunk, len);
	cp->len += len;
	return 0;
}

/* Parse @len bytes of ring records at @buf into @st. */
static void kt_ring_parse(const u8 *buf, size_t len, struct kt_ring_stats *st)
{
	const struct pfm_ring_sample *s;
	const struct pfm_ring_lost *l;
	const struct pfm_ring_rec *rec;
	size_t off = 0;

	while (off < len) {
		rec = (const struct pfm_ring_rec *)(buf + off);
		if (len - off < sizeof(*rec) || rec->size < sizeof(*rec) ||
		    rec->size % 8 || rec->size > len - off) {
			st->bad++;
			return;
		}
		st->records++;
		switch (rec->type) {
		case PFM_RING_REC_SAMPLE:
			s = (const struct pfm_ring_sample *)rec;
			st->samples++;
			if (rec->size < sizeof(*s) ||
			    rec->size != sizeof(*s) + s->nr_values * 8 ||
			    s->tid != task_pid_nr(current) ||
			    s->cpu != KT_CPU || s->ovfl_pmd)
				st->bad++;
			break;
		case PFM_RING_REC_LOST:
			l = (const struct pfm_ring_lost *)rec;
			st->lost_recs++;
			if (rec->size < sizeof(*l))
				st->bad++;
			else
				st->lost_sum += l->lost;
			break;
		case PFM_RING_REC_SET_SWITCH:
			st->switches++;
			break;
		default:
			st->unknown++;
		}
		off += rec->size;
	}
}

/**
 * struct kt_ring - a ring context and its reader's state
 * @desc: the context
 * @ctrl: the control page (the buffer's start)
 * @data: the data area
 * @size: its bytes
 * @cp: the copy area, @size bytes
 * @st: what was parsed, in all
 * @drains: copies made
 * @mismatch: copies that differ from the data area read directly
 * @wrapped: the last copy's range wrapped
 * @pos: the last copy's position (data_tail)
 */
struct kt_ring {
	struct pfmk_ctx *desc;
	struct pfm_ring_ctrl *ctrl;
	const u8 *data;
	u64 size;
	struct kt_copy cp;
	struct kt_ring_stats st;
	unsigned int drains;
	unsigned int mismatch;
	bool wrapped;
	u64 pos;
};

/* Bytes of the data area from free-running @pos, in order, equal @buf? */
static bool kt_ring_same(const struct kt_ring *g, u64 pos, const u8 *buf,
			 size_t len)
{
	size_t off = pos & (g->size - 1);
	size_t first = min_t(size_t, len, g->size - off);

	return !memcmp(buf, g->data + off, first) &&
	       !memcmp(buf + first, g->data, len - first);
}

/*
 * The reader: copy [data_tail, data_head) out, parse it, release it.
 * Sets up the ring's fields from its control page the first time.
 */
static int kt_ring_drain(struct kt_run *r, struct kt_ring *g)
{
	u64 head, tail, len;
	int ret;

	/* Pairs with the writer's store-release: records before the head. */
	head = smp_load_acquire(&g->ctrl->data_head);
	tail = READ_ONCE(g->ctrl->data_tail);
	len = head - tail;
	if (len > g->size)
		return kt_fail(r, "ring_head", -EPROTO);
	g->cp.len = 0;
	g->cp.chunks = 0;
	g->pos = tail;
	g->wrapped = (tail & (g->size - 1)) + len > g->size;
	if (len) {
		ret = pfmk_smpl_copy(g->desc, tail, len, kt_copy_fn, &g->cp);
		if (ret)
			return kt_fail(r, "smpl_copy", ret);
		if (g->cp.len != len)
			return kt_fail(r, "smpl_copy_len", -EIO);
		if (!kt_ring_same(g, tail, g->cp.buf, len))
			g->mismatch++;
		kt_ring_parse(g->cp.buf, len, &g->st);
	}
	g->drains++;
	/* Our reads of the records are done before the writer reuses them. */
	smp_store_release(&g->ctrl->data_tail, head);
	return 0;
}

/* Unread bytes. */
static u64 kt_ring_used(const struct kt_ring *g)
{
	/* Pairs with the writer's store-release of data_head. */
	return smp_load_acquire(&g->ctrl->data_head) -
	       READ_ONCE(g->ctrl->data_tail);
}

/* Would the unread range wrap at the end of the data area? */
static bool kt_ring_wraps(const struct kt_ring *g)
{
	/* Pairs with the writer's store-release of data_head. */
	u64 head = smp_load_acquire(&g->ctrl->data_head);
	u64 tail = READ_ONCE(g->ctrl->data_tail);

	return (tail & (g->size - 1)) + (head - tail) > g->size;
}

/*
 * A per-thread ring context on this thread, task-clock sampled every
 * @period ns, started.  g->desc is set once created.
 */
static int kt_ring_open(struct kt_run *r, struct kt_ring *g,
			struct completion *c, u64 period)
{
	struct pfm_ring_smpl_arg arg = { .data_pages = 1, .wakeup_events = 8 };
	struct pfarg_setdesc set0 = { .set_flags = PFM_SETFL_OVFL_SWITCH };
	struct pfarg_ctx req = {};
	struct pfarg_load load = { .load_pid = task_pid_nr(current) };
	struct pfarg_start start = {};
	struct pfmk_smpl smpl;
	struct pfarg_pmc pc;
	struct pfarg_pmd pd;
	int ret;

	ret = pfmk_create_context(&req, PFM_RING_SMPL_NAME, &arg, sizeof(arg),
				  c, &g->desc, &smpl);
	if (ret) {
		g->desc = NULL;
		return kt_fail(r, "ring_create", ret);
	}
	g->ctrl = smpl.addr;
	g->size = g->ctrl->data_size;
	g->data = (const u8 *)smpl.addr + g->ctrl->data_offset;
	if (smpl.size != 2 * PAGE_SIZE || g->size != PAGE_SIZE ||
	    g->ctrl->version != PFM_RING_VERSION)
		return kt_fail(r, "ring_layout", -EPROTO);
	g->cp.cap = g->size;
	g->cp.buf = kmalloc(g->cp.cap, GFP_KERNEL);
	if (!g->cp.buf)
		return kt_fail(r, "kmalloc", -ENOMEM);
	/* The countdown counts PMD0's overflows: the samples and the lost. */
	ret = pfmk_create_evtsets(g->desc, &set0, 1);
	if (ret)
		return kt_fail(r, "create_evtsets", ret);
	kt_pmc(&pc, 0, KT_EV_TASK_CLOCK);
	ret = pfmk_write_pmcs(g->desc, &pc, 1);
	if (ret)
		return kt_fail(r, "write_pmcs", ret);
	kt_pmd(&pd, 0, PFM_REGFL_OVFL_NOTIFY, period);
	pd.reg_ovfl_switch_cnt = KT_OVFL_COUNTDOWN;
	ret = pfmk_write_pmds(g->desc, &pd, 1);
	if (ret)
		return kt_fail(r, "write_pmds", ret);
	ret = pfmk_load_context(g->desc, &load);
	if (ret)
		return kt_fail(r, "load", ret);
	ret = pfmk_start(g->desc, &start);
	return ret ? kt_fail(r, "start", ret) : 0;
}

static void kt_ring_close(struct kt_run *r, struct kt_ring *g)
{
	if (g->desc)
		kt_close(r, g->desc);
	kfree(g->cp.buf);
}

/* One nonblocking pfmk_read(): count what it returned. */
static int kt_read_noblock(struct kt_run *r, struct pfmk_ctx *desc,
			   unsigned int *woken, unsigned int *msgs)
{
	union pfarg_msg msg;
	ssize_t n;

	n = pfmk_read(desc, &msg, sizeof(msg), true);
	if (n == (ssize_t)sizeof(msg))
		(*msgs)++;
	else if (!n)
		(*woken)++;
	else if (n != -EAGAIN)
		return kt_fail(r, "read", n);
	return 0;
}

/*
 * "ring": busy in 1 ms slices, a nonblocking pfmk_read() after each.
 * The reader lags: it drains the ring once records were lost (so that
 * a lost record follows), and again whenever the ring is half full but
 * its unread range could not wrap.  It runs 20 ms at least, until that
 * range wraps (1 s at most); then stop, and the last range is copied.
 */
static int kt_ring(struct kt_run *r)
{
	struct kt_ring g = {};
	unsigned int slices = 0, woken = 0, msgs = 0;
	bool drained_lost = false;
	DECLARE_COMPLETION_ONSTACK(c);
	struct pfarg_pmd pd;
	u64 t0, now;
	int ret;

	ret = kt_ring_open(r, &g, &c, KT_PERIOD_NS);
	if (ret)
		goto close_ring;
	t0 = ktime_get_ns();
	do {
		kt_busy(KT_SLICE_NS);
		slices++;
		ret = kt_read_noblock(r, g.desc, &woken, &msgs);
		if (ret)
			goto close_ring;
		if ((!drained_lost && READ_ONCE(g.ctrl->lost)) ||
		    (!kt_ring_wraps(&g) && kt_ring_used(&g) >= g.size / 2)) {
			if (READ_ONCE(g.ctrl->lost))
				drained_lost = true;
			ret = kt_ring_drain(r, &g);
			if (ret)
				goto close_ring;
		}
		cond_resched();
		now = ktime_get_ns() - t0;
	} while (now < KT_RING_MAX_NS &&
		 (now < KT_RING_MIN_NS || !drained_lost || !kt_ring_wraps(&g)));
	ret = pfmk_stop(g.desc);
	if (ret) {
		kt_fail(r, "stop", ret);
		goto close_ring;
	}
	ret = kt_read_pmd(r, g.desc, 0, &pd);
	if (ret)
		goto close_ring;
	kt_put(r, "data_size=%llu\nslices=%u\nelapsed=%llu\n", g.size, slices,
	       now);
	kt_put(r, "reads_woken=%u\nreads_msg=%u\nearly_drains=%u\n", woken,
	       msgs, g.drains);
	ret = kt_ring_drain(r, &g);
	if (ret)
		goto close_ring;
	kt_put(r, "pos=%llu\nbytes=%zu\nchunks=%u\nbig_chunks=%u\nwrapped=%d\n",
	       g.pos, g.cp.len, g.cp.chunks, g.cp.big, g.wrapped);
	kt_put(r, "records=%llu\nsamples=%llu\nlost_recs=%llu\nlost_sum=%llu\n",
	       g.st.records, g.st.samples, g.st.lost_recs, g.st.lost_sum);
	kt_put(r, "switches=%llu\nunknown=%llu\nbad=%llu\nmismatch=%u\n",
	       g.st.switches, g.st.unknown, g.st.bad, g.mismatch);
	kt_put(r, "ctrl_records=%llu\nctrl_lost=%llu\nctrl_wakeups=%llu\n",
	       READ_ONCE(g.ctrl->records), READ_ONCE(g.ctrl->lost),
	       READ_ONCE(g.ctrl->wakeups));
	kt_put(r, "overflows=%llu\n",
	       KT_OVFL_COUNTDOWN - pd.reg_ovfl_switch_cnt);
close_ring:
	kt_ring_close(r, &g);
	return r->err;
}

static void kt_watchdog_fn(struct timer_list *t)
{
	struct kt_watchdog *wd = from_timer(wd, t, timer);

	WRITE_ONCE(wd->fired, true);
	complete(wd->c);
}

/*
 * Busy until the default buffer holds @entries entries (1 s at most),
 * then wait with blocking pfmk_read() for the message, which the
 * watchdog bounds.
 */
static int kt_dfl_wait(struct kt_run *r, struct pfmk_ctx *desc,
		       const struct pfm_dfl_smpl_hdr *hdr, u64 entries,
		       struct kt_watchdog *wd, union pfarg_msg *msg,
		       unsigned int *woken)
{
	u64 t0 = ktime_get_ns();
	ssize_t n;

	while (READ_ONCE(hdr->hdr_count) < entries &&
	       ktime_get_ns() - t0 < KT_DFL_FILL_NS)
		kt_busy(KT_PERIOD_NS);
	for (;;) {
		n = pfmk_read(desc, msg, sizeof(*msg), false);
		if (n == (ssize_t)sizeof(*msg))
			return 0;
		if (n)
			return kt_fail(r, "read", n);
		(*woken)++;
		if (READ_ONCE(wd->fired))
			return kt_fail(r, "read_timeout", -ETIMEDOUT);
	}
}

/* Copy the default buffer out and check its header and entries. */
static int kt_dfl_check(struct kt_run *r, struct pfmk_ctx *desc,
			const struct pfmk_smpl *smpl, struct kt_copy *cp,
			const char *round)
{
	const struct pfm_dfl_smpl_hdr *hdr;
	const struct pfm_dfl_smpl_entry *e;
	unsigned int bad = 0;
	size_t off;
	u64 i;
	int ret;

	cp->len = 0;
	cp->chunks = 0;
	ret = pfmk_smpl_copy(desc, 0, cp->cap, kt_copy_fn, cp);
	if (ret)
		return kt_fail(r, "smpl_copy", ret);
	if (cp->len != cp->cap || memcmp(cp->buf, smpl->addr, cp->cap))
		return kt_fail(r, "smpl_copy_data", -EIO);
	hdr = (const struct pfm_dfl_smpl_hdr *)cp->buf;
	off = sizeof(*hdr);
	for (i = 0; i < hdr->hdr_count && i < KT_DFL_ENTRIES; i++) {
		/* layout 1.0: pid is the thread's id; no values sampled */
		e = (const struct pfm_dfl_smpl_entry *)(cp->buf + off);
		if (e->pid != task_pid_nr(current) || e->cpu != KT_CPU ||
		    e->ovfl_pmd || e->reserved ||
		    e->last_reset_val != -KT_PERIOD_NS)
			bad++;
		off += sizeof(*e);
	}
	kt_put(r, "%s_count=%llu\n%s_cur_offs=%llu\n%s_overflows=%llu\n",
	       round, hdr->hdr_count, round, hdr->hdr_cur_offs, round,
	       hdr->hdr_overflows);
	kt_put(r, "%s_bad=%u\n%s_chunks=%u\n", round, bad, round, cp->chunks);
	return 0;
}

static void kt_dfl_msg(struct kt_run *r, const union pfarg_msg *msg,
		       const char *round)
{
	const struct pfarg_ovfl_msg *m = &msg->pfm_ovfl_msg;

	kt_put(r, "%s_msg_type=%u\n%s_msg_pmds=%#llx\n%s_msg_tid_ok=%d\n",
	       round, m->msg_type, round, m->msg_ovfl_pmds[0], round,
	       m->msg_ovfl_tid == task_pid_nr(current));
}

/*
 * "dfl": the default format with room for 8 entries exactly; busy until
 * it is full, the message by blocking pfmk_read(), the buffer copied
 * out, restart; twice.
 */
static int kt_dfl(struct kt_run *r)
{
	struct pfm_dfl_smpl_arg arg = {
		.buf_size = sizeof(struct pfm_dfl_smpl_hdr) +
			    KT_DFL_ENTRIES * sizeof(struct pfm_dfl_smpl_entry),
	};
	static const char * const rounds[] = { "first", "second" };
	struct pfarg_start start = {};
	struct kt_copy cp = { .cap = arg.buf_size };
	struct kt_watchdog wd = {};
	unsigned int woken = 0, round;
	struct pfmk_ctx *desc = NULL;
	union pfarg_msg msg;
	struct pfmk_smpl smpl;
	DECLARE_COMPLETION_ONSTACK(c);
	struct pfarg_pmd pd;
	int ret;

	wd.c = &c;
	cp.buf = kmalloc(cp.cap, GFP_KERNEL);
	if (!cp.buf)
		return kt_fail(r, "kmalloc", -ENOMEM);
	kt_pmd(&pd, 0, PFM_REGFL_OVFL_NOTIFY, KT_PERIOD_NS);
	ret = kt_setup(r, 0, PFM_DFL_SMPL_NAME, &arg, sizeof(arg), &c, &desc,
		       &smpl, KT_EV_TASK_CLOCK, &pd, task_pid_nr(current));
	if (ret)
		goto close_ctx;
	kt_put(r, "buf_size=%llu\nsmpl_size=%zu\n", arg.buf_size, smpl.size);
	/* Bounds the blocking reads: they return 0 once it fired. */
	timer_setup_on_stack(&wd.timer, kt_watchdog_fn, 0);
	mod_timer(&wd.timer, jiffies + msecs_to_jiffies(KT_WATCHDOG_MS));
	ret = pfmk_start(desc, &start);
	if (ret) {
		kt_fail(r, "start", ret);
		goto stop_watchdog;
	}
	/* Fill, read, restart (which empties it), fill and read again. */
	for (round = 0; round < ARRAY_SIZE(rounds); round++) {
		if (round) {
			ret = pfmk_restart(desc);
			if (ret) {
				kt_fail(r, "restart", ret);
				goto stop_watchdog;
			}
		}
		ret = kt_dfl_wait(r, desc, smpl.addr, KT_DFL_ENTRIES, &wd,
				  &msg, &woken);
		if (ret)
			goto stop_watchdog;
		kt_dfl_msg(r, &msg, rounds[round]);
		ret = kt_dfl_check(r, desc, &smpl, &cp, rounds[round]);
		if (ret)
			goto stop_watchdog;
	}
	kt_put(r, "reads_woken=%u\n", woken);
	ret = pfmk_stop(desc);
	if (ret)
		kt_fail(r, "stop", ret);
stop_watchdog:
	timer_delete_sync(&wd.timer);
	destroy_timer_on_stack(&wd.timer);
close_ctx:
	if (desc)
		kt_close(r, desc);
	kfree(cp.buf);
	return r->err;
}

/* "refusals", part 1: descriptors that are NULL or closed. */
static void kt_refuse_desc(struct kt_run *r, struct completion *c)
{
	struct pfarg_ctx req = {};
	struct pfarg_start start = {};
	struct kt_copy cp = {};
	struct pfmk_ctx *desc;
	union pfarg_msg msg;
	struct pfarg_pmc pc;
	int ret;

	kt_pmc(&pc, 0, KT_EV_TASK_CLOCK);
	kt_put(r, "null_write_pmcs=%d\n", pfmk_write_pmcs(NULL, &pc, 1));
	kt_put(r, "null_start=%d\n", pfmk_start(NULL, &start));
	kt_put(r, "null_stop=%d\n", pfmk_stop(NULL));
	kt_put(r, "null_read=%zd\n", pfmk_read(NULL, &msg, sizeof(msg), true));
	kt_put(r, "null_smpl_copy=%d\n",
	       pfmk_smpl_copy(NULL, 0, 8, kt_copy_fn, &cp));
	kt_put(r, "null_close=%d\n", pfmk_close(NULL));

	ret = pfmk_create_context(&req, NULL, NULL, 0, c, &desc, NULL);
	kt_put(r, "closed_create=%d\n", ret);
	if (ret)
		return;
	kt_put(r, "closed_first_close=%d\n", pfmk_close(desc));
	/* From here on @desc is only a value handed to pfmk_*(). */
	kt_put(r, "closed_write_pmcs=%d\n", pfmk_write_pmcs(desc, &pc, 1));
	kt_put(r, "closed_start=%d\n", pfmk_start(desc, &start));
	kt_put(r, "closed_unload=%d\n", pfmk_unload_context(desc));
	kt_put(r, "closed_read=%zd\n", pfmk_read(desc, &msg, sizeof(msg), true));
	kt_put(r, "closed_close=%d\n", pfmk_close(desc));
}

/*
 * The arguments of kt_refuse_args() too big for its stack frame (v2.8's
 * 176-byte pfarg_pmd and 200-byte pfarg_setinfo, under KASAN).
 */
struct kt_refuse_bufs {
	struct pfarg_setinfo si;
	struct pfarg_pmd pd;
	union pfarg_msg msg;
};

/* "refusals", part 2: array counts, NULL arrays, pfmk_read() sizes. */
static int kt_refuse_args(struct kt_run *r, struct completion *c)
{
	struct pfarg_ctx req = {};
	struct pfarg_setdesc sd = {};
	struct pfarg_drv_cfg cfg = {};
	struct kt_copy cp = {};
	struct kt_refuse_bufs *b;
	struct pfmk_ctx *desc;
	struct pfarg_pmc *pcs;
	int ret;

	/* Room for PFM_MAX_ARRAY + 1: only the count is wrong. */
	pcs = kcalloc(PFM_MAX_ARRAY + 1, sizeof(*pcs), GFP_KERNEL);
	if (!pcs)
		return kt_fail(r, "kcalloc", -ENOMEM);
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b) {
		kt_fail(r, "kzalloc", -ENOMEM);
		goto free_pcs;
	}
	ret = pfmk_create_context(&req, NULL, NULL, 0, c, &desc, NULL);
	if (ret) {
		kt_fail(r, "create", ret);
		goto free_bufs;
	}
	kt_pmd(&b->pd, 0, 0, 0);
	kt_put(r, "write_pmcs_count0=%d\n", pfmk_write_pmcs(desc, pcs, 0));
	kt_put(r, "write_pmcs_count_neg=%d\n", pfmk_write_pmcs(desc, pcs, -1));
	kt_put(r, "write_pmcs_count_max1=%d\n",
	       pfmk_write_pmcs(desc, pcs, PFM_MAX_ARRAY + 1));
	kt_put(r, "write_pmds_count0=%d\n", pfmk_write_pmds(desc, &b->pd, 0));
	kt_put(r, "read_pmds_count_neg=%d\n",
	       pfmk_read_pmds(desc, &b->pd, -1));
	kt_put(r, "create_evtsets_count0=%d\n",
	       pfmk_create_evtsets(desc, &sd, 0));
	kt_put(r, "getinfo_evtsets_count_max1=%d\n",
	       pfmk_getinfo_evtsets(desc, &b->si, PFM_MAX_ARRAY + 1));
	kt_put(r, "set_drv_config_count0=%d\n",
	       pfmk_set_drv_config(desc, &cfg, 0));
	kt_put(r, "write_pmcs_null=%d\n", pfmk_write_pmcs(desc, NULL, 1));
	kt_put(r, "read_pmds_null=%d\n", pfmk_read_pmds(desc, NULL, 1));
	kt_put(r, "read_values_null=%d\n",
	       pfmk_read_values(desc, 0, 0, 1, NULL));
	kt_put(r, "read_values_none=%d\n",
	       pfmk_read_values(desc, 0, 0, 0, &b->pd.reg_value));
	kt_put(r, "read_values_unused=%d\n",
	       pfmk_read_values(desc, 0, 1, 1, &b->pd.reg_value));
	kt_put(r, "load_null=%d\n", pfmk_load_context(desc, NULL));
	kt_put(r, "start_null=%d\n", pfmk_start(desc, NULL));
	kt_put(r, "read_small=%zd\n",
	       pfmk_read(desc, &b->msg, sizeof(b->msg) - 1, true));
	kt_put(r, "read_empty=%zd\n",
	       pfmk_read(desc, &b->msg, sizeof(b->msg), true));
	kt_put(r, "smpl_copy_nobuf=%d\n",
	       pfmk_smpl_copy(desc, 0, 8, kt_copy_fn, &cp));
	kt_close(r, desc);
free_bufs:
	kfree(b);
free_pcs:
	kfree(pcs);
	return r->err;
}

/* "refusals", part 3: copy ranges of a default buffer and of a ring. */
static int kt_refuse_copy(struct kt_run *r, struct completion *c)
{
	struct pfm_dfl_smpl_arg dfl = { .buf_size = 1000 };
	struct pfm_ring_smpl_arg ring = { .data_pages = 1 };
	struct pfarg_ctx req = {};
	u64 buf[4];
	struct kt_copy cp = { .buf = (u8 *)buf, .cap = sizeof(buf) };
	struct pfmk_ctx *desc;
	struct pfmk_smpl smpl;
	int ret;

	ret = pfmk_create_context(&req, PFM_DFL_SMPL_NAME, &dfl, sizeof(dfl),
				  c, &desc, &smpl);
	if (ret)
		return kt_fail(r, "dfl_create", ret);
	kt_put(r, "dfl_copy_past_end=%d\n",
	       pfmk_smpl_copy(desc, 0, dfl.buf_size + 1, kt_copy_fn, &cp));
	kt_put(r, "dfl_copy_at_end=%d\n",
	       pfmk_smpl_copy(desc, dfl.buf_size, 1, kt_copy_fn, &cp));
	kt_put(r, "dfl_copy_pos_wraps=%d\n",
	       pfmk_smpl_copy(desc, U64_MAX - 3, 8, kt_copy_fn, &cp));
	kt_put(r, "dfl_copy_last_byte=%d\n",
	       pfmk_smpl_copy(desc, dfl.buf_size - 1, 1, kt_copy_fn, &cp));
	cp.len = 0;
	cp.chunks = 0;
	cp.fail = -E2BIG;
	kt_put(r, "dfl_copy_fn_error=%d\n",
	       pfmk_smpl_copy(desc, 0, 16, kt_copy_fn, &cp));
	kt_put(r, "dfl_copy_fn_error_calls=%u\n", cp.chunks);
	cp.fail = 0;
	kt_put(r, "dfl_copy_no_fn=%d\n",
	       pfmk_smpl_copy(desc, 0, 8, NULL, NULL));
	kt_close(r, desc);

	ret = pfmk_create_context(&req, PFM_RING_SMPL_NAME, &ring, sizeof(ring),
				  c, &desc, &smpl);
	if (ret)
		return kt_fail(r, "ring_create", ret);
	kt_put(r, "ring_copy_too_long=%d\n",
	       pfmk_smpl_copy(desc, 0, PAGE_SIZE + 1, kt_copy_fn, &cp));
	cp.len = 0;
	cp.chunks = 0;
	kt_put(r, "ring_copy_far_pos=%d\n",
	       pfmk_smpl_copy(desc, U64_MAX - 7, 16, kt_copy_fn, &cp));
	kt_put(r, "ring_copy_far_pos_chunks=%u\n", cp.chunks);
	kt_close(r, desc);
	return r->err;
}

/* "refusals", part 4: creations refused. */
static void kt_refuse_create(struct kt_run *r, struct completion *c)
{
	struct pfm_dfl_smpl_arg dfl = { .buf_size = 1000 };
	struct pfarg_ctx req = {};
	struct pfmk_ctx *desc = NULL;
	struct pfmk_smpl smpl;
	int ret;

	req.ctx_flags = PFM_FL_NOTIFY_BLOCK | PFM_FL_SYSTEM_WIDE;
	ret = pfmk_create_context(&req, NULL, NULL, 0, c, &desc, NULL);
	kt_put(r, "create_block_system=%d\n", ret);
	if (!ret)
		kt_close(r, desc);
	req.ctx_flags = 0;
	ret = pfmk_create_context(NULL, NULL, NULL, 0, c, &desc, NULL);
	kt_put(r, "create_null_req=%d\n", ret);
	if (!ret)
		kt_close(r, desc);
	ret = pfmk_create_context(&req, NULL, NULL, 0, NULL, &desc, NULL);
	kt_put(r, "create_null_completion=%d\n", ret);
	if (!ret)
		kt_close(r, desc);
	ret = pfmk_create_context(&req, PFM_DFL_SMPL_NAME, &dfl,
				  sizeof(dfl) - 8, c, &desc, &smpl);
	kt_put(r, "create_fmt_arg_size=%d\n", ret);
	if (!ret)
		kt_close(r, desc);
	req.ctx_reserved1 = 1;
	ret = pfmk_create_context(&req, NULL, NULL, 0, c, &desc, NULL);
	kt_put(r, "create_reserved=%d\n", ret);
	if (!ret)
		kt_close(r, desc);
}

static int kt_refusals(struct kt_run *r)
{
	DECLARE_COMPLETION_ONSTACK(c);

	kt_refuse_desc(r, &c);
	kt_refuse_args(r, &c);
	kt_refuse_copy(r, &c);
	kt_refuse_create(r, &c);
	return r->err;
}

/*
 * "create": one plain context, created and closed (create=the errno):
 * kapi_test's no_pmu_never_loads runs it with no description registered.
 */
static int kt_create(struct kt_run *r)
{
	DECLARE_COMPLETION_ONSTACK(c);
	struct pfarg_ctx req = {};
	struct pfmk_ctx *desc;
	int ret;

	ret = pfmk_create_context(&req, NULL, NULL, 0, &c, &desc, NULL);
	kt_put(r, "create=%d\n", ret);
	if (!ret)
		kt_close(r, desc);
	return r->err;
}

/* The result so far is final: publish it to the writer. */
static void kt_report(struct kt_run *r)
{
	if (r->reported)
		return;
	r->reported = true;
	kt_put(r, "err=%d\n", r->err);
	if (r->err)
		kt_put(r, "step=%s\n", r->step);
	complete(&r->ready);
}

/* A live ring: busy until a drain shows samples (1 s at most). */
static int kt_long_first_samples(struct kt_run *r, struct kt_ring *g)
{
	u64 t0 = ktime_get_ns();
	int ret;

	do {
		kt_busy(KT_SLICE_NS);
		ret = kt_ring_drain(r, g);
		if (ret)
			return ret;
	} while (!g->st.samples && ktime_get_ns() - t0 < KT_RING_MAX_NS);
	kt_put(r, "ready_samples=%llu\n", g->st.samples);
	return 0;
}

/*
 * "long" (@with_sys) and "long_ring": a system-wide context on CPU 0
 * counting cpu-clock, and a per-thread ring context on this thread
 * sampling task-clock every ms, until the thread is asked to stop; the
 * ring is read as it goes.  The run is reported ready once set up (and
 * the ring, when live, has samples).  The core keeps per-thread and
 * system-wide sessions apart: with the system-wide context loaded, the
 * per-thread load is refused (-EBUSY, reported as ring_open) and that
 * context stays created and unloaded, with its buffer.
 */
static int kt_long_run(struct kt_run *r, bool with_sys)
{
	struct pfarg_start start = {};
	unsigned int woken = 0, msgs = 0;
	struct kt_ring g = {};
	struct pfmk_ctx *sys = NULL;
	DECLARE_COMPLETION_ONSTACK(c);
	struct pfarg_pmd pd;
	bool ring_on;
	int ret;

	if (with_sys) {
		kt_pmd(&pd, 0, 0, 0);
		ret = kt_setup(r, PFM_FL_SYSTEM_WIDE, NULL, NULL, 0, &c, &sys,
			       NULL, KT_EV_CPU_CLOCK, &pd, KT_CPU);
		if (ret)
			goto close_sys;
		ret = pfmk_start(sys, &start);
		if (ret) {
			kt_fail(r, "start", ret);
			goto close_sys;
		}
	}
	ret = kt_ring_open(r, &g, &c, 10 * KT_PERIOD_NS);
	ring_on = !ret;
	kt_put(r, "sys_started=%d\nring_open=%d\n", with_sys, ret);
	if (with_sys && ret == -EBUSY && !strcmp(r->step, "load")) {
		r->err = 0;	/* the core's rule, reported above */
		r->step = NULL;
	} else if (ret) {
		goto close_ring;
	}
	if (ring_on) {
		ret = kt_long_first_samples(r, &g);
		if (ret)
			goto close_ring;
	}
	kt_report(r);

	while (!kthread_should_stop()) {
		kt_busy(KT_SLICE_NS);
		if (ring_on) {
			ret = kt_read_noblock(r, g.desc, &woken, &msgs);
			if (!ret)
				ret = kt_ring_drain(r, &g);
			if (ret)
				break;
		}
		usleep_range(1000, 2000);
	}
	/* The result is out: what comes now only goes to the log. */
	pr_info("%s: stopping: %llu samples in %u drains, %u wake-ups, err %d\n",
		r->sc->name, g.st.samples, g.drains, woken, r->err);
close_ring:
	kt_ring_close(r, &g);
close_sys:
	if (sys)
		kt_close(r, sys);
	return r->err;
}

static int kt_long(struct kt_run *r)
{
	return kt_long_run(r, true);
}

static int kt_long_ring(struct kt_run *r)
{
	return kt_long_run(r, false);
}

/* Wait for kthread_stop(): the thread's end belongs to its owner. */
static void kt_wait_stop(void)
{
	set_current_state(TASK_INTERRUPTIBLE);
	while (!kthread_should_stop()) {
		schedule();
		set_current_state(TASK_INTERRUPTIBLE);
	}
	__set_current_state(TASK_RUNNING);
}

/**
 * struct kt_race - close_race: one descriptor per round, shared with the
 * loader and reader threads
 * @wq: the racers wait here for a round (or the end), the scenario's
 *      thread for the racers to finish one
 * @desc: this round's descriptor
 * @c: this round's completion (kmalloc'ed: freed after each round, so
 *     that a wake-up after the close would be a use after free)
 * @round: rounds started; a racer runs each one once
 * @stop: no more rounds
 * @racers_done: racers finished with this round
 * @in_call: the loader is inside a pfmk_*() call
 * @closing: pfmk_close() is in progress
 * @loads: the loader's loads that returned 0
 * @loads_closing: of those, the ones that returned while pfmk_close() ran
 * @calls: the loader's calls in all
 * @ebadf: the loader's calls refused with -EBADF (one per round at least)
 * @reads_closed: blocking reads that ended with -EBADF
 * @reads_other: reads that returned a message or 0
 * @odd: calls that returned anything but 0 or -EBADF (a read: -EBADF,
 *       0 or a message)
 * @odd_ret: the first such return
 * @odd_call: and its call
 */
struct kt_race {
	wait_queue_head_t wq;
	struct pfmk_ctx *desc;
	struct completion *c;
	unsigned int round;
	bool stop;
	atomic_t racers_done;
	atomic_t in_call;
	atomic_t closing;
	u64 loads;
	u64 loads_closing;
	u64 calls;
	u64 ebadf;
	u64 reads_closed;
	u64 reads_other;
	u64 odd;
	long odd_ret;
	const char *odd_call;
};

/* Wait for round @seen + 1; false when there are no more. */
static bool kt_race_next(struct kt_race *k, unsigned int seen)
{
	wait_event(k->wq, READ_ONCE(k->round) != seen || READ_ONCE(k->stop));
	/* Pairs with kt_race_round()'s release: desc and c of the round. */
	return !smp_load_acquire(&k->stop) || smp_load_acquire(&k->round) != seen;
}

/* Note a return of @call other than 0 and -EBADF; true on -EBADF. */
static bool kt_race_ret(struct kt_race *k, const char *call, long ret)
{
	if (ret && ret != -EBADF && !k->odd++) {
		k->odd_ret = ret;
		k->odd_call = call;
	}
	return ret == -EBADF;
}

/* The loader's round: load on itself, start, read, stop, unload, again. */
static void kt_race_load_round(struct kt_race *k, struct pfmk_ctx *desc)
{
	struct pfarg_load load = { .load_pid = task_pid_nr(current) };
	struct pfarg_start start = {};
	struct pfarg_pmd pd;
	int ret;

	for (;;) {
		atomic_set(&k->in_call, 1);
		ret = pfmk_load_context(desc, &load);
		atomic_set(&k->in_call, 0);
		k->calls++;
		if (!ret) {
			k->loads++;
			if (atomic_read(&k->closing))
				k->loads_closing++;
		}
		if (kt_race_ret(k, "load", ret))
			break;
		atomic_set(&k->in_call, 1);
		ret = pfmk_start(desc, &start);
		k->calls++;
		if (kt_race_ret(k, "start", ret))
			break;
		memset(&pd, 0, sizeof(pd));
		ret = pfmk_read_pmds(desc, &pd, 1);
		k->calls++;
		if (kt_race_ret(k, "read_pmds", ret))
			break;
		ret = pfmk_stop(desc);
		k->calls++;
		if (kt_race_ret(k, "stop", ret))
			break;
		ret = pfmk_unload_context(desc);
		atomic_set(&k->in_call, 0);
		k->calls++;
		if (kt_race_ret(k, "unload", ret))
			break;
		cond_resched();
	}
	atomic_set(&k->in_call, 0);
	k->ebadf++;
}

static int kt_race_loader(void *data)
{
	struct kt_race *k = data;
	unsigned int seen = 0;

	while (kt_race_next(k, seen)) {
		seen = READ_ONCE(k->round);
		kt_race_load_round(k, READ_ONCE(k->desc));
		atomic_inc(&k->racers_done);
		wake_up_all(&k->wq);
	}
	kt_wait_stop();
	return 0;
}

/* The reader's round: blocking reads until the descriptor is closed. */
static int kt_race_reader(void *data)
{
	struct kt_race *k = data;
	unsigned int seen = 0;
	union pfarg_msg msg;
	ssize_t n;

	while (kt_race_next(k, seen)) {
		seen = READ_ONCE(k->round);
		for (;;) {
			n = pfmk_read(READ_ONCE(k->desc), &msg, sizeof(msg),
				      false);
			if (n == -EBADF) {
				k->reads_closed++;
				break;
			}
			if (n && n != (ssize_t)sizeof(msg)) {
				kt_race_ret(k, "read", n);
				break;
			}
			k->reads_other++;
		}
		atomic_inc(&k->racers_done);
		wake_up_all(&k->wq);
	}
	kt_wait_stop();
	return 0;
}

/* A racer thread on KT_CPU, with the scenario's thread. */
static struct task_struct *kt_race_thread(struct kt_race *k,
					  int (*fn)(void *data),
					  const char *name)
{
	struct task_struct *task;

	task = kthread_create(fn, k, "pfm_kapi_%s", name);
	if (IS_ERR(task))
		return task;
	kthread_bind(task, KT_CPU);
	get_task_struct(task);
	wake_up_process(task);
	return task;
}

/* End a racer, between rounds (no round starts after this). */
static void kt_race_stop(struct kt_race *k, struct task_struct *task)
{
	/* Pairs with kt_race_next()'s acquire. */
	smp_store_release(&k->stop, true);
	wake_up_all(&k->wq);
	kthread_stop(task);
	put_task_struct(task);
}

/*
 * One round: a context for the racers, a random sleep (the wake-up
 * preempts the loader somewhere in its loop), the close, then both
 * racers must see -EBADF.  Returns -ETIMEDOUT when they did not within
 * KT_RACE_STUCK_MS; then the completion is completed until they did,
 * for the round to end.
 */
static int kt_race_round(struct kt_run *r, struct kt_race *k, u64 *hits)
{
	struct pfarg_ctx req = {};
	struct pfarg_pmc pc;
	struct pfarg_pmd pd;
	struct completion *c;
	struct pfmk_ctx *desc;
	int ret;

	c = kmalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return kt_fail(r, "kmalloc", -ENOMEM);
	init_completion(c);
	ret = pfmk_create_context(&req, NULL, NULL, 0, c, &desc, NULL);
	if (ret) {
		kt_fail(r, "create", ret);
		goto free_completion;
	}
	kt_pmc(&pc, 0, KT_EV_TASK_CLOCK);
	kt_pmd(&pd, 0, 0, 0);
	ret = pfmk_write_pmcs(desc, &pc, 1);
	if (!ret)
		ret = pfmk_write_pmds(desc, &pd, 1);
	if (ret) {
		kt_fail(r, "write_regs", ret);
		pfmk_close(desc);
		goto free_completion;
	}
	atomic_set(&k->racers_done, 0);
	WRITE_ONCE(k->desc, desc);
	WRITE_ONCE(k->c, c);
	/* Pairs with kt_race_next(): the racers see this round's desc. */
	smp_store_release(&k->round, k->round + 1);
	wake_up_all(&k->wq);

	usleep_range(get_random_u32_below(KT_RACE_DELAY_US),
		     KT_RACE_DELAY_US);
	if (atomic_read(&k->in_call))
		(*hits)++;
	atomic_set(&k->closing, 1);
	ret = pfmk_close(desc);
	atomic_set(&k->closing, 0);
	if (ret)
		kt_fail(r, "race_close", ret);
	if (!wait_event_timeout(k->wq, atomic_read(&k->racers_done) == 2,
				msecs_to_jiffies(KT_RACE_STUCK_MS))) {
		ret = kt_fail(r, "race_reader_not_woken", -ETIMEDOUT);
		while (!wait_event_timeout(k->wq,
					   atomic_read(&k->racers_done) == 2,
					   HZ / 10))
			complete(c);
	}
free_completion:
	kfree(c);
	return ret;
}

/* "close_race". */
static int kt_close_race(struct kt_run *r)
{
	struct task_struct *loader, *reader;
	struct kt_race *k;
	u64 t0, hits = 0;
	unsigned int i;

	k = kzalloc(sizeof(*k), GFP_KERNEL);
	if (!k)
		return kt_fail(r, "kzalloc", -ENOMEM);
	init_waitqueue_head(&k->wq);
	loader = kt_race_thread(k, kt_race_loader, "race_load");
	if (IS_ERR(loader)) {
		kt_fail(r, "loader", PTR_ERR(loader));
		goto free_race;
	}
	reader = kt_race_thread(k, kt_race_reader, "race_read");
	if (IS_ERR(reader)) {
		kt_fail(r, "reader", PTR_ERR(reader));
		goto stop_loader;
	}
	t0 = ktime_get_ns();
	for (i = 0; i < KT_RACE_ROUNDS && ktime_get_ns() - t0 < KT_RACE_MAX_NS;
	     i++)
		if (kt_race_round(r, k, &hits))
			break;
	kt_put(r, "rounds=%u\nelapsed=%llu\nraces_hit=%llu\n", i,
	       ktime_get_ns() - t0, hits);
	kt_put(r, "calls=%llu\nloads=%llu\nloads_closing=%llu\nebadf=%llu\n",
	       k->calls, k->loads, k->loads_closing, k->ebadf);
	kt_put(r, "reads_closed=%llu\nreads_other=%llu\nodd=%llu\n",
	       k->reads_closed, k->reads_other, k->odd);
	if (k->odd)
		kt_put(r, "odd_call=%s\nodd_ret=%ld\n", k->odd_call,
		       k->odd_ret);
	kt_race_stop(k, reader);
stop_loader:
	kt_race_stop(k, loader);
free_race:
	kfree(k);
	return r->err;
}

static int kt_thread_fn(void *data)
{
	struct kt_run *r = data;

	kt_put(r, "scenario=%s\n", r->sc->name);
	r->sc->fn(r);
	kt_report(r);
	kt_wait_stop();
	return 0;
}

static const struct kt_scenario kt_scenarios[] = {
	{ .name = "system", .fn = kt_system },
	{ .name = "thread", .fn = kt_thread },
	{ .name = "ring", .fn = kt_ring },
	{ .name = "dfl", .fn = kt_dfl },
	{ .name = "refusals", .fn = kt_refusals },
	{ .name = "create", .fn = kt_create },
	{ .name = "long", .fn = kt_long, .runs_on = true },
	{ .name = "long_ring", .fn = kt_long_ring, .runs_on = true },
	{ .name = "close_race", .fn = kt_close_race },
};

/* Stop the current run's thread (it closes what it holds) and free it. */
static void kt_reap(void)
{
	lockdep_assert_held(&kt_lock);
	if (!kt_cur)
		return;
	kthread_stop(kt_cur->task);
	put_task_struct(kt_cur->task);
	kfree(kt_cur);
	kt_cur = NULL;
}

/* Start @sc in a thread bound to KT_CPU; wait until its result is ready. */
static int kt_start(const struct kt_scenario *sc)
{
	struct task_struct *task;
	struct kt_run *r;
	int ret;

	lockdep_assert_held(&kt_lock);
	kt_reap();
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	r->sc = sc;
	init_completion(&r->ready);
	task = kthread_create(kt_thread_fn, r, "pfm_kapi_%s", sc->name);
	if (IS_ERR(task)) {
		kfree(r);
		return PTR_ERR(task);
	}
	kthread_bind(task, KT_CPU);
	get_task_struct(task);
	r->task = task;
	kt_cur = r;
	wake_up_process(task);

	/* Killed: the thread goes on; the next run or the exit stops it. */
	ret = wait_for_completion_killable(&r->ready);
	if (ret)
		return ret;
	mutex_lock(&kt_result_lock);
	strscpy(kt_result, r->buf, sizeof(kt_result));
	mutex_unlock(&kt_result_lock);
	if (!sc->runs_on)
		kt_reap();
	return 0;
}

static ssize_t kt_run_write(struct file *file, const char __user *ubuf,
			    size_t len, loff_t *ppos)
{
	const struct kt_scenario *sc = NULL;
	char name[16];
	unsigned int i;
	int ret;

	if (!len || len >= sizeof(name))
		return -EINVAL;
	if (copy_from_user(name, ubuf, len))
		return -EFAULT;
	name[len] = 0;
	for (i = 0; i < ARRAY_SIZE(kt_scenarios); i++)
		if (!strcmp(strim(name), kt_scenarios[i].name))
			sc = &kt_scenarios[i];
	if (!sc)
		return -EINVAL;
	ret = mutex_lock_killable(&kt_lock);
	if (ret)
		return ret;
	ret = kt_start(sc);
	mutex_unlock(&kt_lock);
	return ret ? ret : len;
}

static int kt_result_show(struct seq_file *m, void *v)
{
	mutex_lock(&kt_result_lock);
	seq_puts(m, kt_result);
	mutex_unlock(&kt_result_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kt_result);

static const struct file_operations kt_run_fops = {
	.owner = THIS_MODULE,
	.write = kt_run_write,
	.llseek = noop_llseek,
};

static int __init pfm_kapi_test_init(void)
{
	kt_dir = debugfs_create_dir("pfm_kapi_test", NULL);
	debugfs_create_file("run", 0200, kt_dir, NULL, &kt_run_fops);
	debugfs_create_file("result", 0400, kt_dir, NULL, &kt_result_fops);
	return 0;
}

static void __exit pfm_kapi_test_exit(void)
{
	debugfs_remove_recursive(kt_dir);
	mutex_lock(&kt_lock);
	kt_reap();
	mutex_unlock(&kt_lock);
}

module_init(pfm_kapi_test_init);
module_exit(pfm_kapi_test_exit);

MODULE_DESCRIPTION("perfmon: kernel API scenarios in kernel threads (tests only)");
MODULE_LICENSE("GPL");
