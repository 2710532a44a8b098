TURNS = [
    "My dog is called Rex",
    {"memory": "add_session"},
    {"text": "What is my dog called?", "session": "s2"},
]
REPLIES = {"preload_agent": ["What a good name.", "Your dog is called Rex."]}
