# The one test command: installs and starts what the tests need (deploy/up), then the browser tests
# against the platform with the platform-free tier beside them (lint, unit and engine tests on every
# core, C++ checks, Vitest: what `make unit` runs), then the tests of the running platform
# (scripts/test-all). docs/TESTING.md tells the tiers.
.PHONY: test test-products unit dev up down lint

# Prerequisites are made in order (up, then lint: it needs the venv and node_modules up installs);
# no parallel make here.
.NOTPARALLEL:

test: up
	scripts/test-all

# A subset of `make test`, by hand: the storage products' end-to-end tests (Kafka, Cassandra, YARN
# TeraSort, JupyterLab, Spark and the engine on HDFS), the other multi-minute ones (marked slow:
# Spark resized while a job runs, Spark and the engine across three simulated nodes) and the
# JupyterLab browser test.
test-products: up
	.venv/bin/pytest -m "products or slow"
	cd web-ui && npm run e2e:products

lint:
	scripts/lint

# Needs no running platform: scripts/lint, then scripts/test-unit.
unit: dev lint
	scripts/test-unit

dev:
	./deploy/dev

up:
	./deploy/up

down:
	./deploy/down
