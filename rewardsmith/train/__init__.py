"""Training: YAML config to TRL GRPOTrainer, model builders, callbacks."""
