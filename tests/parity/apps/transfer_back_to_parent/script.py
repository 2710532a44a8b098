TURNS = ["What are your opening hours?", "I want to book a room"]
REPLIES = {
    "front_desk": [
        {"call": "transfer_to_agent", "args": {"agent_name": "faq"}},
        "Sure, for which dates?",
    ],
    "faq": [
        "We are open from 8 to 20.",
        {"call": "transfer_to_agent", "args": {"agent_name": "front_desk"}},
    ],
}
