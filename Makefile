# The two commands of the README: `make run` (the main job) and `make test`.
# Empty: the default profile (`python -m syslogbench profiles` marks it).
PROFILE ?=
PY := .venv/bin/python
VENV := .venv/.installed
# daemons/Dockerfile builds every Debian daemon version; the registry-based ones keep their own.
DOCKERFILES := rig-rust/Dockerfile daemons/Dockerfile $(wildcard daemons/*/Dockerfile) watcher/Dockerfile generators/Dockerfile tests/integration/swarm/Dockerfile tests/integration/swarm/faketime/Dockerfile
SHELL_SCRIPTS := daemons/_common/supervise.sh watcher/entrypoint.sh .ci/run
WORKFLOWS := $(wildcard .github/workflows/*.yml)

.PHONY: run test setup lint unit integration report render browser rig

$(VENV): requirements-dev.txt
	python3 -m venv .venv
	.venv/bin/pip install -q -r requirements-dev.txt
	touch $@

# The seed scenario (.env) on one daemon; prints the result table at the end.
run: $(VENV)
	$(PY) -m syslogbench run $(if $(PROFILE),--profile "$(PROFILE)")

# Lint, the compiled rig's own tests, unit tests, then real containers for every profile, and the HTML
# report in a browser.
test: $(VENV) lint browser
	$(PY) -m syslogbench setup
	$(MAKE) rig
	if command -v cargo >/dev/null; then cargo test -q --release --manifest-path $(RIG)/Cargo.toml; fi
	# Two workers, each test file whole on one (their modules share containers and swarms), each worker under
	# its own compose project (tests/integration/conftest.py): docs/ci.md, "How long it takes".
	# Past 70 minutes, or after 5 failures, the session ends and lists what failed: CI stops at 90 (docs/ci.md).
	TEST_BUDGET_MIN=70 $(PY) -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder --timeout 900 --maxfail 5 --durations=15

# The compiled rig (rig-rust/) for the tests on this machine: built with the host's cargo, or, without one,
# copied out of the image `syslogbench setup` built (the images have their own copy).
RIG := rig-rust
RIG_BIN := $(RIG)/target/release/syslogbench-rig
rig:
	@if command -v cargo >/dev/null; then cargo build -q --release --locked --manifest-path $(RIG)/Cargo.toml; \
	else mkdir -p $(dir $(RIG_BIN)) && id=$$(docker create syslogbench/rig:$${IMAGE_TAG:-local} x) && \
		docker cp $$id:/usr/local/bin/syslogbench-rig $(RIG_BIN) && docker rm $$id >/dev/null; fi

setup: $(VENV)
	$(PY) -m syslogbench setup

lint: $(VENV)
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	.venv/bin/hadolint $(DOCKERFILES)
	.venv/bin/shellcheck $(SHELL_SCRIPTS)
	# actionlint also runs shellcheck on every `run:` block of the workflows.
	.venv/bin/actionlint -shellcheck=.venv/bin/shellcheck -pyflakes= $(WORKFLOWS)
	@if command -v cargo >/dev/null; then \
		cargo fmt --check --manifest-path $(RIG)/Cargo.toml && \
		cargo clippy -q --release --locked --all-targets --manifest-path $(RIG)/Cargo.toml -- -D warnings; \
	else echo "make: no cargo on this machine: rig-rust is linted only where there is one"; fi

unit: $(VENV) rig
	$(PY) -m pytest -q tests/unit

# Debian's chromium for tests/browser (the HTML report at 1400 x 900), installed where it is missing;
# those tests skip, saying why, where it cannot be.
browser:
	@if command -v chromium >/dev/null; then exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then as=""; elif sudo -n true 2>/dev/null; then as="sudo"; else \
		echo "make: no chromium, and no root to install it: the browser tests will skip"; exit 0; fi; \
	echo "make: installing chromium for the report's browser test: $${as:+$$as }apt-get install -y chromium"; \
	$$as apt-get install -y -q chromium >/dev/null 2>&1 || { $$as apt-get update -q >/dev/null && \
		$$as apt-get install -y -q chromium >/dev/null; } || \
		echo "make: chromium could not be installed: the browser tests will skip"

# Markdown, HTML and plots from results/ alone; where chromium is, the README's two pictures of the first
# screen with them, so they never show figures the report no longer gives (--no-sandbox only as root, where
# chromium's sandbox refuses to start).
report: $(VENV)
	rm -rf results/report/plots  # generated: a scenario that no longer has a plot leaves none behind
	$(PY) -m syslogbench report --out results/report
	@if ! command -v chromium >/dev/null; then echo "make: no chromium: docs/report-first-screen*.png left as they were"; exit 0; fi; \
	sandbox=""; [ "$$(id -u)" != 0 ] || sandbox="--no-sandbox"; \
	for size in 1400,900: 390,844:-phone; do \
		chromium --headless $$sandbox --disable-gpu --hide-scrollbars --window-size=$${size%%:*} \
			--screenshot="docs/report-first-screen$${size#*:}.png" "file://$(CURDIR)/results/report/report.html" \
			>/dev/null 2>&1 || { echo "make: chromium could not draw docs/report-first-screen$${size#*:}.png"; exit 1; }; \
	done

# From the manifests: every daemon config, compose.daemons.yaml and compose.profiles.yaml.
render: $(VENV)
	$(PY) -m syslogbench render
