TURNS = [
    "I like tea",
    {"text": "What do I like?", "session": "s2"},
]
REPLIES = {
    "memory_agent": [
        {"call": "remember", "args": {"preference": "tea"}},
        "Noted: tea.",
        {"call": "recall", "args": {}},
        "You like tea.",
    ]
}
