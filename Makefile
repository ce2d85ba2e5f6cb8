# SPDX-License-Identifier: GPL-2.0
#
# make            the module (against KDIR), libp2pshim and p2pctl
# make deps       install build and test dependencies (Debian 12, apt-get)
# make check      deps, build, unit tests, VM tests; ends "N passed, N failed"
# make demo       the whole flow in a VM against the stand-in driver
# make clean

KVER ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KVER)/build
# The kernel the test VM boots, and its headers.
VM_KVER = $(shell tests/vm/kver)
VM_KDIR = /usr/src/linux-headers-$(VM_KVER)

CC ?= cc
CFLAGS ?= -O2 -g
CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Iinclude
export CC CFLAGS

.PHONY: all module userspace deps check demo clean vm-stage unit standin sparse unit-run

all: module userspace

module:
	$(MAKE) -C kmod KDIR=$(KDIR)

userspace:
	$(MAKE) -C lib
	$(MAKE) -C tools

deps:
	tests/deps

# Everything the VM needs, built for the kernel it boots.
vm-stage: userspace standin
	$(MAKE) -C tests/vm/src CFLAGS="$(filter-out -Iinclude,$(CFLAGS))"
	$(MAKE) -C kmod KDIR=$(VM_KDIR)
	$(MAKE) -C $(VM_KDIR) M=$(CURDIR)/tests/vm/selftest modules
	tests/vm/stage $(CURDIR)/build/vm/stage

standin:
	$(MAKE) -C tests/standin KDIR=$(VM_KDIR)

unit:
	$(MAKE) -C tests/unit

sparse:
	$(MAKE) -C kmod KDIR=$(VM_KDIR) C=2 CHECK="sparse -Wsparse-error"

check: deps
	tests/check

demo: deps vm-stage
	tests/vm/run -v -d tests/vm/demo

clean:
	-$(MAKE) -C kmod clean KDIR=$(VM_KDIR)
	-$(MAKE) -C $(VM_KDIR) M=$(CURDIR)/tests/vm/selftest clean
	$(MAKE) -C lib clean
	$(MAKE) -C tools clean
	$(MAKE) -C tests/standin clean
	$(MAKE) -C tests/unit clean
	$(MAKE) -C tests/vm/src clean
	rm -rf build

unit-run: unit
	tests/unit/run

