"""A file reward written as docs/agents.md shows: its parameters are rollout inputs, no settings."""


def used_a_tool(final_message, tool_calls, turns):
    return 1.0 if tool_calls and final_message.strip() else 0.0
