"""Bridges to other tools: TRL, reward-kit."""
