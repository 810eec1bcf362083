"""The thin Mesos wiring of the scheduler: offers in, ACCEPT/LAUNCH out (placement lives in ../placement)."""
