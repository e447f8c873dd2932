# Two entry points (see README): `make report` runs every framework that can run here and writes the
# results and report; `make test` runs the harness's own tests. Both build their environments first.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# MXNet 1.9.1 needs numpy<1.24, so it gets its own interpreter; the harness reaches it through execnet workers.
MXVENV ?= .venv-mxnet
RESULTS ?= results/results.jsonl
PYTEST_ARGS ?=

.PHONY: report test lint schema clean mxnet-env

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[cpu]'
	touch $@

$(MXVENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(MXVENV)
	$(MXVENV)/bin/python -m pip install -q --upgrade pip
	$(MXVENV)/bin/python -m pip install -q 'mxnet==1.9.1' 'numpy<1.24' 'ml_dtypes<0.5'
	touch $@

mxnet-env: $(MXVENV)/.installed

report: $(VENV)/.installed $(MXVENV)/.installed
	$(PY) -m harness run --results $(RESULTS) $(PYTEST_ARGS)

# pytest exits 5 when it collected no tests; that must not pass as green.
test: $(VENV)/.installed $(MXVENV)/.installed
	$(PY) -m ruff check .
	$(PY) -m pytest tests $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "error: pytest collected no tests" >&2; exit 1; fi; exit $$rc

lint: $(VENV)/.installed
	$(PY) -m ruff check .

schema: $(VENV)/.installed
	$(PY) -m harness schema --out cases/schema.json

clean:
	rm -rf $(VENV) $(MXVENV) results .tox
