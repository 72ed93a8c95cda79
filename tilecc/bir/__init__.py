"""BIR: the backend instruction IR (enums, inst), its JSON form (json) and verifier."""
