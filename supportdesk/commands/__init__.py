"""Subcommands that are a feature of their own, loaded by `cli.PLUG_INS` only when asked for: `doctor` and `eval` (`evals`); other commands live with their feature (`staff/command.py`)."""
