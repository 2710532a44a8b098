TURNS = ["Two apples please", "And one pear"]
REPLIES = {
    "shop_agent": [
        {"call": "add_to_cart", "args": {"item": "apple", "quantity": 2}},
        "Added two apples.",
        {"call": "add_to_cart", "args": {"item": "pear", "quantity": 1}},
        "Added a pear.",
    ]
}
