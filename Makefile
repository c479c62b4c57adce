# mpiarena: `make demo` installs everything and runs the quick comparison; `make test` runs the tests.
VENV   ?= .venv
BIN    := $(VENV)/bin
PYPI_BUILD ?= mpich==5.0.2
# what the tests alone add: Intel MPI's PyPI build (and, in builds/, IMB-MPI1 built for
# tests/test_import.py), outside the data directory's impls/, so that
# the quick comparison stays at the six implementations `make install` gives; under root, where
# the rank user must reach it, beside the data directory rather than in this clone
TEST_BUILD ?= impi==2021.19
TEST_HOME  := $(if $(filter 0,$(shell id -u)),/var/lib/mpiarena/test-home,$(abspath $(VENV))/test-home)

# Python keeps its byte-compiled modules here, whatever the environment says: uv installs none up
# front, and every interpreter of the tests (the lanes, pytest's rewritten test files, the
# wheel smoke's commands) compiled numpy, scipy and matplotlib afresh where
# PYTHONDONTWRITEBYTECODE was set: 5.2 s to import what the tests import, 2.2 s compiled
unexport PYTHONDONTWRITEBYTECODE

.PHONY: install demo check test lint bench clean

install: $(VENV)/.installed

$(VENV)/.installed: Makefile pyproject.toml scripts/install-system.sh scripts/fetch-test-programs.sh
	./scripts/install-system.sh
	./scripts/fetch-test-programs.sh
	python3 -m venv $(VENV)
	@# uv fetches and unpacks the packages in parallel: uv's own install 3.3 s, then the packages
	@# 5.0 s from an empty uv cache, where pip took 29.4 s from a warm one (2026-11-28);
	@# mpiarena install still uses the venv's pip
	$(BIN)/pip install -q --disable-pip-version-check uv
	$(BIN)/uv pip install -q --python $(BIN)/python -e '.[test]'
	if [ "$$(id -u)" -eq 0 ]; then $(BIN)/mpiarena setup; fi
	$(BIN)/mpiarena install $(PYPI_BUILD)
	touch $@

demo: install
	$(BIN)/mpiarena run --suite quick

$(TEST_HOME)/.installed: $(VENV)/.installed
	MPIARENA_HOME=$(TEST_HOME) $(BIN)/mpiarena install $(TEST_BUILD)
	touch $@

# the pipeline without an MPI library, in under a minute: the tests not marked mpi (the pure
# ones, and runs of scripted libraries: tests/test_scripted.py), two at a time, the slowest
# files first and each worker taking from the other's share once its own is done (worksteal:
# xdist's default hands out the first quarter of the tests in two blocks, and the worker given
# the scripted runs took 41 s while the other ended at 13 s); a test among them that starts a
# launcher or a built core fails (tests/conftest.py: no_mpi_launched)
check: install
	$(BIN)/python -m pytest -q -p no:cacheprovider -rsfE -m 'not mpi' -n 2 --dist worksteal \
	    --durations=10

lint: install
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/mypy

test: export MPIARENA_IMPLS_PATH = $(TEST_HOME)/impls
test: export MPIARENA_TEST_BUILDS = $(TEST_HOME)/builds
test: install $(TEST_HOME)/.installed lint
	@# what times nothing, at once: make check first, and from its start beside it the wheel
	@# smoke and the tests marked beside; once it passed, the tests marked parallel (of both, those
	@# make check did not run)
	./scripts/checks-beside.sh $(BIN)
	@# then every other test alone: they time calls, or read figures a busy machine moves
	$(BIN)/python -m pytest -q -rsfE -m 'mpi and not parallel and not beside' --durations=20

bench: install
	$(BIN)/python bench/quick_suite.py
	$(BIN)/python bench/launch_cost.py
	$(BIN)/python bench/harness_overhead.py
	$(BIN)/python bench/netpipe_reference.py
	$(BIN)/python bench/emulated_link.py
	$(BIN)/python bench/link_layer.py
	$(BIN)/python bench/imb_cross_check.py
	$(BIN)/python bench/imb_rma.py
	$(BIN)/python bench/imb_nbc.py
	$(BIN)/python bench/imb_vector.py
	$(BIN)/python bench/imb_io.py
	$(BIN)/python bench/repeatability.py
	$(BIN)/python bench/reruns.py
	$(BIN)/python bench/level_factors.py
	$(BIN)/python bench/budget_simulation.py
	$(BIN)/python bench/hog_verdicts.py
	$(BIN)/python bench/core_same_observations.py
	$(BIN)/python bench/studies_short.py
	$(BIN)/python bench/report_speed.py
	$(BIN)/python bench/app_harness_overhead.py
	$(BIN)/python bench/config_read_cost.py
	$(BIN)/python bench/app_profiler_overhead.py
	$(BIN)/python bench/app_comparison_time.py

clean:
	rm -rf $(VENV) mpiarena.db
