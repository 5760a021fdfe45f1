"""Blackbox terminal UI (Textual), installed as `blackbox_tui`; it imports the core, never the reverse."""
