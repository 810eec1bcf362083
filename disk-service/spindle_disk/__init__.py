"""Spindle disk-service: node and disk inventory, disk states, exclusive allocation, wipe on release,
Mesos resources."""
