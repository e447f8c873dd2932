# Two entry points (see README): `make report` runs every framework that can run here and writes the
# results and report; `make test` runs the harness's own tests. Both build their environments first.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# MXNet 1.9.1 needs numpy<1.24, so it gets its own interpreter; the harness reaches it through execnet workers.
MXVENV ?= .venv-mxnet
RESULTS ?= results/results.jsonl
PYTEST_ARGS ?=

.PHONY: report environments test check bench lint schema clean mxnet-env browser clang tfjs

# The main environment is about 5.5 GB installed (TensorFlow, torch, JAX, OpenVINO, paddle, TVM, the converters),
# and pip unpacks each wheel beside it: a full disk otherwise ends the build minutes in with a pip traceback.
NEED_GB ?= 8
# The releases measured (constraints/pins.txt) are what the environments get; the extras themselves state ranges.
PINS := constraints/pins.txt
$(VENV)/.installed: pyproject.toml $(PINS)
	@free=$$(df -Pk . | awk 'NR==2 {print int($$4 / 1048576)}'); if [ "$$free" -lt $(NEED_GB) ]; then \
	echo "error: $$free GB free on this disk; building $(VENV) needs about $(NEED_GB) GB (free some, or NEED_GB=0)" >&2; \
	exit 1; fi
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c $(PINS) -e '.[cpu]'
	touch $@

$(MXVENV)/.installed: pyproject.toml $(PINS)
	$(PYTHON) -m venv $(MXVENV)
	$(MXVENV)/bin/python -m pip install -q --upgrade pip
	$(MXVENV)/bin/python -m pip install -q -c $(PINS) mxnet 'numpy<1.24' 'ml_dtypes<0.5'
	touch $@

mxnet-env: $(MXVENV)/.installed

# What `make report` runs on, built side by side (pip spends most of a build unpacking on one core): the three
# interpreters, clang for tinygrad, TensorFlow.js's npm packages.
environments:
	@$(MAKE) --no-print-directory -j4 $(VENV)/.installed $(MXVENV)/.installed $(ORTOV_VENV)/.installed clang tfjs

# ONNX Runtime's OpenVINO execution provider (onnxruntime-openvino) installs the same `onnxruntime` module as
# onnxruntime, so it has an interpreter of its own; its records are the onnxruntime adapter's on device `openvino`,
# each saying which provider ran each node (the report's Delegation section).
ORTOV_VENV ?= .venv-onnxruntime-openvino
ORTOV_RESULTS ?= results/onnxruntime-openvino.jsonl
$(ORTOV_VENV)/.installed: pyproject.toml $(PINS)
	$(PYTHON) -m venv $(ORTOV_VENV)
	$(ORTOV_VENV)/bin/python -m pip install -q --upgrade pip
	$(ORTOV_VENV)/bin/python -m pip install -q -c $(PINS) -e '.[onnxruntime-openvino]' 'pytest-xdist>=3.5'
	touch $@

# pytest-xdist workers: gsc run --workers auto, one a core as far as the available memory holds them at what the last
# run of each results file measured a worker to take (its manifest; docs/running.md). A run's items come framework
# by framework, the workers steal work from each other, and each keeps at most four framework processes warm.
# Each run writes <results>.partial and replaces its results only when it ends, keeping the ones it replaced beside
# them (results/previous-results.jsonl, ...: harness/run/records.py, RunFiles); its summary and the page show the
# changes against them. A second run on the same results is refused; an interrupted one continues with
# PYTEST_ARGS=--resume. The History section comes from the committed release sweeps (history/).
# The converter paths run after the frameworks, in a run of their own: each warm worker holds a framework (and a
# path's holds a source, a converter and a target), and the two sets at once would not fit in 24 GiB.
CONVERSIONS ?= results/conversions.jsonl
# The memory checker's evidence (gsc memcheck, slow: not run here): the committed sweep and a local one; the report
# shows what exists.
MEMCHECK ?= evidence/memcheck.jsonl results/memcheck.jsonl
# Each phase shows a progress line per tenth and ends with its summary table (harness/console.py); the failing
# tests' reports, each with its repro script, go to results/<name>.log, not the terminal.
PREVIOUS := results/previous-results.jsonl results/previous-onnxruntime-openvino.jsonl results/previous-conversions.jsonl
# The phases run one after the other. The OpenVINO EP phase beside the frameworks phase (2026-11-30, one worker) took
# 367 CPU s instead of 119 alone, its thread pools spinning against the frameworks' workers (benchmarks/README.md):
# on two cores the idle time a phase leaves is not where another phase can use it.
report: environments
	@$(PY) -m gather_scatter_conformance run --framework frameworks --phase frameworks --results $(RESULTS) $(PYTEST_ARGS)
	@$(ORTOV_VENV)/bin/python -m gather_scatter_conformance run --framework onnxruntime --gsc-ort-providers OpenVINOExecutionProvider --phase "onnxruntime (OpenVINO EP)" --results $(ORTOV_RESULTS) $(PYTEST_ARGS)
	@$(PY) -m gather_scatter_conformance run --framework paths --phase paths --results $(CONVERSIONS) $(PYTEST_ARGS)
	@echo "report: building reports/ (the landing page, a page per cell, the port planner, the JSON API)"
	@$(PY) -m gather_scatter_conformance report $(RESULTS) $(ORTOV_RESULTS) $(CONVERSIONS) --out reports --baseline $(PREVIOUS) --history history --evidence $(MEMCHECK)
	@echo "report: reports/index.html"

# tinygrad's CPU device compiles its kernels with clang: installed here when we may (root), else the tinygrad adapter
# runs on tinygrad's PYTHON device (its records say which device ran). `make test` installs it too: known/tinygrad.yaml
# is measured on the CPU device (bfloat16 ScatterND assignment deviates there and conforms on PYTHON).
clang:
	@command -v clang >/dev/null || \
	{ [ "$$(id -u)" = 0 ] && apt-get update -qq && apt-get install -y -qq clang >/dev/null; } || \
	echo "note: clang not installed; tinygrad runs on its PYTHON device"

# TensorFlow.js (docs/mapping/tfjs.md): its npm packages, exactly as package-lock.json pins them, beside the adapter's
# Node worker. Without node (Debian's nodejs) the tfjs cases skip with the reason.
TFJS_DIR := gather_scatter_conformance/adapters/tfjs_node
tfjs: $(TFJS_DIR)/node_modules/.package-lock.json
$(TFJS_DIR)/node_modules/.package-lock.json: $(TFJS_DIR)/package.json $(TFJS_DIR)/package-lock.json
	@if command -v npm >/dev/null; then npm ci --prefix $(TFJS_DIR) --no-audit --no-fund; \
	else echo "note: npm not found (install Debian's nodejs and npm); the tfjs cases will skip"; fi

# The report's browser test drives Debian's headless Chromium; installed here when we may (root), else it skips.
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	{ [ "$$(id -u)" = 0 ] && apt-get update -qq && apt-get install -y -qq chromium chromium-driver >/dev/null; } || \
	echo "note: chromium/chromedriver not installed; the browser test will skip"

# pytest exits 5 when it collected no tests; that must not pass as green.
# -n auto: a worker a core as far as the memory holds them (tests/conftest.py). --dist loadfile: a file's tests on one
# worker, so a module fixture (a venv with the wheel, a browser, a built site) is made once; the files in the
# recorded longest-first order (--no-loadscope-reorder: xdist would order them by their number of tests).
# (--dist loadgroup and xdist_group marks group nothing with pytest 9.2: pytest-dev/pytest-xdist#1386.)
test: $(VENV)/.installed $(MXVENV)/.installed browser clang tfjs
	$(PY) -m ruff check .
	$(PY) -m pytest tests -n auto --dist loadfile --no-loadscope-reorder --record-times build/test-times.json $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "error: pytest collected no tests" >&2; exit 1; fi; exit $$rc

# The developer lane (docs/development.md): ruff and the tests that run no framework and take under 5 s each, in
# under 3 minutes. --no-frameworks (tests/conftest.py) deselects the tests marked `framework` and refuses every
# framework's modules, in the test processes and the processes they start; `slow` ones run in `make test` only.
# Workers and the files' order as make test's (above).
check: $(VENV)/.installed
	$(PY) -m ruff check .
	$(PY) -m pytest tests --no-frameworks -m "not slow" -n auto --dist loadfile --no-loadscope-reorder -q $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "error: pytest collected no tests" >&2; exit 1; fi; exit $$rc

# The performance benchmark (benchmarks/README.md): ratios measured side by side; BENCH_ARGS=--quick, --matrix, ...
BENCH_ARGS ?=
bench: $(VENV)/.installed $(MXVENV)/.installed
	$(PY) benchmarks/run.py $(BENCH_ARGS)

lint: $(VENV)/.installed
	$(PY) -m ruff check .

schema: $(VENV)/.installed
	$(PY) -m gather_scatter_conformance schema --out cases/schema.json
	$(PY) -m gather_scatter_conformance schema --records --out gather_scatter_conformance/schemas/record.schema.json

clean:
	rm -rf $(VENV) $(MXVENV) $(ORTOV_VENV) results .tox $(TFJS_DIR)/node_modules
