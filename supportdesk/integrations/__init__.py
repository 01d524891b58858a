"""Bridges to the agent frameworks teams already run (OpenAI Agents SDK, Strands Agents).

Integrations sit beside the TUI, above the store: they import `items` and `store` (and the
framework they bridge, which is an optional extra), and nothing in the desk imports them except
the CLI's `import` plug-in, loaded only when that command is asked for.
"""
