"""The ``train-*`` commands: the learned bot's, the value and the belief networks' training."""
