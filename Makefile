# moonshot: `make serve` and `make test` do all set-up on a fresh machine (Python 3.11).
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip

.PHONY: serve test install install-dev core browser prometheus nginx lint typecheck unit unit-pure bench fuzz clean demo compile uncompile

$(VENV)/.created:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "error: $(PYTHON) not found (moonshot needs Python 3.11+; set PYTHON=...)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	@touch $@

$(VENV)/.installed: $(VENV)/.created pyproject.toml
	$(PIP) install --quiet -e '.[fast]'
	@touch $@

$(VENV)/.installed-dev: $(VENV)/.created pyproject.toml
	$(PIP) install --quiet -e '.[dev]'
	@touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

# The hot core (cards, rules, actions, events, engine) compiled with mypyc into extension modules
# beside the sources: about 4x the pure-Python engine speed. Rebuilt only when a source changed;
# without a C compiler moonshot warns and runs as pure Python. moonshot/__init__ ignores a build
# whose sources changed since; MOONSHOT_PURE_PYTHON=1 ignores it always.
core: install
	$(VENV)/bin/moonshot compile --if-stale --optional

# The server: every protocol on its default port (Sessions 40405, web app and Turbo HTTP 7380, Trend
# 8080 as the seed's node, Kierki 5000: the spec names none), games stored in ./moonshot.db.
# `make serve TREND_PORT=0 KIERKI_PORT=0` picks free ports; `moonshot serve` alone leaves both off.
TREND_PORT ?= 8080
KIERKI_PORT ?= 5000
serve: core
	$(VENV)/bin/moonshot serve --trend-port $(TREND_PORT) --kierki-port $(KIERKI_PORT)

demo: core
	$(VENV)/bin/moonshot demo

lint: install-dev
	$(VENV)/bin/ruff check src tests benchmarks examples
	$(VENV)/bin/ruff format --check src tests benchmarks examples
	$(VENV)/bin/lint-imports

typecheck: install-dev
	$(VENV)/bin/mypy src

# The browser tests drive Debian's chromium (Playwright's own browser download is not used).
# Install it when it is missing and we can (root with apt-get); otherwise those tests skip and say so.
browser:
	@if command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Debian's chromium for the browser tests"; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } \
	    || echo "warning: could not install chromium; the browser tests will skip"; \
	else echo "warning: no chromium and no root apt-get; the browser tests will skip (apt-get install chromium)"; fi

# The operator surface's end-to-end test checks /metrics with Debian's promtool and scrapes it with a
# real Prometheus (package prometheus); installed like chromium above, else those checks skip.
prometheus:
	@if command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Debian's prometheus for the operator surface's tests"; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null; } \
	    || echo "warning: could not install prometheus; the metrics checks will skip"; \
	else echo "warning: no prometheus and no root apt-get; the metrics checks will skip (apt-get install prometheus)"; fi

# The TLS proxy tests (tests/e2e/test_proxy_tls.py) run Debian's nginx with its stream module
# (packages nginx, libnginx-mod-stream) from deploy/nginx/moonshot.conf; installed like chromium
# above, else those tests skip.
nginx:
	@if { command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; } && [ -e /usr/lib/nginx/modules/ngx_stream_module.so ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing Debian's nginx for the TLS proxy tests"; \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx libnginx-mod-stream >/dev/null; } \
	    || echo "warning: could not install nginx; the TLS proxy tests will skip"; \
	else echo "warning: no nginx and no root apt-get; the TLS proxy tests will skip (apt-get install nginx libnginx-mod-stream)"; fi

# The whole suite on the compiled core (what `make serve` runs), then the core's tests again on the
# pure-Python sources (the fallback where nothing can be compiled). Tests run in PYTEST_WORKERS
# processes (pytest-xdist, a test module to a process; every test that needs a server starts its own
# on port 0, so they can): much of the suite waits on sockets, browsers and subprocesses, which then
# overlap. The 25 slowest
# tests are listed at the end. `make unit PYTEST_WORKERS=0` runs them in one process.
PYTEST_WORKERS ?= 2
PYTEST_ARGS := -n $(PYTEST_WORKERS) --dist loadfile --durations=25
unit: install-dev core browser prometheus nginx
	$(VENV)/bin/pytest $(PYTEST_ARGS)

# The pure-Python pass checks the fallback build of the core, so it skips what exercises only the
# shell (real sockets and browsers in tests/e2e, the attacks on a real server in tests/security, the
# slow and fuzz runs): the compiled pass ran those.
# It runs the batched RL simulator on NumPy (MOONSHOT_NO_NUMBA=1): the compiled pass ran numba.
unit-pure: install-dev
	MOONSHOT_PURE_PYTHON=1 MOONSHOT_NO_NUMBA=1 $(VENV)/bin/pytest $(PYTEST_ARGS) -m "not browser and not slow and not fuzz and not ray" --ignore=tests/e2e --ignore=tests/security

test: lint typecheck unit unit-pure

# Every protocol codec's fuzz test at full size (100,000 generated and mutated messages each).
fuzz: install-dev core
	MOONSHOT_FUZZ_MESSAGES=100000 $(VENV)/bin/pytest -m fuzz -q

# Rebuild the compiled core even if it looks up to date; `make uncompile` removes it.
compile: install
	$(VENV)/bin/moonshot compile

uncompile:
	rm -f src/moonshot/*.so src/moonshot/*/*.so src/moonshot/_compiled.json

bench: core
	MOONSHOT_PURE_PYTHON=1 $(PY) benchmarks/engine.py --engine-only
	$(PY) benchmarks/engine.py

clean: uncompile
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build dist
