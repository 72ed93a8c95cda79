"""Subcommands of the `tilecc` command line (see tilecc.cli for the module contract)."""
