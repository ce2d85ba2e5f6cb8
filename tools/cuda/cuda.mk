# SPDX-License-Identifier: GPL-2.0
#
# p2pctl verify/bench (tools/cuda). Include from tools/Makefile:
#
#   include cuda/cuda.mk
#   p2pctl: ... $(CUDA_OBJS)
#   	$(CC) $(LDFLAGS) -o $@ $^ ... $(CUDA_LDLIBS)
#   clean: ...; rm -f $(CUDA_OBJS)
#
# CUDA_DIR is this folder as seen from the including Makefile (default
# "cuda", i.e. included from tools/). No CUDA toolkit is needed: libcuda.so.1
# is dlopen()ed at run time. CUDA_JSON_STATIC=1 links json-c statically
# (for a binary carried to another distribution).

CUDA_DIR ?= cuda
cuda_saved_goal := $(.DEFAULT_GOAL)
include $(CUDA_DIR)/sources.mk
CUDA_SRCS := $(addprefix $(CUDA_DIR)/,$(CUDA_SRC_NAMES))
CUDA_OBJS := $(CUDA_SRCS:.c=.o)
CUDA_HDRS := $(wildcard $(CUDA_DIR)/*.h)
CUDA_CFLAGS := $(shell pkg-config --cflags json-c) -pthread
ifeq ($(CUDA_JSON_STATIC),1)
CUDA_LDLIBS := -Wl,-Bstatic $(shell pkg-config --libs json-c) -Wl,-Bdynamic -ldl -lm -pthread
else
CUDA_LDLIBS := $(shell pkg-config --libs json-c) -ldl -lm -pthread
endif

$(CUDA_OBJS): CFLAGS += $(CUDA_CFLAGS)
$(CUDA_OBJS): $(CUDA_HDRS) $(CUDA_DIR)/../../include/p2p-shim/vmguess.h

# Leave the including Makefile's default goal alone.
.DEFAULT_GOAL := $(cuda_saved_goal)
