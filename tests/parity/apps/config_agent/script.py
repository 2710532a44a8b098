TURNS = ["Plan my day at the museum in Paris"]
REPLIES = {
    "concierge": [{"call": "lookup", "args": {"city": "Paris"}}, "Open 9-17."],
    "drafter": ["Museum at 9, lunch at 12."],
    "reviewer": ["Looks good."],
}
