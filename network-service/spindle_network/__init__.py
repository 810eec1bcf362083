"""Spindle network-service: IP pools, floating-IP allocation, reservation and moves, DNS names."""
