"""The Textual interface: app, screens, widgets and themes (reads projections, sends commands)."""
