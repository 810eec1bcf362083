# The one test command: installs and starts what the tests need (deploy/up), lints everything
# (scripts/lint: ruff, mypy, shellcheck, clang-format, the web UI's eslint and tsc), then runs
# every test.
.PHONY: test test-products unit up down lint

# Prerequisites are made in order (up, then lint: it needs the venv and node_modules up installs);
# no parallel make here.
.NOTPARALLEL:

test: up lint
	.venv/bin/pytest
	engine/cpp/test.sh
	cd web-ui && npm test && npm run e2e

# The storage products' end-to-end tests (Kafka, Cassandra, YARN TeraSort, JupyterLab, Spark and the
# engine on HDFS) and the other multi-minute ones (marked slow: Spark resized while a job runs, Spark
# and the engine across three simulated nodes): beside `make test` (CI's 60 minutes), not in it.
test-products: up
	.venv/bin/pytest -m "products or slow"
	cd web-ui && npm run e2e:products

lint:
	scripts/lint

unit:
	.venv/bin/pytest tests/unit

up:
	./deploy/up

down:
	./deploy/down
