# SPDX-License-Identifier: MIT
# make python-install: the Python package and the libpeakbpf it loads, in
# one command from a fresh clone (README.md): libpeakbpf.so into LIBDIR,
# the package into PYTHON's site-packages (Debian's python3: PREFIX's
# dist-packages), told where the library is. make install does this too,
# with the CLI, the header and the units; make uninstall removes either.
.PHONY: python-install
python-install: lib
	$(Q)test -n "$(PYTHONDIR)" || { echo "make python-install: $(PYTHON) did not say where it imports from" >&2; exit 1; }
	$(Q)$(call inst,$(OUTPUT)/libpeakbpf.so.$(VERSION),$(LIBDIR)/libpeakbpf.so.$(VERSION),0755)
	$(Q)$(call link,libpeakbpf.so.$(VERSION),$(LIBDIR)/$(LIB_SONAME))
	$(Q)printf '  INSTALL  %s (the Python package, for %s)\n' "$(DESTDIR)$(PYTHONDIR)/peakbpf" "$(PYTHON)"
	$(Q)PYTHON=$(PYTHON) python/install.sh "$(DESTDIR)$(PYTHONDIR)" "$(LIBDIR)/$(LIB_SONAME)" $(VERSION)
	$(Q)if [ "$(lastword $(PYTHON_WHERE))" != looks ]; then \
		printf '  NOTE     %s does not import from %s: set PYTHONPATH=%s\n' "$(PYTHON)" \
			"$(PYTHONDIR)" "$(PYTHONDIR)"; fi
	$(Q)if [ -z "$(DESTDIR)" ] && command -v ldconfig >/dev/null; then ldconfig; fi
	$(Q)printf '  READY    %s -c "import peakbpf"\n' "$(PYTHON)"
