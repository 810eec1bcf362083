"""Spindle's Mesos executor: one cluster member as one Docker container."""
