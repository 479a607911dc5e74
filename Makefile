# The entry points a person and CI use. `make help` lists them.
CARGO ?= cargo
export CARGO_TERM_COLOR ?= auto

.PHONY: help demo test lint modules build release bench fuzz setup clean

help:
	@echo "make demo    build in release mode and scrape the bundled demo site"
	@echo "make test    formatting, clippy, every test (what CI runs)"
	@echo "make lint    formatting, clippy and rustdoc's lints (docs build, no broken links)"
	@echo "make modules fail on a module file named mod.rs (one module style)"
	@echo "make bench   the benchmarks under scripts/bench/ (see BENCHMARKS.md)"
	@echo "make fuzz    every fuzz target for FUZZ_SECONDS (default 60) each (see docs/conformance.md)"

setup:
	scripts/setup test

demo:
	scripts/setup demo
	$(CARGO) build --locked --release --workspace --bins
	scripts/demo

lint: modules
	$(CARGO) fmt --all --check
	$(CARGO) clippy --locked --workspace --all-targets -- -D warnings
	RUSTDOCFLAGS='-D warnings' $(CARGO) doc --locked --workspace --no-deps --quiet

# One module style: `foo.rs` beside the folder `foo/`, never `foo/mod.rs`. A prerequisite
# of `lint` and `test`.
modules:
	@found=$$(find bin crates -name mod.rs -not -path '*/target/*' | sort); \
	if [ -n "$$found" ]; then \
		echo "modules in a mod.rs (make it foo.rs beside its folder foo/):"; \
		echo "$$found"; \
		exit 1; \
	fi

# Tests run under cargo-nextest (on this kind of machine from the start; .config/nextest.toml
# runs them 8 at a time, the long end-to-end ones first) and fall back to cargo test without
# it. Doc tests are cargo's own.
#
# Clippy runs inside the test build: clippy-driver compiles the workspace's own crates (it is
# what `cargo clippy` puts in RUSTC_WORKSPACE_WRAPPER for a check build, whose output it then
# throws away), with the same `-D warnings`, so the dependencies build once instead of once
# checked for clippy and once built for the tests (measured in a fresh clone: lint 313 s,
# then the test build 436 s). `make lint` is the same check on its own.
CLIPPY = RUSTC_WORKSPACE_WRAPPER=clippy-driver CLIPPY_ARGS=-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__

test: setup modules
	$(CARGO) fmt --all --check
	$(CLIPPY) $(CARGO) build --locked --workspace --all-targets
	if $(CARGO) nextest --version >/dev/null 2>&1; then \
		$(CLIPPY) $(CARGO) nextest run --locked --workspace --no-fail-fast; \
	else \
		$(CLIPPY) $(CARGO) test --locked --workspace --no-fail-fast --lib --bins --tests; \
	fi
	$(CLIPPY) $(CARGO) test --locked --workspace --doc

build:
	$(CARGO) build --locked --workspace --bins

release:
	$(CARGO) build --locked --release --workspace --bins

bench:
	scripts/setup bench
	$(CARGO) build --locked --release --workspace --bins
	scripts/bench/all

# The fuzzers (nightly, cargo-fuzz; scripts/fuzz installs cargo-fuzz). `make test` replays
# their corpora on stable.
FUZZ_SECONDS ?= 60
fuzz:
	scripts/fuzz --seconds $(FUZZ_SECONDS)

clean:
	$(CARGO) clean
	rm -rf out .rip-cache
