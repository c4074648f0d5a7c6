# Two commands a user needs: `make run` (install, build the starter knowledge base on first use, run the app)
# and `make test` (install, run the whole test suite). Everything installs into .venv from requirements.lock.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
QUILL_PORT ?= 8501
STAMP := $(VENV)/.installed

.PHONY: run test install lock bench clean

$(STAMP): pyproject.toml requirements.lock
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# The lock is the whole tested environment: install it as is (--no-deps), then the project itself.
	$(BIN)/pip install -q --no-deps -r requirements.lock
	$(BIN)/pip install -q --no-deps --no-build-isolation -e .
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	# import only: the app comes up at once and embeds the quotes in the background (resumes where a stop left it)
	$(BIN)/quill kb build --tier starter --if-missing --no-index
	$(BIN)/streamlit run app.py --server.headless true --server.address 127.0.0.1 --server.port $(QUILL_PORT)

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	for b in bench/*.py; do $(BIN)/python $$b --json || exit 1; done

# Regenerate the lock from the current environment (after changing dependencies in pyproject.toml).
lock:
	$(BIN)/pip list --format=freeze --exclude-editable | grep -viE "^(quill|pip)==" > requirements.lock

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
