"""Small tool-using agents (real SDK loops) that the session tests record and replay."""
