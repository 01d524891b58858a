"""What leaves the desk for people to read: a session as Markdown or JSON (`export`), the desk's figures over a time range (`stats`) and their `stats` subcommand (`stats_command`)."""
