NODE_PATHS = True
TURNS = ["hello"]
REPLIES = {}
