# moonshot: `make serve` and `make test` do all set-up on a fresh machine (Python 3.11).
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip

.PHONY: serve test install install-dev lint typecheck unit bench clean demo compile uncompile test-compiled

$(VENV)/.created:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "error: $(PYTHON) not found (moonshot needs Python 3.11+; set PYTHON=...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	@touch $@

$(VENV)/.installed: $(VENV)/.created pyproject.toml
	$(PIP) install --quiet -e .
	@touch $@

$(VENV)/.installed-dev: $(VENV)/.created pyproject.toml
	$(PIP) install --quiet -e '.[dev]'
	@touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

# The server: every protocol on its default port (Sessions: 40405), games stored in ./moonshot.db.
serve: install
	$(VENV)/bin/moonshot serve

demo: install
	$(VENV)/bin/moonshot demo

lint: install-dev
	$(VENV)/bin/ruff check src tests benchmarks examples scripts
	$(VENV)/bin/ruff format --check src tests benchmarks examples scripts
	$(VENV)/bin/lint-imports

typecheck: install-dev
	$(VENV)/bin/mypy src

unit: install-dev
	$(VENV)/bin/pytest

test: lint typecheck unit

# Optional accelerator: compile the hot core (cards, rules, engine) with mypyc into extension
# modules beside the sources. moonshot/__init__ ignores them once any source changes (until the
# next `make compile`); MOONSHOT_PURE_PYTHON=1 ignores them always; `make uncompile` removes them.
compile: install-dev
	$(PY) scripts/compile_core.py

uncompile:
	rm -rf src/moonshot/*.so src/moonshot/_compiled.json build/mypyc

# The suite in both modes: compiled, then forced pure Python.
test-compiled: compile
	$(VENV)/bin/pytest
	MOONSHOT_PURE_PYTHON=1 $(VENV)/bin/pytest

bench: compile
	MOONSHOT_PURE_PYTHON=1 $(PY) benchmarks/engine.py
	$(PY) benchmarks/engine.py

clean: uncompile
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build dist
