# make check-docs: every relative link and #anchor in README.md, docs/*.md,
# python/README.md and tools/vm/README.md resolves (tools/check-docs.sh), and
# the checker still catches links planted broken (its self-test).
# Included by the top Makefile; part of make check.

.PHONY: check-docs
check-docs:
	$(call msg,CHECK,documentation links)
	$(Q)tools/check-docs.sh --self-test >/dev/null
	$(Q)tools/check-docs.sh
