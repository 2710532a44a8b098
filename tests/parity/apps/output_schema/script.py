TURNS = ["What is the capital of Peru?"]
REPLIES = {"capital_agent": [{"json": {"country": "Peru", "capital": "Lima"}}]}
