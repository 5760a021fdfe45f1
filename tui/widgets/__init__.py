"""The widgets of the Blackbox terminal UI, each with its CSS beside it."""
