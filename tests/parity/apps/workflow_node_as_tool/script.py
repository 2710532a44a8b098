TURNS = ["three apples please"]
REPLIES = {
    "clerk": [
        {"call": "price", "args": {"item": "apple", "quantity": 3}},
        {"call": "stock", "args": {"item": "apple", "quantity": 3}},
        "Three apples cost 9 and are in stock.",
    ],
}
