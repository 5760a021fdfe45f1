"""The screens of the Blackbox terminal UI."""
