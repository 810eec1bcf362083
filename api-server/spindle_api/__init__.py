"""Spindle api-server: public REST API, users and API tokens, product catalog, web UI."""
