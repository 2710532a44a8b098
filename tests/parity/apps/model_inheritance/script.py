TURNS = ["Help me"]
REPLIES = {
    "boss": [{"call": "transfer_to_agent", "args": {"agent_name": "helper"}}],
    "helper": ["Happy to help."],
}
