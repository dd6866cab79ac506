# mk/vmtest.mk: the test suites in a QEMU guest on stock Debian kernels
# (tools/vmtest.sh), included from the top Makefile.
#
#   make vmtest                                   # KERNEL=6.1, every suite
#   make vmtest KERNEL=5.10 SUITES="test_stat test_devices"
#   make vmtest KERNEL=6.12 VMCMD='./blkwise --version'   # a command instead
#   make vmtest-all [SUITES=...]                  # 5.10 6.1 6.12 host, a table
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
export SUITES VMCMD VM_TIMEOUT VM_MEM VM_MEMDISK VM_SMP VM_ACCEL VM_CPU VM_SCRATCH VM_MODULES VM_VERBOSE VM_REFRESH VM_BOOT_RETRIES

.PHONY: vmtest vmtest-all vmtest-deps vmtest-clean

vmtest-deps:
	$(Q)tools/deps.sh --vm

vmtest: vmtest-deps all fixture $(UNIT_BINS)
	tools/vmtest.sh $(VMTEST_ARGS) $(KERNEL)

vmtest-all: vmtest-deps all fixture $(UNIT_BINS)
	tools/vmtest.sh $(VMTEST_ARGS) --all

vmtest-clean:
	rm -rf $(OUT)/vm
