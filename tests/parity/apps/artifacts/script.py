TURNS = ["Save a note 'todo': buy milk", "Read my todo note", "Change it to: buy oat milk"]
REPLIES = {
    "notes_agent": [
        {"call": "save_note", "args": {"title": "todo", "body": "buy milk"}},
        "Saved.",
        {"call": "read_note", "args": {"title": "todo"}},
        "It says: buy milk.",
        {"call": "save_note", "args": {"title": "todo", "body": "buy oat milk"}},
        "Updated.",
    ]
}
