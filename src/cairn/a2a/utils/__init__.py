"""A2A serving: ``agent_to_a2a.to_a2a``, ``agent_card_builder.AgentCardBuilder``."""
