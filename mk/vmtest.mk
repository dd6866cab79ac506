# SPDX-License-Identifier: GPL-2.0
# mk/vmtest.mk: the test suites in a QEMU guest on stock Debian kernels
# (tools/vmtest.sh), included from the top Makefile.
#
#   make vmtest                                   # KERNEL=6.1, every suite
#   make vmtest KERNEL=5.10 SUITES="test_stat test_devices"
#   make vmtest KERNEL=6.12 VMCMD='./blkwise --version'   # a command instead
#   make vmtest-all [SUITES=...]                  # 5.10 6.1 6.12 host, a table
#   make vmtest-seeds [KERNEL=6.1]                # seeds 001 and 002: tables in build/vm/seeds
#   make vmtest-clean                             # drops build/vm (kernels too)
#
# KERNEL is 5.10 (bullseye), 6.1 (bookworm), 6.12 (trixie, else
# bookworm-backports) or host (the running kernel, if /boot has it).
# VM_TIMEOUT, VM_MEM, VM_SMP, VM_ACCEL, VM_MODULES, VM_VERBOSE, VM_REFRESH
# are read from the environment or the command line (see tools/vmtest.sh).
# The guest runs the tree as built here: it is built first, as for `make test`.

KERNEL ?= 6.1
SUITES ?=
VMCMD ?=
# Through the environment, so that quotes in them need no escaping here.
VMTEST_ARGS = $(if $(SUITES),-s "$$SUITES") $(if $(VMCMD),-c "$$VMCMD")
export SUITES VMCMD VM_TIMEOUT VM_MEM VM_MEMDISK VM_SMP VM_ACCEL VM_CPU VM_SCRATCH VM_MODULES VM_VERBOSE VM_REFRESH VM_BOOT_RETRIES VM_SEED_DISK VM_SEED_QUEUES

.PHONY: vmtest vmtest-all vmtest-deps vmtest-seeds vmtest-clean

vmtest-deps:
	$(Q)tools/deps.sh --vm

vmtest: vmtest-deps all fixture $(UNIT_BINS)
	tools/vmtest.sh $(VMTEST_ARGS) $(KERNEL)

vmtest-all: vmtest-deps all fixture $(UNIT_BINS)
	tools/vmtest.sh $(VMTEST_ARGS) --all

# The seed runs (tools/vm/seeds.sh) on the guest's seed disks
# (VM_SEED_DISK) and scsi_debug; their markdown tables land in build/vm/seeds/
# and in the manual's (docs/results/seed00[12].json, docs/seeds.md).
vmtest-seeds: vmtest-deps all fixture
	rm -rf $(OUT)/vm/seeds
	VM_SEED_DISK=$${VM_SEED_DISK:-1G} tools/vmtest.sh -c 'tools/vm/seeds.sh' $(KERNEL)
	$(Q)mkdir -p $(OUT)/vm/seeds && cp $(OUT)/vm/out/$(KERNEL)/seeds/seed00[12].* $(OUT)/vm/seeds/
	$(Q)cat $(OUT)/vm/seeds/seed001.md $(OUT)/vm/seeds/seed002.md
	$(Q)for s in seed001 seed002; do \
		python3 tools/docgen.py put $$s $(OUT)/vm/seeds/$$s.md --command 'make vmtest-seeds' \
			--on "$$(sed -n '1s/^Seed00[12]: \(Linux [^,]*, QEMU TCG guest, [0-9]* vCPUs, fio-[0-9.]*\).*/\1/p' \
				$(OUT)/vm/seeds/$$s.md)" || exit 1; \
	done

vmtest-clean:
	rm -rf $(OUT)/vm
