"""The shipped hooks that plug into the engine (`engine/hooks.py` is the mechanism, as `engine/tools.py` is for `tools/`): the guardrails."""
