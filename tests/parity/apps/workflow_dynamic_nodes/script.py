NODE_PATHS = True
TURNS = ["add them up"]
REPLIES = {}
