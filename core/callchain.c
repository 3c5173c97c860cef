// SPDX-License-Identifier: GPL-2.0
/*
 * User call chains for samples (PFM_REGFL_CALLCHAIN): the frame-pointer
 * chain of the interrupted thread's user stack, as perf's user
 * callchain walks it.  Both x86_64 and arm64 keep a frame record of two
 * words at the frame pointer: the caller's frame pointer, then the
 * return address.  A 32-bit x86 task's words are 4 bytes; an AArch32
 * task's records differ by compiler and are not walked.
 *
 * It runs in the overflow interrupt, so user memory is read with
 * copy_from_user_nofault() (no fault is taken; an unmapped or swapped
 * out page ends the chain), the depth is bounded, and the walk stops
 * at the first frame that is not above the previous one (a loop, a
 * corrupt or absent frame pointer).
 *
 * Kernel call chains (PFM_REGFL_KCALLCHAIN) come from the kernel's own
 * unwinder, through stack_trace_save(), the one stack walk modules may
 * call (stack_trace_save_regs() is not exported): it walks from here,
 * through the interrupt's stack and its register frame, into the
 * interrupted one; the entries from the interrupted instruction
 * pointer on are the interrupted code's chain.
 */
#include <linux/compat.h>
#include <linux/percpu.h>
#include <linux/preempt.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/stacktrace.h>
#include <linux/uaccess.h>

#include "perfmon.h"

/* Bytes of one word of @regs' frame records; 0: not walked. */
static unsigned int pfm_frame_word(struct pt_regs *regs)
{
#ifdef CONFIG_X86_64
	return user_64bit_mode(regs) ? 8 : 4;
#elif defined(CONFIG_ARM64)
	return compat_user_mode(regs) ? 0 : 8;
#else
	return sizeof(long);
#endif
}

/* Read frame record @fp: the caller's frame pointer and return address. */
static bool pfm_frame_read(unsigned long fp, unsigned int word,
			   unsigned long *next, unsigned long *ret)
{
	u32 rec32[2];
	u64 rec64[2];

	if (word == 4) {
		if (copy_from_user_nofault(rec32, (void __user *)fp,
					   sizeof(rec32)))
			return false;
		*next = rec32[0];
		*ret = rec32[1];
		return true;
	}
	if (copy_from_user_nofault(rec64, (void __user *)fp, sizeof(rec64)))
		return false;
	*next = rec64[0];
	*ret = rec64[1];
	return true;
}

/**
 * pfm_user_callchain() - the user call chain of the interrupted thread
 * @regs: registers at the interrupt, or NULL
 * @ips: out: the user instruction pointer, then the return addresses,
 *       innermost first
 * @max: entries @ips holds (at least 1)
 *
 * Interrupted in the kernel, the chain is that of the user state the
 * thread entered the kernel from; a kernel thread has none.
 *
 * Context: interrupts disabled (the overflow interrupt).
 * Return: entries written, 0 when there is no user state.
 */
unsigned int pfm_user_callchain(struct pt_regs *regs, u64 *ips,
				unsigned int max)
{
	unsigned long fp, next, ret;
	unsigned int n = 0, word;

	if (!regs || !current->mm || (current->flags & PF_KTHREAD))
		return 0;
	if (!user_mode(regs))
		regs = task_pt_regs(current);
	ips[n++] = instruction_pointer(regs);
	word = pfm_frame_word(regs);
	if (!word)
		return n;
	fp = frame_pointer(regs);
	while (n < max && fp && IS_ALIGNED(fp, word)) {
		if (!pfm_frame_read(fp, word, &next, &ret) || !ret)
			break;
		ips[n++] = ret;
		/* Frames lie above each other: anything else ends the walk. */
		if (next <= fp)
			break;
		fp = next;
	}
	return n;
}

#ifdef CONFIG_STACKTRACE
/*
 * The whole walk, interrupt frames included, before the interrupted
 * part is kept: one buffer for interrupts and one for NMIs, which may
 * come in the middle of an interrupt's walk.
 */
#define PFM_KSTACK_WALK	(PFM_MAX_KCALLCHAIN + 32)

static DEFINE_PER_CPU(unsigned long [2][PFM_KSTACK_WALK], pfm_kstack);

/* The walk's entries from the interrupted @ip on, into @ips. */
static unsigned int pfm_kstack_walk(unsigned long ip, u64 *ips,
				    unsigned int max)
{
	unsigned long *walk = this_cpu_ptr(pfm_kstack)[in_nmi() ? 1 : 0];
	unsigned int nr, i, n = 0;

	nr = stack_trace_save(walk, PFM_KSTACK_WALK, 0);
	for (i = 0; i < nr && walk[i] != ip; i++)
		;
	for (; i < nr && n < max; i++)
		ips[n++] = walk[i];
	return n;
}
#else
static unsigned int pfm_kstack_walk(unsigned long ip, u64 *ips,
				    unsigned int max)
{
	return 0;
}
#endif

/**
 * pfm_kernel_callchain() - the kernel call chain of the interrupted code
 * @regs: registers at the interrupt, or NULL
 * @ips: out: the kernel instruction pointer, then the return addresses,
 *       innermost first
 * @max: entries @ips holds (at least 1)
 *
 * The caller checked that the monitor may see kernel addresses.  When
 * the unwinder does not reach the interrupted frame (it stopped in the
 * interrupt's frames, or the stack was deeper than it walks), the chain
 * is the instruction pointer alone.
 *
 * Context: interrupts disabled (the overflow interrupt).
 * Return: entries written, 0 when the thread was interrupted at user
 * level.
 */
unsigned int pfm_kernel_callchain(struct pt_regs *regs, u64 *ips,
				  unsigned int max)
{
	unsigned int n;

	if (!regs || user_mode(regs))
		return 0;
	n = pfm_kstack_walk(instruction_pointer(regs), ips, max);
	if (!n)
		ips[n++] = instruction_pointer(regs);
	return n;
}
