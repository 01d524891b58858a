"""Learned readers of customer text, trained on public labelled data (see data/LICENSES.md).

Below the models and the tools, so both may use them: the offline model reads a message's
act and scope (acts.py) and whether it speaks of money or disclaims an action (gates.py), the
knowledge base asks how common a word is. Nothing here is loaded at import:
the parameters are read on first use.
"""
