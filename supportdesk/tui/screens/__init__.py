"""The screens of the desk, each with its .tcss beside it."""
