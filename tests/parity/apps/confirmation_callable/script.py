TURNS = [
    "Send 20 to Bob",
    "Send 500 to Eve",
    {"respond": "adk_request_confirmation", "response": {"confirmed": False}},
]
REPLIES = {
    "bank_agent": [
        {"call": "transfer_money", "args": {"amount": 20, "to": "Bob"}},
        "Sent 20 to Bob.",
        {"call": "transfer_money", "args": {"amount": 500, "to": "Eve"}},
        "Waiting for your confirmation.",
        "The transfer to Eve was cancelled.",
    ]
}
