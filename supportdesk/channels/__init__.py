"""Where customers come from, beside the TUI on the same engine.

`supportdesk serve` (the web API, its chat page and the Chatwoot agent bot) lives here. It is an
optional extra (`pip install 'supportdesk[serve]'`): the TUI and `run` never import this package,
and only `web.py`, `chatwoot.py` and `command.py` import the web framework or an HTTP client.
"""
