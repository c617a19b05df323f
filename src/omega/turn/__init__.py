"""The turn machinery: one message through the provider (who is asking and with which rights,
the prompt, the one way to ask the provider, what markers act against), shared by the gateway,
the loops and evolution. It imports none of them."""
