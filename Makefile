# The one test command: installs and starts what the tests need (deploy/up), then the browser tests
# against the platform with the platform-free tier beside them (lint, unit and engine tests on every
# core, C++ checks, Vitest: what `make unit` runs), then the tests of the running platform
# (scripts/test-all). docs/TESTING.md tells the tiers.
.PHONY: test test-products unit dev up down lint

# Prerequisites are made in order (up, then lint: it needs the venv and node_modules up installs);
# no parallel make here.
.NOTPARALLEL:

# The platform the tests run on offers 4 cpus on this 2-core machine and has 10 hdd + 4 ssd development
# disks, so that the clusters of the platform tier's two workers fit at once (a product's test takes
# most of 2 cpus and up to 7 disks; the members' cpus stay hard quotas). Set either to override.
test: export SPINDLE_AGENT_CPUS ?= 4
test: export SPINDLE_DEV_DISKS ?= 4:hdd,2:ssd,6:hdd,2:ssd
# The products' JVMs (daemons, tools, drivers, MapReduce tasks, Spark executors) run C1-only: the tests'
# work lasts seconds to minutes, where C2's compiling (35 % of their CPU, measured) never pays off
# (docs/TESTING.md). It applies to a platform this `up` starts; the orchestrator renders it into them.
test: export SPINDLE_PRODUCT_JVM_OPTIONS ?= -XX:TieredStopAtLevel=1
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
