# The two commands a new machine needs: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python

.PHONY: run test lint screenshots bench bench-pair bench-real-pair bench-real package clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Stamps re-run the install when pyproject.toml changes.
$(VENV)/.installed: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(VENV)/.installed $@

$(VENV)/.installed-package: pyproject.toml | $(PY)
	$(PY) -m pip install --quiet -e '.[package]'
	touch $(VENV)/.installed $@

run: $(VENV)/.installed
	$(BIN)/draftdeck

# mypy also checks the app as Windows and macOS see it: a name their Python lacks
# (signal.SIGKILL on Windows) is an error (tests/project/test_portability.py: at run time).
lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/mypy --platform win32 --cache-dir .mypy_cache/win32 app
	$(BIN)/mypy --platform darwin --cache-dir .mypy_cache/darwin app
	$(BIN)/lint-imports

test: lint
	QT_QPA_PLATFORM=offscreen $(BIN)/pytest

# Every page at 1024x700 and 1600x1000, empty and busy, into build/screenshots/ (open
# its index.html), and the README shots into docs/; about 3 min. SHOTS="--states empty"
# (or --sizes, --out, --no-readme) narrows it.
screenshots: $(VENV)/.installed
	QT_QPA_PLATFORM=offscreen $(PY) scripts/screenshots.py $(SHOTS)

# The double-click app for this OS in dist/ (PyInstaller cannot cross-compile), with
# its size and what dominates it.
package: $(VENV)/.installed-package
	$(PY) packaging/make_icons.py build/icons
	$(PY) -m PyInstaller packaging/draftdeck.spec --noconfirm --distpath dist \
		--workpath build/pyinstaller
	$(PY) packaging/finish.py dist

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
bench-real: $(VENV)/.installed bench-real-pair
	$(PY) benchmarks/real_scale.py

bench: $(VENV)/.installed bench-pair
	$(PY) benchmarks/bundle_read.py
	$(PY) benchmarks/engine.py
	$(PY) benchmarks/download.py
	$(PY) benchmarks/push.py
	$(PY) benchmarks/publish.py
	$(PY) benchmarks/big_listing.py

clean:
	rm -rf $(VENV) $(FIXVENV) build dist *.egg-info .mypy_cache .pytest_cache .ruff_cache
