"""Spindle orchestrator: cluster lifecycle state machine, product configuration, Consul registration, teardown."""
