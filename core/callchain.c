// SPDX-License-Identifier: GPL-2.0
/*
 * User call chains for samples (PFM_REGFL_CALLCHAIN): the frame-pointer
 * chain of the interrupted thread's user stack, as perf's user
 * callchain walks it.  Both x86_64 and arm64 keep a frame record of two
 * words at the frame pointer: the caller's frame pointer, then the
 * return address.  A 32-bit x86 task's words are 4 bytes; an AArch32
 * task's records differ by compiler and are not walked.
 *
 * It runs in the overflow interrupt, so no fault is taken on user memory
 * (an unmapped or swapped out page ends the chain), the depth is
 * bounded, and the walk stops at the first frame that is not above the
 * previous one (a loop, a corrupt or absent frame pointer).  The words
 * are read with __get_user() under pagefault_disable(), as x86's perf
 * reads them: copy_from_user_nofault() a record, as arm64's perf reads
 * them, costs a call, the fault toggles and the hardened usercopy
 * object check for each record, about 90 instructions a frame on
 * arm64.  Not in an NMI (x86's PMU interrupt), which may come in the
 * middle of an mm switch: there only copy_from_user_nofault() knows
 * whether user memory is current's (nmi_uaccess_okay(), not exported).
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

/*
 * Read frame record @fp, page faults disabled, not in an NMI: the
 * caller's frame pointer and return address.  The range first, as
 * x86's perf does (valid_user_frame()): x86's __get_user() does not
 * check it, and a frame pointer that is not one (a word of a string)
 * may be a non-canonical address, whose access is a general protection
 * fault the fixup warns of (pfmon_test over pfm_perf on x86 hit it).
 */
static bool pfm_frame_get(unsigned long fp, unsigned int word,
			  unsigned long *next, unsigned long *ret)
{
	const u32 __user *rec32 = (const u32 __user *)fp;
	const u64 __user *rec64 = (const u64 __user *)fp;
	u32 n32, r32;
	u64 n64, r64;

	if (!access_ok((const void __user *)fp, 2 * word))
		return false;
	if (word == 4) {
		if (__get_user(n32, rec32) || __get_user(r32, rec32 + 1))
			return false;
		*next = n32;
		*ret = r32;
		return true;
	}
	if (__get_user(n64, rec64) || __get_user(r64, rec64 + 1))
		return false;
	*next = n64;
	*ret = r64;
	return true;
}

/* Read frame record @fp, in any context: see pfm_frame_get(). */
static bool pfm_frame_read(unsigned long fp, unsigned int word,
			   unsigned long *next, unsigned long *ret)
{
	u32 rec32[2];
	u64 rec64[2];

	if (!in_nmi())
		return pfm_frame_get(fp, word, next, ret);
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
	pagefault_disable();
	while (n < max && fp && IS_ALIGNED(fp, word)) {
		if (!pfm_frame_read(fp, word, &next, &ret) || !ret)
			break;
		ips[n++] = ret;
		/* Frames lie above each other: anything else ends the walk. */
		if (next <= fp)
			break;
		fp = next;
	}
	pagefault_enable();
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
