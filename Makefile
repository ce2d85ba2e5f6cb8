# SPDX-License-Identifier: GPL-2.0
#
# make            the module (against KDIR), libp2pshim and p2pctl
# make deps       install build and test dependencies (Debian 12, apt-get)
# make check      deps, build, unit tests, VM tests; ends "N passed, N failed"
# make demo       the whole flow in a VM against the stand-in driver
# make check-real [NVIDIA_SRC=<tree>]   p2p-shim against NVIDIA's real
#                 nvidia.ko built from <tree> (default: Debian's
#                 nvidia-open-kernel-source), GPU-less in the VM; see
#                 docs/real-driver.md
# make install    module (KDIR/KVER), libp2pshim, headers, p2pctl, extras
#                 under PREFIX (default /usr/local) and DESTDIR; see
#                 docs/install.md.  make uninstall removes the same.
# make check-packages   build (by README.md's commands), lint, install and
#                 purge the Debian packages here (root; minutes; in make check)
# make check-docs README, docs, man page, --help and completion against
#                 rules/profile.c and the option tables (seconds; in make check)
# make check-lockdep   the VM suite on a lockdep kernel built once from
#                 Debian's source (docs/reliability.md; not in make check)
# make bench      arming and call costs in the VM (docs/bench-hooks.md)
# make dkms-source   the DKMS tree under DESTDIR/usr/src/p2p-shim-VERSION
# make userspace  libp2pshim and p2pctl only: tools/p2pctl runs from the tree
#                 (tools/p2pctl doctor needs no install and no root)
# make clean
# make help       this list

KVER ?= $(shell uname -r)
KDIR ?= /lib/modules/$(KVER)/build
# The kernel the test VM boots, and its headers.
VM_KVER = $(shell tests/vm/kver)
VM_KDIR = /usr/src/linux-headers-$(VM_KVER)

CC ?= cc
CFLAGS ?= -O2 -g
CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Iinclude
export CC CFLAGS

.PHONY: all module userspace deps check demo bench clean vm-stage unit standin sparse unit-run check-docs check-lockdep
.PHONY: install install-module install-userspace install-dist install-modprobe
.PHONY: uninstall uninstall-module uninstall-userspace uninstall-dist uninstall-modprobe
.PHONY: dkms-source check-packages check-real help

all: module userspace

# The targets, as the comment at the top of this file says them.
help:
	@sed -n '3,/^$$/s/^# \{0,1\}//p' $(firstword $(MAKEFILE_LIST))

module:
	$(MAKE) -C kmod KDIR=$(KDIR)

userspace:
	$(MAKE) -C lib
	$(MAKE) -C tools

deps:
	tests/deps

# Everything the VM needs, built for the kernel it boots: KERNEL is one of
# `tests/vm/kernel -l` (6.1, Debian 12's own, by default; the others are
# fetched into a cache outside the clone on first use).
KERNEL ?= 6.1
vm-stage: userspace
	$(MAKE) -C tests/standin nvflow
	$(MAKE) -C bench/vm CFLAGS="$(filter-out -Iinclude,$(CFLAGS))"
	$(MAKE) -C tests/vm/src CFLAGS="$(filter-out -Iinclude,$(CFLAGS))"
	tests/vm/build-stage $(KERNEL)

standin:
	$(MAKE) -C tests/standin KDIR=$(VM_KDIR)

unit:
	$(MAKE) -C tests/unit

sparse:
	$(MAKE) -C kmod KDIR=$(VM_KDIR) C=2 CHECK="sparse -Wsparse-error"

check: deps
	tests/check

# The VM suite on a lockdep kernel (tests/vm/check-lockdep): not in `check`.
check-lockdep: deps
	$(MAKE) vm-stage KERNEL=lockdep
	tests/vm/check-lockdep

check-real: deps vm-stage
	tests/real/run $(if $(NVIDIA_SRC),NVIDIA_SRC=$(NVIDIA_SRC),--debian)

# Benchmarks that run in the VM; they print numbers, they do not pass or fail on them.
bench: vm-stage
	tests/vm/run -v -d bench/vm

demo: deps vm-stage
	tests/vm/run -v -d tests/vm/demo

clean:
	-$(MAKE) -C kmod clean KDIR=$(VM_KDIR)
	-$(MAKE) -C $(VM_KDIR) M=$(CURDIR)/tests/vm/selftest clean
	-$(MAKE) -C $(VM_KDIR) M=$(CURDIR)/tests/real/gpuless clean
	$(MAKE) -C lib clean
	$(MAKE) -C tools clean
	$(MAKE) -C tests/standin clean
	$(MAKE) -C tests/unit clean
	$(MAKE) -C tests/vm/src clean
	$(MAKE) -C bench/vm clean
	rm -rf build

unit-run: unit
	tests/unit/run

# README, docs, man page, --help and completion against the code (no VM).
check-docs: userspace
	tests/check-docs/run


# --- install (docs/install.md) -------------------------------------------
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
# The modprobe.d snippet always goes to $(DATADIR)/p2p-shim/ (inert); only
# 'make install-modprobe' puts it where modprobe reads it.
MODPROBEDIR ?= /usr/lib/modprobe.d
INSTALL_MOD_PATH ?= $(DESTDIR)
INSTALL_MOD_DIR ?= extra
DEPMOD ?= depmod
DKMS_VERSION = $(shell cat VERSION)

# The release the headers in KDIR were built for (where modules_install
# puts the module), and "CONFIG_MODULE_SIG_ALL=" when KDIR's signing key is
# absent (as in Debian's header packages): no failing sign-file then.
KREL = $(or $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' $(KDIR)/include/generated/utsrelease.h 2>/dev/null),$(KVER))
SIG_KEY = $(shell sed -n 's/^CONFIG_MODULE_SIG_KEY="\(.*\)"$$/\1/p' $(KDIR)/.config 2>/dev/null)
NOSIGN = $(if $(filter pkcs11:%,$(SIG_KEY)),,$(if $(wildcard $(SIG_KEY) $(KDIR)/$(SIG_KEY)),,CONFIG_MODULE_SIG_ALL=))
DEPMOD_RUN = $(DEPMOD) $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH)) $(KREL)
USERDIRS = PREFIX=$(PREFIX) BINDIR=$(BINDIR) SBINDIR=$(SBINDIR) LIBDIR=$(LIBDIR) \
	INCLUDEDIR=$(INCLUDEDIR) MANDIR=$(MANDIR)

install: install-module install-userspace install-dist

install-module: module
	$(MAKE) -C $(KDIR) M=$(CURDIR)/kmod INSTALL_MOD_PATH=$(INSTALL_MOD_PATH) \
		INSTALL_MOD_DIR=$(INSTALL_MOD_DIR) $(NOSIGN) modules_install
	$(DEPMOD_RUN)

install-userspace: userspace
	$(MAKE) -C lib install $(USERDIRS)
	$(MAKE) -C tools install $(USERDIRS)
	if [ -z "$(DESTDIR)" ]; then ldconfig; fi

install-dist:
	install -d $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(SYSTEMDUNITDIR) \
		$(DESTDIR)$(DATADIR)/p2p-shim/modprobe.d
	install -m 644 tools/p2pctl.bash-completion $(DESTDIR)$(BASHCOMPDIR)/p2pctl
	sed 's|/usr/bin/p2pctl|$(BINDIR)/p2pctl|g' dist/systemd/p2p-shim.service \
		>$(DESTDIR)$(SYSTEMDUNITDIR)/p2p-shim.service
	chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/p2p-shim.service
	install -m 644 dist/modprobe.d/p2p-shim.conf $(DESTDIR)$(DATADIR)/p2p-shim/modprobe.d/

# Opt-in: from now on modprobe loads p2p-shim (armed) before nvidia.
install-modprobe:
	install -d $(DESTDIR)$(MODPROBEDIR)
	install -m 644 dist/modprobe.d/p2p-shim.conf $(DESTDIR)$(MODPROBEDIR)/

uninstall: uninstall-module uninstall-userspace uninstall-dist uninstall-modprobe

# modules_install compresses the module as the kernel's config says
# (CONFIG_MODULE_COMPRESS_XZ in Debian from 6.12): remove any of them.
uninstall-module:
	rm -f $(foreach e,ko ko.xz ko.zst ko.gz,$(INSTALL_MOD_PATH)/lib/modules/$(KREL)/$(INSTALL_MOD_DIR)/p2p-shim.$(e))
	rmdir $(INSTALL_MOD_PATH)/lib/modules/$(KREL)/$(INSTALL_MOD_DIR) 2>/dev/null || true
	if [ -d $(INSTALL_MOD_PATH)/lib/modules/$(KREL)/kernel ] || [ -z "$(INSTALL_MOD_PATH)" ]; then \
		$(DEPMOD_RUN); \
	else \
		rm -f $(INSTALL_MOD_PATH)/lib/modules/$(KREL)/modules.*; \
		rmdir -p $(INSTALL_MOD_PATH)/lib/modules/$(KREL) 2>/dev/null || true; \
	fi

uninstall-userspace:
	$(MAKE) -C lib uninstall $(USERDIRS)
	$(MAKE) -C tools uninstall $(USERDIRS)
	if [ -z "$(DESTDIR)" ]; then ldconfig; fi

uninstall-dist:
	rm -f $(DESTDIR)$(BASHCOMPDIR)/p2pctl $(DESTDIR)$(SYSTEMDUNITDIR)/p2p-shim.service \
		$(DESTDIR)$(DATADIR)/p2p-shim/modprobe.d/p2p-shim.conf
	rmdir $(DESTDIR)$(DATADIR)/p2p-shim/modprobe.d $(DESTDIR)$(DATADIR)/p2p-shim 2>/dev/null || true

# Also what `p2pctl config --write` wrote, as written (its first line's sum
# matches): left behind, its softdep and --registry keys would outlive the
# module.  The package's postrm holds that rule; one copy of it.
uninstall-modprobe:
	rm -f $(DESTDIR)$(MODPROBEDIR)/p2p-shim.conf
	DPKG_ROOT=$(DESTDIR) sh debian/p2p-shim-dkms.postrm remove

# The tree DKMS builds from: dkms.conf, kmod/ and rules/ sources and the
# headers they include, under $(DESTDIR)/usr/src/p2p-shim-<version>.
DKMS_SRC = $(DESTDIR)/usr/src/p2p-shim-$(DKMS_VERSION)
dkms-source:
	install -d $(DKMS_SRC)/kmod $(DKMS_SRC)/rules $(DKMS_SRC)/include/p2p-shim
	sed 's/#MODULE_VERSION#/$(DKMS_VERSION)/' dkms.conf >$(DKMS_SRC)/dkms.conf
	install -m 644 VERSION $(DKMS_SRC)/
	install -m 644 kmod/Kbuild kmod/Makefile kmod/*.c kmod/*.h $(DKMS_SRC)/kmod/
	install -m 644 rules/*.c rules/sources.mk $(DKMS_SRC)/rules/
	rm -f $(DKMS_SRC)/kmod/*.mod.c
	install -m 644 include/p2p-shim/*.h $(DKMS_SRC)/include/p2p-shim/

# Builds the Debian packages and installs them on this machine (dpkg -i;
# dkms builds the module for the VM kernel's headers, nothing is loaded).
check-packages:
	tests/packaging/run
