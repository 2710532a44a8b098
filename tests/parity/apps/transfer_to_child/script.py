TURNS = ["I was charged twice this month", "Can you refund one?"]
REPLIES = {
    "coordinator": [{"call": "transfer_to_agent", "args": {"agent_name": "billing"}}],
    "billing": ["I see two charges; I'll look into it.", "Yes, one charge is refunded."],
}
