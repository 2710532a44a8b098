TURNS = ["What is 2 + 3?", "Thanks."]
REPLIES = {
    "solver": [
        {
            "text": "/*PLANNING*/\n1. Call add.\n/*ACTION*/\n",
            "calls": [{"call": "add", "args": {"a": 2, "b": 3}}],
        },
        "/*REASONING*/\nadd said 5.\n/*FINAL_ANSWER*/\n2 + 3 is 5.",
        "You are welcome.",
    ]
}
