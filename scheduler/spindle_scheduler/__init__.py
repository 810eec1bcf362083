"""Spindle scheduler: Mesos framework: placement of cluster members on offers (cpus, memory, whole disks)."""
