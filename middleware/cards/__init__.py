"""The three tier continuity cards (spec 001 §6): what they show and their budgets."""
