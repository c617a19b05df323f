"""The gateway: dispatch, the message pipeline, prompts and commands."""
