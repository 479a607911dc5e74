# The entry points a person and CI use. `make help` lists them.
CARGO ?= cargo
export CARGO_TERM_COLOR ?= auto

.PHONY: help demo test lint build release bench setup clean

help:
	@echo "make demo    build in release mode and scrape the bundled demo site"
	@echo "make test    formatting, clippy, every test (what CI runs)"
	@echo "make lint    formatting and clippy only"
	@echo "make bench   the benchmarks under scripts/bench/ (see BENCHMARKS.md)"

setup:
	scripts/setup test

demo:
	scripts/setup demo
	$(CARGO) build --locked --release --workspace --bins
	scripts/demo

lint:
	$(CARGO) fmt --all --check
	$(CARGO) clippy --locked --workspace --all-targets -- -D warnings

# Tests run under cargo-nextest (on this kind of machine from the start; .config/nextest.toml
# runs them 8 at a time, the long end-to-end ones first) and fall back to cargo test without
# it. Doc tests are cargo's own. The programs the tests run are built with them (rip-bin's
# integration tests need them), in the same profile and features, so nothing builds twice.
test: setup lint
	if $(CARGO) nextest --version >/dev/null 2>&1; then \
		$(CARGO) nextest run --locked --workspace --no-fail-fast; \
	else \
		$(CARGO) test --locked --workspace --no-fail-fast --lib --bins --tests; \
	fi
	$(CARGO) test --locked --workspace --doc

build:
	$(CARGO) build --locked --workspace --bins

release:
	$(CARGO) build --locked --release --workspace --bins

bench:
	scripts/setup bench
	$(CARGO) build --locked --release --workspace --bins
	scripts/bench/all

clean:
	$(CARGO) clean
	rm -rf out .rip-cache
