"""Temporal awareness (spec 000 §5–§9): check-ins, latest actions, hedged references,
bounded inference cues and the confirm-first instruction, gated by the user's policy."""
