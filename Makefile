# The one test command: installs and starts what the tests need (deploy/up), then runs them all.
.PHONY: test unit up down

test: up
	.venv/bin/pytest
	engine/cpp/test.sh
	cd web-ui && npm run lint && npm test && npm run e2e

unit:
	.venv/bin/pytest tests/unit

up:
	./deploy/up

down:
	./deploy/down
