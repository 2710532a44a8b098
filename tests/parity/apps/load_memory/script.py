TURNS = [
    "My favourite colour is teal",
    {"memory": "add_session"},
    {"text": "What is my favourite colour?", "session": "s2"},
]
REPLIES = {
    "recall_agent": [
        "Nice, teal it is.",
        {"call": "load_memory", "args": {"query": "favourite colour"}},
        "Your favourite colour is teal.",
    ]
}
