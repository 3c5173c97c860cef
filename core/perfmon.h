/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal declarations shared by the files of perfmon.ko.
 *
 * Locking:
 *  - pfm_pmu_mutex (core/pmu.c) guards the registered description pointer;
 *    a context holds a module reference on the description it uses, so
 *    the description cannot go away under it.
 *  - ctx->lock guards everything in a context and its event sets.  It is
 *    a raw spinlock taken irqsave from process context: the scheduler's
 *    hooks take it under the runqueue lock, the overflow interrupt, IPIs
 *    and the set-switch hrtimer in hard interrupt context, where
 *    PREEMPT_RT's spinlock_t would sleep.  So nothing under it may sleep
 *    (allocation, copy_{from,to}_user, waiting) nor take a spinlock_t or
 *    rwlock_t, which sleep on PREEMPT_RT: wake-ups (wait queues, fasync),
 *    kmalloc()/kfree(), get_random_*() run outside it or in an irq_work.
 *    Documentation/design.rst has the rules.
 */
#ifndef _PERFMON_CORE_H
#define _PERFMON_CORE_H

#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uidgid.h>
#include <linux/poll.h>
#include <linux/prandom.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <perfmon/pmu.h>
#include <perfmon/smpl_fmt.h>

#include "frontend.h"

/**
 * enum pfm_ctx_state - context states (Documentation/uapi.rst has the table)
 * @PFM_CTX_NEW: opened, PFM_CREATE_CONTEXT not issued yet
 * @PFM_CTX_UNLOADED: created, not attached to a thread or CPU
 * @PFM_CTX_LOADED: attached
 * @PFM_CTX_MASKED: attached, monitoring masked until PFM_RESTART
 * @PFM_CTX_ZOMBIE: attached thread or CPU still references a closed context
 */
enum pfm_ctx_state {
	PFM_CTX_NEW,
	PFM_CTX_UNLOADED,
	PFM_CTX_LOADED,
	PFM_CTX_MASKED,
	PFM_CTX_ZOMBIE,
};

/**
 * struct pfm_pmd - software state of one PMD in one event set
 * @value: 64-bit virtualized value
 * @lval: value last loaded by a reset (reg_last_reset_val)
 * @long_reset: reset value after a notification
 * @short_reset: reset value after an overflow without notification
 * @reset_pmds: PMDs reset when this one overflows
 * @smpl_pmds: PMDs recorded when this one overflows
 * @eventid: opaque id recorded in samples
 * @random_mask: randomized bits of the reset value
 * @ovflsw_thres: overflows before a set switch (0: none)
 * @ovflsw_left: overflows left before the switch
 * @start_pmds: trigger: PMDs (0-63) released when this one overflows
 * @stop_pmds: trigger: PMDs (0-63) held when this one overflows
 * @flags: PFM_REGFL_* given at write
 * @freq: overflows per second wanted (PFM_REGFL_FREQ), else 0
 * @freq_stamp: ns its set had counted at its last timed overflow (0: none
 *              yet)
 * @freq_events: events of the overflows since @freq_stamp that the clock
 *               did not time (it had not moved)
 * @freq_settled: a new period fell within a factor of 2 of the one
 *                before: from then on the period moves by eighths
 * @freq_high: the last timed period asked for at least twice itself
 */
struct pfm_pmd {
	u64 value;
	u64 lval;
	u64 long_reset;
	u64 short_reset;
	u64 reset_pmds[PFM_PMD_BV];
	u64 smpl_pmds[PFM_PMD_BV];
	u64 eventid;
	u64 random_mask;
	u64 ovflsw_thres;
	u64 ovflsw_left;
	u64 start_pmds;
	u64 stop_pmds;
	u64 freq_stamp;
	u64 freq_events;
	u32 flags;
	u32 freq;
	bool freq_settled;
	bool freq_high;
};

/**
 * struct pfm_event_set - one event set of a context
 * @list: in ctx->sets, sorted by @id
 * @id: set number
 * @flags: PFM_SETFL_*
 * @timeout: effective switch timeout in ns (PFM_SETFL_TIME_SWITCH)
 * @timeleft: ns left of @timeout when the set was last switched out of
 *            a CPU without switching sets (context switch, stop)
 * @runs: times the set was activated
 * @duration: ns the set was active and counting
 * @used_pmcs: PMCs written in this set
 * @used_pmds: PMDs written in this set
 * @no_emul64_pmcs: PMCs written with PFM_REGFL_NO_EMUL64
 * @ovfl_pmds: PMDs whose 64-bit value overflowed last
 * @held_pmds: PMDs held by a trigger: their value is kept in @pmds, the
 *             hardware counter is ignored until a start trigger
 * @pmcs: PMC values, indexed by PMC number (pmu->max_pmc entries)
 * @pmds: PMD state, indexed by PMD number (pmu->max_pmd entries)
 */
struct pfm_event_set {
	struct list_head list;
	u16 id;
	u32 flags;
	u64 timeout;
	u64 timeleft;
	u64 runs;
	u64 duration;
	DECLARE_BITMAP(used_pmcs, PFM_MAX_PMCS);
	DECLARE_BITMAP(used_pmds, PFM_MAX_PMDS);
	DECLARE_BITMAP(no_emul64_pmcs, PFM_MAX_PMCS);
	DECLARE_BITMAP(ovfl_pmds, PFM_MAX_PMDS);
	DECLARE_BITMAP(held_pmds, PFM_MAX_PMDS);
	u64 *pmcs;
	struct pfm_pmd *pmds;
};

struct pfm_hook;
struct pid_namespace;
struct vm_area_struct;
struct completion;

/* Messages queued for read(): perfmon2's depth. */
#define PFM_MSGS_COUNT	64

/**
 * struct pfm_pmu - the registered description, as the core knows it
 * @conf: the description its module registered; the core calls its ops
 *        with it, and never writes to it
 * @ops: its engine's ops (@conf->ops); beside @conf, so that an op's call
 *       loads both with one instruction (arm64's ldp)
 * @map: its register map (@conf->map)
 * @checks: the map's checks of PMC values (an empty table without)
 * @cfg: the map's driver settings (an empty table without)
 * @impl_pmcs: implemented PMCs
 * @impl_pmds: implemented PMDs
 * @cnt_pmds: implemented PMDs that are counters
 * @num_pmcs: number of implemented PMCs
 * @num_pmds: number of implemented PMDs
 * @max_pmc: highest implemented PMC plus one
 * @max_pmd: highest implemented PMD plus one
 * @ovfl_mask: mask of the bits a hardware counter implements
 *
 * Derived at registration (core/pmu.c); constant while any context
 * holds the description's module.
 */
struct pfm_pmu {
	struct pfm_pmu_config *conf;
	const struct pfm_pmu_ops *ops;
	const struct pfm_pmu_map *map;
	const struct pfm_pmu_checks *checks;
	const struct pfm_pmu_settings *cfg;
	DECLARE_BITMAP(impl_pmcs, PFM_MAX_PMCS);
	DECLARE_BITMAP(impl_pmds, PFM_MAX_PMDS);
	DECLARE_BITMAP(cnt_pmds, PFM_MAX_PMDS);
	u16 num_pmcs;
	u16 num_pmds;
	u16 max_pmc;
	u16 max_pmd;
	u64 ovfl_mask;
};

/**
 * struct pfm_context - one monitoring context (one open /dev/perfmon)
 * @lock: guards every field below except those marked otherwise
 * @refs: references: the open file, pending works
 * @rcu: the free waits a grace period (pfm_context_free()); near the
 *       top, where kfree_rcu() wants it
 * @state: enum pfm_ctx_state
 * @flags: PFM_FL_* given at creation
 * @pmu: description in use (module reference held), NULL while NEW
 * @sets: event sets sorted by id; set 0 exists from creation on
 * @nr_sets: entries of @sets, at most pfm_sets_per_ctx_max when they
 *           were created (core/sets.c: the bound of every walk of @sets)
 * @sets_duration: the sum of @duration over @sets, kept as they change,
 *                 so that the control page's time_enabled, rewritten on
 *                 every switch, costs no walk of @sets
 * @dead_sets: sets deleted, to be freed outside the lock
 * @active_set: the set counting (or to count) while loaded
 * @started: PFM_START was called and PFM_STOP not since
 * @live_cpu: CPU whose PMU holds @active_set, or -1.  Only that CPU
 *            changes it from its own value (it is in the PMU there).
 * @counting: the PMU of @live_cpu counts for this context
 * @hw_kept: a virtual description still holds @active_set as the thread's
 *           last switch out left it (pfm_ctx_switch_out()); no call ran
 *           on the saved set since
 * @hw_counting: ... and was left counting there: its counters are the
 *               thread's, which perf switches with it
 * @hw_unsaved: ... and @active_set's PMD values are still only there: a
 *              reader of the saved set pulls them first (pfm_ctx_pull())
 * @live_since: local_clock() when @active_set began counting on @live_cpu
 * @task: per-thread: the monitored thread (reference held) while loaded
 * @hook: per-thread: the thread's hook while loaded, else NULL
 * @task_ended: per-thread: the thread passed its last context switch
 * @cpu: system-wide: the monitored CPU while loaded, else -1
 * @uid: owner, for the per-user limit (set at creation, then constant)
 * @pid_ns: the opener's pid namespace: process and thread ids in
 *          messages and samples are as it sees them, 0 for a thread it
 *          does not see (reference held; constant)
 * @priv: PFM_PMC_PRIV_* the creator had (pfm_perm_grant(); all for the
 *        kernel API): what PMC values may count, whether a system-wide
 *        load is allowed (PFM_PMC_PRIV_CPU).  Set by PFM_CREATE_CONTEXT,
 *        then constant
 * @kernel_ips: the creator may see kernel addresses (PFM_PMC_PRIV_KERNEL
 *              in @priv); otherwise samples and messages of overflows
 *              taken in kernel mode carry IP 0 (set with @priv)
 * @exec_priv: the creator had CAP_SYS_PTRACE (or is the kernel API): a
 *             per-thread context stays loaded when its thread execs an
 *             image that is not dumpable by its owner (set with @priv)
 * @exec_id: per-thread: the thread's self_exec_id when the load checked
 *           the caller may monitor it (core/exec.c)
 * @switch_timer: time-based set switching on @live_cpu
 * @throttled: too many overflow interrupts: not counting until
 *             @throttle_timer fires, a tick later (core/throttle.c)
 * @throttles: times the context was throttled since its creation
 * @throttle_iw: starts @throttle_timer after the interrupt (an NMI on x86)
 * @throttle_timer: ends the throttling
 * @unthrottle_csd: resumes counting on @live_cpu when the timer fired
 *                  elsewhere
 * @msgq: message ring; @msgq_head is the next to read, @msgq_tail the
 *        next free slot (indices modulo PFM_MSGS_COUNT, both free-running)
 * @msgq_head: see @msgq
 * @msgq_tail: see @msgq
 * @msgq_wait: readers and pollers (own lock; woken outside @lock)
 * @async_queue: O_ASYNC readers (own lock)
 * @wake_iw: wakes readers after an overflow interrupt (pfm_msg_wake_irq())
 * @exit_iw: per-thread: queues @exit_work from the scheduler
 * @exit_work: per-thread: unloads after the thread ended (no lock)
 * @end_pid: per-thread: thread group of the monitored thread, for PFM_MSG_END
 * @end_tid: per-thread: the monitored thread, for PFM_MSG_END
 * @task_node: per-thread: in the table of monitored threads (sessions mutex)
 * @drv_cfg: driver settings (PFM_SET_DRV_CONFIG), in force while live
 * @smpl: sampling buffer, or NULL (set at creation, then constant)
 * @upage: control page for user-level reads, or NULL (set at its first
 *         mmap(), then constant)
 * @restart_pmds: PMDs of @active_set reloaded with their long reset
 *                value by PFM_RESTART (the notifying ones)
 * @switch_pending: an overflow switch fell due while masking: at restart
 * @nomsg_wakes: wake-ups without a message not yet read (read() gives 0)
 * @restart_wait: a thread blocked by PFM_FL_NOTIFY_BLOCK (own lock; woken
 *                outside @lock)
 * @block_work: stops the monitored thread on its return to user space
 * @block_queued: @block_work is queued on the monitored thread
 * @block_add: pfm_interrupt() queues @block_work once it unlocks
 * @free_work: frees the context on pfm_wq (pfm_ctx_put_async())
 * @rnd: randomizes reset values (PFM_REGFL_RANDOM); get_random_u64()
 *       takes a lock that sleeps on PREEMPT_RT, this state none
 * @kernel: created through the kernel API: no user permission checks,
 *          kernel threads may monitor themselves (constant)
 * @kcompl: kernel API: completed at each wake-up (constant); its owner's,
 *          not touched once pfm_ctx_release_sync() returned
 * @ops: what the layers above the object do at its thread's end and at
 *       its free (set at allocation, then constant)
 * @vpmu: a virtual description's state for this context (@ctx_alloc of
 *        struct pfm_pmu; set at creation, then constant), or NULL
 * @vpmu_mutex: orders the virtual description's @ctx_sync calls, so
 *              that the last one sees the context as it is (own lock)
 * @resync_work: syncs @vpmu on pfm_wq after its CPU came back online
 *               (pfm_vpmu_resync_async())
 */
struct pfm_context {
	raw_spinlock_t lock;	/* irqsave: the overflow interrupt takes it */
	refcount_t refs;
	struct rcu_head rcu;
	enum pfm_ctx_state state;
	u32 flags;
	struct pfm_pmu *pmu;
	struct list_head sets;
	unsigned int nr_sets;
	u64 sets_duration;
	struct list_head dead_sets;
	struct pfm_event_set *active_set;
	bool started;
	int live_cpu;
	bool counting;
	bool hw_kept;
	bool hw_counting;
	bool hw_unsaved;
	u64 live_since;
	struct task_struct *task;
	struct pfm_hook *hook;
	bool task_ended;
	int cpu;
	kuid_t uid;
	struct pid_namespace *pid_ns;
	u32 priv;
	bool kernel_ips;
	bool exec_priv;
	u64 exec_id;
	struct hrtimer switch_timer;
	bool throttled;
	unsigned int throttles;
	struct irq_work throttle_iw;
	struct hrtimer throttle_timer;
	call_single_data_t unthrottle_csd;
	union pfarg_msg msgq[PFM_MSGS_COUNT];
	unsigned int msgq_head;
	unsigned int msgq_tail;
	wait_queue_head_t msgq_wait;
	struct fasync_struct *async_queue;
	struct irq_work wake_iw;
	struct irq_work exit_iw;
	struct work_struct exit_work;
	pid_t end_pid;
	pid_t end_tid;
	struct hlist_node task_node;
	u64 drv_cfg[PFM_MAX_DRV_CFG];
	struct pfm_smpl_buf *smpl;
	struct pfm_user_page *upage;
	DECLARE_BITMAP(restart_pmds, PFM_MAX_PMDS);
	bool switch_pending;
	unsigned long nomsg_wakes;
	wait_queue_head_t restart_wait;
	struct callback_head block_work;
	bool block_queued;
	bool block_add;
	struct work_struct free_work;
	struct work_struct resync_work;
	struct rnd_state rnd;
	bool kernel;
	struct completion *kcompl;
	const struct pfm_ctx_ops *ops;
	void *vpmu;
	struct mutex vpmu_mutex;	/* orders @ctx_sync calls */
};

/**
 * struct pfm_ctx_ops - a context's parts above the object, for the
 * layers below them (core/create.c sets them)
 * @thread_end: the monitored thread passed its last context switch
 *              (core/hook.c; ctx->lock held, any context): hand its
 *              unload to process context
 * @free: release the parts (sampling buffer, control page, throttling)
 *        when the last reference goes, before the object is freed
 */
struct pfm_ctx_ops {
	void (*thread_end)(struct pfm_context *ctx);
	void (*free)(struct pfm_context *ctx);
};

/* A system-wide context (monitors a CPU), not a per-thread one. */
static inline bool pfm_ctx_is_system(const struct pfm_context *ctx)
{
	return ctx->flags & PFM_FL_SYSTEM_WIDE;
}

/*
 * The process and thread ids of current in the monitor's pid namespace,
 * for an overflow's sample or message.  On the monitored thread of a
 * per-thread context, the ids saved at load: an exiting thread still
 * counts until its last context switch, but its pid is detached before,
 * and task_pid_nr_ns() would give 0.
 */
static inline void pfm_current_ids(struct pfm_context *ctx, u32 *pid,
				   u32 *tid)
	__must_hold(&ctx->lock)
{
	if (ctx->task == current) {
		*pid = ctx->end_pid;
		*tid = ctx->end_tid;
		return;
	}
	*pid = task_tgid_nr_ns(current, ctx->pid_ns);
	*tid = task_pid_nr_ns(current, ctx->pid_ns);
}

/*
 * The core's files by layer, from the bottom (Documentation/design.rst,
 * "Files"): a file calls into its own layer and the ones below it.
 */

/* Foundations. core/pmu.c: the registered description */
struct pfm_pmu *pfm_pmu_get(void);
struct pfm_pmu *pfm_pmu_get_or_load(void);
const char *pfm_pmu_choice_name(void);
void pfm_pmu_put(struct pfm_pmu *pmu);
int pfm_pmu_notifier_register(struct notifier_block *nb);
void pfm_pmu_notifier_unregister(struct notifier_block *nb);
/* pfm_pmu_notifier_register()'s events; the data is the description. */
#define PFM_PMU_REGISTERED	1
#define PFM_PMU_UNREGISTERED	2

/* core/perm.c: the paranoid level (perf's numbers) and its decisions */
#define PFM_PARANOID_MIN	(-1)
#define PFM_PARANOID_DFL	2
#define PFM_PARANOID_MAX	3
extern int pfm_paranoid;
u32 pfm_perm_grant(void);
bool pfm_perm_exec(void);
int pfm_perm_create(void);
void pfm_perm_pmc_refused(u16 cnum, u32 missing);
void pfm_perm_system_refused(void);
struct task_struct *pfm_get_target(pid_t tid, bool kernel, u64 *exec_id);

/* Objects. core/context.c */
extern struct workqueue_struct *pfm_wq;
extern unsigned int pfm_ctx_per_user_max;
struct pfm_context *pfm_ctx_alloc(const struct pfm_ctx_ops *ops,
				  struct completion *kcompl);
void pfm_ctx_get(struct pfm_context *ctx);
void pfm_ctx_put(struct pfm_context *ctx);
void pfm_ctx_put_async(struct pfm_context *ctx);
struct pfm_event_set *pfm_event_set_alloc(const struct pfm_pmu *pmu,
					  u16 id, u32 priv);
void pfm_event_set_free(struct pfm_event_set *set);
void pfm_free_dead_sets(struct pfm_context *ctx);
struct pfm_event_set *pfm_find_set(struct pfm_context *ctx, u16 id);
int pfm_check_created(struct pfm_context *ctx);

/* core/msg.c */
void pfm_msg_end(struct pfm_context *ctx, pid_t pid, pid_t tid);
void pfm_msg_post_ovfl(struct pfm_context *ctx, const unsigned long *pmds,
		       u64 ip);
void pfm_msg_post_wake(struct pfm_context *ctx);
bool pfm_msg_post_throttle(struct pfm_context *ctx);
void pfm_msg_wake(struct pfm_context *ctx);
void pfm_msg_wake_irq(struct pfm_context *ctx);
void pfm_msg_init(struct pfm_context *ctx);

/* Engine. core/vpmu.c: a virtual description's state per context */
int pfm_vpmu_sync(struct pfm_context *ctx);
void pfm_vpmu_resync_async(struct pfm_context *ctx);
void pfm_vpmu_resync_work(struct work_struct *work);
int pfm_vpmu_finish(struct pfm_context *ctx, int ret);

/* Engine. core/ctxsw.c: the active set on a CPU's PMU */

/**
 * pfm_ctx_live_here() - is the context's active set live on this CPU?
 * @ctx: the context, locked
 *
 * Inline: every read of a counter asks.
 *
 * Context: interrupts disabled.
 * Return: true when its registers are in this CPU's PMU, not in the set.
 */
static inline bool pfm_ctx_live_here(struct pfm_context *ctx)
	__must_hold(&ctx->lock)
{
	return ctx->live_cpu == smp_processor_id();
}

void pfm_ctx_sched_in(struct pfm_context *ctx);
void pfm_ctx_sched_in_wanted(struct pfm_context *ctx);
void pfm_ctx_sched_out(struct pfm_context *ctx);
void pfm_ctx_set_out(struct pfm_context *ctx);
void pfm_ctx_set_in(struct pfm_context *ctx, struct pfm_event_set *prev);
void pfm_ctx_switch_out(struct pfm_context *ctx);
void pfm_ctx_activate_on(struct pfm_context *ctx, int cpu);
struct pfm_context *pfm_ctx_current(void);
void pfm_ctx_cpu_down(struct pfm_context *ctx);
void pfm_ctx_cpu_up(struct pfm_context *ctx);
void pfm_ctx_halt(struct pfm_context *ctx);
void pfm_ctx_resume(struct pfm_context *ctx);
void pfm_ctx_pull(struct pfm_context *ctx);

/**
 * pfm_pmd_read_hw() - the value of PMD @i of the set live on this CPU
 * @ctx: the context, locked, live on this CPU
 * @set: its active set
 * @i: a used PMD
 *
 * A counter's upper bits are the core's: only the implemented ones come
 * from the PMU.  A PMD held by a trigger keeps its saved value.  Inline:
 * the reads of a polling monitor come here once per PMD.
 *
 * Return: the 64-bit value.
 */
static inline u64 pfm_pmd_read_hw(struct pfm_context *ctx,
				  struct pfm_event_set *set, unsigned int i)
	__must_hold(&ctx->lock)
{
	struct pfm_pmu *pmu = ctx->pmu;
	struct pfm_pmd *pmd = &set->pmds[i];
	u64 hw, mask;

	if (test_bit(i, set->held_pmds))
		return pmd->value;
	/* Before the call: less to keep across it. */
	mask = test_bit(i, pmu->cnt_pmds) ? pmu->ovfl_mask : ~0ULL;
	hw = pmu->ops->read_pmd(pmu->conf, ctx->vpmu, i);
	return (pmd->value & ~mask) | (hw & mask);
}

/* core/run.c: run a call's __pfm_* core entry point @fn on @ctx, under
 * ctx->lock with interrupts off, on the CPU where the context's set is
 * live (by IPI when that is another one): pfm_run() on the set saved
 * there and loaded again after (@fn works on the registers' values in
 * memory), pfm_run_in_place() on the set as it is, live or saved (the
 * calls a monitor makes while counting: a read, a start, a stop).
 */
int pfm_run(struct pfm_context *ctx,
	    int (*fn)(struct pfm_context *ctx, void *info), void *info);
int pfm_run_in_place(struct pfm_context *ctx,
		     int (*fn)(struct pfm_context *ctx, void *info),
		     void *info);

/**
 * struct pfm_array - the entries of an array call, as the front end
 * copied them into kernel memory (the @info of its __pfm_* entry point)
 * @req: the entries; those refused come back flagged
 * @count: how many, at least 1
 */
struct pfm_array {
	void *req;
	unsigned int count;
};

/* core/set_switch.c: set switching */
void pfm_set_activate(struct pfm_context *ctx, struct pfm_event_set *set);
void pfm_switch_sets(struct pfm_context *ctx);
struct pfm_event_set *pfm_next_set(struct pfm_context *ctx);
void pfm_switch_timer_init(struct pfm_context *ctx);
void pfm_switch_timer_exit(struct pfm_context *ctx);
void pfm_irqoff_note(u64 since);
u64 pfm_irqoff_max_ns(void);
void pfm_irqoff_reset(void);

/* core/hook.c: per-thread monitoring follows the thread */
struct pfm_hook *pfm_hook_get(struct task_struct *task);
void pfm_hook_put(struct pfm_hook *hook);
int pfm_hook_attach(struct pfm_hook *hook, struct pfm_context *ctx);
void pfm_hook_detach(struct pfm_hook *hook);

/* core/exec.c: an exec of an image its monitor may not watch ends it */
int pfm_exec_init(void);
void pfm_exec_exit(void);
/* core/perm.c: ... which perm.c decides */
bool pfm_exec_revokes(struct pfm_context *ctx);
void pfm_exec_log(struct pfm_context *ctx);

/* core/ovfl.c */
void pfm_pmd_reset(struct pfm_context *ctx, struct pfm_event_set *set,
		   unsigned int i, bool long_reset, bool live);
void pfm_rearm_triggers(struct pfm_context *ctx, struct pfm_event_set *set);
void pfm_block_init(struct pfm_context *ctx);

/* core/throttle.c: a bound on the overflow interrupts of each CPU */
extern unsigned int pfm_max_ovfl_rate;
bool pfm_throttle_check(struct pfm_context *ctx);
void pfm_throttle_init(struct pfm_context *ctx);
void pfm_throttle_exit(struct pfm_context *ctx);

/* core/smpl.c */
struct pfm_smpl_buf *pfm_smpl_buf_create(const char *name, const void *arg,
					 size_t arg_size, u32 ctx_flags,
					 bool charge);
void pfm_smpl_buf_free(struct pfm_smpl_buf *buf);
/* core/smpl_mem.c: their pages */
int pfm_smpl_alloc_pages(struct pfm_smpl_buf *buf, const void *arg,
			 bool charge);
void pfm_smpl_free_pages(struct pfm_smpl_buf *buf);
u32 pfm_smpl_record(struct pfm_context *ctx, struct pfm_event_set *set,
		    unsigned int i, u64 ip, struct pt_regs *regs, u64 tstamp);

/* core/callchain.c */
unsigned int pfm_kernel_callchain(struct pt_regs *regs, u64 *ips,
				  unsigned int max);
unsigned int pfm_user_callchain(struct pt_regs *regs, u64 *ips,
				unsigned int max);
void pfm_smpl_set_switch(struct pfm_context *ctx, u16 from, u16 to);
extern unsigned long pfm_smpl_mem_max;
extern unsigned int pfm_smpl_user_mlock_kb;
void pfm_smpl_mem_init(void);
unsigned long pfm_smpl_mem_used(void);
int pfm_fmt_notifier_register(struct notifier_block *nb);
void pfm_fmt_notifier_unregister(struct notifier_block *nb);
/* pfm_fmt_notifier_register()'s events; the data is the format. */
#define PFM_FMT_REGISTERED	1
#define PFM_FMT_UNREGISTERED	2

/* core/upage.c: the control page (user-level reads); upage.h */
void pfm_upage_rewrite(struct pfm_context *ctx);
void pfm_upage_free(struct pfm_context *ctx);

/* core/load.c: the end of a monitored thread, close */
void pfm_ctx_exit_queue(struct pfm_context *ctx);
void pfm_ctx_exit_init(struct pfm_context *ctx);
void pfm_ctx_exit_flush(struct pfm_context *ctx);

/* core/sets.c: event sets */
extern unsigned int pfm_sets_per_ctx_max;

/* core/drvcfg.c: driver settings */
void pfm_cfg_init(struct pfm_context *ctx);

/* core/session.c: who holds the PMU; CPU hotplug */
void pfm_sessions_lock(void);
void pfm_sessions_unlock(void);
int pfm_session_acquire(struct pfm_context *ctx, struct task_struct *task,
			int cpu);
void pfm_session_publish(struct pfm_context *ctx, struct task_struct *task,
			 int cpu);
void pfm_session_withdraw(struct pfm_context *ctx, bool task, int cpu);
void pfm_session_cancel(struct pfm_context *ctx, bool task);
void pfm_session_release(struct pfm_context *ctx, bool task, int cpu);
int pfm_sessions_init(void);
void pfm_sessions_exit(void);
unsigned int pfm_sessions_count(bool system);

/* Front ends: core/dev.c, kapi/kapi.c (frontend.h); core/sysfs*.c */
int pfm_sysfs_init(void);
void pfm_sysfs_exit(void);
struct kobject;
void pfm_sysfs_pmu_init(struct kobject *parent);
void pfm_sysfs_pmu_exit(void);

#endif /* _PERFMON_CORE_H */
