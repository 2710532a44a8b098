TURNS = [
    "Delete notes.txt",
    {"respond": "adk_request_confirmation", "response": {"confirmed": True}},
]
REPLIES = {
    "file_agent": [
        {"call": "delete_file", "args": {"path": "notes.txt"}},
        "notes.txt is deleted.",
    ]
}
