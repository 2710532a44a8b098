TURNS = ["Rate for euro?", "And again?"]
STATE = {"org": "ACME"}
REPLIES = {
    "fx_agent": [
        {"call": "fetch_rate", "args": {"currency": "EURO"}},
        {"call": "fetch_rate", "args": {"currency": "EUR"}},
        "1.1",
        "Still 1.1.",
    ]
}
