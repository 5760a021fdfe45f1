"""Importers that turn transcripts written by other tools into cassettes."""
