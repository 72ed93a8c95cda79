"""The host orchestration DSL (pypto's `pl` / `pld`): IR, parser, printer, passes."""
