NODE_PATHS = True
TURNS = ["the quick brown fox"]
REPLIES = {}
