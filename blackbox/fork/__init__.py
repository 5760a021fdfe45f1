"""The fork family: one plan (`plan`: the fork point checked, the verbatim prefix) and its two runs, with the agent
(`engine`, the session's fork engine) and without it (`whatif`, Blackbox continuing the conversation itself)."""
