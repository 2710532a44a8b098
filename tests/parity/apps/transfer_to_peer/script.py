TURNS = ["I want to buy a plan, but what does the contract say about cancelling?"]
REPLIES = {
    "router": [{"call": "transfer_to_agent", "args": {"agent_name": "sales"}}],
    "sales": [{"call": "transfer_to_agent", "args": {"agent_name": "legal"}}],
    "legal": ["You may cancel at the end of any month."],
}
