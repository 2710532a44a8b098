TURNS = ["How do I say 'good morning' in Spanish?"]
REPLIES = {
    "assistant": [
        {"call": "translator", "args": {"request": "good morning"}},
        "It is 'buenos dias'.",
    ],
    "translator": ["buenos dias"],
}
