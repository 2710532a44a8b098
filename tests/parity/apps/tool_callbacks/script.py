TURNS = ["Capital of Atlantis and of Japan?"]
REPLIES = {
    "geo_agent": [
        [
            {"call": "get_capital", "args": {"country": "Atlantis"}},
            {"call": "get_capital", "args": {"country": "Japan"}},
        ],
        "Atlantis is a myth; Tokyo is Japan's capital.",
    ]
}
