// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * v28_layout: every perfmon2 v2.8 structure a program hands to the
 * kernel or reads from it, checked against v2.8's layout: its size, the
 * offset of each field, the bit vectors' length, and the constants a
 * program passes.  Built, as a v2.8 program, against the library's
 * headers alone, for each ABI (x86_64, i386 with -m32, arm64):
 *
 *   gcc -Wall -Werror v28_layout.c $(pkg-config --cflags libperfmon)
 *
 * The expected figures are v2.8's headers' (libpfm-3.x's
 * <perfmon/perfmon.h> and <perfmon/perfmon_dfl_smpl.h>, whose layouts
 * the kernel's v2.8 headers share), written out here rather than
 * computed, so that a change of ours that moves a field fails.  v2.8
 * had one layout on every architecture (PFM_ARCH_MAX_PMDS was 256 + 64
 * everywhere), so one table serves all three ABIs.
 *
 * It prints one line per structure and exits 0 when everything matched,
 * 1 otherwise (each mismatch on stderr).  It needs no kernel.
 */
#include <stddef.h>
#include <stdio.h>

#include <perfmon/perfmon.h>
#include <perfmon/perfmon_dfl_smpl.h>

static int mismatches;
static int fields;

static void want(const char *type, const char *what, size_t got, size_t v28)
{
	fields++;
	if (got == v28)
		return;
	fprintf(stderr, "v28_layout: %s%s is %zu, v2.8's is %zu\n",
		type, what, got, v28);
	mismatches++;
}

/* A field of v2.8's at v2.8's offset. */
#define AT(type, field, off) \
	want(#type, "." #field " offset", offsetof(type, field), (off))

/* A structure's size; prints the line for it. */
#define SIZE(type, bytes) do {						\
	want(#type, " size", sizeof(type), (bytes));			\
	printf("%-22s %3zu bytes, %2d checks\n", #type,		\
	       sizeof(type), fields);					\
	fields = 0;							\
} while (0)

/* A bit vector field: v2.8's five 64-bit words (320 registers). */
#define BV(type, field) \
	want(#type, "." #field " size", sizeof(((type *)0)->field), 40)

static void constants(void)
{
	want("PFM_MAX_PMCS", "", PFM_MAX_PMCS, 320);
	want("PFM_MAX_PMDS", "", PFM_MAX_PMDS, 320);
	want("PFM_PMC_BV", "", PFM_PMC_BV, 5);
	want("PFM_PMD_BV", "", PFM_PMD_BV, 5);
	want("PFM_BPL", "", PFM_BPL, 64);
	want("PFM_VERSION_MAJ", "", PFM_VERSION_MAJ, 2);
	want("PFM_FL_NOTIFY_BLOCK", "", PFM_FL_NOTIFY_BLOCK, 0x01);
	want("PFM_FL_SYSTEM_WIDE", "", PFM_FL_SYSTEM_WIDE, 0x02);
	want("PFM_FL_MAP_SETS", "", PFM_FL_MAP_SETS, 0x10);
	want("PFM_FL_OVFL_NO_MSG", "", PFM_FL_OVFL_NO_MSG, 0x80);
	want("PFM_REGFL_OVFL_NOTIFY", "", PFM_REGFL_OVFL_NOTIFY, 0x1);
	want("PFM_REGFL_RANDOM", "", PFM_REGFL_RANDOM, 0x2);
	want("PFM_REGFL_NO_EMUL64", "", PFM_REGFL_NO_EMUL64, 0x4);
	want("PFM_SETFL_OVFL_SWITCH", "", PFM_SETFL_OVFL_SWITCH, 0x01);
	want("PFM_SETFL_TIME_SWITCH", "", PFM_SETFL_TIME_SWITCH, 0x02);
	want("PFM_REG_RETFL_NOTAVAIL", "", PFM_REG_RETFL_NOTAVAIL, 1U << 31);
	want("PFM_REG_RETFL_EINVAL", "", PFM_REG_RETFL_EINVAL, 1U << 30);
	want("PFM_REG_RETFL_NOSET", "", PFM_REG_RETFL_NOSET, 1U << 29);
	want("PFM_MSG_OVFL", "", PFM_MSG_OVFL, 1);
	want("PFM_MSG_END", "", PFM_MSG_END, 2);
	want("PFM_DFL_SMPL_VERSION", "", PFM_DFL_SMPL_VERSION, 0x10000);
	printf("%-22s %2d values checked\n", "constants", fields);
	fields = 0;
}

static void calls_arguments(void)
{
	AT(pfarg_ctx_t, ctx_flags, 0);
	AT(pfarg_ctx_t, ctx_reserved1, 4);
	/* v2.8's kernel header: ctx_reserved2[7]; libpfm-3.x: ctx_reserved3 */
	AT(pfarg_ctx_t, ctx_reserved2, 8);
	SIZE(pfarg_ctx_t, 64);

	AT(pfarg_pmc_t, reg_num, 0);
	AT(pfarg_pmc_t, reg_set, 2);
	AT(pfarg_pmc_t, reg_flags, 4);
	AT(pfarg_pmc_t, reg_value, 8);
	AT(pfarg_pmc_t, reg_reserved2, 16);
	SIZE(pfarg_pmc_t, 48);

	AT(pfarg_pmd_t, reg_num, 0);
	AT(pfarg_pmd_t, reg_set, 2);
	AT(pfarg_pmd_t, reg_flags, 4);
	AT(pfarg_pmd_t, reg_value, 8);
	AT(pfarg_pmd_t, reg_long_reset, 16);
	AT(pfarg_pmd_t, reg_short_reset, 24);
	AT(pfarg_pmd_t, reg_last_reset_val, 32);
	AT(pfarg_pmd_t, reg_ovfl_switch_cnt, 40);
	AT(pfarg_pmd_t, reg_reset_pmds, 48);
	BV(pfarg_pmd_t, reg_reset_pmds);
	AT(pfarg_pmd_t, reg_smpl_pmds, 88);
	BV(pfarg_pmd_t, reg_smpl_pmds);
	AT(pfarg_pmd_t, reg_smpl_eventid, 128);
	AT(pfarg_pmd_t, reg_random_mask, 136);
	AT(pfarg_pmd_t, reg_random_seed, 144);
	/*
	 * v2.8's reg_reserved2[7] (u32, bytes 148-175) holds this tree's
	 * reg_freq, the triggers and reg_reserved2; zero in a v2.8
	 * program, which clears the whole entry.
	 */
	AT(pfarg_pmd_t, reg_freq, 148);
	SIZE(pfarg_pmd_t, 176);

	AT(pfarg_start_t, start_set, 0);
	AT(pfarg_start_t, start_reserved1, 2);
	AT(pfarg_start_t, start_reserved2, 4);
	AT(pfarg_start_t, reserved3, 8);
	SIZE(pfarg_start_t, 32);

	AT(pfarg_load_t, load_pid, 0);
	AT(pfarg_load_t, load_set, 4);
	AT(pfarg_load_t, load_reserved1, 6);
	AT(pfarg_load_t, load_reserved2, 8);
	SIZE(pfarg_load_t, 32);
}

static void sets_and_messages(void)
{
	AT(pfarg_setdesc_t, set_id, 0);
	AT(pfarg_setdesc_t, set_reserved1, 2);
	AT(pfarg_setdesc_t, set_flags, 4);
	AT(pfarg_setdesc_t, set_timeout, 8);
	AT(pfarg_setdesc_t, reserved, 16);
	SIZE(pfarg_setdesc_t, 64);

	AT(pfarg_setinfo_t, set_id, 0);
	AT(pfarg_setinfo_t, set_reserved1, 2);
	AT(pfarg_setinfo_t, set_flags, 4);
	AT(pfarg_setinfo_t, set_ovfl_pmds, 8);
	BV(pfarg_setinfo_t, set_ovfl_pmds);
	AT(pfarg_setinfo_t, set_runs, 48);
	AT(pfarg_setinfo_t, set_timeout, 56);
	AT(pfarg_setinfo_t, set_act_duration, 64);
	AT(pfarg_setinfo_t, set_avail_pmcs, 72);
	BV(pfarg_setinfo_t, set_avail_pmcs);
	AT(pfarg_setinfo_t, set_avail_pmds, 112);
	BV(pfarg_setinfo_t, set_avail_pmds);
	/* v2.8's kernel header: set_reserved3[6]; libpfm-3.x: reserved */
	AT(pfarg_setinfo_t, set_reserved3, 152);
	SIZE(pfarg_setinfo_t, 200);

	AT(pfarg_ovfl_msg_t, msg_type, 0);
	AT(pfarg_ovfl_msg_t, msg_ovfl_pid, 4);
	AT(pfarg_ovfl_msg_t, msg_active_set, 8);
	AT(pfarg_ovfl_msg_t, msg_ovfl_cpu, 10);
	AT(pfarg_ovfl_msg_t, msg_ovfl_tid, 12);
	AT(pfarg_ovfl_msg_t, msg_ovfl_ip, 16);
	AT(pfarg_ovfl_msg_t, msg_ovfl_pmds, 24);
	BV(pfarg_ovfl_msg_t, msg_ovfl_pmds);
	SIZE(pfarg_ovfl_msg_t, 64);

	AT(pfarg_msg_t, type, 0);
	AT(pfarg_msg_t, pfm_ovfl_msg, 0);
	SIZE(pfarg_msg_t, 64);
}

/* The "default" sampling format, layout 1.0. */
static void default_format(void)
{
	AT(pfm_dfl_smpl_arg_t, buf_size, 0);
	AT(pfm_dfl_smpl_arg_t, buf_flags, 8);
	AT(pfm_dfl_smpl_arg_t, res1, 12);
	AT(pfm_dfl_smpl_arg_t, reserved, 16);
	SIZE(pfm_dfl_smpl_arg_t, 64);

	AT(pfm_dfl_smpl_hdr_t, hdr_count, 0);
	AT(pfm_dfl_smpl_hdr_t, hdr_cur_offs, 8);
	AT(pfm_dfl_smpl_hdr_t, hdr_overflows, 16);
	AT(pfm_dfl_smpl_hdr_t, hdr_buf_size, 24);
	AT(pfm_dfl_smpl_hdr_t, hdr_min_buf_space, 32);
	AT(pfm_dfl_smpl_hdr_t, hdr_version, 40);
	AT(pfm_dfl_smpl_hdr_t, hdr_buf_flags, 44);
	AT(pfm_dfl_smpl_hdr_t, hdr_reserved, 48);
	SIZE(pfm_dfl_smpl_hdr_t, 128);

	AT(pfm_dfl_smpl_entry_t, pid, 0);
	AT(pfm_dfl_smpl_entry_t, ovfl_pmd, 4);
	AT(pfm_dfl_smpl_entry_t, reserved, 6);
	AT(pfm_dfl_smpl_entry_t, last_reset_val, 8);
	AT(pfm_dfl_smpl_entry_t, ip, 16);
	AT(pfm_dfl_smpl_entry_t, tstamp, 24);
	AT(pfm_dfl_smpl_entry_t, cpu, 32);
	AT(pfm_dfl_smpl_entry_t, set, 34);
	AT(pfm_dfl_smpl_entry_t, tgid, 36);
	SIZE(pfm_dfl_smpl_entry_t, 40);
}

int main(void)
{
	constants();
	calls_arguments();
	sets_and_messages();
	default_format();
	printf("v28_layout: %s (%zu-bit ABI)\n",
	       mismatches ? "differs from v2.8" : "v2.8's, byte for byte",
	       sizeof(long) * 8);
	return mismatches ? 1 : 0;
}
