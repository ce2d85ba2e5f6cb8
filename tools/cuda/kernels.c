// SPDX-License-Identifier: GPL-2.0
/* Embedded PTX for the SM-driven copies and the stream-blocking delay. */
#include <string.h>

#include "kernels.h"

const char *const kernel_names[K_COUNT] = {
	"p2p_read", "p2p_write", "p2p_delay", "p2p_flag_set", "p2p_flag_wait", "p2p_car",
};

/* The copy body, shared by p2p_read and p2p_write (only the name differs). */
#define COPY_KERNEL(NAME)                                                     \
	".visible .entry " NAME "(\n"                                        \
	"\t.param .u64 p_dst, .param .u64 p_src,\n"                          \
	"\t.param .u64 p_n16, .param .u64 p_tail)\n"                         \
	"{\n"                                                                  \
	"\t.reg .pred %p<3>;\n"                                              \
	"\t.reg .b16 %rs<2>;\n"                                              \
	"\t.reg .b32 %r<24>;\n"                                              \
	"\t.reg .b64 %rd<32>;\n"                                             \
	"\tld.param.u64 %rd1, [p_dst];\n"                                    \
	"\tld.param.u64 %rd2, [p_src];\n"                                    \
	"\tld.param.u64 %rd3, [p_n16];\n"                                    \
	"\tld.param.u64 %rd4, [p_tail];\n"                                   \
	"\tcvta.to.global.u64 %rd1, %rd1;\n"                                 \
	"\tcvta.to.global.u64 %rd2, %rd2;\n"                                 \
	"\tmov.u32 %r1, %ctaid.x;\n"                                         \
	"\tmov.u32 %r2, %ntid.x;\n"                                          \
	"\tmov.u32 %r3, %tid.x;\n"                                           \
	"\tmov.u32 %r4, %nctaid.x;\n"                                        \
	"\tmul.wide.u32 %rd5, %r1, %r2;\n"                                   \
	"\tcvt.u64.u32 %rd6, %r3;\n"                                         \
	"\tadd.u64 %rd5, %rd5, %rd6;\n"          /* i = global thread id */ \
	"\tmov.u64 %rd21, %rd5;\n"               /* keep it for the tail */ \
	"\tmul.wide.u32 %rd7, %r4, %r2;\n"       /* stride, in units */     \
	"\tshl.b64 %rd8, %rd7, 2;\n"             /* 4 * stride */           \
	"\tmul.lo.u64 %rd9, %rd7, 3;\n"          /* 3 * stride */           \
	"\tshl.b64 %rd12, %rd7, 4;\n"            /* stride in bytes */      \
	"$L4:\n"                                                               \
	"\tadd.u64 %rd10, %rd5, %rd9;\n"                                     \
	"\tsetp.ge.u64 %p1, %rd10, %rd3;\n"                                  \
	"\t@%p1 bra $L1;\n"                                                  \
	"\tshl.b64 %rd11, %rd5, 4;\n"                                        \
	"\tadd.u64 %rd13, %rd2, %rd11;\n"                                    \
	"\tadd.u64 %rd14, %rd13, %rd12;\n"                                   \
	"\tadd.u64 %rd15, %rd14, %rd12;\n"                                   \
	"\tadd.u64 %rd16, %rd15, %rd12;\n"                                   \
	"\tld.global.v4.u32 {%r5, %r6, %r7, %r8}, [%rd13];\n"               \
	"\tld.global.v4.u32 {%r9, %r10, %r11, %r12}, [%rd14];\n"            \
	"\tld.global.v4.u32 {%r13, %r14, %r15, %r16}, [%rd15];\n"           \
	"\tld.global.v4.u32 {%r17, %r18, %r19, %r20}, [%rd16];\n"           \
	"\tadd.u64 %rd17, %rd1, %rd11;\n"                                    \
	"\tadd.u64 %rd18, %rd17, %rd12;\n"                                   \
	"\tadd.u64 %rd19, %rd18, %rd12;\n"                                   \
	"\tadd.u64 %rd20, %rd19, %rd12;\n"                                   \
	"\tst.global.v4.u32 [%rd17], {%r5, %r6, %r7, %r8};\n"               \
	"\tst.global.v4.u32 [%rd18], {%r9, %r10, %r11, %r12};\n"            \
	"\tst.global.v4.u32 [%rd19], {%r13, %r14, %r15, %r16};\n"           \
	"\tst.global.v4.u32 [%rd20], {%r17, %r18, %r19, %r20};\n"           \
	"\tadd.u64 %rd5, %rd5, %rd8;\n"                                      \
	"\tbra.uni $L4;\n"                                                   \
	"$L1:\n"                                                               \
	"\tsetp.ge.u64 %p1, %rd5, %rd3;\n"                                   \
	"\t@%p1 bra $LB;\n"                                                  \
	"\tshl.b64 %rd11, %rd5, 4;\n"                                        \
	"\tadd.u64 %rd13, %rd2, %rd11;\n"                                    \
	"\tld.global.v4.u32 {%r5, %r6, %r7, %r8}, [%rd13];\n"               \
	"\tadd.u64 %rd17, %rd1, %rd11;\n"                                    \
	"\tst.global.v4.u32 [%rd17], {%r5, %r6, %r7, %r8};\n"               \
	"\tadd.u64 %rd5, %rd5, %rd7;\n"                                      \
	"\tbra.uni $L1;\n"                                                   \
	"$LB:\n"                                                               \
	"\tsetp.ge.u64 %p2, %rd21, %rd4;\n"                                  \
	"\t@%p2 bra $LD;\n"                                                  \
	"\tshl.b64 %rd22, %rd3, 4;\n"                                        \
	"\tadd.u64 %rd22, %rd22, %rd21;\n"                                   \
	"\tadd.u64 %rd23, %rd2, %rd22;\n"                                    \
	"\tld.global.u8 %rs1, [%rd23];\n"                                    \
	"\tadd.u64 %rd24, %rd1, %rd22;\n"                                    \
	"\tst.global.u8 [%rd24], %rs1;\n"                                    \
	"$LD:\n"                                                               \
	"\tret;\n"                                                           \
	"}\n"

static const char ptx_text[] =
	"// p2p-shim: p2pctl verify/bench kernels\n"
	".version 7.0\n"
	".target sm_70\n"
	".address_size 64\n"
	"\n"
	COPY_KERNEL("p2p_read")
	"\n"
	COPY_KERNEL("p2p_write")
	"\n"
	".visible .entry p2p_delay(.param .u64 p_flag, .param .u64 p_timeout)\n"
	"{\n"
	"\t.reg .pred %p<3>;\n"
	"\t.reg .b32 %r<3>;\n"
	"\t.reg .b64 %rd<8>;\n"
	"\tld.param.u64 %rd1, [p_flag];\n"
	"\tld.param.u64 %rd2, [p_timeout];\n"
	"\tmov.u64 %rd3, %clock64;\n"
	"$SPIN:\n"
	"\tld.volatile.u32 %r1, [%rd1];\n"
	"\tsetp.ne.u32 %p1, %r1, 0;\n"
	"\t@%p1 bra $DONE;\n"
	"\tmov.u64 %rd4, %clock64;\n"
	"\tsub.u64 %rd5, %rd4, %rd3;\n"
	"\tsetp.le.u64 %p2, %rd5, %rd2;\n"
	"\t@%p2 bra $SPIN;\n"
	"\tmov.u32 %r2, 1;\n"
	"\tst.volatile.u32 [%rd1+4], %r2;\n"
	"$DONE:\n"
	"\tret;\n"
	"}\n"
	"\n"
	/* One thread: a system-scope fence (everything this GPU stored before,
	 * this kernel's stream included, is visible first), then the flag with
	 * release semantics. */
	".visible .entry p2p_flag_set(.param .u64 p_flag, .param .u32 p_val)\n"
	"{\n"
	"\t.reg .b32 %r<2>;\n"
	"\t.reg .b64 %rd<2>;\n"
	"\tld.param.u64 %rd1, [p_flag];\n"
	"\tld.param.u32 %r1, [p_val];\n"
	"\tcvta.to.global.u64 %rd1, %rd1;\n"
	"\tfence.sc.sys;\n"
	"\tst.release.sys.global.u32 [%rd1], %r1;\n"
	"\tret;\n"
	"}\n"
	"\n"
	/* One thread: acquire-load the flag until it equals want or timeout_ns
	 * passes (%globaltimer); status[0] = last value seen, status[1] = 1
	 * (seen) or 2 (timed out). */
	".visible .entry p2p_flag_wait(.param .u64 p_flag, .param .u32 p_want,\n"
	"\t.param .u64 p_timeout, .param .u64 p_status)\n"
	"{\n"
	"\t.reg .pred %p<3>;\n"
	"\t.reg .b32 %r<4>;\n"
	"\t.reg .b64 %rd<8>;\n"
	"\tld.param.u64 %rd1, [p_flag];\n"
	"\tld.param.u32 %r1, [p_want];\n"
	"\tld.param.u64 %rd2, [p_timeout];\n"
	"\tld.param.u64 %rd6, [p_status];\n"
	"\tcvta.to.global.u64 %rd1, %rd1;\n"
	"\tcvta.to.global.u64 %rd6, %rd6;\n"
	"\tmov.u64 %rd3, %globaltimer;\n"
	"\tmov.u32 %r3, 1;\n"
	"$POLL:\n"
	"\tld.acquire.sys.global.u32 %r2, [%rd1];\n"
	"\tsetp.eq.u32 %p1, %r2, %r1;\n"
	"\t@%p1 bra $SEEN;\n"
	"\tmov.u64 %rd4, %globaltimer;\n"
	"\tsub.u64 %rd5, %rd4, %rd3;\n"
	"\tsetp.lt.u64 %p2, %rd5, %rd2;\n"
	"\t@%p2 bra $POLL;\n"
	"\tmov.u32 %r3, 2;\n"
	"$SEEN:\n"
	"\tfence.sc.sys;\n"
	"\tst.global.u32 [%rd6], %r2;\n"
	"\tst.global.u32 [%rd6+4], %r3;\n"
	"\tret;\n"
	"}\n"
	"\n"
	/* One CTA: the one-shot custom all-reduce of two ranks, as vLLM's and
	 * SGLang's do it, in one kernel. Thread 0 takes the round's value v
	 * (++*ctr, which also picks the payload slot v & 1, so that a rank
	 * one round ahead never overwrites what its peer still reads); every
	 * thread stores its part of in[] into my slot (this GPU's IPC buffer);
	 * then thread 0, after a system fence, stores v into the peer's flag
	 * with release semantics and acquire-polls its own flag until the
	 * peer's v arrives (or a later one), or timeout_ns passes
	 * (%globaltimer); then every thread loads the peer's slot through the
	 * peer mapping and stores in[i] + peer[i] (u32) into out[]. status[0]
	 * = the flag last seen, [1] = 1 (seen) or 2 (timed out: nothing is
	 * read), [2] = v. */
	".visible .entry p2p_car(.param .u64 p_in, .param .u64 p_mine, .param .u64 p_peer,\n"
	"\t.param .u64 p_out, .param .u64 p_n, .param .u64 p_ctr, .param .u64 p_myflag,\n"
	"\t.param .u64 p_peerflag, .param .u64 p_timeout, .param .u64 p_status)\n"
	"{\n"
	"\t.reg .pred %p<6>;\n"
	"\t.reg .b32 %r<12>;\n"
	"\t.reg .b64 %rd<24>;\n"
	"\t.shared .align 4 .u32 s_v;\n"
	"\t.shared .align 4 .u32 s_ok;\n"
	"\tld.param.u64 %rd1, [p_in];\n"
	"\tld.param.u64 %rd2, [p_mine];\n"
	"\tld.param.u64 %rd3, [p_peer];\n"
	"\tld.param.u64 %rd4, [p_out];\n"
	"\tld.param.u64 %rd5, [p_n];\n"
	"\tld.param.u64 %rd6, [p_ctr];\n"
	"\tld.param.u64 %rd7, [p_myflag];\n"
	"\tld.param.u64 %rd8, [p_peerflag];\n"
	"\tld.param.u64 %rd9, [p_timeout];\n"
	"\tld.param.u64 %rd10, [p_status];\n"
	"\tcvta.to.global.u64 %rd1, %rd1;\n"
	"\tcvta.to.global.u64 %rd2, %rd2;\n"
	"\tcvta.to.global.u64 %rd3, %rd3;\n"
	"\tcvta.to.global.u64 %rd4, %rd4;\n"
	"\tcvta.to.global.u64 %rd6, %rd6;\n"
	"\tcvta.to.global.u64 %rd7, %rd7;\n"
	"\tcvta.to.global.u64 %rd8, %rd8;\n"
	"\tcvta.to.global.u64 %rd10, %rd10;\n"
	"\tmov.u32 %r1, %tid.x;\n"
	"\tmov.u32 %r2, %ntid.x;\n"
	"\tsetp.ne.u32 %p1, %r1, 0;\n"
	"\t@%p1 bra $C_V;\n"
	"\tld.global.u32 %r3, [%rd6];\n"
	"\tadd.u32 %r3, %r3, 1;\n"
	"\tst.global.u32 [%rd6], %r3;\n"
	"\tst.shared.u32 [s_v], %r3;\n"
	"$C_V:\n"
	"\tbar.sync 0;\n"
	"\tld.shared.u32 %r3, [s_v];\n"
	"\tand.b32 %r4, %r3, 1;\n"
	"\tcvt.u64.u32 %rd11, %r4;\n"
	"\tmul.lo.u64 %rd11, %rd11, %rd5;\n"
	"\tshl.b64 %rd11, %rd11, 2;\n"
	"\tadd.u64 %rd12, %rd2, %rd11;\n"	/* my slot */
	"\tadd.u64 %rd13, %rd3, %rd11;\n"	/* the peer's slot */
	"\tcvt.u64.u32 %rd14, %r1;\n"
	"\tcvt.u64.u32 %rd15, %r2;\n"
	"$C_ST:\n"
	"\tsetp.ge.u64 %p2, %rd14, %rd5;\n"
	"\t@%p2 bra $C_STD;\n"
	"\tshl.b64 %rd16, %rd14, 2;\n"
	"\tadd.u64 %rd17, %rd1, %rd16;\n"
	"\tld.global.u32 %r5, [%rd17];\n"
	"\tadd.u64 %rd18, %rd12, %rd16;\n"
	"\tst.global.u32 [%rd18], %r5;\n"
	"\tadd.u64 %rd14, %rd14, %rd15;\n"
	"\tbra.uni $C_ST;\n"
	"$C_STD:\n"
	"\tbar.sync 0;\n"
	"\t@%p1 bra $C_W;\n"
	"\tfence.sc.sys;\n"
	"\tst.release.sys.global.u32 [%rd8], %r3;\n"
	"\tmov.u64 %rd19, %globaltimer;\n"
	"\tmov.u32 %r7, 1;\n"
	"$C_POLL:\n"
	"\tld.acquire.sys.global.u32 %r6, [%rd7];\n"
	"\tsub.u32 %r8, %r6, %r3;\n"
	"\tsetp.ge.s32 %p3, %r8, 0;\n"
	"\t@%p3 bra $C_SEEN;\n"
	"\tmov.u64 %rd20, %globaltimer;\n"
	"\tsub.u64 %rd21, %rd20, %rd19;\n"
	"\tsetp.lt.u64 %p4, %rd21, %rd9;\n"
	"\t@%p4 bra $C_POLL;\n"
	"\tmov.u32 %r7, 2;\n"
	"$C_SEEN:\n"
	"\tst.global.u32 [%rd10], %r6;\n"
	"\tst.global.u32 [%rd10+4], %r7;\n"
	"\tst.global.u32 [%rd10+8], %r3;\n"
	"\tst.shared.u32 [s_ok], %r7;\n"
	"$C_W:\n"
	"\tbar.sync 0;\n"
	"\tld.shared.u32 %r7, [s_ok];\n"
	"\tsetp.ne.u32 %p5, %r7, 1;\n"
	"\t@%p5 bra $C_END;\n"
	"\tcvt.u64.u32 %rd14, %r1;\n"
	"$C_RD:\n"
	"\tsetp.ge.u64 %p2, %rd14, %rd5;\n"
	"\t@%p2 bra $C_END;\n"
	"\tshl.b64 %rd16, %rd14, 2;\n"
	"\tadd.u64 %rd17, %rd1, %rd16;\n"
	"\tld.global.u32 %r5, [%rd17];\n"
	"\tadd.u64 %rd18, %rd13, %rd16;\n"
	"\tld.global.u32 %r9, [%rd18];\n"
	"\tadd.u32 %r5, %r5, %r9;\n"
	"\tadd.u64 %rd22, %rd4, %rd16;\n"
	"\tst.global.u32 [%rd22], %r5;\n"
	"\tadd.u64 %rd14, %rd14, %rd15;\n"
	"\tbra.uni $C_RD;\n"
	"$C_END:\n"
	"\tret;\n"
	"}\n";

const char *kernels_ptx(void)
{
	return ptx_text;
}

CUresult kernels_load(CUmodule *mod, CUfunction fn[K_COUNT], char *log, size_t loglen)
{
	int opts[2] = { CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *vals[2] = { log, (void *)(uintptr_t)loglen };
	CUresult r;

	if (loglen)
		log[0] = '\0';
	r = cu.cuModuleLoadDataEx(mod, ptx_text, loglen ? 2 : 0, opts, vals);
	if (r != CUDA_SUCCESS)
		return r;
	for (int k = 0; k < K_COUNT; k++) {
		r = cu.cuModuleGetFunction(&fn[k], *mod, kernel_names[k]);
		if (r != CUDA_SUCCESS) {
			cu.cuModuleUnload(*mod);
			*mod = NULL;
			return r;
		}
	}
	return CUDA_SUCCESS;
}
