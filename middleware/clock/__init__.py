"""Time for the relay: the injectable clock source and (later) the spec 000 Core Clock."""
