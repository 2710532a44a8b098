TURNS = ["Weather for Lisbon"]
REPLIES = {
    "forecaster": [
        {"call": "get_temperature", "args": {"city": "Lisbon"}},
        {"call": "set_model_response", "args": {"city": "Lisbon", "temperature": 18}},
    ],
    "announcer": ["Lisbon will be a mild 18 degrees."],
}
