"""Spindle's Python client and the ``spindle`` command line."""
