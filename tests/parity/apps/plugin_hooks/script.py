TURNS = ["Price of tea and of gold?", "Tell me the secret."]
REPLIES = {
    "shop_agent": [
        [
            {"call": "get_price", "args": {"item": "tea"}},
            {"call": "get_price", "args": {"item": "gold"}},
        ],
        "Tea is 3 EUR; gold is not for sale.",
    ]
}
