"""Living memory (spec 003): stable facts and standing preferences of a person."""
