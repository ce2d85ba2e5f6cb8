# SPDX-License-Identifier: GPL-2.0
#
# Unit tests of p2pctl verify/bench (tools/cuda) against a fake libcuda.
# Include from tests/unit/Makefile (which runs in tests/unit):
#
#   include cuda.mk
#   all: $(CUDA_TESTS)
#   clean: cuda-clean
#
# Each test links the tools/cuda sources itself, built with ASan and UBSan;
# fakecuda/libcuda.so.1 is found through $P2PCTL_LIBCUDA, which the tests set
# to the copy beside them (LD_LIBRARY_PATH=fakecuda works as well).

cuda_saved_goal := $(.DEFAULT_GOAL)
CUDA_UNIT := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
CUDA_TOOLS := $(CUDA_UNIT)/../../tools/cuda
include $(CUDA_TOOLS)/sources.mk
CUDA_TOOL_SRCS := $(addprefix $(CUDA_TOOLS)/,$(CUDA_SRC_NAMES))
CUDA_TESTS := $(addprefix $(CUDA_UNIT)/,test_cuda_stats test_cuda_report test_cuda_verify \
	test_cuda_bench test_cuda_nccl)
CUDA_FAKE := $(CUDA_UNIT)/fakecuda/libcuda.so.1
CUDA_FAKE_OLD := $(CUDA_UNIT)/fakecuda/old/libcuda.so.1
CUDA_NCCL := $(CUDA_UNIT)/fakecuda/nccl/libnccl.so.2
# verify's ipc test runs a second process: this one (P2PCTL_SELF), not p2pctl.
CUDA_CHILD := $(CUDA_UNIT)/obj/cuda_verify_child
CUDA_TEST_CFLAGS := -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -g \
	-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined \
	-I$(CUDA_TOOLS) -I$(CUDA_UNIT)/../../include -I$(CUDA_UNIT)/fakecuda $(shell pkg-config --cflags json-c cmocka) -pthread
CUDA_TEST_LIBS := $(shell pkg-config --libs json-c cmocka) -ldl -lm -pthread

$(CUDA_UNIT)/test_cuda_%: $(CUDA_UNIT)/test_cuda_%.c $(CUDA_TOOL_SRCS) $(wildcard $(CUDA_TOOLS)/*.h) \
		$(CUDA_UNIT)/../../include/p2p-shim/vmguess.h \
		$(CUDA_UNIT)/fakecuda/harness.h $(CUDA_UNIT)/fakecuda/fakesysfs.h $(CUDA_FAKE) $(CUDA_FAKE_OLD) $(CUDA_CHILD) $(CUDA_NCCL)
	$(CC) $(CUDA_TEST_CFLAGS) -o $@ $< $(CUDA_TOOL_SRCS) $(CUDA_TEST_LIBS)

$(CUDA_CHILD): $(CUDA_UNIT)/fakecuda/verify_child.c $(CUDA_TOOL_SRCS) $(wildcard $(CUDA_TOOLS)/*.h) \
		$(CUDA_UNIT)/../../include/p2p-shim/vmguess.h
	@mkdir -p $(dir $@)
	$(CC) $(CUDA_TEST_CFLAGS) -o $@ $< $(CUDA_TOOL_SRCS) $(CUDA_TEST_LIBS)

$(CUDA_FAKE): $(CUDA_UNIT)/fakecuda/fakecuda.c
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -g -fPIC -shared \
		-Wl,-soname,libcuda.so.1 -o $@ $< -pthread

# A fake NCCL for verify's nccl test.
$(CUDA_NCCL): $(CUDA_UNIT)/fakecuda/fakenccl.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -g -fPIC -shared \
		-Wl,-soname,libnccl.so.2 -o $@ $< -ldl

# The same without the managed-memory entry points (an old driver).
$(CUDA_FAKE_OLD): $(CUDA_UNIT)/fakecuda/fakecuda.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -g -fPIC -shared \
		-DFAKECUDA_NO_MANAGED -Wl,-soname,libcuda.so.1 -o $@ $< -pthread

cuda-tests: $(CUDA_TESTS)

cuda-clean:
	rm -f $(CUDA_TESTS) $(CUDA_FAKE) $(CUDA_FAKE_OLD) $(CUDA_CHILD) $(CUDA_NCCL)

.PHONY: cuda-tests cuda-clean
.DEFAULT_GOAL := $(cuda_saved_goal)
