"""Impactful actions (spec 000 §8.2): spot, hold back and later release risky tool calls.

Pure building blocks only; storing a held call and wiring the hold into the pipeline
happen elsewhere.
"""
