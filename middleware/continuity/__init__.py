"""Continuity (spec 001): where the user left off."""
