# SPDX-License-Identifier: GPL-2.0
# mk/install.mk: `make install` and `make uninstall`, included from the
# top Makefile (run from the top directory; paths here are relative to it).
#
#   make install                      # /usr/local/sbin/blkwise, ...
#   make install PREFIX=/usr          # /usr/sbin/blkwise, ...
#   make install DESTDIR=/tmp/pkg PREFIX=/usr   # staged, for a package
#   make uninstall [same variables]   # removes exactly what install put there
#
# What goes where (each can be overridden on the command line):
#   SBINDIR  $(PREFIX)/sbin                  blkwise
#   MANDIR   $(PREFIX)/share/man             man8/blkwise.8.gz (gzip -9n)
#   UNITDIR  $(PREFIX)/lib/systemd/system    blkwise-export.service and
#            blkwise-tune@.service (a template: one tuner per device), from
#            dist/*.service.in with @SBINDIR@ replaced by $(SBINDIR).
#            systemd searches both /usr/local/lib/systemd/system and
#            /usr/lib/systemd/system; for any other PREFIX (/opt/...) pass
#            UNITDIR=/etc/systemd/system.
#   DATADIR  $(PREFIX)/share/blkwise         the dashboards/ files that exist:
#            blkwise.json, blkwise-rules.yml, prometheus-fleet.yml, and the
#            targets/ example its file_sd_configs reads.
# After installing or removing the units: systemctl daemon-reload.
# The units' options go in /etc/default/blkwise-export and
# /etc/default/blkwise-tune (examples in dist/default/; install leaves /etc
# alone, the Debian package installs them: `make deb`).

PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
UNITDIR ?= $(PREFIX)/lib/systemd/system
DATADIR ?= $(PREFIX)/share/blkwise
INSTALL ?= install

# Everything install may put in DATADIR; installed are the ones that exist.
BW_DATA_ALL := blkwise.json blkwise-rules.yml prometheus-fleet.yml targets/example.json
BW_DATA := $(patsubst dashboards/%,%,$(wildcard $(addprefix dashboards/,$(BW_DATA_ALL))))
# The units, from dist/UNIT.in.
BW_UNITS := blkwise-export.service blkwise-tune@.service
# The man page and the units are made here first, then installed.
BW_STAGE := build/install

.PHONY: install uninstall

install: blkwise
	$(Q)mkdir -p $(BW_STAGE)
	$(Q)gzip -9n -c man/blkwise.8 >$(BW_STAGE)/blkwise.8.gz
	$(Q)for u in $(BW_UNITS); do \
		sed 's|@SBINDIR@|$(SBINDIR)|g' dist/$$u.in >$(BW_STAGE)/$$u || exit 1; \
		! grep -n '@[A-Z_]*@' $(BW_STAGE)/$$u || \
			{ echo "install: unsubstituted @VAR@ left in $$u" >&2; exit 1; }; \
	done
	$(call msg,INSTALL,$(DESTDIR)$(SBINDIR)/blkwise)
	$(Q)$(INSTALL) -D -m 0755 blkwise $(DESTDIR)$(SBINDIR)/blkwise
	$(call msg,INSTALL,$(DESTDIR)$(MANDIR)/man8/blkwise.8.gz)
	$(Q)$(INSTALL) -D -m 0644 $(BW_STAGE)/blkwise.8.gz $(DESTDIR)$(MANDIR)/man8/blkwise.8.gz
	$(Q)for u in $(BW_UNITS); do \
		$(if $(Q),printf '  %-8s %s\n' INSTALL "$(DESTDIR)$(UNITDIR)/$$u";) \
		$(INSTALL) -D -m 0644 $(BW_STAGE)/$$u $(DESTDIR)$(UNITDIR)/$$u || exit 1; \
	done
	$(Q)for f in $(BW_DATA); do \
		$(if $(Q),printf '  %-8s %s\n' INSTALL "$(DESTDIR)$(DATADIR)/$$f";) \
		$(INSTALL) -D -m 0644 dashboards/$$f $(DESTDIR)$(DATADIR)/$$f || exit 1; \
	done

uninstall:
	$(call msg,RM,$(DESTDIR)$(SBINDIR)/blkwise)
	$(Q)rm -f $(DESTDIR)$(SBINDIR)/blkwise
	$(call msg,RM,$(DESTDIR)$(MANDIR)/man8/blkwise.8.gz)
	$(Q)rm -f $(DESTDIR)$(MANDIR)/man8/blkwise.8.gz
	$(call msg,RM,$(addprefix $(DESTDIR)$(UNITDIR)/,$(BW_UNITS)))
	$(Q)rm -f $(addprefix $(DESTDIR)$(UNITDIR)/,$(BW_UNITS))
	$(call msg,RM,$(DESTDIR)$(DATADIR))
	$(Q)rm -f $(addprefix $(DESTDIR)$(DATADIR)/,$(BW_DATA_ALL))
	$(Q)! [ -d $(DESTDIR)$(DATADIR)/targets ] || rmdir --ignore-fail-on-non-empty $(DESTDIR)$(DATADIR)/targets
	$(Q)! [ -d $(DESTDIR)$(DATADIR) ] || rmdir --ignore-fail-on-non-empty $(DESTDIR)$(DATADIR)
