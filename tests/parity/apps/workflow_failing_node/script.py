NODE_PATHS = True
TURNS = ["import record 7"]
REPLIES = {}
