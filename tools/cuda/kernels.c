// SPDX-License-Identifier: GPL-2.0
/* Embedded PTX for the SM-driven copies and the stream-blocking delay. */
#include <string.h>

#include "kernels.h"

const char *const kernel_names[K_COUNT] = {
	"p2p_read", "p2p_write", "p2p_delay", "p2p_flag_set", "p2p_flag_wait",
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
