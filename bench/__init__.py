"""Benchmarks (not tests): run them as scripts, e.g. ``python bench/overhead.py``."""
