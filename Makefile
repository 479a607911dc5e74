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

test: setup lint
	$(CARGO) build --locked --workspace --bins
	$(CARGO) test --locked --workspace --no-fail-fast

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
