TURNS = [
    "Reimburse 250 for the flight",
    {"respond": "ask_for_approval", "response": {"status": "approved", "ticket": "T-1"}},
]
REPLIES = {
    "reimbursement_agent": [
        {"call": "ask_for_approval", "args": {"purpose": "flight", "amount": 250}},
        "I asked your manager; ticket T-1 is pending.",
        "Your reimbursement of 250 was approved.",
    ]
}
