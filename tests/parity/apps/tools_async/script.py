TURNS = ["Prices of GOOG and MSFT?"]
REPLIES = {
    "stock_agent": [
        [
            {"call": "lookup_stock", "args": {"symbol": "GOOG"}},
            {"call": "lookup_stock", "args": {"symbol": "MSFT"}},
        ],
        "GOOG is at 181.5 and MSFT at 420.25.",
    ]
}
