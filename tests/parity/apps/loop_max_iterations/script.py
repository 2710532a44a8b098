TURNS = ["Count"]
REPLIES = {
    "counter": [
        {"call": "count_round", "args": {}},
        "Round 1.",
        {"call": "count_round", "args": {}},
        "Round 2.",
    ]
}
